/*
 * write(2)/pwrite(2) whose source is a MAP_SHARED mapping of the file being
 * written, not yet faulted in: the same page at the same offset, another
 * page of the file, a run across pages; and a source that runs into an
 * unmapped page (a short write of the bytes before it).  The kernel must
 * neither hang (a copy into a cached page that faults on a mapping of that
 * very page) nor lose or invent bytes.  Included by write_own_mapping.c
 * (any file system) and ext2_workload.c (ext2, through its page cache).
 */
#ifndef WRITE_OWN_MAPPING_H
#define WRITE_OWN_MAPPING_H

#include <sys/mman.h>

#define WOM_PAGE 4096
#define WOM_PAGES 4

static unsigned char wom_byte(int page, int at)
{
	return (unsigned char)(page * 41 + at * 3 + 1);
}

/* Checks every byte of `path` (WOM_PAGES pages) against `want`. */
static int wom_same(int fd, const unsigned char *want)
{
	static unsigned char got[WOM_PAGES * WOM_PAGE];
	if (pread(fd, got, sizeof got, 0) != (ssize_t)sizeof got)
		return 0;
	return memcmp(got, want, sizeof got) == 0;
}

static void write_own_mapping(const char *path)
{
	static unsigned char want[WOM_PAGES * WOM_PAGE];
	for (int p = 0; p < WOM_PAGES; p++)
		for (int i = 0; i < WOM_PAGE; i++)
			want[p * WOM_PAGE + i] = wom_byte(p, i);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, want, sizeof want), (long)sizeof want);

	/* The same page onto itself, at the same offset (the page is cached,
	 * the mapping not yet faulted in). */
	unsigned char *m = mmap(NULL, sizeof want, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED) {
		close(fd);
		return;
	}
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, m, WOM_PAGE), WOM_PAGE);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), WOM_PAGE);
	CHECK(wom_same(fd, want));
	munmap(m, sizeof want);

	/* Another page of the file onto page 0 (pwrite), unfaulted source;
	 * the mapping sees the new bytes. */
	m = mmap(NULL, sizeof want, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED) {
		close(fd);
		return;
	}
	CHECK_EQ(pwrite(fd, m + 2 * WOM_PAGE, WOM_PAGE, 0), WOM_PAGE);
	memcpy(want, want + 2 * WOM_PAGE, WOM_PAGE);
	CHECK(wom_same(fd, want));
	CHECK(memcmp(m, want, WOM_PAGE) == 0);
	munmap(m, sizeof want);

	/* A run of two pages, part way into a page, from the last two pages
	 * (no overlap), through a fresh mapping. */
	m = mmap(NULL, sizeof want, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED) {
		close(fd);
		return;
	}
	CHECK_EQ(pwrite(fd, m + 2 * WOM_PAGE + 100, 2 * WOM_PAGE - 100, 700), 2 * WOM_PAGE - 100);
	memmove(want + 700, want + 2 * WOM_PAGE + 100, 2 * WOM_PAGE - 100);
	CHECK(wom_same(fd, want));
	CHECK(memcmp(m, want, sizeof want) == 0);

	/* A writable shared mapping stored to, then written from: the write
	 * carries the stored bytes. */
	munmap(m, sizeof want);
	unsigned char *w = mmap(NULL, sizeof want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(w != MAP_FAILED);
	if (w != MAP_FAILED) {
		memset(w + 3 * WOM_PAGE + 10, 'S', 20);
		memset(want + 3 * WOM_PAGE + 10, 'S', 20);
		CHECK_EQ(pwrite(fd, w + 3 * WOM_PAGE, 64, WOM_PAGE + 5), 64);
		memmove(want + WOM_PAGE + 5, want + 3 * WOM_PAGE, 64);
		CHECK(wom_same(fd, want));
		CHECK(memcmp(w, want, sizeof want) == 0);
		munmap(w, sizeof want);
	}

	/* A source running into an unmapped page: the bytes before it are
	 * written (a short count), nothing after. */
	unsigned char *a = mmap(NULL, 2 * WOM_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	if (a != MAP_FAILED) {
		memset(a, 'A', 2 * WOM_PAGE);
		CHECK_EQ(munmap(a + WOM_PAGE, WOM_PAGE), 0);
		CHECK_EQ(pwrite(fd, a + WOM_PAGE - 300, 1000, 2 * WOM_PAGE + 50), 300);
		memset(want + 2 * WOM_PAGE + 50, 'A', 300);
		CHECK(wom_same(fd, want));
		/* Nothing readable at all: EFAULT, nothing written. */
		errno = 0;
		CHECK_ERR(pwrite(fd, a + WOM_PAGE, 10, 0), EFAULT);
		CHECK(wom_same(fd, want));
		munmap(a, WOM_PAGE);
	}
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, (long)sizeof want);
	close(fd);
}

#endif
