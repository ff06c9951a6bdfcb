/* poll on pipes: POLLIN/POLLOUT readiness, POLLHUP after the writer
 * closes, POLLERR on a write end without readers, POLLNVAL for closed fds,
 * negative fds ignored, timeouts (0, positive, and wake-up by another
 * process), regular files always ready; errors. */
#include "next.h"

int main(void)
{
	struct pollfd pf[4];
	int p[2], q[2], fd;
	long long t0;
	pid_t pid;
	char c;

	CHECK_EQ(pipe(p), 0);
	pf[0].fd = p[0];
	pf[0].events = POLLIN;
	pf[1].fd = p[1];
	pf[1].events = POLLOUT;
	pf[0].revents = pf[1].revents = 0x7fff;
	/* Empty pipe: only the write end is ready. */
	CHECK_EQ(poll(pf, 2, 0), 1);
	CHECK_EQ(pf[0].revents, 0);
	CHECK_EQ(pf[1].revents, POLLOUT);

	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(poll(pf, 2, 0), 2);
	CHECK_EQ(pf[0].revents, POLLIN);

	/* Writer closed with data left: POLLIN|POLLHUP; drained: POLLHUP. */
	close(p[1]);
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLIN | POLLHUP);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLHUP);
	close(p[0]);

	/* Reader closed: the write end reports POLLERR (and POLLOUT). */
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	pf[0].fd = p[1];
	pf[0].events = POLLOUT;
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK(pf[0].revents & POLLERR);
	close(p[1]);

	/* Closed fd: POLLNVAL; negative fd: ignored (revents 0). */
	pf[0].fd = p[1];
	pf[0].events = POLLIN;
	pf[1].fd = -1;
	pf[1].events = POLLIN;
	pf[1].revents = 0x55;
	CHECK_EQ(poll(pf, 2, 0), 1);
	CHECK_EQ(pf[0].revents, POLLNVAL);
	CHECK_EQ(pf[1].revents, 0);

	/* Timeout with nothing ready: 0 after at least the time asked. */
	CHECK_EQ(pipe(p), 0);
	pf[0].fd = p[0];
	pf[0].events = POLLIN;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(poll(pf, 1, 30), 0);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
	CHECK_EQ(pf[0].revents, 0);

	/* Woken by another process writing. */
	pid = fork();
	if (pid == 0) {
		t_msleep(30);
		(void)!write(p[1], "y", 1);
		_exit(0);
	}
	CHECK_EQ(poll(pf, 1, -1), 1);
	CHECK_EQ(pf[0].revents, POLLIN);
	CHECK(t_wait_ok(pid));

	/* Several fds, only some ready. */
	CHECK_EQ(pipe(q), 0);
	pf[0].fd = q[0];
	pf[0].events = POLLIN;
	pf[1].fd = p[0];
	pf[1].events = POLLIN | POLLOUT; /* POLLOUT not applicable: read end */
	pf[2].fd = q[1];
	pf[2].events = 0;		/* no events asked: nothing reported */
	CHECK_EQ(poll(pf, 3, 0), 1);
	CHECK_EQ(pf[0].revents, 0);
	CHECK_EQ(pf[1].revents, POLLIN);
	CHECK_EQ(pf[2].revents, 0);

	/* Regular files are always readable and writable. */
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		fd = open("/dev/null", O_RDONLY);
	pf[0].fd = fd;
	pf[0].events = POLLIN | POLLOUT;
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents & (POLLIN | POLLOUT), POLLIN | POLLOUT);
	close(fd);

	/* Errors. */
	CHECK_ERR(poll((struct pollfd *)BAD_PTR2, 1, 0), EFAULT);
	/* More fds than RLIMIT_NOFILE allows. */
	{
		struct rlimit rl;

		getrlimit(RLIMIT_NOFILE, &rl);
		CHECK_ERR(syscall(SYS_poll, pf, (unsigned long)rl.rlim_cur + 1, 0),
			  EINVAL);
	}
	/* nfds 0 is a plain sleep. */
	CHECK_EQ(poll(NULL, 0, 1), 0);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	DONE();
}
