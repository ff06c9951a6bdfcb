/* brk (raw syscall): query, grow, use, shrink, regrow zeroed, failure. */
#include "t.h"

static unsigned long sys_brk(unsigned long addr)
{
	return (unsigned long)syscall(SYS_brk, addr);
}

/* No malloc in this test: musl's allocator may use brk itself. */
int main(void)
{
	unsigned long b0, b, i;
	unsigned char *p;
	int nonzero, bad, local;

	/* Query: brk(0) returns the current break and changes nothing. */
	b0 = sys_brk(0);
	CHECK(b0 != 0);
	CHECK_EQ(sys_brk(0), b0);

	/* Grow by 64 KiB: returns the new break. */
	b = sys_brk(b0 + 65536);
	CHECK_EQ(b, b0 + 65536);
	CHECK_EQ(sys_brk(0), b0 + 65536);

	/* The new memory is zero-filled and writable. */
	p = (unsigned char *)b0;
	nonzero = 0;
	for (i = 0; i < 65536; i++)
		if (p[i])
			nonzero++;
	CHECK_EQ(nonzero, 0);
	for (i = 0; i < 65536; i++)
		p[i] = (unsigned char)(i * 13 + 1);
	bad = 0;
	for (i = 0; i < 65536; i++)
		if (p[i] != (unsigned char)(i * 13 + 1))
			bad++;
	CHECK_EQ(bad, 0);

	/* The kernel can read it (write(2) from the heap to a file). */
	{
		char dir[128], path[256];
		int fd;

		if (t_mktmp("brk", dir, sizeof dir) == 0) {
			t_join(path, sizeof path, dir, "f");
			fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
			CHECK(fd >= 0);
			CHECK_EQ(write(fd, p, 65536), 65536);
			CHECK_EQ(close(fd), 0);
			CHECK_EQ(unlink(path), 0);
			CHECK_EQ(rmdir(dir), 0);
		}
	}

	/* Shrink to one page: returns the new, lower break. */
	b = sys_brk(b0 + PAGE);
	CHECK_EQ(b, b0 + PAGE);
	CHECK_EQ(sys_brk(0), b0 + PAGE);
	/* Data below the new break survives. */
	CHECK_EQ(p[100], (unsigned char)(100 * 13 + 1));

	/* Regrowing gives zeroed memory above the old shrink point. */
	b = sys_brk(b0 + 65536);
	CHECK_EQ(b, b0 + 65536);
	nonzero = 0;
	for (i = 2 * PAGE; i < 65536; i++)
		if (p[i])
			nonzero++;
	CHECK_EQ(nonzero, 0);
	CHECK_EQ(p[100], (unsigned char)(100 * 13 + 1));

	/* A request below the initial break fails: the old break is returned. */
	CHECK_EQ(sys_brk(1), b0 + 65536);
	CHECK_EQ(sys_brk(b0 - 16 * PAGE), b0 + 65536);

	/* A request that would run into other mappings (the stack) fails. */
	CHECK_EQ(sys_brk((unsigned long)&local), b0 + 65536);

	/* Restore. */
	CHECK_EQ(sys_brk(b0), b0);
	CHECK_EQ(sys_brk(0), b0);
	DONE();
}
