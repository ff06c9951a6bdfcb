/* The line discipline through a pseudo-terminal (skipped where there are
 * no ptys): canonical mode line buffering, echo with ONLCR, erase and
 * kill, VEOF, ICRNL, raw mode with VMIN/VTIME, OPOST off, and
 * TCSETS/TCSETSW/TCSETSF (flushing pending input). */
#include "next.h"
#include <sys/epoll.h>

int main(void)
{
	char name[64], buf[256];
	struct termios tio, raw;
	int m, s, avail;
	ssize_t n;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");
	CHECK(isatty(s));
	CHECK_EQ(ioctl(s, TCGETS, &tio), 0);
	CHECK(tio.c_lflag & ICANON);
	CHECK(tio.c_lflag & ECHO);
	CHECK(tio.c_oflag & ONLCR);
	CHECK_EQ(tio.c_cc[VERASE], 0177);
	CHECK_EQ(tio.c_cc[VKILL], 'U' & 0x1f);
	CHECK_EQ(tio.c_cc[VEOF], 'D' & 0x1f);
	CHECK_EQ(tio.c_cc[VINTR], 'C' & 0x1f);
	fcntl(s, F_SETFL, O_NONBLOCK);

	/* Canonical: nothing until the newline. */
	CHECK_EQ(write(m, "abc", 3), 3);
	t_msleep(20);
	CHECK_ERR(read(s, buf, sizeof buf), EAGAIN);
	CHECK_EQ(write(m, "\n", 1), 1);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 4);
	CHECK(memcmp(buf, "abc\n", 4) == 0);
	/* The echo, with \n turned into \r\n. */
	n = t_read_avail(m, buf, sizeof buf, 2000);
	CHECK_EQ(n, 5);
	CHECK(memcmp(buf, "abc\r\n", 5) == 0);

	/* epoll and poll on the terminal: readable only once a whole line
	 * is there in canonical mode; writable at once. */
	{
		struct epoll_event ev, out[2];
		struct pollfd pf;
		int ep = epoll_create1(0);

		ev.events = EPOLLIN;
		ev.data.u32 = 5;
		CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev), 0);
		CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
		CHECK_EQ(write(m, "pa", 2), 2);
		t_msleep(20);
		CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
		pf.fd = s;
		pf.events = POLLIN | POLLOUT;
		CHECK_EQ(poll(&pf, 1, 0), 1);
		CHECK_EQ(pf.revents, POLLOUT);
		CHECK_EQ(write(m, "rt\n", 3), 3);
		CHECK_EQ(epoll_wait(ep, out, 2, 2000), 1);
		CHECK_EQ(out[0].events, EPOLLIN);
		CHECK_EQ(out[0].data.u32, 5);
		n = t_read_avail(s, buf, sizeof buf, 2000);
		CHECK_EQ(n, 5);
		CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
		t_read_avail(m, buf, sizeof buf, 100); /* drop the echo */
		close(ep);
	}

	/* Erase and kill. */
	CHECK_EQ(write(m, "ab\177c\n", 5), 5);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 3);
	CHECK(memcmp(buf, "ac\n", 3) == 0);
	CHECK_EQ(write(m, "xyz\025ok\n", 7), 7);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 3);
	CHECK(memcmp(buf, "ok\n", 3) == 0);
	t_read_avail(m, buf, sizeof buf, 100); /* drop the echo */

	/* ICRNL: CR in becomes NL. */
	CHECK_EQ(write(m, "cr\r", 3), 3);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 3);
	CHECK(memcmp(buf, "cr\n", 3) == 0);

	/* VEOF: ends a partial line without a newline; alone it is EOF. */
	CHECK_EQ(write(m, "ab\004", 3), 3);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 2);
	CHECK_EQ(write(m, "\004", 1), 1);
	t_msleep(20);
	fcntl(s, F_SETFL, 0);
	CHECK_EQ(read(s, buf, sizeof buf), 0);
	fcntl(s, F_SETFL, O_NONBLOCK);
	t_read_avail(m, buf, sizeof buf, 100);

	/* Output processing: ONLCR, then OPOST off. */
	CHECK_EQ(write(s, "x\n", 2), 2);
	n = t_read_avail(m, buf, sizeof buf, 2000);
	CHECK_EQ(n, 3);
	CHECK(memcmp(buf, "x\r\n", 3) == 0);

	/* Raw mode. */
	raw = tio;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	CHECK_EQ(ioctl(s, TCSETS, &raw), 0);
	CHECK_EQ(ioctl(s, TCGETS, &tio), 0);
	CHECK(!(tio.c_lflag & (ICANON | ECHO | ISIG)));
	CHECK(!(tio.c_oflag & OPOST));
	CHECK_EQ(write(m, "q", 1), 1);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 1);
	CHECK_EQ(buf[0], 'q');
	/* No echo in raw mode. */
	CHECK_EQ(t_read_avail(m, buf, sizeof buf, 50), 0);
	/* \r and control characters pass through. */
	CHECK_EQ(write(m, "\r\003\177", 3), 3);
	n = t_read_avail(s, buf, sizeof buf, 2000);
	CHECK_EQ(n, 3);
	CHECK(n == 3 && buf[0] == '\r' && buf[1] == 3 && buf[2] == 0177);
	CHECK_EQ(write(s, "y\n", 2), 2);
	n = t_read_avail(m, buf, sizeof buf, 2000);
	CHECK_EQ(n, 2);
	CHECK(memcmp(buf, "y\n", 2) == 0);

	/* VMIN=0, VTIME=0: a blocking read returns 0 at once. */
	fcntl(s, F_SETFL, 0);
	raw.c_cc[VMIN] = 0;
	CHECK_EQ(ioctl(s, TCSETS, &raw), 0);
	CHECK_EQ(read(s, buf, sizeof buf), 0);
	/* VMIN=0, VTIME=1: returns 0 after about 0.1 s. */
	raw.c_cc[VTIME] = 1;
	CHECK_EQ(ioctl(s, TCSETSW, &raw), 0);
	{
		long long t0 = t_now_ns(CLOCK_MONOTONIC);

		CHECK_EQ(read(s, buf, sizeof buf), 0);
		CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 90000000LL);
	}
	/* VMIN=3: waits for three bytes. */
	raw.c_cc[VMIN] = 3;
	raw.c_cc[VTIME] = 0;
	CHECK_EQ(ioctl(s, TCSETS, &raw), 0);
	CHECK_EQ(write(m, "12345", 5), 5);
	t_msleep(20);
	n = read(s, buf, sizeof buf);
	CHECK(n >= 3);

	/* TCSETSF discards pending input. */
	CHECK_EQ(write(m, "junk", 4), 4);
	t_msleep(20);
	CHECK_EQ(ioctl(s, FIONREAD, &avail), 0);
	CHECK(avail >= 4);
	CHECK_EQ(ioctl(s, TCSETSF, &raw), 0);
	CHECK_EQ(ioctl(s, FIONREAD, &avail), 0);
	CHECK_EQ(avail, 0);
	close(s);
	close(m);
	DONE();
}
