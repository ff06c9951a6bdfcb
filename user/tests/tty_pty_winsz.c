/* Window size on a pty (skipped without ptys): TIOCSWINSZ/TIOCGWINSZ on
 * either side, SIGWINCH to the foreground group on a change (not when the
 * size is set to the same value). */
#include "next.h"

int main(void)
{
	char name[64], c;
	struct winsize ws, got;
	int m, s, p[2];
	pid_t pid;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	memset(&ws, 0, sizeof ws);
	ws.ws_row = 33;
	ws.ws_col = 101;
	ws.ws_xpixel = 7;
	CHECK_EQ(ioctl(m, TIOCSWINSZ, &ws), 0);
	memset(&got, 0, sizeof got);
	CHECK_EQ(ioctl(s, TIOCGWINSZ, &got), 0);
	CHECK_EQ(got.ws_row, 33);
	CHECK_EQ(got.ws_col, 101);
	CHECK_EQ(got.ws_xpixel, 7);
	ws.ws_row = 40;
	CHECK_EQ(ioctl(s, TIOCSWINSZ, &ws), 0);
	CHECK_EQ(ioctl(m, TIOCGWINSZ, &got), 0);
	CHECK_EQ(got.ws_row, 40);
	CHECK_ERR(ioctl(s, TIOCGWINSZ, BAD_PTR2), EFAULT);
	close(s);

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		int fd;
		sigset_t set;
		int sig;

		close(p[0]);
		setsid();
		fd = open(name, O_RDWR);
		if (fd < 0)
			_exit(2);
		sigemptyset(&set);
		sigaddset(&set, SIGWINCH);
		sigprocmask(SIG_BLOCK, &set, NULL);
		(void)!write(p[1], "R", 1);
		for (;;) {
			if (sigwait(&set, &sig) == 0 && sig == SIGWINCH)
				(void)!write(p[1], "W", 1);
		}
	}
	close(p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1);
	/* Same size: no signal. */
	CHECK_EQ(ioctl(m, TIOCSWINSZ, &ws), 0);
	/* New size: SIGWINCH. */
	ws.ws_col = 120;
	CHECK_EQ(ioctl(m, TIOCSWINSZ, &ws), 0);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'W');
	{
		struct pollfd pf = { p[0], POLLIN, 0 };

		CHECK_EQ(poll(&pf, 1, 50), 0); /* exactly one */
	}
	kill(pid, SIGKILL);
	t_wait(pid);
	close(m);
	close(p[0]);
	DONE();
}
