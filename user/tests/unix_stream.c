/*
 * AF_UNIX SOCK_STREAM over socketpair(2): bytes in order across sends,
 * read/write, MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL (a child writes in
 * pieces), MSG_TRUNC on a stream, FIONREAD/SIOCOUTQ, shutdown (EOF,
 * EPIPE), SIGPIPE unless MSG_NOSIGNAL, back-pressure (a non-blocking
 * sender fills the socket to EAGAIN; poll reports POLLOUT once the
 * reader drains it), close of the peer (EOF, POLLHUP, EPIPE), and the
 * credentials of SO_PEERCRED.
 */
#include "next.h"
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#ifndef SIOCOUTQ
#define SIOCOUTQ 0x5411
#endif

static volatile int sigpipes;

static void on_pipe(int sig)
{
	(void)sig;
	sigpipes++;
}

int main(void)
{
	int sv[2], n, v;
	char buf[4096], big[65536];
	struct pollfd pfd;
	struct ucred cred;
	socklen_t len;
	pid_t pid;
	long total;

	signal(SIGPIPE, on_pipe);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);

	/* SO_PEERCRED: the creator, on both ends. */
	len = sizeof cred;
	CHECK_EQ(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &len), 0);
	CHECK_EQ(len, sizeof cred);
	CHECK_EQ(cred.pid, getpid());
	CHECK_EQ(cred.uid, geteuid());
	CHECK_EQ(cred.gid, getegid());
	len = sizeof v;
	CHECK_EQ(getsockopt(sv[1], SOL_SOCKET, SO_TYPE, &v, &len), 0);
	CHECK_EQ(v, SOCK_STREAM);

	/* A stream: message boundaries do not survive. */
	CHECK_EQ(write(sv[0], "hello", 5), 5);
	CHECK_EQ(send(sv[0], " world", 6, 0), 6);
	CHECK_EQ(ioctl(sv[1], FIONREAD, &n), 0);
	CHECK_EQ(n, 11);
	CHECK_EQ(ioctl(sv[0], SIOCOUTQ, &n), 0);
	CHECK(n >= 11);
	/* MSG_PEEK reads across the two sends and leaves the bytes. */
	CHECK_EQ(recv(sv[1], buf, 8, MSG_PEEK), 8);
	CHECK(memcmp(buf, "hello wo", 8) == 0);
	CHECK_EQ(recv(sv[1], buf, 3, 0), 3);
	CHECK(memcmp(buf, "hel", 3) == 0);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 8);
	CHECK(memcmp(buf, "lo world", 8) == 0);
	CHECK_EQ(ioctl(sv[0], SIOCOUTQ, &n), 0);
	CHECK_EQ(n, 0);
	/* Nothing queued: MSG_DONTWAIT is EAGAIN. */
	CHECK_ERR(recv(sv[1], buf, 1, MSG_DONTWAIT), EAGAIN);
	pfd.fd = sv[1];
	pfd.events = POLLIN | POLLOUT;
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK_EQ(pfd.revents, POLLOUT);

	/* MSG_WAITALL waits for the whole buffer. */
	pid = fork();
	if (pid == 0) {
		int i;
		for (i = 0; i < 4; i++) {
			t_sleep_ns(20 * 1000 * 1000);
			if (write(sv[0], "abcd", 4) != 4)
				_exit(1);
		}
		_exit(0);
	}
	CHECK_EQ(recv(sv[1], buf, 16, MSG_WAITALL), 16);
	CHECK(memcmp(buf, "abcdabcdabcdabcd", 16) == 0);
	t_wait_ok(pid);

	/* Zero-length buffers. */
	CHECK_EQ(send(sv[0], "", 0, 0), 0);
	CHECK_ERR(recv(sv[1], buf, 0, MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(send(sv[0], "z", 1, 0), 1);
	CHECK_EQ(recv(sv[1], buf, 0, MSG_DONTWAIT), 0);
	CHECK_EQ(recv(sv[1], buf, 1, MSG_DONTWAIT), 1);

	/* Back-pressure: a non-blocking sender fills to EAGAIN. */
	v = 4096;
	CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof v), 0);
	memset(big, 'x', sizeof big);
	total = 0;
	for (;;) {
		ssize_t r = send(sv[0], big, sizeof big, MSG_DONTWAIT);
		if (r < 0) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
		CHECK(r > 0);
		total += r;
		if (total > 64L << 20)
			break;
	}
	CHECK(total > 0);
	CHECK(total < 64L << 20);
	pfd.fd = sv[0];
	pfd.events = POLLOUT;
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	/* Drain: the sender becomes writable again and every byte arrives. */
	{
		long got = 0;
		while (got < total) {
			ssize_t r = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
			if (r <= 0)
				break;
			got += r;
		}
		CHECK_EQ(got, total);
	}
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	CHECK(pfd.revents & POLLOUT);
	/* A blocking sender of more than fits finishes once a reader reads. */
	pid = fork();
	if (pid == 0) {
		long got = 0;
		while (got < (long)sizeof big) {
			ssize_t r = read(sv[1], buf, sizeof buf);
			if (r <= 0)
				_exit(1);
			got += r;
		}
		_exit(got == sizeof big ? 0 : 2);
	}
	CHECK_EQ(send(sv[0], big, sizeof big, 0), (long)sizeof big);
	t_wait_ok(pid);

	/* shutdown(SHUT_WR): the peer reads EOF, our send is EPIPE + SIGPIPE. */
	CHECK_EQ(write(sv[0], "end", 3), 3);
	CHECK_EQ(shutdown(sv[0], SHUT_WR), 0);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 3);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	pfd.fd = sv[1];
	pfd.events = POLLIN | POLLRDHUP;
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK(pfd.revents & POLLIN);
	CHECK(pfd.revents & POLLRDHUP);
	CHECK(!(pfd.revents & POLLHUP));
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_EQ(sigpipes, 1);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(sigpipes, 1);
	/* The other direction still works. */
	CHECK_EQ(write(sv[1], "back", 4), 4);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 4);
	close(sv[0]);
	close(sv[1]);

	/* The peer closes: EOF after the data, POLLHUP, EPIPE. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(write(sv[0], "last", 4), 4);
	close(sv[0]);
	pfd.fd = sv[1];
	pfd.events = POLLIN | POLLOUT;
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK(pfd.revents & POLLHUP);
	CHECK(pfd.revents & POLLIN);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 4);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	CHECK_ERR(write(sv[1], "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 2);
	/* getpeername still answers (an unnamed peer: just the family). */
	{
		struct sockaddr_un a;
		len = sizeof a;
		CHECK_EQ(getpeername(sv[1], (struct sockaddr *)&a, &len), 0);
		CHECK_EQ(len, sizeof(sa_family_t));
	}
	close(sv[1]);

	/* SHUT_RD on one end: the other end's sends are EPIPE. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(shutdown(sv[1], SHUT_RD), 0);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	close(sv[0]);
	close(sv[1]);

	/* Unread data when closing: the peer gets ECONNRESET. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(write(sv[1], "unread", 6), 6);
	close(sv[0]);
	CHECK_ERR(read(sv[1], buf, sizeof buf), ECONNRESET);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	close(sv[1]);

	/* An unconnected stream socket. */
	n = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(send(n, "x", 1, MSG_NOSIGNAL), ENOTCONN);
	CHECK_ERR(recv(n, buf, 1, MSG_DONTWAIT), EINVAL);
	pfd.fd = n;
	pfd.events = POLLIN | POLLOUT;
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK_EQ(pfd.revents, POLLOUT | POLLHUP);
	CHECK_EQ(shutdown(n, SHUT_RDWR), 0);
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK_EQ(pfd.revents, POLLIN | POLLOUT | POLLHUP);
	close(n);
	DONE();
}
