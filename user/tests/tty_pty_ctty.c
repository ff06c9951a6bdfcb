/* A pty as controlling terminal (skipped where there are no ptys): a
 * session leader acquires it by opening it for reading without O_NOCTTY
 * (not with O_NOCTTY, not write-only, not while it has one); /dev/tty
 * then reaches it; /proc/self/stat shows it (tty_nr, tpgid); through the
 * master TIOCGPGRP/TIOCGSID work for anyone, TIOCSPGRP for the terminal's
 * own session, TIOCNOTTY never; TIOCSCTTY takes a terminal of another session only with arg 1 as
 * root; TIOCNOTTY by the leader gives it up, with SIGHUP and SIGCONT to
 * the foreground group. */
#include "next.h"

static int rep = -1;

static void on_sig(int s)
{
	char c = s == SIGHUP ? 'H' : s == SIGCONT ? 'C' : '?';

	(void)!write(rep, &c, 1);
}

static int new_pair(int *m, char *name, size_t n)
{
	*m = posix_openpt(O_RDWR | O_NOCTTY);
	if (*m < 0 || grantpt(*m) != 0 || unlockpt(*m) != 0 || !ptsname(*m))
		return -1;
	snprintf(name, n, "%s", ptsname(*m));
	return 0;
}

/* Fields 7 and 8 of /proc/self/stat (tty_nr, tpgid). */
static int stat_tty(long *tty_nr, long *tpgid)
{
	char buf[1024], *p;

	if (t_read_file("/proc/self/stat", buf, sizeof buf) <= 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* ") S ppid pgrp session tty_nr tpgid" */
	return sscanf(p + 2, "%*c %*d %*d %*d %ld %ld", tty_nr, tpgid) == 2 ? 0 : -1;
}

static int sid_of(int master)
{
	pid_t sid = -1;

	return ioctl(master, TIOCGSID, &sid) == 0 ? sid : -errno;
}

/* In a new session: which opens make the pty the controlling terminal. */
static int acquire(const char *name, const char *name2, int m, int m2)
{
	long nr = -2, tpgid = -2;
	int fd, t, index;
	struct stat st;
	pid_t me;

	me = setsid();
	/* O_NOCTTY, or write-only: not acquired. */
	fd = open(name, O_RDWR | O_NOCTTY);
	CHECK(fd >= 0);
	CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
	CHECK_EQ(sid_of(m), -ENOTTY);
	CHECK_ERR(tcgetpgrp(fd), ENOTTY);
	close(fd);
	fd = open(name, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ(sid_of(m), -ENOTTY);
	close(fd);
	if (stat_tty(&nr, &tpgid) == 0) {
		CHECK_EQ(nr, 0);
		CHECK_EQ(tpgid, -1);
	}

	/* Read-write without O_NOCTTY: acquired. */
	fd = open(name, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(sid_of(m), me);
	CHECK_EQ(tcgetpgrp(fd), me);
	CHECK_EQ(fstat(fd, &st), 0);
	index = (int)minor(st.st_rdev);
	if (stat_tty(&nr, &tpgid) == 0) {
		CHECK_EQ(nr, (long)((index & 0xff) | (136 << 8) | ((index & ~0xff) << 12)));
		CHECK_EQ(tpgid, me);
	}
	/* /dev/tty is it: what we write there reaches the master. */
	t = open("/dev/tty", O_RDWR);
	CHECK(t >= 0);
	if (t >= 0) {
		char buf[16];

		CHECK_EQ(fstat(t, &st), 0);
		CHECK_EQ(st.st_rdev, makedev(5, 0));
		CHECK(isatty(t));
		CHECK_EQ(write(t, "via tty", 7), 7);
		CHECK_EQ(t_read_avail(m, buf, sizeof buf, 2000), 7);
		CHECK(!memcmp(buf, "via tty", 7));
		close(t);
	}

	/* A second pty is not acquired while we have one, nor with
	 * TIOCSCTTY. */
	t = open(name2, O_RDWR);
	CHECK(t >= 0);
	CHECK_EQ(sid_of(m2), -ENOTTY);
	CHECK_ERR(ioctl(t, TIOCSCTTY, 0), EPERM);
	close(t);

	/* Through the master: TIOCSPGRP acts on our terminal; TIOCNOTTY
	 * fails (the master is nobody's controlling terminal), as do both
	 * on a pty that is not ours. */
	{
		pid_t pg = me;

		CHECK_EQ(ioctl(m, TIOCSPGRP, &pg), 0);
		CHECK_ERR(ioctl(m, TIOCNOTTY), ENOTTY);
		CHECK_ERR(ioctl(m2, TIOCSPGRP, &pg), ENOTTY);
	}
	return t_failures ? 1 : 0;
}

/* A session leader with the terminal, a member of its foreground group:
 * TIOCNOTTY by the leader. */
static int give_up(const char *name, int m, int rp)
{
	pid_t me = setsid(), member;
	int fd = open(name, O_RDWR), p[2];
	char c;

	if (fd < 0 || pipe(p) != 0)
		return 2;
	member = fork();
	if (member == 0) {
		rep = rp;
		t_sigaction(SIGHUP, on_sig, 0);
		t_sigaction(SIGCONT, on_sig, 0);
		(void)!write(p[1], "r", 1);
		for (;;)
			pause();
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(sid_of(m), me);
	/* The leader ignores SIGHUP itself (it is in the group too). */
	signal(SIGHUP, SIG_IGN);
	CHECK_EQ(ioctl(fd, TIOCNOTTY), 0);
	CHECK_EQ(sid_of(m), -ENOTTY);
	CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
	CHECK_ERR(tcgetpgrp(fd), ENOTTY);
	t_msleep(300);
	kill(member, SIGKILL);
	t_wait(member);
	return t_failures ? 1 : 0;
}

int main(void)
{
	char name[64], name2[64], got[16];
	int m, s, m2, p[2], q[2];
	pid_t pid, holder;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	close(s);
	CHECK_EQ(new_pair(&m2, name2, sizeof name2), 0);

	pid = fork();
	if (pid == 0)
		_exit(acquire(name, name2, m, m2));
	CHECK(t_wait_ok(pid));

	/* TIOCSCTTY from another session: EPERM, unless arg 1 and root. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	holder = fork();
	if (holder == 0) {
		char c;

		setsid();
		if (open(name, O_RDWR) < 0)
			_exit(2);
		(void)!write(p[1], "h", 1);
		/* Until the parent is done; then its terminal is gone. */
		(void)!read(q[0], &c, 1);
		_exit(open("/dev/tty", O_RDWR) < 0 && errno == ENXIO ? 0 : 3);
	}
	CHECK_EQ(read(p[0], got, 1), 1);
	CHECK_EQ(sid_of(m), holder);
	{
		pid_t fg = -1;

		/* Anyone may ask the master. */
		CHECK_EQ(ioctl(m, TIOCGPGRP, &fg), 0);
		CHECK_EQ(fg, holder);
	}
	pid = fork();
	if (pid == 0) {
		int fd;

		setsid();
		fd = open(name, O_RDWR);
		CHECK(fd >= 0);
		CHECK_EQ(sid_of(m), holder); /* not taken by opening */
		CHECK_ERR(ioctl(fd, TIOCSCTTY, 0), EPERM);
		if (t_is_root()) {
			CHECK_EQ(ioctl(fd, TIOCSCTTY, 1), 0);
			CHECK_EQ(sid_of(m), getpid());
			CHECK_EQ(tcgetpgrp(fd), getpid());
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	(void)!write(q[1], "d", 1);
	if (t_is_root())
		CHECK(t_wait_ok(holder));
	else {
		kill(holder, SIGKILL);
		t_wait(holder);
	}
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);

	/* TIOCNOTTY. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(give_up(name, m, p[1]));
	}
	close(p[1]);
	CHECK(t_wait_ok(pid));
	{
		ssize_t n = t_read_avail(p[0], got, sizeof got - 1, 500);

		got[n > 0 ? n : 0] = 0;
		/* The member got SIGHUP and SIGCONT. */
		CHECK(strchr(got, 'H') != NULL);
		CHECK(strchr(got, 'C') != NULL);
	}
	close(p[0]);
	close(m2);
	close(m);
	DONE();
}
