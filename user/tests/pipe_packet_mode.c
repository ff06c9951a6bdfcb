/* pipe2(O_DIRECT): a packet-mode pipe. Each write is a packet (a write
 * of more than a page is a packet per page) that one read(2) returns
 * alone, dropping what does not fit in the buffer; F_GETFL shows O_DIRECT
 * on the write end only, and F_SETFL turns packet mode off and on again
 * (later writes merge again). */
#include "next.h"

static ssize_t rd(int fd, char *buf, size_t n)
{
	ssize_t r = read(fd, buf, n);

	if (r >= 0)
		buf[r] = 0;
	return r;
}

int main(void)
{
	static char big[5000], buf[8192];
	int p[2];

	CHECK_EQ(pipe2(p, O_DIRECT | O_NONBLOCK), 0);
	CHECK(fcntl(p[1], F_GETFL) & O_DIRECT);
	CHECK(!(fcntl(p[0], F_GETFL) & O_DIRECT));

	CHECK_EQ(write(p[1], "abc", 3), 3);
	CHECK_EQ(write(p[1], "defgh", 5), 5);
	CHECK_EQ(write(p[1], "ij", 2), 2);
	CHECK_EQ(rd(p[0], buf, 100), 3);
	CHECK(!strcmp(buf, "abc"));
	CHECK_EQ(rd(p[0], buf, 100), 5);
	CHECK(!strcmp(buf, "defgh"));
	/* A short read takes the whole packet. */
	CHECK_EQ(rd(p[0], buf, 1), 1);
	CHECK(!strcmp(buf, "i"));
	CHECK_ERR(read(p[0], buf, 100), EAGAIN);

	/* More than a page: a packet per page. */
	memset(big, 'x', sizeof big);
	CHECK_EQ(write(p[1], big, sizeof big), sizeof big);
	CHECK_EQ(rd(p[0], buf, sizeof buf), 4096);
	CHECK_EQ(rd(p[0], buf, sizeof buf), sizeof big - 4096);
	CHECK_ERR(read(p[0], buf, 100), EAGAIN);

	/* Packet mode off: writes merge again. */
	CHECK_EQ(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	CHECK(!(fcntl(p[1], F_GETFL) & O_DIRECT));
	CHECK_EQ(write(p[1], "kl", 2), 2);
	CHECK_EQ(write(p[1], "mn", 2), 2);
	CHECK_EQ(rd(p[0], buf, 100), 4);
	CHECK(!strcmp(buf, "klmn"));
	/* ... and on. */
	CHECK_EQ(fcntl(p[1], F_SETFL, O_DIRECT | O_NONBLOCK), 0);
	CHECK(fcntl(p[1], F_GETFL) & O_DIRECT);
	CHECK_EQ(write(p[1], "o", 1), 1);
	CHECK_EQ(write(p[1], "p", 1), 1);
	CHECK_EQ(rd(p[0], buf, 100), 1);
	CHECK_EQ(rd(p[0], buf, 100), 1);
	CHECK(!strcmp(buf, "p"));
	close(p[0]);
	close(p[1]);

	/* Unknown flags are still refused. */
	CHECK_ERR(pipe2(p, 0x40), EINVAL);
	DONE();
}
