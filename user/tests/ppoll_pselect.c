/* ppoll and pselect6: timespec timeouts (written back by the raw
 * syscall), the atomic signal mask (a blocked signal that is allowed
 * during the wait interrupts it, and the mask is restored), errors. */
#include "next.h"
#include <sys/select.h>

static volatile int hits;

static void on_usr1(int s)
{
	(void)s;
	hits++;
}

int main(void)
{
	struct pollfd pf;
	struct timespec ts;
	sigset_t block, allow, cur;
	fd_set rs;
	int p[2];
	long long t0;
	pid_t pid;

	CHECK_EQ(pipe(p), 0);
	pf.fd = p[0];
	pf.events = POLLIN;

	/* ppoll timeout, and the remaining time written back (raw). */
	ts.tv_sec = 0;
	ts.tv_nsec = 30000000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8), 0);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
	/* Ready at once: the time left is written back too. */
	CHECK_EQ(write(p[1], "a", 1), 1);
	ts.tv_sec = 10;
	ts.tv_nsec = 0;
	CHECK_EQ(syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8), 1);
	CHECK(ts.tv_sec >= 9 && ts.tv_sec <= 10);
	{
		char c;

		CHECK_EQ(read(p[0], &c, 1), 1);
	}

	/* The mask: SIGUSR1 blocked normally, allowed during ppoll. */
	t_sigaction(SIGUSR1, on_usr1, SA_RESTART);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigemptyset(&allow);
	pid = fork();
	if (pid == 0) {
		t_msleep(30);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	CHECK_ERR(ppoll(&pf, 1, NULL, &allow), EINTR);
	CHECK_EQ(hits, 1);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(sigismember(&cur, SIGUSR1));
	CHECK(t_wait_ok(pid));

	/* A signal already pending when ppoll unblocks it: EINTR at once. */
	t_raise(SIGUSR1);
	CHECK_ERR(ppoll(&pf, 1, NULL, &allow), EINTR);
	CHECK_EQ(hits, 2);

	/* pselect, same story. */
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	t_raise(SIGUSR1);
	CHECK_ERR(pselect(p[0] + 1, &rs, NULL, NULL, NULL, &allow), EINTR);
	CHECK_EQ(hits, 3);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(sigismember(&cur, SIGUSR1));

	/* pselect6 raw: the sixth argument is {sigset pointer, size}. */
	{
		struct {
			const unsigned long *ss;
			unsigned long len;
		} sm;
		unsigned long none = 0;

		sm.ss = &none;
		sm.len = 8;
		FD_ZERO(&rs);
		FD_SET(p[0], &rs);
		ts.tv_sec = 0;
		ts.tv_nsec = 20000000;
		t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(syscall(SYS_pselect6, p[0] + 1, &rs, NULL, NULL, &ts, &sm), 0);
		CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 19000000LL);
		CHECK_EQ(ts.tv_nsec, 0);
		sm.len = 4;
		CHECK_ERR(syscall(SYS_pselect6, p[0] + 1, &rs, NULL, NULL, &ts, &sm),
			  EINVAL);
	}

	/* Errors. */
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000000;
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8), EINVAL);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, NULL, &allow, 4), EINVAL);
	t_block(SIGUSR1, SIG_UNBLOCK);
	close(p[0]);
	close(p[1]);
	DONE();
}
