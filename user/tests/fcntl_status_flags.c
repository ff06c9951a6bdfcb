/* fcntl F_GETFL/F_SETFL: access mode reporting and O_APPEND toggling. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[32];
	int fd, ro, wo;

	if (t_mktmp("fcntl_status_flags", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);

	/* F_GETFL reports the access mode used at open. */
	ro = open(path, O_RDONLY);
	wo = open(path, O_WRONLY);
	fd = open(path, O_RDWR);
	CHECK(ro >= 0 && wo >= 0 && fd >= 0);
	CHECK_EQ(fcntl(ro, F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(wo, F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_APPEND, 0);

	/* Setting O_APPEND makes writes go to the end. */
	CHECK_EQ(fcntl(fd, F_SETFL, O_APPEND), 0);
	CHECK(fcntl(fd, F_GETFL) & O_APPEND);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "A", 1), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 11);

	/* Clearing O_APPEND restores positional writes. */
	CHECK_EQ(fcntl(fd, F_SETFL, 0), 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_APPEND, 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "B", 1), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 1);
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 11);
	CHECK(memcmp(buf, "B123456789A", 11) == 0);

	/* F_SETFL cannot change the access mode. */
	CHECK_EQ(fcntl(ro, F_SETFL, O_RDWR), 0);
	CHECK_EQ(fcntl(ro, F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_ERR(write(ro, "x", 1), EBADF);

	/* O_NONBLOCK can be toggled and read back. */
	CHECK_EQ(fcntl(wo, F_SETFL, O_NONBLOCK), 0);
	CHECK(fcntl(wo, F_GETFL) & O_NONBLOCK);
	CHECK_EQ(fcntl(wo, F_SETFL, 0), 0);
	CHECK_EQ(fcntl(wo, F_GETFL) & O_NONBLOCK, 0);

	/* Creation flags are not reported back. */
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_CREAT | O_EXCL | O_TRUNC), 0);

	/* Raw syscall round trip. */
	CHECK_EQ(syscall(SYS_fcntl, fd, F_SETFL, O_APPEND), 0);
	CHECK(syscall(SYS_fcntl, fd, F_GETFL) & O_APPEND);

	/* EBADF. */
	CHECK_ERR(fcntl(-1, F_GETFL), EBADF);
	CHECK_ERR(fcntl(999, F_GETFL), EBADF);
	CHECK_ERR(fcntl(999, F_SETFL, O_APPEND), EBADF);

	CHECK_EQ(close(ro), 0);
	CHECK_EQ(close(wo), 0);
	CHECK_EQ(close(fd), 0);
	t_rmtree(dir);
	DONE();
}
