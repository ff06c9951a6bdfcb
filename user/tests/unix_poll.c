/*
 * Readiness of AF_UNIX sockets for epoll (level- and edge-triggered),
 * poll and select: input when data arrives, each new arrival is a new
 * edge, output when a full sender drains, a pending connection makes a
 * listener readable, hang-up when the peer closes; a blocked reader and a
 * blocked accept are woken by another process.
 */
#include "next.h"
#include <poll.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(void)
{
	int sv[2], ep, n, v;
	struct epoll_event ev, out[4];
	char buf[65536];
	fd_set rd;
	struct timeval tv;
	pid_t pid;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ep = epoll_create1(0);
	CHECK(ep >= 0);

	/* Level-triggered: reported while data waits. */
	ev.events = EPOLLIN;
	ev.data.u32 = 1;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(sv[0], "a", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);

	/* Edge-triggered: once per arrival. */
	ev.events = EPOLLIN | EPOLLET;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, sv[1], &ev), 0);
	CHECK_EQ(write(sv[0], "b", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(sv[0], "c", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 2);
	/* A writer in another process wakes a blocked epoll_wait. */
	pid = fork();
	if (pid == 0) {
		t_sleep_ns(30 * 1000 * 1000);
		_exit(write(sv[0], "d", 1) == 1 ? 0 : 1);
	}
	CHECK_EQ(epoll_wait(ep, out, 4, -1), 1);
	CHECK_EQ(out[0].data.u32, 1);
	t_wait_ok(pid);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 1);

	/* Output, edge-triggered: a full sender becomes writable when the
	 * reader drains. */
	v = 4096;
	CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof v), 0);
	ev.events = EPOLLOUT | EPOLLET;
	ev.data.u32 = 2;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].data.u32, 2);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	while (send(sv[0], buf, sizeof buf, MSG_DONTWAIT) > 0)
		;
	CHECK_EQ(errno, EAGAIN);
	/* (Linux may report an edge while filling; consume it.) */
	epoll_wait(ep, out, 4, 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	while (recv(sv[1], buf, sizeof buf, MSG_DONTWAIT) > 0)
		;
	n = epoll_wait(ep, out, 4, 1000);
	CHECK(n >= 1);
	CHECK_EQ(out[0].data.u32, 2);
	CHECK(out[0].events & EPOLLOUT);

	/* select sees the same. */
	CHECK_EQ(write(sv[0], "e", 1), 1);
	FD_ZERO(&rd);
	FD_SET(sv[1], &rd);
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	CHECK_EQ(select(sv[1] + 1, &rd, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(sv[1], &rd));
	CHECK_EQ(read(sv[1], buf, sizeof buf), 1);

	/* Hang-up: EPOLLHUP and EPOLLIN when the peer closes. */
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL), 0);
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.u32 = 1;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, sv[1], &ev), 0);
	close(sv[0]);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK(out[0].events & EPOLLHUP);
	CHECK(out[0].events & EPOLLIN);
	CHECK(out[0].events & EPOLLRDHUP);
	close(sv[1]);

	/* A listener is readable with a pending connection; a blocked accept
	 * is woken by a connecting child. */
	{
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		socklen_t alen;
		int l, c;
		struct pollfd pfd;
		snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "unix-poll-%d", (int)getpid());
		alen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1);
		l = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK_EQ(bind(l, (struct sockaddr *)&a, alen), 0);
		CHECK_EQ(listen(l, 4), 0);
		pfd.fd = l;
		pfd.events = POLLIN | POLLOUT;
		CHECK_EQ(poll(&pfd, 1, 0), 0);
		pid = fork();
		if (pid == 0) {
			int s = socket(AF_UNIX, SOCK_STREAM, 0);
			t_sleep_ns(30 * 1000 * 1000);
			if (connect(s, (struct sockaddr *)&a, alen) != 0)
				_exit(1);
			if (write(s, "hi", 2) != 2)
				_exit(2);
			_exit(0);
		}
		c = accept(l, NULL, NULL);
		CHECK(c >= 0);
		CHECK_EQ(read(c, buf, sizeof buf), 2);
		t_wait_ok(pid);
		CHECK_EQ(read(c, buf, sizeof buf), 0);
		close(c);
		close(l);
	}
	close(ep);
	DONE();
}
