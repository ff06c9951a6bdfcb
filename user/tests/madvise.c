/* madvise: MADV_DONTNEED zeroes anonymous private memory; errors. */
#include "t.h"
#include <sys/mman.h>

int main(void)
{
	char dir[128], path[256];
	unsigned char *p, *m;
	size_t i;
	int bad, fd;

	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		DONE();
	memset(p, 0xab, 4 * PAGE);

	/* Advice that changes nothing observable is accepted. */
	CHECK_EQ(madvise(p, 4 * PAGE, MADV_NORMAL), 0);
	CHECK_EQ(madvise(p, 4 * PAGE, MADV_WILLNEED), 0);
	CHECK_EQ(p[0], 0xab);

	/* MADV_DONTNEED on pages 1..2: they read back as zeros. */
	CHECK_EQ(madvise(p + PAGE, 2 * PAGE, MADV_DONTNEED), 0);
	bad = 0;
	for (i = PAGE; i < 3 * PAGE; i++)
		if (p[i] != 0)
			bad++;
	CHECK_EQ(bad, 0);

	/* Pages 0 and 3 are untouched. */
	bad = 0;
	for (i = 0; i < PAGE; i++)
		if (p[i] != 0xab || p[3 * PAGE + i] != 0xab)
			bad++;
	CHECK_EQ(bad, 0);

	/* The zeroed pages are usable again. */
	p[PAGE + 7] = 7;
	CHECK_EQ(p[PAGE + 7], 7);

	/* Raw syscall over the whole range. */
	CHECK_EQ(syscall(SYS_madvise, p, 4 * PAGE, MADV_DONTNEED), 0);
	CHECK_EQ(p[0] + p[PAGE + 7] + p[4 * PAGE - 1], 0);

	/* Length 0 succeeds. */
	CHECK_EQ(madvise(p, 0, MADV_DONTNEED), 0);

	/* EINVAL: unaligned start; unknown advice. */
	CHECK_ERR(madvise(p + 1, PAGE, MADV_DONTNEED), EINVAL);
	CHECK_ERR(madvise(p, PAGE, 12345), EINVAL);

	/* ENOMEM: the range is not mapped. */
	CHECK_EQ(munmap(p + 2 * PAGE, 2 * PAGE), 0);
	CHECK_ERR(madvise(p + 2 * PAGE, PAGE, MADV_DONTNEED), ENOMEM);
	CHECK_EQ(munmap(p, 2 * PAGE), 0);

	/* On a private file mapping, DONTNEED drops private changes. */
	if (t_mktmp("madvise", dir, sizeof dir) == 0) {
		t_join(path, sizeof path, dir, "f");
		CHECK_EQ(t_write_file(path, "filedata", 8, 0644), 0);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			memcpy(m, "PRIVATE!", 8);
			CHECK(memcmp(m, "PRIVATE!", 8) == 0);
			CHECK_EQ(madvise(m, PAGE, MADV_DONTNEED), 0);
			CHECK(memcmp(m, "filedata", 8) == 0);
			CHECK_EQ(munmap(m, PAGE), 0);
		}
		CHECK_EQ(close(fd), 0);
		t_rmtree(dir);
	}
	DONE();
}
