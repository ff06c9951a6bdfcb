/* F_DUPFD and F_DUPFD_CLOEXEC: lowest free fd >= arg, the close-on-exec
 * flag, sharing of the file offset, EINVAL for negative or too-large
 * arguments, EMFILE at the limit. */
#include "next.h"

int main(void)
{
	struct rlimit rl, low;
	int fd, d1, d2, d3;

	fd = open("/dev/null", O_RDONLY);
	CHECK(fd >= 0);
	d1 = fcntl(fd, F_DUPFD_CLOEXEC, 50);
	CHECK_EQ(d1, 50);
	CHECK_EQ(fcntl(d1, F_GETFD), FD_CLOEXEC);
	d2 = fcntl(fd, F_DUPFD_CLOEXEC, 50);
	CHECK_EQ(d2, 51);
	d3 = fcntl(fd, F_DUPFD, 50);
	CHECK_EQ(d3, 52);
	CHECK_EQ(fcntl(d3, F_GETFD), 0);
	close(d1);
	/* The lowest free slot is reused. */
	CHECK_EQ(fcntl(fd, F_DUPFD_CLOEXEC, 0) < 50, 1);
	CHECK_EQ(fcntl(fd, F_DUPFD_CLOEXEC, 49), 49);
	CHECK_EQ(fcntl(fd, F_DUPFD_CLOEXEC, 49), 50);

	/* A shared offset. */
	{
		char dir[PATH_MAX], path[PATH_MAX];
		int f, g;

		if (t_mktmp("fcntl_dupfd_cloexec", dir, sizeof dir) == 0) {
			t_join(path, sizeof path, dir, "f");
			t_write_file(path, "abcdef", 6, 0644);
			f = open(path, O_RDONLY);
			g = fcntl(f, F_DUPFD_CLOEXEC, 0);
			CHECK_EQ(lseek(f, 3, SEEK_SET), 3);
			CHECK_EQ(lseek(g, 0, SEEK_CUR), 3);
			close(f);
			close(g);
			t_rmtree(dir);
		}
	}

	/* Errors. */
	CHECK_ERR(fcntl(fd, F_DUPFD_CLOEXEC, -1), EINVAL);
	getrlimit(RLIMIT_NOFILE, &rl);
	CHECK_ERR(fcntl(fd, F_DUPFD_CLOEXEC, (int)rl.rlim_cur), EINVAL);
	CHECK_ERR(fcntl(fd, F_DUPFD_CLOEXEC, INT_MAX), EINVAL);
	CHECK_ERR(fcntl(9999, F_DUPFD_CLOEXEC, 0), EBADF);
	/* At the limit: EMFILE. */
	low = rl;
	low.rlim_cur = 60;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	CHECK_EQ(fcntl(fd, F_DUPFD_CLOEXEC, 59), 59);
	CHECK_ERR(fcntl(fd, F_DUPFD_CLOEXEC, 59), EMFILE);
	CHECK_ERR(fcntl(fd, F_DUPFD_CLOEXEC, 60), EINVAL);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	DONE();
}
