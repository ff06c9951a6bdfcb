/* Data through a pty and readiness on both ends (skipped where there are
 * no ptys): poll, select and epoll on the master see the slave's output;
 * the slave's output queue is bounded (O_NONBLOCK writes fail with EAGAIN,
 * POLLOUT goes away, and comes back once the master reads); the master's
 * writes into a raw slave wait for the reader likewise; FIONREAD on both
 * ends; TCIFLUSH; TIOCSIG; large transfers both ways arrive intact. */
#include "next.h"
#include <sys/epoll.h>
#include <sys/select.h>

#ifndef TIOCSIG
#define TIOCSIG _IOW('T', 0x36, int)
#endif

static short revents(int fd, short events)
{
	struct pollfd pf = { fd, events, 0 };

	return poll(&pf, 1, 0) == 1 ? pf.revents : 0;
}

/* Writes all of buf (blocking). */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)('a' + (i * 7 + i / 251) % 26);
}

/* Sends n pattern bytes from fd `out` in a child while reading them on
 * `in`; returns 1 if all arrived in order. */
static int transfer(int out, int in, size_t n)
{
	static char buf[4096];
	size_t got = 0, bad = 0;
	pid_t pid = fork();

	if (pid == 0) {
		size_t i, done = 0;

		while (done < n) {
			size_t k = n - done < sizeof buf ? n - done : sizeof buf;

			for (i = 0; i < k; i++)
				buf[i] = (char)pattern(done + i);
			if (write_all(out, buf, k) != 0)
				_exit(1);
			done += k;
		}
		_exit(0);
	}
	alarm(60);
	while (got < n) {
		ssize_t r = read(in, buf, sizeof buf);
		ssize_t i;

		if (r <= 0)
			break;
		for (i = 0; i < r; i++)
			if ((unsigned char)buf[i] != pattern(got + (size_t)i))
				bad++;
		got += (size_t)r;
	}
	alarm(0);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(got, n);
	CHECK_EQ(bad, 0);
	return got == n && bad == 0;
}

static int on_int;
static void handler(int sig)
{
	(void)sig;
	on_int = 1;
}

int main(void)
{
	char name[64], buf[512];
	struct termios tio;
	struct epoll_event ev, out[2];
	fd_set rd;
	struct timeval tv;
	int m, s, ep, n, full;
	long total;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	fcntl(m, F_SETFL, O_NONBLOCK);
	fcntl(s, F_SETFL, O_NONBLOCK);

	/* Idle: both writable, nothing to read. */
	CHECK_EQ(revents(m, POLLIN | POLLOUT), POLLOUT);
	CHECK_EQ(revents(s, POLLIN | POLLOUT), POLLOUT);
	CHECK_ERR(read(m, buf, sizeof buf), EAGAIN);
	CHECK_ERR(read(s, buf, sizeof buf), EAGAIN);

	/* The slave's output wakes epoll, poll and select on the master. */
	ep = epoll_create1(0);
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u32 = 7;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, m, &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	CHECK_EQ(write(s, "ping\n", 5), 5);
	CHECK_EQ(epoll_wait(ep, out, 2, 2000), 1);
	CHECK_EQ(out[0].data.u32, 7);
	CHECK_EQ(revents(m, POLLIN), POLLIN);
	FD_ZERO(&rd);
	FD_SET(m, &rd);
	tv.tv_sec = 2;
	tv.tv_usec = 0;
	CHECK_EQ(select(m + 1, &rd, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(m, &rd));
	n = -1;
	CHECK_EQ(ioctl(m, FIONREAD, &n), 0);
	CHECK_EQ(n, 6);
	CHECK_EQ(read(m, buf, sizeof buf), 6);
	CHECK(!memcmp(buf, "ping\r\n", 6));
	CHECK_EQ(revents(m, POLLIN), 0);

	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, m, NULL), 0);

	/* The slave's output is bounded: it stops taking more. */
	memset(buf, 'o', sizeof buf);
	total = 0;
	for (;;) {
		ssize_t w = write(s, buf, sizeof buf);

		if (w < 0) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
		total += w;
		if (total > (1L << 24))
			break;
	}
	CHECK(total >= 1024 && total < (1L << 24));
	CHECK_EQ(revents(s, POLLOUT), 0);
	/* An epoll watcher of the slave hears when the master reads. */
	ev.events = EPOLLOUT;
	ev.data.u32 = 9;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	{
		long drained = 0;
		ssize_t r;

		while ((r = read(m, buf, sizeof buf)) > 0)
			drained += r;
		CHECK_EQ(drained, total);
	}
	CHECK_EQ(epoll_wait(ep, out, 2, 2000), 1);
	CHECK_EQ(out[0].data.u32, 9);
	CHECK_EQ(revents(s, POLLOUT), POLLOUT);
	close(ep);

	/* Raw mode: the master's writes wait for the slave's reader. */
	CHECK_EQ(tcgetattr(s, &tio), 0);
	cfmakeraw(&tio);
	CHECK_EQ(tcsetattr(s, TCSANOW, &tio), 0);
	memset(buf, 'i', sizeof buf);
	total = 0;
	full = 0;
	while (total < (1L << 24)) {
		ssize_t w = write(m, buf, sizeof buf);

		if (w < 0) {
			CHECK_EQ(errno, EAGAIN);
			full = 1;
			break;
		}
		total += w;
	}
	CHECK(full);
	CHECK(total >= 1024);
	t_msleep(20);
	n = -1;
	CHECK_EQ(ioctl(s, FIONREAD, &n), 0);
	CHECK(n > 0 && n <= total);
	CHECK_EQ(revents(s, POLLIN), POLLIN);
	{
		long drained = 0;
		int i;

		/* Everything arrives once the reader reads (Linux passes on
		 * what its buffers hold as room appears). */
		for (i = 0; i < 200 && drained < total; i++) {
			ssize_t r = read(s, buf, sizeof buf);

			if (r > 0)
				drained += r;
			else
				t_msleep(5);
		}
		CHECK_EQ(drained, total);
	}
	CHECK_EQ(revents(m, POLLOUT), POLLOUT);
	/* TCIFLUSH on the slave drops input it has not read. */
	CHECK_EQ(write(m, "abc", 3), 3);
	t_msleep(20);
	CHECK_EQ(tcflush(s, TCIFLUSH), 0);
	CHECK_ERR(read(s, buf, sizeof buf), EAGAIN);

	/* Large transfers, blocking, both ways. */
	fcntl(m, F_SETFL, 0);
	fcntl(s, F_SETFL, 0);
	CHECK(transfer(m, s, 300000));
	CHECK(transfer(s, m, 300000));

	/* TIOCSIG: a signal to the slave's foreground group. */
	{
		int p[2];
		pid_t pid;
		char c;

		CHECK_EQ(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			int fd;

			close(m);
			setsid();
			t_sigaction(SIGINT, handler, 0);
			fd = open(name, O_RDWR);
			(void)!write(p[1], "r", 1);
			while (!on_int)
				pause();
			(void)!write(p[1], "i", 1);
			_exit(fd >= 0 ? 0 : 1);
		}
		CHECK_EQ(read(p[0], &c, 1), 1);
		if (ioctl(m, TIOCSIG, SIGINT) == 0) {
			CHECK_EQ(read(p[0], &c, 1), 1);
			CHECK_EQ(c, 'i');
			CHECK(t_wait_ok(pid));
		} else {
			t_note("TIOCSIG: %s", strerror(errno));
			kill(pid, SIGKILL);
			t_wait(pid);
		}
		CHECK_ERR(ioctl(m, TIOCSIG, SIGKILL), EINVAL);
		close(p[0]);
		close(p[1]);
	}
	close(s);
	close(m);
	DONE();
}
