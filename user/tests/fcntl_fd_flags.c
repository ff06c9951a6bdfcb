/* fcntl F_GETFD/F_SETFD: the FD_CLOEXEC descriptor flag; bad commands. */
#include "t.h"

int main(void)
{
	char dir[128], path[256];
	int fd, d;

	if (t_mktmp("fcntl_fd_flags", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "abc", 3, 0644), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);

	/* Fresh descriptor: no FD_CLOEXEC. */
	CHECK_EQ(fcntl(fd, F_GETFD), 0);

	/* Set, read back, clear, read back. */
	CHECK_EQ(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_SETFD, 0), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);

	/* Only FD_CLOEXEC is stored; other bits are ignored. */
	CHECK_EQ(fcntl(fd, F_SETFD, 0xff), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_SETFD, 0xfe), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);

	/* The flag belongs to the descriptor, not the open file. */
	d = dup(fd);
	CHECK(d >= 0);
	CHECK_EQ(fcntl(d, F_SETFD, FD_CLOEXEC), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_EQ(fcntl(d, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(close(d), 0);

	/* Raw syscall. */
	CHECK_EQ(syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC), 0);
	CHECK_EQ(syscall(SYS_fcntl, fd, F_GETFD), FD_CLOEXEC);

	/* EBADF. */
	CHECK_ERR(fcntl(-1, F_GETFD), EBADF);
	CHECK_ERR(fcntl(999, F_GETFD), EBADF);
	CHECK_ERR(fcntl(999, F_SETFD, FD_CLOEXEC), EBADF);

	/* EINVAL: unknown command. */
	CHECK_ERR(syscall(SYS_fcntl, fd, 0x7fff, 0), EINVAL);

	CHECK_EQ(close(fd), 0);
	CHECK_ERR(fcntl(fd, F_GETFD), EBADF);
	t_rmtree(dir);
	DONE();
}
