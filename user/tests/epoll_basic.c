/*
 * epoll(7): epoll_create/epoll_create1 and their errors; epoll_ctl's
 * errors (EBADF, EINVAL, EPERM for regular files, EEXIST, ENOENT, ELOOP);
 * level-triggered, edge-triggered (EPOLLET: one report per new event) and
 * EPOLLONESHOT entries over pipes and eventfds; EPOLLHUP/EPOLLERR always
 * reported; timeouts; a blocked epoll_wait woken by another process; an
 * entry lives as long as the open file description (not the descriptor);
 * small maxevents take turns; nested epoll instances.
 */
#include "t.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>

static int add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int main(void)
{
	int ep, ep2, p[2], q[2], efd, fd, dupfd;
	struct epoll_event ev, out[8];
	char dir[128], path[256], c;
	uint64_t v = 1;
	pid_t pid;

	CHECK_ERR(syscall(SYS_epoll_create, 0), EINVAL);
	ep = epoll_create(1);
	CHECK(ep >= 0);
	CHECK_EQ(fcntl(ep, F_GETFD), 0);
	close(ep);
	CHECK_ERR(epoll_create1(1), EINVAL);
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	CHECK_EQ(fcntl(ep, F_GETFD), FD_CLOEXEC);

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);

	/* epoll_ctl errors. */
	ev.events = EPOLLIN;
	ev.data.u64 = 0;
	CHECK_ERR(epoll_ctl(-1, EPOLL_CTL_ADD, p[0], &ev), EBADF);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev), EBADF);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(p[1], EPOLL_CTL_ADD, p[0], &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, 42, p[0], &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], BAD_PTR2), EFAULT);
	if (t_mktmp("epoll_basic", dir, sizeof dir) == 0) {
		t_join(path, sizeof path, dir, "f");
		fd = open(path, O_CREAT | O_RDWR, 0600);
		CHECK(fd >= 0);
		CHECK_ERR(add(ep, fd, EPOLLIN, 0), EPERM);
		close(fd);
		fd = open(dir, O_RDONLY | O_DIRECTORY);
		CHECK_ERR(add(ep, fd, EPOLLIN, 0), EPERM);
		close(fd);
		t_rmtree(dir);
	}
	CHECK_EQ(add(ep, p[0], EPOLLIN, 7), 0);
	CHECK_ERR(add(ep, p[0], EPOLLIN, 7), EEXIST);
	CHECK_ERR(epoll_wait(ep, out, 0, 0), EINVAL);
	CHECK_ERR(epoll_wait(p[0], out, 1, 0), EINVAL);
	CHECK_ERR(epoll_wait(-1, out, 1, 0), EBADF);

	/* Level-triggered: reported while readable. */
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 20), 0);
	CHECK_EQ(write(p[1], "ab", 2), 2);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_EQ(out[0].data.u64, 7);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 8, -1), 1);

	/* Edge-triggered: once per new event. */
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = 8;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.u64, 8);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	CHECK_EQ(write(p[1], "c", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	/* Reading part of the data is no new event. */
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);

	/* One-shot: disarmed after one report until EPOLL_CTL_MOD. */
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 9;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	CHECK_EQ(write(p[1], "d", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), 0);

	/* Write ends, eventfds, several ready entries. */
	efd = eventfd(0, EFD_NONBLOCK);
	CHECK(efd >= 0);
	CHECK_EQ(add(ep, p[1], EPOLLOUT, 1), 0);
	CHECK_EQ(add(ep, efd, EPOLLIN, 2), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	CHECK_EQ(out[0].data.u64, 1);
	CHECK_EQ(write(efd, &v, sizeof v), 8);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 2);
	/* maxevents 1: the two ready entries take turns. */
	CHECK_EQ(epoll_wait(ep, out, 1, 0), 1);
	v = out[0].data.u64;
	CHECK_EQ(epoll_wait(ep, out, 1, 0), 1);
	CHECK(out[0].data.u64 != v);
	CHECK_EQ(read(efd, &v, sizeof v), 8);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL), 0);

	/* A blocked wait is woken by another process. */
	pid = fork();
	if (pid == 0) {
		uint64_t one = 1;

		t_sleep_ns(50 * 1000 * 1000);
		_exit(write(efd, &one, sizeof one) == 8 ? 0 : 1);
	}
	CHECK_EQ(epoll_wait(ep, out, 8, 10000), 1);
	CHECK_EQ(out[0].data.u64, 2);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(read(efd, &v, sizeof v), 8);

	/* Hang-up and error are reported even if not asked for. */
	CHECK_EQ(add(ep, q[0], 0, 3), 0);
	CHECK_EQ(add(ep, q[1], 0, 4), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	dupfd = dup(q[0]);
	CHECK(dupfd >= 0);
	close(q[0]);
	/* The description lives on through dupfd: still watched. */
	close(q[1]);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].events, EPOLLHUP);
	CHECK_EQ(out[0].data.u64, 3);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, q[0], NULL), EBADF);
	/* Gone with its last descriptor. */
	close(dupfd);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);

	CHECK_EQ(pipe(q), 0);
	CHECK_EQ(add(ep, q[1], EPOLLOUT, 5), 0);
	close(q[0]);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT | EPOLLERR);
	close(q[1]);

	/* Nesting: an epoll fd is readable when it has events; no cycles. */
	ep2 = epoll_create1(0);
	CHECK(ep2 >= 0);
	CHECK_EQ(add(ep2, ep, EPOLLIN, 6), 0);
	CHECK_EQ(epoll_wait(ep2, out, 8, 0), 0);
	CHECK_EQ(write(efd, &v, sizeof v), 8);
	CHECK_EQ(epoll_wait(ep2, out, 8, 0), 1);
	CHECK_EQ(out[0].data.u64, 6);
	CHECK_ERR(add(ep, ep2, EPOLLIN, 0), ELOOP);
	CHECK_ERR(add(ep, ep, EPOLLIN, 0), EINVAL);

	close(ep2);
	close(ep);
	close(efd);
	close(p[0]);
	close(p[1]);
	DONE();
}
