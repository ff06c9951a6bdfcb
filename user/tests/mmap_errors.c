/* mmap errors (raw syscall): EINVAL, EBADF, EACCES, ENODEV, ENOMEM. */
#include "t.h"
#include <sys/mman.h>

static long mmap_raw(void *a, size_t len, int prot, int flags, int fd, long off)
{
	return syscall(SYS_mmap, a, len, prot, flags, fd, off);
}

int main(void)
{
	char dir[128], path[256];
	int rfd, wfd, dfd;
	const int RW = PROT_READ | PROT_WRITE;

	if (t_mktmp("mmap_errors", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	{
		static char page[2 * PAGE];
		CHECK_EQ(t_write_file(path, page, sizeof page, 0644), 0);
	}
	rfd = open(path, O_RDONLY);
	wfd = open(path, O_WRONLY);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(rfd >= 0 && wfd >= 0 && dfd >= 0);

	/* EINVAL: zero length (anonymous and file). */
	CHECK_ERR(mmap_raw(NULL, 0, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL);
	CHECK_ERR(mmap_raw(NULL, 0, PROT_READ, MAP_PRIVATE, rfd, 0), EINVAL);
	CHECK_ERR(mmap(NULL, 0, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL);

	/* EINVAL: offset not a multiple of the page size. */
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, rfd, 1), EINVAL);
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, rfd, 100), EINVAL);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, rfd, 100), EINVAL);

	/* EINVAL: neither MAP_PRIVATE nor MAP_SHARED. */
	CHECK_ERR(mmap_raw(NULL, PAGE, RW, MAP_ANONYMOUS, -1, 0), EINVAL);
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, 0, rfd, 0), EINVAL);

	/* EINVAL: MAP_FIXED at an unaligned address. */
	CHECK_ERR(mmap_raw((void *)0x10000001UL, PAGE, RW,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), EINVAL);

	/* EBADF: file mapping with a bad fd. */
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, -1, 0), EBADF);
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, 999, 0), EBADF);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, 999, 0), EBADF);

	/* EACCES: fd not open for reading. */
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, wfd, 0), EACCES);
	/* EACCES: shared writable mapping of a read-only fd. */
	CHECK_ERR(mmap_raw(NULL, PAGE, RW, MAP_SHARED, rfd, 0), EACCES);

	/* ENODEV: a directory cannot be mapped. */
	CHECK_ERR(mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, dfd, 0), ENODEV);

	/* ENOMEM: length larger than the address space. */
	CHECK_ERR(mmap_raw(NULL, 1UL << 60, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		  ENOMEM);

	/* Sanity: the valid private read mapping works. */
	{
		long r = mmap_raw(NULL, PAGE, PROT_READ, MAP_PRIVATE, rfd, PAGE);
		CHECK(r != -1);
		if (r != -1)
			CHECK_EQ(munmap((void *)r, PAGE), 0);
	}

	CHECK_EQ(close(rfd), 0);
	CHECK_EQ(close(wfd), 0);
	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
