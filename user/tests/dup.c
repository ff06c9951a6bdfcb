/* dup: lowest free descriptor, shared file offset and status flags. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[16];
	int fd, d1, d2;

	if (t_mktmp("dup", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "abcdef", 6), 6);

	/* dup returns the lowest free descriptor. */
	d1 = dup(fd);
	CHECK(d1 > fd);
	d2 = dup(fd);
	CHECK(d2 > d1);
	CHECK_EQ(close(d1), 0);
	CHECK_EQ(dup(fd), d1);

	/* The duplicate shares the file offset. */
	CHECK_EQ(lseek(fd, 1, SEEK_SET), 1);
	CHECK_EQ(lseek(d1, 0, SEEK_CUR), 1);
	CHECK_EQ(read(d1, buf, 2), 2);
	CHECK(memcmp(buf, "bc", 2) == 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);
	CHECK_EQ(lseek(d2, 0, SEEK_CUR), 3);

	/* Status flags are shared: O_APPEND set on one shows on the other. */
	CHECK_EQ(fcntl(fd, F_SETFL, O_APPEND), 0);
	CHECK(fcntl(d1, F_GETFL) & O_APPEND);
	CHECK_EQ(fcntl(fd, F_SETFL, 0), 0);

	/* FD_CLOEXEC is not copied by dup. */
	CHECK_EQ(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	d1 = dup(fd);
	CHECK(d1 >= 0);
	CHECK_EQ(fcntl(d1, F_GETFD), 0);
	CHECK_EQ(close(d1), 0);

	/* Closing the original leaves the duplicate usable. */
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(lseek(d2, 0, SEEK_SET), 0);
	CHECK_EQ(read(d2, buf, 6), 6);
	CHECK(memcmp(buf, "abcdef", 6) == 0);

	/* EBADF. */
	CHECK_ERR(dup(-1), EBADF);
	CHECK_ERR(dup(999), EBADF);
	CHECK_ERR(dup(fd), EBADF);

	CHECK_EQ(close(d2), 0);
	t_rmtree(dir);
	DONE();
}
