/* RLIMIT_NOFILE is enforced: open/dup/pipe/socket-less creators fail with
 * EMFILE at the soft limit, dup2 to an fd at or above it is EBADF,
 * F_DUPFD there EINVAL; the soft limit cannot exceed the hard one; a
 * non-root process cannot raise its hard limit; children inherit it. */
#include "next.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>

int main(void)
{
	struct rlimit rl, lim;
	int fds[64], n = 0, i, p[2], fd;
	pid_t pid;

	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	lim.rlim_cur = 16;
	lim.rlim_max = rl.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);

	for (i = 0; i < 64; i++) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			break;
		fds[n++] = fd;
	}
	CHECK_EQ(fd, -1);
	CHECK_EQ(errno, EMFILE);
	/* Exactly the fds 0..15 are in use now. */
	CHECK_EQ(fds[n - 1], 15);
	CHECK_ERR(dup(0), EMFILE);
	CHECK_ERR(pipe(p), EMFILE);
	CHECK_ERR(eventfd(0, 0), EMFILE);
	CHECK_ERR(epoll_create1(0), EMFILE);
	CHECK_ERR(fcntl(0, F_DUPFD, 0), EMFILE);
	CHECK_ERR(dup2(0, 16), EBADF);
	CHECK_ERR(dup3(0, 100, 0), EBADF);
	CHECK_ERR(fcntl(0, F_DUPFD, 16), EINVAL);
	/* dup2 onto an existing fd below the limit still works. */
	CHECK_EQ(dup2(0, fds[n - 1]), fds[n - 1]);
	/* Freeing one makes room for exactly one. */
	close(fds[--n]);
	fd = open("/dev/null", O_RDONLY);
	CHECK_EQ(fd, 15);
	CHECK_ERR(open("/dev/null", O_RDONLY), EMFILE);
	close(fd);

	/* Lowering below open fds is allowed; they stay open. */
	lim.rlim_cur = 4;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	CHECK(fcntl(fds[n - 1], F_GETFD) >= 0);
	CHECK_ERR(open("/dev/null", O_RDONLY), EMFILE);
	/* Inherited by a child. */
	pid = fork();
	if (pid == 0) {
		struct rlimit c;

		getrlimit(RLIMIT_NOFILE, &c);
		_exit(c.rlim_cur == 4 ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));
	for (i = 3; i < n; i++)
		close(fds[i]);

	/* soft > hard: EINVAL. */
	lim.rlim_cur = 100;
	lim.rlim_max = 50;
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &lim), EINVAL);
	/* Raising the hard limit above nr_open is EPERM even for root. */
	lim.rlim_cur = lim.rlim_max = (rlim_t)1 << 40;
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &lim), EPERM);

	/* Non-root may lower but not raise the hard limit. */
	if (t_is_root()) {
		pid = fork();
		if (pid == 0) {
			struct rlimit c = { 32, 64 };

			if (setresuid(65534, 65534, 65534))
				_exit(10);
			CHECK_EQ(setrlimit(RLIMIT_NOFILE, &c), 0);
			c.rlim_max = 128;
			CHECK_ERR(setrlimit(RLIMIT_NOFILE, &c), EPERM);
			c.rlim_max = 64;
			c.rlim_cur = 64;
			CHECK_EQ(setrlimit(RLIMIT_NOFILE, &c), 0);
			CHILD_DONE();
		}
		CHECK(t_wait_ok(pid));
	}
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	/* prlimit on ourselves reads the same. */
	{
		struct rlimit old;

		CHECK_EQ(prlimit(0, RLIMIT_NOFILE, NULL, &old), 0);
		CHECK_EQ(old.rlim_cur, rl.rlim_cur);
	}
	DONE();
}
