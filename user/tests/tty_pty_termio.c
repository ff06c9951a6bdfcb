/* The old System V termio ioctls on a terminal: TCGETA shows the low 16
 * bits of each flag word, the line discipline and the first 8 control
 * characters of the termios settings; TCSETA, TCSETAW and TCSETAF replace
 * just those (higher flag bits and later characters stay), TCSETAF also
 * discarding unread input. */
#include "next.h"
#include <sys/ioctl.h>
#include <termios.h>

struct termio_ {
	unsigned short c_iflag, c_oflag, c_cflag, c_lflag;
	unsigned char c_line;
	unsigned char c_cc[8];
};

#ifndef TCGETA
#define TCGETA 0x5405
#define TCSETA 0x5406
#define TCSETAW 0x5407
#define TCSETAF 0x5408
#endif
#define EXTPROC_ 0x10000

int main(void)
{
	struct termios t, u;
	struct termio_ v;
	int master, slave, n;
	char name[64];

	if (t_openpty(&master, &slave, name, sizeof name))
		SKIP("no pseudo-terminals");
	CHECK_EQ(sizeof v, 18);
	CHECK_EQ(tcgetattr(slave, &t), 0);
	/* A flag above the low 16 bits (EXTPROC), kept by TCSETA. */
	t.c_lflag |= EXTPROC_;
	CHECK_EQ(tcsetattr(slave, TCSANOW, &t), 0);
	CHECK_EQ(tcgetattr(slave, &t), 0);
	CHECK(t.c_lflag & EXTPROC_);

	memset(&v, 0xee, sizeof v);
	CHECK_EQ(ioctl(slave, TCGETA, &v), 0);
	CHECK_EQ(v.c_iflag, t.c_iflag & 0xffff);
	CHECK_EQ(v.c_oflag, t.c_oflag & 0xffff);
	CHECK_EQ(v.c_cflag, t.c_cflag & 0xffff);
	CHECK_EQ(v.c_lflag, t.c_lflag & 0xffff);
	CHECK_EQ(v.c_line, t.c_line);
	CHECK(memcmp(v.c_cc, t.c_cc, 8) == 0);

	v.c_lflag &= ~(ECHO | ICANON);
	v.c_cc[VINTR] = 7;
	v.c_cc[VMIN] = 1;
	CHECK_EQ(ioctl(slave, TCSETA, &v), 0);
	CHECK_EQ(tcgetattr(slave, &u), 0);
	CHECK(!(u.c_lflag & ECHO) && !(u.c_lflag & ICANON));
	CHECK(u.c_lflag & EXTPROC_);
	CHECK_EQ(u.c_cc[VINTR], 7);
	CHECK_EQ(u.c_cc[VSTART], t.c_cc[VSTART]);
	CHECK_EQ(u.c_iflag, t.c_iflag);

	v.c_cc[VINTR] = 3;
	CHECK_EQ(ioctl(slave, TCSETAW, &v), 0);
	CHECK_EQ(tcgetattr(slave, &u), 0);
	CHECK_EQ(u.c_cc[VINTR], 3);

	/* TCSETAF drops unread input (non-canonical, so it is readable). */
	CHECK_EQ(write(master, "abc", 3), 3);
	CHECK_EQ(t_read_avail(slave, name, 1, 5000), 1);
	CHECK_EQ(ioctl(slave, TCSETAF, &v), 0);
	CHECK_EQ(ioctl(slave, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);

	CHECK_ERR(ioctl(slave, TCGETA, (void *)1), EFAULT);
	n = open("/dev/null", O_RDONLY);
	CHECK_ERR(ioctl(n, TCGETA, &v), ENOTTY);
	close(n);
	DONE();
}
