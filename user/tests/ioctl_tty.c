/*
 * ioctl TCGETS/TIOCGWINSZ: works on a terminal, ENOTTY elsewhere; EBADF.
 * Whether stdout is a terminal depends on how the suite is run, so the
 * terminal-only checks (including ESPIPE from lseek/pwrite on a tty) run
 * only when isatty(1).
 */
#include "t.h"
#include <sys/ioctl.h>
#include <termios.h>

#define X_TCGETS 0x5401
#define X_TIOCGWINSZ 0x5413

int main(void)
{
	char dir[128], path[256];
	unsigned char term[64];
	struct winsize ws;
	int fd, dfd;

	CHECK_EQ(X_TCGETS, TCGETS);
	CHECK_EQ(X_TIOCGWINSZ, TIOCGWINSZ);

	/* If stdout is a terminal, both requests succeed on it. */
	if (isatty(1)) {
		CHECK_EQ(ioctl(1, X_TCGETS, term), 0);
		CHECK_EQ(ioctl(1, X_TIOCGWINSZ, &ws), 0);
		CHECK_ERR(syscall(SYS_ioctl, 1, X_TCGETS, BAD_PTR2), EFAULT);
		/* A terminal is not seekable: ESPIPE. */
		CHECK_ERR(lseek(1, 0, SEEK_CUR), ESPIPE);
		CHECK_ERR(pwrite(1, "", 0, 0), ESPIPE);
	}

	/* On a regular file and a directory: ENOTTY. */
	if (t_mktmp("ioctl_tty", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_ERR(ioctl(fd, X_TCGETS, term), ENOTTY);
	CHECK_ERR(ioctl(fd, X_TIOCGWINSZ, &ws), ENOTTY);
	CHECK_ERR(syscall(SYS_ioctl, fd, X_TCGETS, term), ENOTTY);
	CHECK(!isatty(fd));
	CHECK_EQ(errno, ENOTTY);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_ERR(ioctl(dfd, X_TCGETS, term), ENOTTY);

	/* EBADF. */
	CHECK_ERR(ioctl(-1, X_TCGETS, term), EBADF);
	CHECK_ERR(ioctl(999, X_TCGETS, term), EBADF);
	CHECK_ERR(ioctl(999, X_TIOCGWINSZ, &ws), EBADF);
	CHECK_EQ(close(fd), 0);
	CHECK_ERR(ioctl(fd, X_TCGETS, term), EBADF);

	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
