/* Terminal ioctls on things that are not terminals: ENOTTY for TCGETS,
 * TIOCGWINSZ, TIOCGPGRP on pipes, files and /dev/null; isatty false;
 * ttyname fails; tcgetattr too. */
#include "next.h"

int main(void)
{
	struct termios tio;
	struct winsize ws;
	int p[2], fd, pg;

	CHECK_EQ(pipe(p), 0);
	fd = open("/dev/null", O_RDWR);
	CHECK_ERR(ioctl(p[0], TCGETS, &tio), ENOTTY);
	CHECK_ERR(ioctl(p[1], TIOCGWINSZ, &ws), ENOTTY);
	CHECK_ERR(ioctl(fd, TCGETS, &tio), ENOTTY);
	CHECK_ERR(ioctl(fd, TIOCGPGRP, &pg), ENOTTY);
	CHECK_ERR(ioctl(fd, TCSETS, &tio), ENOTTY);
	CHECK_ERR(tcgetattr(p[0], &tio), ENOTTY);
	CHECK(!isatty(p[0]));
	CHECK_EQ(errno, ENOTTY);
	CHECK(!isatty(fd));
	CHECK(ttyname(fd) == NULL);
	CHECK_ERR(ioctl(9999, TCGETS, &tio), EBADF);
	{
		int f = open("/proc/self/exe", O_RDONLY);

		if (f >= 0) {
			CHECK_ERR(ioctl(f, TCGETS, &tio), ENOTTY);
			close(f);
		}
	}
	close(fd);
	close(p[0]);
	close(p[1]);
	DONE();
}
