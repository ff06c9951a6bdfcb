/* epoll_create1/epoll_ctl/epoll_wait: registration rules and error cases
 * (EEXIST, ENOENT, EBADF, EINVAL for self-add and bad ops/flags, EPERM for
 * regular files and directories), data passed back, EPOLL_CLOEXEC. */
#include "next.h"
#include <sys/epoll.h>

int main(void)
{
	struct epoll_event ev, out[8];
	char dir[PATH_MAX], path[PATH_MAX];
	int ep, ep2, p[2], f, d;

	CHECK_ERR(epoll_create1(0x1234), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_create, 0), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_create, -1), EINVAL);
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	CHECK_EQ(fcntl(ep, F_GETFD), FD_CLOEXEC);
	ep2 = (int)syscall(SYS_epoll_create, 1);
	CHECK(ep2 >= 0);
	CHECK_EQ(fcntl(ep2, F_GETFD), 0);

	CHECK_EQ(pipe(p), 0);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.u64 = 0x1122334455667788ULL;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, 9999, &ev), EBADF);
	CHECK_ERR(epoll_ctl(9999, EPOLL_CTL_ADD, p[0], &ev), EBADF);
	CHECK_ERR(epoll_ctl(p[1], EPOLL_CTL_ADD, p[0], &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, 99, p[0], &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], (struct epoll_event *)BAD_PTR2),
		  EFAULT);
	/* EPOLLEXCLUSIVE is not allowed with MOD. */
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), EINVAL);
	ev.events = EPOLLIN;

	/* Regular files and directories cannot be watched. */
	if (t_mktmp("epoll_basic", dir, sizeof dir) == 0) {
		t_join(path, sizeof path, dir, "f");
		CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
		f = open(path, O_RDONLY);
		d = open(dir, O_RDONLY | O_DIRECTORY);
		CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev), EPERM);
		CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, d, &ev), EPERM);
		close(f);
		close(d);
		t_rmtree(dir);
	}

	/* Nothing ready: 0 (timeout 0). */
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	CHECK_EQ(write(p[1], "z", 1), 1);
	memset(out, 0, sizeof out);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_EQ(out[0].data.u64, 0x1122334455667788ULL);

	/* MOD changes events and data. */
	ev.events = EPOLLOUT;
	ev.data.u32 = 7;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 0);
	/* DEL; the event pointer may be NULL. */
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), 0);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), ENOENT);

	/* An epoll fd inside another epoll fd. */
	ev.events = EPOLLIN;
	ev.data.u32 = 1;
	CHECK_EQ(epoll_ctl(ep2, EPOLL_CTL_ADD, p[0], &ev), 0);
	ev.data.u32 = 2;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ep2, &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.u32, 2);
	/* A loop is refused. */
	CHECK_ERR(epoll_ctl(ep2, EPOLL_CTL_ADD, ep, &ev), ELOOP);

	/* epoll_wait errors. */
	CHECK_ERR(epoll_wait(ep, out, 0, 0), EINVAL);
	CHECK_ERR(epoll_wait(ep, out, -1, 0), EINVAL);
	CHECK_ERR(epoll_wait(p[0], out, 8, 0), EINVAL);
	CHECK_ERR(epoll_wait(9999, out, 8, 0), EBADF);
	CHECK_ERR(epoll_wait(ep, (struct epoll_event *)BAD_PTR2, 8, 0), EFAULT);
	close(ep);
	close(ep2);
	close(p[0]);
	close(p[1]);
	DONE();
}
