/* epoll over pipes: level-triggered reports until drained, edge-triggered
 * only on new data, EPOLLONESHOT until re-armed with MOD, EPOLLHUP and
 * EPOLLERR, maxevents limits, and a wait woken by another process. */
#include "next.h"
#include <sys/epoll.h>

int main(void)
{
	struct epoll_event ev, out[4];
	int ep, p[2], q[2];
	char buf[16];
	long long t0;
	pid_t pid;

	ep = epoll_create1(0);
	CHECK(ep >= 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);

	/* Level-triggered. */
	ev.events = EPOLLIN;
	ev.data.fd = p[0];
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	CHECK_EQ(write(p[1], "ab", 2), 2);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);

	/* Edge-triggered: once per new write. */
	ev.events = EPOLLIN | EPOLLET;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(write(p[1], "cd", 2), 2);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(p[1], "e", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 3);

	/* One-shot: disabled after one report, re-armed by MOD. */
	ev.events = EPOLLIN | EPOLLONESHOT;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(write(p[1], "f", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(p[1], "g", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(read(p[0], buf, sizeof buf), 2);

	/* Several ready fds, maxevents 1 returns them one at a time. */
	ev.events = EPOLLIN;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	ev.data.fd = q[0];
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &ev), 0);
	CHECK_EQ(write(p[1], "h", 1), 1);
	CHECK_EQ(write(q[1], "i", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 2);
	CHECK_EQ(epoll_wait(ep, out, 1, 0), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(read(q[0], buf, 1), 1);

	/* Woken by another process; timeout otherwise. */
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(epoll_wait(ep, out, 4, 30), 0);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
	pid = fork();
	if (pid == 0) {
		t_msleep(30);
		(void)!write(q[1], "j", 1);
		_exit(0);
	}
	CHECK_EQ(epoll_wait(ep, out, 4, -1), 1);
	CHECK_EQ(out[0].data.fd, q[0]);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(read(q[0], buf, 1), 1);

	/* Writer closed: EPOLLHUP (reported even if not asked for). */
	close(q[1]);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].events, EPOLLHUP);

	/* Reader closed: the write end reports EPOLLERR. */
	ev.events = EPOLLOUT;
	ev.data.fd = p[1];
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, q[0], NULL), 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	close(p[0]);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK(out[0].events & EPOLLERR);
	close(p[1]);
	close(q[0]);
	close(ep);
	DONE();
}
