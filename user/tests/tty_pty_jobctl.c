/* Job control on a pty (skipped without ptys): a session leader acquires
 * the terminal by opening it (or TIOCSCTTY), TIOCGPGRP/TIOCSPGRP and
 * TIOCGSID, background reads stop with SIGTTIN, background writes stop
 * with SIGTTOU only under TOSTOP, tcsetpgrp from the background raises
 * SIGTTOU unless it is ignored, /dev/tty works inside the session. */
#include "next.h"

static int jobctl(const char *name)
{
	struct termios tio;
	pid_t bg, me = getpid(), sid = -1, pg = -1;
	int fd, st;
	char c;

	setsid();
	fd = open(name, O_RDWR);
	if (fd < 0)
		return 2;
	CHECK_EQ(ioctl(fd, TIOCGSID, &sid), 0);
	CHECK_EQ(sid, me);
	CHECK_EQ(ioctl(fd, TIOCGPGRP, &pg), 0);
	CHECK_EQ(pg, me);
	CHECK_EQ(tcgetpgrp(fd), me);
	/* /dev/tty is this terminal now. */
	{
		int t = open("/dev/tty", O_RDWR);

		CHECK(t >= 0);
		close(t);
	}

	/* A background job reading: SIGTTIN stops it. */
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		(void)!read(fd, &c, 1);
		_exit(0);
	}
	setpgid(bg, bg);
	CHECK_EQ(waitpid(bg, &st, WUNTRACED), bg);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN);
	kill(bg, SIGKILL);
	waitpid(bg, &st, 0);

	/* Writing from the background: fine without TOSTOP... */
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		_exit(write(fd, "bg\n", 3) == 3 ? 0 : 1);
	}
	setpgid(bg, bg);
	CHECK_EQ(waitpid(bg, &st, WUNTRACED), bg);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* ...SIGTTOU with it. */
	tcgetattr(fd, &tio);
	tio.c_lflag |= TOSTOP;
	tcsetattr(fd, TCSANOW, &tio);
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		(void)!write(fd, "bg\n", 3);
		_exit(0);
	}
	setpgid(bg, bg);
	CHECK_EQ(waitpid(bg, &st, WUNTRACED), bg);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	kill(bg, SIGKILL);
	waitpid(bg, &st, 0);

	/* tcsetpgrp from the background: SIGTTOU; ignoring it lets the
	 * job take the foreground (as shells do), then it can read. */
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		tcsetpgrp(fd, getpid());
		_exit(0);
	}
	setpgid(bg, bg);
	CHECK_EQ(waitpid(bg, &st, WUNTRACED), bg);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	kill(bg, SIGKILL);
	waitpid(bg, &st, 0);
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		signal(SIGTTOU, SIG_IGN);
		if (tcsetpgrp(fd, getpid()) != 0)
			_exit(5);
		if (tcgetpgrp(fd) != getpid())
			_exit(6);
		/* Give it back. */
		tcsetpgrp(fd, getppid());
		_exit(0);
	}
	setpgid(bg, bg);
	CHECK_EQ(waitpid(bg, &st, WUNTRACED), bg);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(tcgetpgrp(fd), me);

	/* TIOCSPGRP to a process group that does not exist: ESRCH. */
	pg = 0x3ffffff0;
	CHECK_ERR(ioctl(fd, TIOCSPGRP, &pg), ESRCH);
	/* TIOCSCTTY when we already have it: fine. */
	CHECK_EQ(ioctl(fd, TIOCSCTTY, 0), 0);
	return t_failures ? 1 : 0;
}

int main(void)
{
	char name[64], buf[256];
	int m, s;
	pid_t pid;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	close(s);
	pid = fork();
	if (pid == 0) {
		close(m);
		_exit(jobctl(name));
	}
	/* Keep draining the master so writes never block. */
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);

		t_read_avail(m, buf, sizeof buf, 10);
		if (r == pid) {
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			break;
		}
	}

	/* TIOCSCTTY: a session leader takes a terminal opened with
	 * O_NOCTTY. */
	pid = fork();
	if (pid == 0) {
		int fd;

		setsid();
		fd = open(name, O_RDWR | O_NOCTTY);
		if (fd < 0)
			_exit(2);
		CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
		CHECK_EQ(ioctl(fd, TIOCSCTTY, 0), 0);
		CHECK_EQ(tcgetpgrp(fd), getpid());
		{
			int t = open("/dev/tty", O_RDWR);

			CHECK(t >= 0);
			close(t);
		}
		/* Not a session leader: EPERM. */
		{
			pid_t g = fork();

			if (g == 0) {
				int f2 = open(name, O_RDWR | O_NOCTTY);

				setpgid(0, 0);
				_exit(ioctl(f2, TIOCSCTTY, 0) == -1 && errno == EPERM ? 0 : 1);
			}
			CHECK(t_wait_ok(g));
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	close(m);
	DONE();
}
