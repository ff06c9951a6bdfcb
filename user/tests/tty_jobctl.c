/*
 * Job control on the controlling terminal (termios(3), credentials(7)):
 * TIOCGPGRP/TIOCGSID, tcsetpgrp's errors (EINVAL, ESRCH, EPERM for a
 * group of another session, ENOTTY without a controlling terminal), a
 * background process reading is stopped by SIGTTIN (EIO if it ignores
 * it), writing with TOSTOP is stopped by SIGTTOU (allowed without TOSTOP
 * or with SIGTTOU ignored), tcsetattr and tcsetpgrp from the background
 * are stopped by SIGTTOU, /dev/tty is ENXIO after setsid().
 * Skipped unless stdin is our controlling terminal and we are in the
 * foreground.
 */
#include "t.h"
#include <sys/ioctl.h>
#include <termios.h>

/* Runs `fn` in a child in a new (background) process group; returns the
 * wait status (stopped children are killed after being seen). */
static int in_background(int (*fn)(void))
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		_exit(fn());
	}
	setpgid(pid, pid);
	st = 0;
	if (waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return st;
}

static int bg_read(void)
{
	char c;

	return read(0, &c, 1) < 0 ? errno : 0;
}

static int bg_read_ignored(void)
{
	signal(SIGTTIN, SIG_IGN);
	return bg_read();
}

static int bg_write(void)
{
	return write(1, "", 0) < 0 ? errno : 0;
}

static int bg_write_ignored(void)
{
	signal(SIGTTOU, SIG_IGN);
	return bg_write();
}

static int bg_tcsetattr(void)
{
	struct termios t;

	tcgetattr(0, &t);
	return tcsetattr(0, TCSANOW, &t) < 0 ? errno : 0;
}

static int bg_tcsetpgrp(void)
{
	return tcsetpgrp(0, getpgrp()) < 0 ? errno : 0;
}

static int after_setsid(void)
{
	int fd, pg;

	if (setsid() < 0)
		return 100;
	fd = open("/dev/tty", O_RDWR);
	if (fd >= 0 || errno != ENXIO)
		return 101;
	if (ioctl(0, TIOCGPGRP, &pg) == 0 || errno != ENOTTY)
		return 102;
	if (tcsetpgrp(0, getpgrp()) == 0 || errno != ENOTTY)
		return 103;
	return 0;
}

int main(void)
{
	struct termios saved, t;
	int st, pg, sid, fd;
	pid_t pid;

	if (!isatty(0) || tcgetpgrp(0) != getpgrp()) {
		SKIP("stdin is not our foreground terminal");
	}
	CHECK_EQ(ioctl(0, TIOCGPGRP, &pg), 0);
	CHECK_EQ(pg, getpgrp());
	CHECK_EQ(ioctl(0, TIOCGSID, &sid), 0);
	CHECK_EQ(sid, getsid(0));
	fd = open("/dev/tty", O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(tcgetpgrp(fd), getpgrp());
	close(fd);
	CHECK_ERR(tcsetpgrp(0, -1), EINVAL);
	CHECK_ERR(tcsetpgrp(0, 0x3ffffff0), ESRCH);
	CHECK_EQ(tcsetpgrp(0, getpgrp()), 0);

	st = in_background(bg_read);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN);
	st = in_background(bg_read_ignored);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == EIO);

	CHECK_EQ(tcgetattr(0, &saved), 0);
	t = saved;
	t.c_lflag &= ~TOSTOP;
	CHECK_EQ(tcsetattr(0, TCSANOW, &t), 0);
	st = in_background(bg_write);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	t.c_lflag |= TOSTOP;
	CHECK_EQ(tcsetattr(0, TCSANOW, &t), 0);
	st = in_background(bg_write);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	st = in_background(bg_write_ignored);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(tcsetattr(0, TCSANOW, &saved), 0);

	st = in_background(bg_tcsetattr);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	st = in_background(bg_tcsetpgrp);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	CHECK_EQ(tcgetpgrp(0), getpgrp());

	/* A group leader cannot setsid(): a plain child does it. */
	pid = fork();
	if (pid == 0)
		_exit(after_setsid());
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	DONE();
}
