/* The console as our terminal, checked only when stdin is a terminal (the
 * runner under xtask gives us the serial console; a host run usually does
 * not): TCGETS/TCSETSW round trip, TIOCGWINSZ, the foreground process
 * group, ttyname, epoll/poll readiness, /dev/tty.  Interactive behaviour (echo, ^C, job control)
 * is checked by the expect-style driver in xtask, not here. */
#include "next.h"
#include <sys/epoll.h>

int main(void)
{
	struct termios tio, again;
	struct winsize ws;
	pid_t fg;
	int fd;

	if (!isatty(0))
		SKIP("stdin is not a terminal");

	/* The kernel's termios (TCGETS) is smaller than libc's struct: zero
	 * both so that the bytes it does not write compare equal. */
	memset(&tio, 0, sizeof tio);
	memset(&again, 0, sizeof again);
	CHECK_EQ(ioctl(0, TCGETS, &tio), 0);
	CHECK_EQ(ioctl(0, TCSETSW, &tio), 0);
	CHECK_EQ(ioctl(0, TCGETS, &again), 0);
	CHECK_EQ(again.c_lflag, tio.c_lflag);
	CHECK_EQ(again.c_iflag, tio.c_iflag);
	CHECK_EQ(again.c_oflag, tio.c_oflag);
	CHECK(memcmp(again.c_cc, tio.c_cc, sizeof tio.c_cc) == 0);
	CHECK_EQ(ioctl(0, TIOCGWINSZ, &ws), 0);
	fg = tcgetpgrp(0);
	if (fg > 1) {
		/* Run from a shell or the runner: we may be in the
		 * foreground group or not, but the group exists. */
		CHECK_EQ(kill(-fg, 0), 0);
	} else if (fg == 1) {
		/* Group 1 is init's (a terminal owned by init's session, or
		 * a container's): kill(-1, 0) would be the broadcast to every
		 * process but init and us (ESRCH when there is none), so ask
		 * for init's group instead. */
		CHECK_EQ(getpgid(1), 1);
	}
	CHECK(ttyname(0) != NULL);
	/* The terminal can be watched with epoll and poll: writable. */
	{
		struct epoll_event ev, out[1];
		struct pollfd pf = { 0, POLLOUT, 0 };
		int ep = epoll_create1(0);

		ev.events = EPOLLOUT;
		ev.data.u32 = 9;
		CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev), 0);
		CHECK_EQ(epoll_wait(ep, out, 1, 1000), 1);
		CHECK_EQ(out[0].data.u32, 9);
		CHECK(out[0].events & EPOLLOUT);
		close(ep);
		CHECK_EQ(poll(&pf, 1, 1000), 1);
		CHECK(pf.revents & POLLOUT);
	}
	fd = open("/dev/tty", O_RDWR);
	if (fd >= 0) {
		CHECK(isatty(fd));
		close(fd);
	} else {
		CHECK_EQ(errno, ENXIO);
	}
	DONE();
}
