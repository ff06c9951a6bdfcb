/* fcntl F_DUPFD / F_DUPFD_CLOEXEC: lowest free fd >= arg, errors. */
#include "t.h"
#include <sys/resource.h>

int main(void)
{
	char dir[128], path[256];
	struct rlimit rl;
	int fd, d, d2;

	if (t_mktmp("fcntl_dupfd", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "abc", 3, 0644), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);

	/* F_DUPFD 0 behaves like dup(). */
	d = fcntl(fd, F_DUPFD, 0);
	CHECK(d > fd);
	CHECK_EQ(close(d), 0);

	/* The result is the lowest free fd >= arg. */
	d = fcntl(fd, F_DUPFD, 40);
	CHECK_EQ(d, 40);
	d2 = fcntl(fd, F_DUPFD, 40);
	CHECK_EQ(d2, 41);
	CHECK_EQ(close(d), 0);
	CHECK_EQ(fcntl(fd, F_DUPFD, 40), 40);
	CHECK_EQ(close(40), 0);
	CHECK_EQ(close(41), 0);

	/* The duplicate shares the offset and has FD_CLOEXEC clear. */
	CHECK_EQ(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	d = fcntl(fd, F_DUPFD, 60);
	CHECK_EQ(d, 60);
	CHECK_EQ(fcntl(d, F_GETFD), 0);
	CHECK_EQ(lseek(fd, 2, SEEK_SET), 2);
	CHECK_EQ(lseek(d, 0, SEEK_CUR), 2);
	CHECK_EQ(close(d), 0);

	/* F_DUPFD_CLOEXEC sets FD_CLOEXEC on the new descriptor. */
	d = fcntl(fd, F_DUPFD_CLOEXEC, 70);
	CHECK_EQ(d, 70);
	CHECK_EQ(fcntl(d, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(close(d), 0);

	/* Raw syscall. */
	CHECK_EQ(syscall(SYS_fcntl, fd, F_DUPFD, 80), 80);
	CHECK_EQ(close(80), 0);

	/* EINVAL: negative arg or arg >= RLIMIT_NOFILE. */
	CHECK_ERR(fcntl(fd, F_DUPFD, -1), EINVAL);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)INT_MAX)
		CHECK_ERR(fcntl(fd, F_DUPFD, (int)rl.rlim_cur), EINVAL);

	/* EBADF. */
	CHECK_ERR(fcntl(-1, F_DUPFD, 0), EBADF);
	CHECK_ERR(fcntl(999, F_DUPFD, 0), EBADF);

	CHECK_EQ(close(fd), 0);
	t_rmtree(dir);
	DONE();
}
