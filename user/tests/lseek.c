/* lseek: SEEK_SET/SEEK_CUR/SEEK_END, seeking past EOF, errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[32];
	struct stat st;
	int fd, dfd, i;

	if (t_mktmp("lseek", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);

	/* SEEK_SET to absolute offsets. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(lseek(fd, 4, SEEK_SET), 4);
	CHECK_EQ(read(fd, buf, 1), 1);
	CHECK_EQ(buf[0], '4');

	/* SEEK_CUR relative to the current offset (now 5). */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(lseek(fd, 2, SEEK_CUR), 7);
	CHECK_EQ(lseek(fd, -3, SEEK_CUR), 4);
	CHECK_EQ(read(fd, buf, 1), 1);
	CHECK_EQ(buf[0], '4');

	/* SEEK_END relative to the file size. */
	CHECK_EQ(lseek(fd, 0, SEEK_END), 10);
	CHECK_EQ(lseek(fd, -1, SEEK_END), 9);
	CHECK_EQ(read(fd, buf, 1), 1);
	CHECK_EQ(buf[0], '9');

	/* EINVAL when the resulting offset would be negative; offset kept. */
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CHECK_ERR(lseek(fd, -4, SEEK_CUR), EINVAL);
	CHECK_ERR(lseek(fd, -11, SEEK_END), EINVAL);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);

	/* EINVAL on an unknown whence. */
	CHECK_ERR(lseek(fd, 0, 12345), EINVAL);
	CHECK_ERR(lseek(fd, 0, -1), EINVAL);

	/* Seeking past EOF is allowed and does not change the size... */
	CHECK_EQ(lseek(fd, 100, SEEK_SET), 100);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 10);
	CHECK_EQ(read(fd, buf, sizeof buf), 0);
	CHECK_EQ(lseek(fd, 10, SEEK_END), 20);

	/* ...until a write, which leaves a hole that reads as zeros. */
	CHECK_EQ(write(fd, "Z", 1), 1);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 21);
	CHECK_EQ(lseek(fd, 10, SEEK_SET), 10);
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(read(fd, buf, sizeof buf), 11);
	for (i = 0; i < 10; i++)
		CHECK_EQ(buf[i], 0);
	CHECK_EQ(buf[10], 'Z');

	/* Raw syscall agrees with the wrapper. */
	CHECK_EQ(syscall(SYS_lseek, fd, 2L, SEEK_SET), 2);
	CHECK_EQ(syscall(SYS_lseek, fd, 0L, SEEK_CUR), 2);

	/* EBADF. */
	CHECK_ERR(lseek(-1, 0, SEEK_SET), EBADF);
	CHECK_ERR(lseek(999, 0, SEEK_SET), EBADF);
	CHECK_EQ(close(fd), 0);
	CHECK_ERR(lseek(fd, 0, SEEK_SET), EBADF);

	/* Directories are seekable back to the start. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ(lseek(dfd, 0, SEEK_SET), 0);
	CHECK_EQ(close(dfd), 0);

	t_rmtree(dir);
	DONE();
}
