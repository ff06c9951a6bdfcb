/* readv/writev error cases: EBADF, EINVAL (iovcnt, lengths), EFAULT. */
#include "t.h"
#include <sys/uio.h>

int main(void)
{
	char dir[128], path[256], buf[16];
	struct iovec iov[2], many[1025];
	int fd, i;

	if (t_mktmp("readv_writev_errors", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);

	iov[0].iov_base = buf;
	iov[0].iov_len = 4;
	iov[1].iov_base = buf + 4;
	iov[1].iov_len = 4;

	/* EBADF. */
	CHECK_ERR(readv(-1, iov, 1), EBADF);
	CHECK_ERR(readv(999, iov, 1), EBADF);
	CHECK_ERR(writev(-1, iov, 1), EBADF);
	CHECK_ERR(writev(999, iov, 1), EBADF);

	/* EINVAL: negative iovcnt or iovcnt greater than IOV_MAX (1024). */
	CHECK_ERR(syscall(SYS_readv, fd, iov, -1), EINVAL);
	CHECK_ERR(syscall(SYS_writev, fd, iov, -1), EINVAL);
	for (i = 0; i < 1025; i++) {
		many[i].iov_base = buf;
		many[i].iov_len = 1;
	}
	CHECK_ERR(readv(fd, many, 1025), EINVAL);
	CHECK_ERR(writev(fd, many, 1025), EINVAL);

	/* EINVAL: an iov_len that does not fit in ssize_t. */
	iov[0].iov_len = 4;
	iov[1].iov_len = (size_t)SSIZE_MAX + 1;
	CHECK_ERR(readv(fd, iov, 2), EINVAL);
	CHECK_ERR(writev(fd, iov, 2), EINVAL);
	iov[0].iov_len = 4;
	iov[1].iov_len = 4;

	/* EFAULT: the iovec array itself is unreadable. */
	CHECK_ERR(readv(fd, BAD_PTR, 1), EFAULT);
	CHECK_ERR(writev(fd, BAD_PTR2, 1), EFAULT);

	/* EFAULT: an iov_base that points nowhere. */
	iov[0].iov_base = BAD_PTR2;
	CHECK_ERR(readv(fd, iov, 1), EFAULT);
	CHECK_ERR(writev(fd, iov, 1), EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);

	/* The file is untouched. */
	CHECK_EQ(pread(fd, buf, sizeof buf, 0), 10);
	CHECK(memcmp(buf, "0123456789", 10) == 0);

	/* Access mode mismatches are EBADF. */
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	iov[0].iov_base = buf;
	CHECK_ERR(writev(fd, iov, 1), EBADF);
	CHECK_EQ(close(fd), 0);

	t_rmtree(dir);
	DONE();
}
