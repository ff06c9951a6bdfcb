/* epoll with eventfd, epoll_pwait's signal mask, and what closing a
 * watched fd does (the registration goes with the last reference to the
 * open file description, not with the fd number). */
#include "next.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>

static volatile int hits;

static void on_usr1(int s)
{
	(void)s;
	hits++;
}

int main(void)
{
	struct epoll_event ev, out[4];
	sigset_t block, allow;
	uint64_t v;
	int ep, efd, p[2], dupfd;

	ep = epoll_create1(0);
	CHECK(ep >= 0);

	/* eventfd: readable while the counter is non-zero. */
	efd = eventfd(0, EFD_NONBLOCK);
	CHECK(efd >= 0);
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.fd = efd;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	v = 3;
	CHECK_EQ(write(efd, &v, 8), 8);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].events, EPOLLIN | EPOLLOUT);
	CHECK_EQ(read(efd, &v, 8), 8);
	CHECK_EQ(v, 3);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), 0);

	/* epoll_pwait: a blocked signal allowed during the wait. */
	t_sigaction(SIGUSR1, on_usr1, 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	t_raise(SIGUSR1);
	CHECK_EQ(epoll_pwait(ep, out, 4, 0, &block), 0); /* still blocked */
	CHECK_EQ(hits, 0);
	sigemptyset(&allow);
	CHECK_ERR(epoll_pwait(ep, out, 4, -1, &allow), EINTR);
	CHECK_EQ(hits, 1);
	{
		sigset_t cur;

		sigprocmask(SIG_SETMASK, NULL, &cur);
		CHECK(sigismember(&cur, SIGUSR1));
	}
	CHECK_ERR(syscall(SYS_epoll_pwait, ep, out, 4, 0, &allow, 4), EINVAL);
	sigprocmask(SIG_UNBLOCK, &block, NULL);

	/* Closing the only fd removes the registration. */
	CHECK_EQ(pipe(p), 0);
	ev.events = EPOLLIN;
	ev.data.u32 = 11;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	CHECK_EQ(write(p[1], "a", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	/* With a dup alive, the event is still reported after closing the
	 * registered fd number. */
	dupfd = dup(p[0]);
	close(p[0]);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].data.u32, 11);
	/* The closed fd number can no longer be used with epoll_ctl. */
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), EBADF);
	close(dupfd);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	close(p[1]);
	close(efd);
	close(ep);
	DONE();
}
