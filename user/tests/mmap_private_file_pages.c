/*
 * MAP_PRIVATE of a file in memory (tmpfs on Trellis: a read fault maps the
 * file's own page read-only, and fault-around maps its neighbours): the
 * mapping follows the file until the process stores to a page, and from
 * then on that page is its own copy; the file never sees private stores,
 * whatever the path to them (a store after a read, after mprotect, in a
 * forked child, through a read-only-then-writable mapping).
 */
#include "t.h"
#include <sys/mman.h>

#define NPAGES 40
#define FSIZE (NPAGES * PAGE)

static unsigned char byte_at(size_t i, int gen)
{
	return (unsigned char)(i * 7 + 13 + gen * 101);
}

static int file_matches(int fd, int gen)
{
	static unsigned char buf[FSIZE];
	if (pread(fd, buf, FSIZE, 0) != (ssize_t)FSIZE)
		return 0;
	for (size_t i = 0; i < FSIZE; i++)
		if (buf[i] != byte_at(i, gen))
			return 0;
	return 1;
}

int main(void)
{
	char dir[128], path[256];
	static unsigned char data[FSIZE];
	unsigned char *m, *r, *s;
	size_t i;
	int fd, bad;

	if (t_mktmp("mmap_private_file_pages", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	for (i = 0; i < FSIZE; i++)
		data[i] = byte_at(i, 0);
	CHECK_EQ(t_write_file(path, data, FSIZE, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	if (fd < 0)
		DONE();

	m = mmap(NULL, FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	r = mmap(NULL, FSIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	s = mmap(NULL, FSIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED && r != MAP_FAILED && s != MAP_FAILED);
	if (m == MAP_FAILED || r == MAP_FAILED || s == MAP_FAILED)
		DONE();

	/* Read every page (fault-around maps neighbours too). */
	CHECK(memcmp(m, data, FSIZE) == 0);
	CHECK(memcmp(r, data, FSIZE) == 0);

	/* A store to page 3 copies it: the file and the other mappings keep
	 * the old bytes, page 3 of this mapping keeps the new one. */
	m[3 * PAGE + 5] = 0xAA;
	CHECK_EQ(m[3 * PAGE + 5], 0xAA);
	CHECK_EQ(r[3 * PAGE + 5], data[3 * PAGE + 5]);
	CHECK_EQ(s[3 * PAGE + 5], data[3 * PAGE + 5]);
	CHECK(file_matches(fd, 0));

	/* write(2) to the file: pages never stored to follow it (as on Linux:
	 * they are the file's pages), the copied page does not. */
	for (i = 0; i < FSIZE; i++)
		data[i] = byte_at(i, 1);
	CHECK_EQ(pwrite(fd, data, FSIZE, 0), (ssize_t)FSIZE);
	CHECK_EQ(m[PAGE + 9], data[PAGE + 9]);
	CHECK_EQ(r[20 * PAGE], data[20 * PAGE]);
	CHECK_EQ(m[3 * PAGE + 5], 0xAA);
	CHECK_EQ(m[3 * PAGE + 6], byte_at(3 * PAGE + 6, 0));

	/* A store through the shared mapping reaches the file and the private
	 * pages not yet copied. */
	s[7 * PAGE] = 0x55;
	CHECK_EQ(r[7 * PAGE], 0x55);
	CHECK_EQ(m[7 * PAGE], 0x55);
	s[7 * PAGE] = data[7 * PAGE];

	/* mprotect to writable keeps copy-on-write: a store after it copies. */
	CHECK_EQ(mprotect(r, FSIZE, PROT_READ | PROT_WRITE), 0);
	r[10 * PAGE + 1] = 0x11;
	CHECK_EQ(r[10 * PAGE + 1], 0x11);
	CHECK(file_matches(fd, 1));
	CHECK_EQ(s[10 * PAGE + 1], data[10 * PAGE + 1]);
	CHECK_EQ(m[10 * PAGE + 1], data[10 * PAGE + 1]);

	/* A forked child's private stores stay in the child. */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		bad = 0;
		for (i = 0; i < NPAGES; i++)
			m[i * PAGE + 2] = 0xEE;
		for (i = 0; i < NPAGES; i++)
			if (m[i * PAGE + 2] != 0xEE)
				bad++;
		CHECK_EQ(bad, 0);
		CHECK(file_matches(fd, 1));
		CHECK_EQ(s[2], data[2]);
		CHECK_EQ(r[2], data[2]);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	bad = 0;
	for (i = 0; i < NPAGES; i++)
		if (i != 3 && m[i * PAGE + 2] != data[i * PAGE + 2])
			bad++;
	CHECK_EQ(bad, 0);
	CHECK(file_matches(fd, 1));

	/* A store to every page of the private mapping leaves the file. */
	memset(m, 0x77, FSIZE);
	CHECK(file_matches(fd, 1));
	CHECK_EQ(s[FSIZE - 1], data[FSIZE - 1]);

	/* A hole (a sparse file's page) reads as zeros and a store there does
	 * not fill the file's hole. */
	CHECK_EQ(ftruncate(fd, FSIZE + 4 * PAGE), 0);
	unsigned char *h = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, FSIZE);
	CHECK(h != MAP_FAILED);
	if (h != MAP_FAILED) {
		CHECK_EQ(h[0], 0);
		CHECK_EQ(h[3 * PAGE + 100], 0);
		h[PAGE] = 9;
		CHECK_EQ(h[PAGE], 9);
		unsigned char z = 1;
		CHECK_EQ(pread(fd, &z, 1, FSIZE + PAGE), 1);
		CHECK_EQ(z, 0);
		CHECK_EQ(munmap(h, 4 * PAGE), 0);
	}

	CHECK_EQ(munmap(m, FSIZE), 0);
	CHECK_EQ(munmap(r, FSIZE), 0);
	CHECK_EQ(munmap(s, FSIZE), 0);
	close(fd);
	t_rmtree(dir);
	DONE();
}
