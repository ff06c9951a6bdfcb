/*
 * AF_UNIX SOCK_DGRAM: sendto a path or abstract name, recvfrom reports the
 * sender (or no address for an unbound one), boundaries, MSG_TRUNC (flag
 * and full length), MSG_PEEK, FIONREAD is the next datagram, connect and
 * AF_UNSPEC to dissolve it, EPERM towards a socket connected elsewhere,
 * ECONNREFUSED once the peer is gone, ENOTCONN without a destination,
 * EMSGSIZE above the send buffer, shutdown (EPIPE without SIGPIPE),
 * a receiver that fills up blocks a sender (EAGAIN non-blocking), and
 * recvmmsg/sendmmsg.
 */
#include "next.h"
#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

static volatile int sigpipes;

static void on_pipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static socklen_t mkabstract(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, name, strlen(name));
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

int main(void)
{
	struct sockaddr_un ra, sa, from;
	socklen_t ralen, salen, flen;
	char name[64], buf[256];
	int r, s, t, n, sv[2];
	struct msghdr mh;
	struct iovec iov;

	signal(SIGPIPE, on_pipe);
	snprintf(name, sizeof name, "trellis-dgram-r-%d", (int)getpid());
	ralen = mkabstract(&ra, name);
	snprintf(name, sizeof name, "trellis-dgram-s-%d", (int)getpid());
	salen = mkabstract(&sa, name);
	r = socket(AF_UNIX, SOCK_DGRAM, 0);
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK_EQ(bind(r, (struct sockaddr *)&ra, ralen), 0);

	/* No destination: ENOTCONN. An unbound sender: no address. */
	CHECK_ERR(send(s, "x", 1, 0), ENOTCONN);
	CHECK_EQ(sendto(s, "anon", 4, 0, (struct sockaddr *)&ra, ralen), 4);
	flen = sizeof from;
	CHECK_EQ(recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen), 4);
	CHECK_EQ(flen, 0);
	/* A bound sender is named; boundaries hold. */
	CHECK_EQ(bind(s, (struct sockaddr *)&sa, salen), 0);
	CHECK_EQ(sendto(s, "first", 5, 0, (struct sockaddr *)&ra, ralen), 5);
	CHECK_EQ(sendto(s, "second!", 7, 0, (struct sockaddr *)&ra, ralen), 7);
	CHECK_EQ(ioctl(r, FIONREAD, &n), 0);
	CHECK_EQ(n, 5);
	flen = sizeof from;
	CHECK_EQ(recvfrom(r, buf, sizeof buf, MSG_PEEK, (struct sockaddr *)&from, &flen), 5);
	CHECK_EQ(flen, salen);
	CHECK(memcmp(from.sun_path, sa.sun_path, salen - 2) == 0);
	CHECK_EQ(recv(r, buf, sizeof buf, 0), 5);
	CHECK(memcmp(buf, "first", 5) == 0);
	/* MSG_TRUNC: the rest is lost; with the flag the full length. */
	CHECK_EQ(recv(r, buf, 3, MSG_TRUNC), 7);
	CHECK(memcmp(buf, "sec", 3) == 0);
	CHECK_EQ(sendto(s, "third!!", 7, 0, (struct sockaddr *)&ra, ralen), 7);
	memset(&mh, 0, sizeof mh);
	iov.iov_base = buf;
	iov.iov_len = 2;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	CHECK_EQ(recvmsg(r, &mh, 0), 2);
	CHECK(mh.msg_flags & MSG_TRUNC);
	CHECK_ERR(recv(r, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);

	/* connect: the default destination; sendto elsewhere still works. */
	CHECK_EQ(connect(s, (struct sockaddr *)&ra, ralen), 0);
	CHECK_EQ(send(s, "conn", 4, 0), 4);
	CHECK_EQ(recv(r, buf, sizeof buf, 0), 4);
	/* r connected to s: a third socket may not send to r (EPERM). */
	CHECK_EQ(connect(r, (struct sockaddr *)&sa, salen), 0);
	t = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK_ERR(sendto(t, "x", 1, 0, (struct sockaddr *)&ra, ralen), EPERM);
	/* AF_UNSPEC dissolves r's association. */
	{
		struct sockaddr un = {.sa_family = AF_UNSPEC};
		CHECK_EQ(connect(r, &un, sizeof un), 0);
	}
	CHECK_EQ(sendto(t, "y", 1, 0, (struct sockaddr *)&ra, ralen), 1);
	CHECK_EQ(recv(r, buf, sizeof buf, 0), 1);
	/* Too big for the send buffer: EMSGSIZE. */
	{
		static char huge[300000];
		CHECK_ERR(sendto(t, huge, sizeof huge, 0, (struct sockaddr *)&ra, ralen), EMSGSIZE);
	}
	/* A receiver that does not read fills up: EAGAIN, then room again. */
	{
		int sent = 0;
		for (;;) {
			if (sendto(t, "fill", 4, MSG_DONTWAIT, (struct sockaddr *)&ra, ralen) < 0) {
				CHECK_EQ(errno, EAGAIN);
				break;
			}
			if (++sent > 100000)
				break;
		}
		CHECK(sent >= 1);
		CHECK(sent <= 100000);
		CHECK_EQ(recv(r, buf, sizeof buf, 0), 4);
		CHECK_EQ(sendto(t, "more", 4, MSG_DONTWAIT, (struct sockaddr *)&ra, ralen), 4);
		while (recv(r, buf, sizeof buf, MSG_DONTWAIT) > 0)
			;
	}
	close(t);
	/* The destination gone: ECONNREFUSED, on connect or send. */
	close(r);
	CHECK_ERR(send(s, "gone", 4, 0), ECONNREFUSED);
	CHECK_ERR(sendto(s, "gone", 4, 0, (struct sockaddr *)&ra, ralen), ECONNREFUSED);
	CHECK_ERR(connect(s, (struct sockaddr *)&ra, ralen), ECONNREFUSED);
	close(s);

	/* A datagram pair: shutdown gives EPIPE without SIGPIPE, and the
	 * reader sees end of file. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_EQ(send(sv[0], "", 0, 0), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 0);
	CHECK_EQ(shutdown(sv[0], SHUT_WR), 0);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_EQ(sigpipes, 0);
	CHECK_EQ(shutdown(sv[1], SHUT_RD), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 0);

	/* sendmmsg / recvmmsg. */
	close(sv[0]);
	close(sv[1]);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	{
		struct mmsghdr m[3];
		struct iovec v[3];
		char b[3][16];
		int i;
		memset(m, 0, sizeof m);
		for (i = 0; i < 3; i++) {
			v[i].iov_base = (char *)"abcdef" + i;
			v[i].iov_len = 1 + i;
			m[i].msg_hdr.msg_iov = &v[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		CHECK_EQ(sendmmsg(sv[0], m, 3, 0), 3);
		CHECK_EQ(m[2].msg_len, 3);
		memset(m, 0, sizeof m);
		for (i = 0; i < 3; i++) {
			v[i].iov_base = b[i];
			v[i].iov_len = sizeof b[i];
			m[i].msg_hdr.msg_iov = &v[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		CHECK_EQ(recvmmsg(sv[1], m, 3, MSG_DONTWAIT, NULL), 3);
		CHECK_EQ(m[0].msg_len, 1);
		CHECK_EQ(m[1].msg_len, 2);
		CHECK_EQ(m[2].msg_len, 3);
		CHECK(memcmp(b[2], "cde", 3) == 0);
		CHECK_ERR(recvmmsg(sv[1], m, 3, MSG_DONTWAIT, NULL), EAGAIN);
		CHECK_EQ(send(sv[0], "w", 1, 0), 1);
		CHECK_EQ(recvmmsg(sv[1], m, 3, MSG_WAITFORONE, NULL), 1);
	}
	close(sv[0]);
	close(sv[1]);

	/* SOCK_SEQPACKET pair: boundaries, truncation, EOF, EPIPE. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	CHECK_EQ(send(sv[0], "12345", 5, 0), 5);
	CHECK_EQ(recv(sv[1], buf, 2, 0), 2);
	CHECK_ERR(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	close(sv[1]);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(recv(sv[0], buf, sizeof buf, 0), 0);
	close(sv[0]);
	DONE();
}
