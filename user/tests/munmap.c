/* munmap: partial unmapping, EINVAL cases; kernel sees the hole (EFAULT). */
#include "t.h"
#include <sys/mman.h>

int main(void)
{
	char dir[128], path[256];
	unsigned char *p, *q;
	int fd;

	if (t_mktmp("munmap", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "sink");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);

	p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		DONE();
	memset(p, 'a', PAGE);
	memset(p + PAGE, 'b', PAGE);
	memset(p + 2 * PAGE, 'c', PAGE);

	/* The kernel can read every page before unmapping. */
	CHECK_EQ(write(fd, p, 3 * PAGE), (ssize_t)(3 * PAGE));

	/* Unmap the middle page; the outer pages keep their data. */
	CHECK_EQ(munmap(p + PAGE, PAGE), 0);
	CHECK_EQ(p[0], 'a');
	CHECK_EQ(p[PAGE - 1], 'a');
	CHECK_EQ(p[2 * PAGE], 'c');
	CHECK_EQ(p[3 * PAGE - 1], 'c');

	/* The kernel now sees a hole: copying from it fails with EFAULT. */
	CHECK_ERR(write(fd, p + PAGE, 16), EFAULT);
	CHECK_ERR(pread(fd, p + PAGE, 16, 0), EFAULT);
	CHECK_EQ(write(fd, p, 16), 16);

	/* Unmapping an already unmapped range succeeds. */
	CHECK_EQ(munmap(p + PAGE, PAGE), 0);

	/* The hole can be refilled with MAP_FIXED; it is zero. */
	q = mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(q == p + PAGE);
	CHECK_EQ(p[PAGE], 0);

	/* One munmap may span several mappings. */
	CHECK_EQ(munmap(p, 3 * PAGE), 0);
	CHECK_ERR(write(fd, p, 16), EFAULT);
	CHECK_ERR(write(fd, p + 2 * PAGE, 16), EFAULT);

	/* A length that is not page-multiple is rounded up. */
	q = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	q[PAGE] = 1;
	CHECK_EQ(munmap(q, 1), 0);
	CHECK_ERR(write(fd, q, 1), EFAULT);
	CHECK_EQ(q[PAGE], 1);
	CHECK_EQ(write(fd, q + PAGE, 1), 1);
	CHECK_EQ(munmap(q + PAGE, PAGE), 0);

	/* EINVAL: unaligned address. */
	CHECK_ERR(munmap((void *)((unsigned long)q + 1), PAGE), EINVAL);
	CHECK_ERR(syscall(SYS_munmap, (unsigned long)q + 123, PAGE), EINVAL);

	/* EINVAL: zero length. */
	CHECK_ERR(munmap(q, 0), EINVAL);
	CHECK_ERR(syscall(SYS_munmap, q, 0), EINVAL);

	/* EINVAL: range outside the user address space. */
	CHECK_ERR(syscall(SYS_munmap, 0xffff800000000000UL, PAGE), EINVAL);

	CHECK_EQ(close(fd), 0);
	t_rmtree(dir);
	DONE();
}
