/*
 * The terminal line discipline (termios(3)), driven with TIOCSTI on the
 * controlling terminal (skipped when stdin is not one, or TIOCSTI is not
 * allowed): canonical editing (erase, kill, word erase), ICRNL, ^D as end
 * of file, TCSETSF flushing input, FIONREAD, non-canonical VMIN/VTIME,
 * ^C raising SIGINT in the foreground process group (ours, after
 * tcsetpgrp), and a window size change raising SIGWINCH (to that group
 * too). ECHO is off so nothing shows.
 */
#include "t.h"
#include <sys/ioctl.h>
#include <termios.h>

static volatile int sigs[65];

static void on_sig(int s)
{
	sigs[s]++;
}

static int type(const char *s)
{
	for (; *s; s++)
		if (ioctl(0, TIOCSTI, s) != 0)
			return -1;
	return 0;
}

static ssize_t rd(char *buf, size_t n)
{
	ssize_t r = read(0, buf, n);

	if (r >= 0 && (size_t)r < n)
		buf[r] = 0;
	return r;
}

int main(void)
{
	struct termios saved, t;
	struct winsize ws, ws2;
	char buf[64];
	int n;
	pid_t orig_pgrp;

	if (!isatty(0) || tcgetpgrp(0) != getpgrp()) {
		SKIP("stdin is not our foreground terminal");
	}
	CHECK_EQ(tcgetattr(0, &saved), 0);
	t = saved;
	t.c_lflag &= ~(ECHO | ECHONL);
	t.c_lflag |= ICANON | ISIG | IEXTEN;
	t.c_iflag |= ICRNL;
	CHECK_EQ(tcsetattr(0, TCSAFLUSH, &t), 0);
	if (type("x") != 0) {
		tcsetattr(0, TCSAFLUSH, &saved);
		SKIP("TIOCSTI not permitted");
	}
	CHECK_EQ(tcsetattr(0, TCSAFLUSH, &t), 0);
	CHECK_EQ(ioctl(0, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);

	/* Canonical editing. */
	CHECK_EQ(type("abd\x7f" "c\n"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 4);
	CHECK(strcmp(buf, "abc\n") == 0);
	CHECK_EQ(type("junk\x15ok\r"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 3);
	CHECK(strcmp(buf, "ok\n") == 0);
	CHECK_EQ(type("foo bar\x17" "baz\n"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 8);
	CHECK(strcmp(buf, "foo baz\n") == 0);
	/* A read returns at most one line, and the rest of a long one later. */
	CHECK_EQ(type("one\ntwo\n"), 0);
	CHECK_EQ(ioctl(0, FIONREAD, &n), 0);
	CHECK_EQ(n, 8);
	CHECK_EQ(rd(buf, 2), 2);
	CHECK_EQ(rd(buf, sizeof buf), 2);
	CHECK(strcmp(buf, "e\n") == 0);
	CHECK_EQ(rd(buf, sizeof buf), 4);
	/* ^D: ends a line without a newline; alone it reads as end of file. */
	CHECK_EQ(type("ab\x04"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 2);
	CHECK_EQ(type("\x04"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 0);
	/* TCSETSF drops typed input. */
	CHECK_EQ(type("lost\n"), 0);
	CHECK_EQ(tcsetattr(0, TCSAFLUSH, &t), 0);
	CHECK_EQ(ioctl(0, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);

	/* Non-canonical: VMIN bytes; VMIN 0 / VTIME 0 never blocks;
	 * VMIN 0 / VTIME 1 times out with 0. */
	t.c_lflag &= ~ICANON;
	t.c_cc[VMIN] = 3;
	t.c_cc[VTIME] = 0;
	CHECK_EQ(tcsetattr(0, TCSANOW, &t), 0);
	CHECK_EQ(type("xyz"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 3);
	t.c_cc[VMIN] = 0;
	CHECK_EQ(tcsetattr(0, TCSANOW, &t), 0);
	CHECK_EQ(rd(buf, sizeof buf), 0);
	CHECK_EQ(type("q"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 1);
	t.c_cc[VTIME] = 1;
	CHECK_EQ(tcsetattr(0, TCSANOW, &t), 0);
	CHECK_EQ(rd(buf, sizeof buf), 0);
	/* Bytes typed in non-canonical mode are not edited. */
	CHECK_EQ(type("a\x7f"), 0);
	CHECK_EQ(rd(buf, sizeof buf), 2);

	/*
	 * ^C: SIGINT to the foreground group, input flushed. In a group of
	 * our own, so that only we get it (our parent may be init).
	 */
	orig_pgrp = getpgrp();
	signal(SIGTTOU, SIG_IGN);
	CHECK_EQ(setpgid(0, 0), 0);
	CHECK_EQ(tcsetpgrp(0, getpgrp()), 0);
	signal(SIGINT, on_sig);
	t.c_lflag |= ICANON;
	CHECK_EQ(tcsetattr(0, TCSANOW, &t), 0);
	CHECK_EQ(type("gone\x03"), 0);
	for (n = 0; n < 1000 && !sigs[SIGINT]; n++)
		t_sleep_ns(1000 * 1000);
	CHECK_EQ(sigs[SIGINT], 1);
	CHECK_EQ(ioctl(0, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);
	signal(SIGINT, SIG_DFL);

	/* Window size: a change raises SIGWINCH. */
	signal(SIGWINCH, on_sig);
	CHECK_EQ(ioctl(0, TIOCGWINSZ, &ws), 0);
	ws2 = ws;
	ws2.ws_row = (unsigned short)(ws.ws_row + 1);
	CHECK_EQ(ioctl(0, TIOCSWINSZ, &ws2), 0);
	CHECK_EQ(ioctl(0, TIOCGWINSZ, &ws2), 0);
	CHECK_EQ(ws2.ws_row, ws.ws_row + 1);
	CHECK_EQ(ioctl(0, TIOCSWINSZ, &ws), 0);
	for (n = 0; n < 1000 && sigs[SIGWINCH] < 2; n++)
		t_sleep_ns(1000 * 1000);
	CHECK_EQ(sigs[SIGWINCH], 2);
	CHECK_EQ(tcsetpgrp(0, orig_pgrp), 0);

	CHECK_EQ(tcsetattr(0, TCSAFLUSH, &saved), 0);
	DONE();
}
