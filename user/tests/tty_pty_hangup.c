/* Closing either end of a pty (skipped where there are no ptys).  All
 * slave files closed: the master reads what is left, then EIO, and polls
 * POLLHUP, until a slave is opened again (which keeps the settings); a
 * blocked master read wakes with EIO.  Master closed: the slave is hung
 * up (reads 0 even with input pending, writes and ioctls EIO, poll reports
 * everything, its node is gone; a read blocked then fails with EIO) and the
 * session leader alone gets SIGHUP and SIGCONT and loses the terminal.
 * The session leader exiting: its foreground group gets SIGHUP, the
 * terminal goes on working but belongs to no session. */
#include "next.h"

static int rep = -1;

static void on_sig(int s)
{
	char c = s == SIGHUP ? 'H' : s == SIGCONT ? 'C' : '?';

	(void)!write(rep, &c, 1);
}

/* A pair whose slave is not open yet. */
static int new_master(char *name, size_t n)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0 || !ptsname(m))
		return -1;
	snprintf(name, n, "%s", ptsname(m));
	return m;
}

static short revents(int fd, short events)
{
	struct pollfd pf = { fd, events, 0 };

	return poll(&pf, 1, 0) == 1 ? pf.revents : 0;
}

/* What arrives on the report pipe within ms milliseconds. */
static void reports(int fd, char *buf, size_t n, int ms)
{
	ssize_t got = t_read_avail(fd, buf, n - 1, ms);

	buf[got > 0 ? got : 0] = 0;
}

static void slave_closed(void)
{
	char name[64], buf[64];
	struct termios tio;
	int m, s, st;
	pid_t pid;

	m = new_master(name, sizeof name);
	CHECK(m >= 0);
	if (m < 0)
		return;
	fcntl(m, F_SETFL, O_NONBLOCK);
	/* Never opened: nothing to read yet, no hang-up. */
	CHECK_ERR(read(m, buf, sizeof buf), EAGAIN);
	CHECK_EQ(revents(m, POLLIN | POLLOUT), POLLOUT);

	/* Output left behind is read first, then EIO. */
	s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	CHECK_EQ(write(s, "hello", 5), 5);
	close(s);
	CHECK_EQ(revents(m, POLLIN | POLLOUT), POLLIN | POLLOUT | POLLHUP);
	CHECK_EQ(read(m, buf, sizeof buf), 5);
	CHECK_ERR(read(m, buf, sizeof buf), EIO);
	CHECK_EQ(revents(m, POLLIN | POLLOUT), POLLOUT | POLLHUP);
	fcntl(m, F_SETFL, 0);
	CHECK_ERR(read(m, buf, sizeof buf), EIO);
	/* The master can still write (into the line discipline). */
	CHECK_EQ(write(m, "x", 1), 1);
	t_msleep(50);
	t_drain(m); /* its echo */

	/* Reopened: no hang-up any more, and the settings stayed. */
	s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	CHECK_EQ(revents(m, POLLIN | POLLOUT) & POLLHUP, 0);
	CHECK_EQ(tcgetattr(s, &tio), 0);
	cfmakeraw(&tio);
	CHECK_EQ(tcsetattr(s, TCSANOW, &tio), 0);
	close(s);
	s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	CHECK_EQ(tcgetattr(s, &tio), 0);
	CHECK(!(tio.c_lflag & ICANON));
	close(s);

	/* A blocked master read wakes with EIO when the last slave file
	 * closes. */
	pid = fork();
	if (pid == 0) {
		int fd = open(name, O_RDWR | O_NOCTTY);

		t_msleep(200);
		_exit(fd >= 0 ? 0 : 1);
	}
	t_msleep(50);
	alarm(20);
	CHECK_ERR(read(m, buf, sizeof buf), EIO);
	alarm(0);
	st = t_wait_bounded(pid, 20);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(m);
}

static void master_closed(void)
{
	char name[64], buf[64];
	struct termios tio;
	struct stat sb;
	int m, s, st;
	short ev;
	pid_t pid;

	m = new_master(name, sizeof name);
	CHECK(m >= 0);
	if (m < 0)
		return;
	s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	CHECK_EQ(write(m, "in\n", 3), 3);
	CHECK_EQ(write(s, "out", 3), 3);
	close(m);
	ev = revents(s, POLLIN | POLLOUT);
	CHECK_EQ(ev, POLLIN | POLLOUT | POLLERR | POLLHUP);
	CHECK_EQ(read(s, buf, sizeof buf), 0);
	CHECK_EQ(read(s, buf, sizeof buf), 0);
	CHECK_ERR(write(s, "x", 1), EIO);
	CHECK_ERR(ioctl(s, TCGETS, &tio), EIO);
	CHECK(!isatty(s));
	CHECK_ERR(stat(name, &sb), ENOENT);
	CHECK_ERR(open(name, O_RDWR | O_NOCTTY), ENOENT);
	close(s);

	/* A slave read blocked at the hang-up fails with EIO; later ones
	 * read end of file. */
	m = new_master(name, sizeof name);
	CHECK(m >= 0);
	if (m < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int fd = open(name, O_RDWR | O_NOCTTY);

		close(m);
		if (fd < 0)
			_exit(2);
		alarm(20);
		if (read(fd, buf, sizeof buf) != -1 || errno != EIO)
			_exit(3);
		_exit(read(fd, buf, sizeof buf) == 0 ? 0 : 4);
	}
	t_msleep(100);
	close(m);
	st = t_wait_bounded(pid, 20);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The session leader: takes the terminal, starts a member of its own
 * (foreground) group and one of a background group, reports, then waits
 * for the hang-up and checks it lost the terminal. */
static int leader(const char *name, int master, int ready)
{
	pid_t kids[2];
	int i, fd;

	close(master);
	setsid();
	fd = open(name, O_RDWR);
	if (fd < 0)
		return 2;
	for (i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			if (i == 1)
				setpgid(0, 0);
			t_sigaction(SIGHUP, on_sig, 0);
			t_sigaction(SIGCONT, on_sig, 0);
			(void)!write(ready, "k", 1);
			for (;;)
				pause();
		}
		if (i == 1)
			setpgid(kids[i], kids[i]);
	}
	t_sigaction(SIGHUP, on_sig, 0);
	t_sigaction(SIGCONT, on_sig, 0);
	(void)!write(ready, "L", 1);
	/* Hung up within 10 s; then no controlling terminal. */
	for (i = 0; i < 1000; i++) {
		char c;

		if (read(fd, &c, 1) == 0)
			break;
		t_msleep(10);
	}
	t_msleep(300);
	CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
	kill(kids[0], SIGKILL);
	kill(kids[1], SIGKILL);
	return t_failures ? 1 : 0;
}

static void hangup_signals(void)
{
	char name[64], got[32];
	int m, p[2], i, fd, hup = 0, cont = 0, other = 0;
	pid_t pid, sid = 0;

	m = new_master(name, sizeof name);
	CHECK(m >= 0);
	if (m < 0)
		return;
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		rep = p[1];
		_exit(leader(name, m, p[1]));
	}
	close(p[1]);
	/* Three "ready" reports: two members and the leader. */
	for (i = 0; i < 3; i++) {
		char c;

		CHECK_EQ(read(p[0], &c, 1), 1);
	}
	CHECK_EQ(ioctl(m, TIOCGSID, &sid), 0);
	CHECK_EQ(sid, pid);
	close(m);
	reports(p[0], got, sizeof got, 3000);
	/* SIGHUP and SIGCONT, to the leader only. */
	for (i = 0; got[i]; i++) {
		if (got[i] == 'H')
			hup++;
		else if (got[i] == 'C')
			cont++;
		else
			other++;
	}
	CHECK_EQ(hup, 1);
	CHECK_EQ(cont, 1);
	CHECK_EQ(other, 0);
	CHECK(t_wait_ok(pid));
	/* The slave has gone. */
	fd = open(name, O_RDWR | O_NOCTTY);
	CHECK_EQ(fd, -1);
	close(p[0]);
}

/* The leader of the terminal's session exits: its foreground group gets
 * SIGHUP (no SIGCONT); the terminal stays usable. */
static void leader_exits(void)
{
	char name[64], got[32], c;
	int m, p[2];
	pid_t pid, sid, pg = -1;

	m = new_master(name, sizeof name);
	CHECK(m >= 0);
	if (m < 0)
		return;
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		int fd, q[2];

		close(p[0]);
		close(m);
		setsid();
		fd = open(name, O_RDWR);
		if (fd < 0 || pipe(q) != 0)
			_exit(2);
		if (fork() == 0) {
			char in[8];

			rep = p[1];
			t_sigaction(SIGHUP, on_sig, SA_RESTART);
			t_sigaction(SIGCONT, on_sig, SA_RESTART);
			(void)!write(q[1], "m", 1);
			/* Still a working terminal after the leader left. */
			alarm(20);
			if (read(fd, in, sizeof in) == 3 && in[0] == 'z')
				(void)!write(p[1], "R", 1);
			_exit(0);
		}
		/* Leave once the member is ready for its SIGHUP. */
		_exit(read(q[0], &c, 1) == 1 ? 0 : 3);
	}
	close(p[1]);
	CHECK(t_wait_ok(pid));
	reports(p[0], got, sizeof got, 500);
	CHECK(!strcmp(got, "H"));
	CHECK_ERR(ioctl(m, TIOCGSID, &sid), ENOTTY);
	CHECK_EQ(ioctl(m, TIOCGPGRP, &pg), 0);
	CHECK_EQ(pg, 0);
	CHECK_EQ(write(m, "zz\n", 3), 3);
	reports(p[0], got, sizeof got, 3000);
	CHECK(!strcmp(got, "R"));
	close(p[0]);
	close(m);
}

int main(void)
{
	char name[64];
	int m, s;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	close(s);
	close(m);
	slave_closed();
	master_closed();
	hangup_signals();
	leader_exits();
	DONE();
}
