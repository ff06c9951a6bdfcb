/* preadv/pwritev and preadv2/pwritev2: positional vectored I/O, the
 * offset -1 of the *v2 calls, RWF_* flags, and Linux's errors. */
#include "next.h"

#ifndef RWF_HIPRI
#define RWF_HIPRI 0x1
#define RWF_DSYNC 0x2
#define RWF_SYNC 0x4
#define RWF_NOWAIT 0x8
#define RWF_APPEND 0x10
#endif

static long p2(int nr, int fd, const struct iovec *iov, int cnt, long off, int flags)
{
	return syscall(nr, fd, iov, cnt, off, 0L, flags);
}

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	char a[4], b[8], big[16];
	struct iovec rv[2] = { { a, sizeof a }, { b, sizeof b } };
	int fd, p[2];

	if (t_mktmp("io_preadv", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	/* A memfd is tmpfs on Linux, like /tmp here. */
	fd = memfd_create("preadv", 0);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789abcdef", 16), 16);

	/* preadv at an offset, scattered, position untouched. */
	CHECK_EQ(lseek(fd, 2, SEEK_SET), 2);
	CHECK_EQ(preadv(fd, rv, 2, 3), 12);
	CHECK(!memcmp(a, "3456", 4) && !memcmp(b, "789abcde", 8));
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
	/* Short at end of file, 0 past it. */
	CHECK_EQ(preadv(fd, rv, 2, 10), 6);
	CHECK(!memcmp(a, "abcd", 4) && !memcmp(b, "ef", 2));
	CHECK_EQ(preadv(fd, rv, 2, 100), 0);

	/* pwritev gathers, position untouched; a hole before the offset. */
	{
		struct iovec wv[2] = { { "XY", 2 }, { "Z", 1 } };
		CHECK_EQ(pwritev(fd, wv, 2, 1), 3);
		CHECK_EQ(pread(fd, big, 16, 0), 16);
		CHECK(!memcmp(big, "0XYZ456789abcdef", 16));
		CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
		CHECK_EQ(pwritev(fd, wv, 2, 20), 3);
		CHECK_EQ(lseek(fd, 0, SEEK_END), 23);
		CHECK_EQ(pread(fd, big, 4, 16), 4);
		CHECK(!memcmp(big, "\0\0\0\0", 4));
		CHECK_EQ(ftruncate(fd, 16), 0);
	}

	/* preadv2/pwritev2 with offset -1 use and move the file position. */
	CHECK_EQ(lseek(fd, 4, SEEK_SET), 4);
	CHECK_EQ(p2(SYS_preadv2, fd, rv, 1, -1, 0), 4);
	CHECK(!memcmp(a, "4567", 4));
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
	CHECK_EQ(p2(SYS_preadv2, fd, rv, 1, 0, 0), 4);
	CHECK(!memcmp(a, "0XYZ", 4));
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
	{
		struct iovec wv = { "ww", 2 };
		CHECK_EQ(p2(SYS_pwritev2, fd, &wv, 1, -1, 0), 2);
		CHECK_EQ(lseek(fd, 0, SEEK_CUR), 10);
		CHECK_EQ(pread(fd, big, 16, 0), 16);
		CHECK(!memcmp(big, "0XYZ4567wwabcdef", 16));
		/* RWF_APPEND writes at the end, whatever the offset. */
		CHECK_EQ(p2(SYS_pwritev2, fd, &wv, 1, 0, RWF_APPEND), 2);
		CHECK_EQ(lseek(fd, 0, SEEK_END), 18);
		CHECK_EQ(pread(fd, big, 2, 16), 2);
		CHECK(!memcmp(big, "ww", 2));
		/* HIPRI, DSYNC and SYNC are accepted. */
		CHECK_EQ(p2(SYS_pwritev2, fd, &wv, 1, 0, RWF_HIPRI | RWF_DSYNC | RWF_SYNC), 2);
		CHECK_EQ(p2(SYS_preadv2, fd, rv, 1, 0, RWF_HIPRI), 4);
		CHECK(!memcmp(a, "wwYZ", 4));
		/* RWF_NOWAIT: tmpfs files cannot honour it. */
		CHECK_ERR(p2(SYS_preadv2, fd, rv, 1, 0, RWF_NOWAIT), EOPNOTSUPP);
		CHECK_ERR(p2(SYS_pwritev2, fd, &wv, 1, 0, RWF_NOWAIT), EOPNOTSUPP);
		/* Unknown flags. */
		CHECK_ERR(p2(SYS_preadv2, fd, rv, 1, 0, 0x40000000), EOPNOTSUPP);
		CHECK_ERR(p2(SYS_pwritev2, fd, &wv, 1, 0, 0x40000000), EOPNOTSUPP);
	}

	/* Offsets: negative ones are EINVAL (checked before the fd); -1 is
	 * only special for the *v2 calls. */
	CHECK_ERR(preadv(fd, rv, 1, -1), EINVAL);
	CHECK_ERR(pwritev(fd, rv, 1, -5), EINVAL);
	CHECK_ERR(syscall(SYS_preadv, -1, rv, 1, -1L, 0L), EINVAL);
	CHECK_ERR(p2(SYS_preadv2, fd, rv, 1, -2, 0), EINVAL);
	CHECK_ERR(p2(SYS_pwritev2, fd, rv, 1, -2, 0), EINVAL);

	/* Descriptors. */
	CHECK_ERR(preadv(-1, rv, 1, 0), EBADF);
	CHECK_ERR(preadv(999, rv, 1, 0), EBADF);
	{
		int wo, ro, d, op;
		struct iovec wv = { "x", 1 };
		CHECK_EQ(t_write_file(path, "hello", 5, 0644), 0);
		wo = open(path, O_WRONLY);
		ro = open(path, O_RDONLY);
		op = open(path, O_PATH);
		d = open(dir, O_RDONLY | O_DIRECTORY);
		CHECK(wo >= 0 && ro >= 0 && op >= 0 && d >= 0);
		CHECK_ERR(preadv(wo, rv, 1, 0), EBADF);
		CHECK_ERR(pwritev(ro, &wv, 1, 0), EBADF);
		CHECK_ERR(preadv(op, rv, 1, 0), EBADF);
		CHECK_ERR(preadv(d, rv, 1, 0), EISDIR);
		CHECK_EQ(preadv(d, rv, 0, 0), 0);
		CHECK_EQ(preadv(ro, rv, 1, 1), 4);
		CHECK(!memcmp(a, "ello", 4));
		/* O_APPEND: pwritev appends, as pwrite does on Linux. */
		close(wo);
		wo = open(path, O_WRONLY | O_APPEND);
		CHECK_EQ(pwritev(wo, &wv, 1, 0), 1);
		CHECK_EQ(t_read_file(path, big, sizeof big), 6);
		CHECK(!memcmp(big, "hellox", 6));
		close(wo);
		close(ro);
		close(op);
		close(d);
	}

	/* Vectors: count 0, too many, bad address, overflowing length. */
	CHECK_EQ(preadv(fd, rv, 0, 0), 0);
	CHECK_ERR(syscall(SYS_preadv, fd, rv, 1025, 0L, 0L), EINVAL);
	CHECK_ERR(syscall(SYS_preadv, fd, BAD_PTR2, 1, 0L, 0L), EFAULT);
	{
		struct iovec huge[2] = { { a, 4 }, { b, (size_t)-1 } };
		CHECK_ERR(preadv(fd, huge, 2, 0), EINVAL);
		struct iovec bad = { BAD_PTR2, 4 };
		CHECK_ERR(preadv(fd, &bad, 1, 0), EFAULT);
	}

	/* Pipes: positional I/O is ESPIPE (before the vector is looked at);
	 * the *v2 calls at -1 read and write the stream, and RWF_NOWAIT
	 * makes an empty pipe EAGAIN instead of blocking. */
	CHECK_EQ(pipe(p), 0);
	{
		struct iovec wv[2] = { { "ab", 2 }, { "cde", 3 } };
		CHECK_ERR(preadv(p[0], rv, 1, 0), ESPIPE);
		CHECK_ERR(syscall(SYS_preadv, p[0], rv, 1025, 0L, 0L), ESPIPE);
		CHECK_ERR(pwritev(p[1], wv, 2, 0), ESPIPE);
		CHECK_ERR(p2(SYS_preadv2, p[0], rv, 1, 0, 0), ESPIPE);
		CHECK_ERR(p2(SYS_preadv2, p[0], rv, 1, -1, RWF_NOWAIT), EAGAIN);
		CHECK_EQ(p2(SYS_pwritev2, p[1], wv, 2, -1, RWF_NOWAIT), 5);
		CHECK_EQ(p2(SYS_preadv2, p[0], rv, 2, -1, RWF_NOWAIT), 5);
		CHECK(!memcmp(a, "abcd", 4) && b[0] == 'e');
		CHECK_EQ(p2(SYS_pwritev2, p[1], wv, 1, -1, 0), 2);
		CHECK_EQ(p2(SYS_preadv2, p[0], rv, 1, -1, 0), 2);
	}
	/* A full pipe: RWF_NOWAIT writes fail with EAGAIN. */
	{
		static char fill[65536];
		struct iovec wv = { fill, sizeof fill };
		CHECK_EQ(p2(SYS_pwritev2, p[1], &wv, 1, -1, 0), 65536);
		CHECK_ERR(p2(SYS_pwritev2, p[1], &wv, 1, -1, RWF_NOWAIT), EAGAIN);
	}
	close(p[0]);
	close(p[1]);

	/* /dev/null takes NOWAIT. */
	{
		int n = open("/dev/null", O_RDWR);
		struct iovec wv = { "x", 1 };
		CHECK(n >= 0);
		CHECK_EQ(p2(SYS_preadv2, n, rv, 1, 0, RWF_NOWAIT), 0);
		CHECK_EQ(p2(SYS_pwritev2, n, &wv, 1, -1, RWF_NOWAIT), 1);
		close(n);
	}

	close(fd);
	t_rmtree(dir);
	DONE();
}
