/*
 * Descriptors in flight must not leak. Each case puts a pipe's write end
 * in flight next to the sockets under test and closes every other copy
 * of it: the pipe's reader sees end of file only once the kernel has
 * released the messages holding it (a blocking read; the runner's
 * timeout catches a leak).
 *  - a socket sent over itself (it sits in its own receive queue);
 *  - a cycle of two sockets, each in the other's queue;
 *  - a socket in flight that an open socket can still reach is kept,
 *    and is received intact;
 *  - a chain of 2000 sockets, each in the queue of the one before, is
 *    released when its head is closed (no recursion through the kernel
 *    stack).
 */
#include "next.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>

static int send_fds(int s, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct msghdr mh;
	struct iovec iov = {.iov_base = "F", .iov_len = 1};
	struct cmsghdr *c;

	memset(&mh, 0, sizeof mh);
	memset(cbuf, 0, sizeof cbuf);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	return sendmsg(s, &mh, 0);
}

static int recv_fds(int s, int *fds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)], b[4];
	struct msghdr mh;
	struct iovec iov = {.iov_base = b, .iov_len = sizeof b};
	struct cmsghdr *c;

	memset(&mh, 0, sizeof mh);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof cbuf;
	if (recvmsg(s, &mh, 0) < 0)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return 0;
	memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
	return (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
}

/* Reads the pipe to end of file; true if it got there. */
static int pipe_eof(int r)
{
	char b[16];
	ssize_t n;
	while ((n = read(r, b, sizeof b)) > 0)
		;
	return n == 0;
}

int main(void)
{
	int a, b, sv[2], sv2[2], p[2], fds[2], got[4], i;
	struct pollfd pfd;

	/* 1. A socket sent over itself. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fds[0] = sv[1];
	fds[1] = p[1];
	CHECK_EQ(send_fds(sv[0], fds, 2), 1);
	close(p[1]);
	close(sv[1]);
	close(sv[0]);
	CHECK(pipe_eof(p[0]));
	close(p[0]);

	/* 2. A cycle: each socket in the other's queue. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv2), 0);
	fds[0] = sv2[1];
	CHECK_EQ(send_fds(sv[0], fds, 1), 1); /* sv2[1] in sv[1]'s queue */
	fds[0] = sv[1];
	fds[1] = p[1];
	CHECK_EQ(send_fds(sv2[0], fds, 2), 1); /* sv[1] in sv2[1]'s queue */
	close(p[1]);
	close(sv[1]);
	close(sv2[1]);
	close(sv2[0]);
	close(sv[0]);
	CHECK(pipe_eof(p[0]));
	close(p[0]);

	/* 3. Reachable from an open socket: kept. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
	CHECK_EQ(write(sv2[0], "kept", 4), 4);
	fds[0] = sv2[1];
	fds[1] = p[1];
	CHECK_EQ(send_fds(sv[0], fds, 2), 1); /* in sv[1]'s queue */
	close(p[1]);
	close(sv2[1]);
	close(sv[0]); /* a release while descriptors are in flight */
	a = socket(AF_UNIX, SOCK_DGRAM, 0);
	close(a);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(recv_fds(sv[1], got), 2);
	{
		char b4[8];
		CHECK_EQ(read(got[0], b4, sizeof b4), 4);
		CHECK(memcmp(b4, "kept", 4) == 0);
		CHECK_EQ(write(got[1], "w", 1), 1);
		CHECK_EQ(read(p[0], b4, 1), 1);
	}
	close(got[0]);
	close(got[1]);
	close(sv2[0]);
	close(sv[1]);
	CHECK(pipe_eof(p[0]));
	close(p[0]);

	/* 4. A long chain, released from its head. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	b = sv[1]; /* the head */
	a = sv[0];
	for (i = 0; i < 2000; i++) {
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
		fds[0] = sv2[1];
		if (send_fds(a, fds, 1) != 1) {
			CHECK(0);
			break;
		}
		close(a);
		close(sv2[1]);
		a = sv2[0];
	}
	fds[0] = p[1];
	CHECK_EQ(send_fds(a, fds, 1), 1);
	close(a);
	close(p[1]);
	pfd.fd = p[0];
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	close(b);
	CHECK(pipe_eof(p[0]));
	close(p[0]);
	DONE();
}
