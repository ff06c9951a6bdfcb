/* Terminal-generated signals through a pty (skipped without ptys): ^C,
 * ^\ and ^Z send SIGINT, SIGQUIT and SIGTSTP to the foreground process
 * group of the terminal's session, echoed as ^C etc.; with ISIG off they
 * are plain input bytes. */
#include "next.h"

static int rep = -1;

static void on_sig(int s)
{
	char c = s == SIGINT ? 'I' : s == SIGQUIT ? 'Q' : s == SIGTSTP ? 'Z' : '?';

	(void)!write(rep, &c, 1);
}

int main(void)
{
	char name[64], buf[64], c;
	int m, s, p[2];
	pid_t pid;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	close(s);
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		struct termios tio;
		int fd;
		char in[16];

		close(p[0]);
		rep = p[1];
		setsid();
		fd = open(name, O_RDWR); /* becomes the controlling tty */
		if (fd < 0)
			_exit(2);
		t_sigaction(SIGINT, on_sig, SA_RESTART);
		t_sigaction(SIGQUIT, on_sig, SA_RESTART);
		t_sigaction(SIGTSTP, on_sig, SA_RESTART);
		(void)!write(rep, "R", 1);
		/* Wait for "off" then switch ISIG off. */
		for (;;) {
			ssize_t n = read(fd, in, sizeof in);

			if (n > 0 && in[0] == 'o') {
				tcgetattr(fd, &tio);
				tio.c_lflag &= ~ISIG;
				tcsetattr(fd, TCSANOW, &tio);
				(void)!write(rep, "O", 1);
			} else if (n > 0 && in[0] == 3) {
				/* A literal ^C byte arrived. */
				(void)!write(rep, "L", 1);
			} else if (n > 0 && in[0] == 'q') {
				_exit(0);
			}
		}
	}
	close(p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'R');
	/* The foreground group is the child's. */
	{
		pid_t fg = -1;

		CHECK_EQ(ioctl(m, TIOCGPGRP, &fg), 0);
		CHECK_EQ(fg, pid);
	}

	CHECK_EQ(write(m, "\003", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'I');
	CHECK_EQ(write(m, "\034", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'Q');
	CHECK_EQ(write(m, "\032", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'Z');
	/* Echo: ^C ^\ ^Z (ECHOCTL). */
	{
		ssize_t n = t_read_avail(m, buf, sizeof buf, 500);

		CHECK(n >= 6);
		CHECK(n >= 2 && buf[0] == '^' && buf[1] == 'C');
	}

	/* ISIG off: ^C is data. */
	CHECK_EQ(write(m, "off\n", 4), 4);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'O');
	CHECK_EQ(write(m, "\003\n", 2), 2);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'L');

	CHECK_EQ(write(m, "q\n", 2), 2);
	CHECK(t_wait_ok(pid));
	close(m);
	close(p[0]);
	DONE();
}
