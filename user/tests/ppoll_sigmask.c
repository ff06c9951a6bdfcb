/*
 * ppoll(2), pselect6 (pselect(2)) and epoll_pwait(2) run with the signal
 * mask they are given: a blocked pending signal that the mask unblocks
 * interrupts them (EINTR, after its handler ran), and the caller's mask
 * is back afterwards; a mask that blocks a signal keeps it from
 * interrupting; a wrong sigset size is EINVAL.
 */
#include "t.h"
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>

static volatile int hits;

static void on_usr1(int s)
{
	(void)s;
	hits++;
}

static int usr1_blocked(void)
{
	sigset_t cur;

	sigprocmask(SIG_SETMASK, NULL, &cur);
	return sigismember(&cur, SIGUSR1);
}

int main(void)
{
	int p[2], ep;
	sigset_t block, empty;
	struct pollfd pf;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct epoll_event ev;
	fd_set rs;

	CHECK_EQ(pipe(p), 0);
	signal(SIGUSR1, on_usr1);
	sigemptyset(&empty);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &block, NULL), 0);
	pf.fd = p[0];
	pf.events = POLLIN;

	/* ppoll */
	kill(getpid(), SIGUSR1);
	CHECK_EQ(hits, 0);
	CHECK_ERR(ppoll(&pf, 1, NULL, &empty), EINTR);
	CHECK_EQ(hits, 1);
	CHECK(usr1_blocked());
	/* With SIGUSR1 still blocked by the mask: a plain timeout. */
	kill(getpid(), SIGUSR1);
	CHECK_EQ(ppoll(&pf, 1, &ts, &block), 0);
	CHECK_EQ(hits, 1);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, &ts, &empty, 4), EINVAL);
	/* Ready at once: no interruption, mask restored, signal still pending. */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(ppoll(&pf, 1, NULL, &block), 1);
	CHECK(usr1_blocked());

	/* pselect: the pending SIGUSR1 interrupts it. */
	CHECK_EQ(read(p[0], &pf.revents, 1), 1);
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	CHECK_ERR(pselect(p[0] + 1, &rs, NULL, NULL, NULL, &empty), EINTR);
	CHECK_EQ(hits, 2);
	CHECK(usr1_blocked());

	/* epoll_pwait */
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.u64 = 0;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	kill(getpid(), SIGUSR1);
	CHECK_ERR(epoll_pwait(ep, &ev, 1, -1, &empty), EINTR);
	CHECK_EQ(hits, 3);
	CHECK(usr1_blocked());
	kill(getpid(), SIGUSR1);
	CHECK_EQ(epoll_pwait(ep, &ev, 1, 20, &block), 0);
	CHECK_EQ(hits, 3);
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &block, NULL), 0);
	CHECK_EQ(hits, 4);
	close(ep);
	DONE();
}
