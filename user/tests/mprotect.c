/*
 * mprotect (raw syscall): read-only and back, PROT_NONE, errors.
 * Protection is observed without signals: the kernel's copy to/from user
 * memory fails with EFAULT on pages that lack the needed permission.
 */
#include "t.h"
#include <sys/mman.h>

static long mprotect_raw(void *a, size_t len, int prot)
{
	return syscall(SYS_mprotect, a, len, prot);
}

int main(void)
{
	char dir[128], path[256], buf[64];
	unsigned char *p;
	int fd;

	if (t_mktmp("mprotect", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789abcdef", 16), 16);

	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		DONE();
	memset(p, 'p', 2 * PAGE);

	/* Writable: read(2) into the page works. */
	CHECK_EQ(pread(fd, p, 4, 0), 4);
	CHECK(memcmp(p, "0123", 4) == 0);

	/* Read-only: the kernel cannot write into it, but can read from it. */
	CHECK_EQ(mprotect_raw(p, PAGE, PROT_READ), 0);
	CHECK_ERR(pread(fd, p, 4, 4), EFAULT);
	CHECK(memcmp(p, "0123", 4) == 0);
	CHECK_EQ(pwrite(fd, p, 4, 16), 4);
	/* The second page is unaffected. */
	CHECK_EQ(pread(fd, p + PAGE, 4, 4), 4);
	CHECK(memcmp(p + PAGE, "4567", 4) == 0);

	/* Back to read/write: everything works again, data preserved. */
	CHECK_EQ(mprotect_raw(p, PAGE, PROT_READ | PROT_WRITE), 0);
	CHECK_EQ(pread(fd, p, 4, 4), 4);
	CHECK(memcmp(p, "4567", 4) == 0);
	p[100] = 'w';
	CHECK_EQ(p[100], 'w');

	/* PROT_NONE: the kernel can neither read nor write it. */
	CHECK_EQ(mprotect_raw(p, 2 * PAGE, PROT_NONE), 0);
	CHECK_ERR(pwrite(fd, p, 4, 0), EFAULT);
	CHECK_ERR(pread(fd, p + PAGE, 4, 0), EFAULT);
	CHECK_EQ(mprotect_raw(p, 2 * PAGE, PROT_READ | PROT_WRITE), 0);
	CHECK_EQ(p[100], 'w');
	CHECK_EQ(p[PAGE], '4');

	/* The libc wrapper works too. */
	CHECK_EQ(mprotect(p, PAGE, PROT_READ), 0);
	CHECK_ERR(pread(fd, p, 1, 0), EFAULT);
	CHECK_EQ(mprotect(p, PAGE, PROT_READ | PROT_WRITE), 0);

	/* Length 0 is a no-op success; length is rounded up to pages. */
	CHECK_EQ(mprotect_raw(p, 0, PROT_READ), 0);
	CHECK_EQ(pread(fd, p, 1, 0), 1);
	CHECK_EQ(mprotect_raw(p, 1, PROT_READ), 0);
	CHECK_ERR(pread(fd, p + PAGE - 1, 1, 0), EFAULT);
	CHECK_EQ(mprotect_raw(p, 1, PROT_READ | PROT_WRITE), 0);

	/* EINVAL: unaligned address. */
	CHECK_ERR(mprotect_raw(p + 1, PAGE, PROT_READ), EINVAL);
	CHECK_ERR(mprotect_raw(p + PAGE / 2, PAGE, PROT_READ), EINVAL);

	/* EINVAL: unknown protection bits. */
	CHECK_ERR(mprotect_raw(p, PAGE, 0x100), EINVAL);

	/* ENOMEM: the range is not (fully) mapped. */
	CHECK_EQ(munmap(p + PAGE, PAGE), 0);
	CHECK_ERR(mprotect_raw(p + PAGE, PAGE, PROT_READ), ENOMEM);
	CHECK_ERR(mprotect_raw(p, 2 * PAGE, PROT_READ), ENOMEM);

	CHECK_EQ(munmap(p, PAGE), 0);
	CHECK_EQ(close(fd), 0);
	(void)buf;
	t_rmtree(dir);
	DONE();
}
