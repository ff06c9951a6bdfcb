/* mmap MAP_PRIVATE of a regular file: contents, offsets, copy-on-write. */
#include "t.h"
#include <sys/mman.h>

#define FSIZE (2 * PAGE + 100)

int main(void)
{
	char dir[128], path[256];
	static unsigned char data[FSIZE], back[FSIZE];
	unsigned char *m, *m2;
	size_t i;
	int fd, bad;

	if (t_mktmp("mmap_file", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	for (i = 0; i < FSIZE; i++)
		data[i] = (unsigned char)(i * 31 + 7);
	CHECK_EQ(t_write_file(path, data, FSIZE, 0644), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);

	/* Whole file, private read/write mapping of a read-only fd. */
	m = mmap(NULL, FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		DONE();
	CHECK_EQ((unsigned long)m % PAGE, 0);
	CHECK(memcmp(m, data, FSIZE) == 0);

	/* The tail of the last page past EOF reads as zero. */
	bad = 0;
	for (i = FSIZE; i < 3 * PAGE; i++)
		if (m[i])
			bad++;
	CHECK_EQ(bad, 0);

	/* Private writes are visible in the mapping... */
	memset(m + 10, 'Z', 50);
	m[PAGE + 1] = 0;
	CHECK_EQ(m[10], 'Z');
	CHECK_EQ(m[PAGE + 1], 0);

	/* ...but are never written back to the file. */
	CHECK_EQ(pread(fd, back, FSIZE, 0), FSIZE);
	CHECK(memcmp(back, data, FSIZE) == 0);

	/* A second private mapping sees the file, not the first one's writes. */
	m2 = mmap(NULL, FSIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m2 != MAP_FAILED);
	CHECK(m2 != MAP_FAILED && memcmp(m2, data, FSIZE) == 0);
	CHECK_EQ(munmap(m2, FSIZE), 0);

	/* Mapping at a page-aligned offset. */
	m2 = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, PAGE);
	CHECK(m2 != MAP_FAILED);
	CHECK(m2 != MAP_FAILED && memcmp(m2, data + PAGE, PAGE) == 0);
	CHECK_EQ(munmap(m2, PAGE), 0);

	/* Offset into the partial last page. */
	m2 = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 2 * PAGE);
	CHECK(m2 != MAP_FAILED);
	CHECK(m2 != MAP_FAILED && memcmp(m2, data + 2 * PAGE, 100) == 0);
	CHECK(m2 != MAP_FAILED && m2[100] == 0 && m2[PAGE - 1] == 0);
	CHECK_EQ(munmap(m2, PAGE), 0);

	/* The mapping outlives the file descriptor. */
	m2 = mmap(NULL, FSIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m2 != MAP_FAILED);
	CHECK_EQ(close(fd), 0);
	CHECK(m2 != MAP_FAILED && memcmp(m2, data, FSIZE) == 0);

	/* ...and the file being unlinked. */
	CHECK_EQ(unlink(path), 0);
	CHECK(m2 != MAP_FAILED && m2[PAGE + 3] == data[PAGE + 3]);
	CHECK_EQ(munmap(m2, FSIZE), 0);

	/* The kernel reads the private copy, not the file (write(2) from it). */
	CHECK_EQ(t_write_file(path, m, FSIZE, 0644), 0);
	CHECK_EQ(t_read_file(path, (char *)back, sizeof back), FSIZE - 1);
	CHECK_EQ(back[10], 'Z');

	CHECK_EQ(munmap(m, FSIZE), 0);
	t_rmtree(dir);
	DONE();
}
