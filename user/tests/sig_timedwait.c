/* rt_sigtimedwait/sigwaitinfo: consumes a pending signal without running
 * its handler, timeouts (EAGAIN), EINTR from another handled signal,
 * EINVAL for bad timeouts. */
#include "next.h"

static volatile int handled_usr1, handled_usr2;

static void on_usr1(int s) { (void)s; handled_usr1++; }
static void on_usr2(int s) { (void)s; handled_usr2++; }

int main(void)
{
	sigset_t set, pend;
	siginfo_t si;
	struct timespec ts;
	long long t0;
	pid_t pid;

	t_sigaction(SIGUSR1, on_usr1, 0);
	t_sigaction(SIGUSR2, on_usr2, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);

	/* Already pending: returned at once, handler not run. */
	t_raise(SIGUSR1);
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	memset(&si, 0, sizeof si);
	/* Raw: glibc's wrapper rewrites SI_TKILL to SI_USER. */
	{
		unsigned long m = 1UL << (SIGUSR1 - 1);

		CHECK_EQ(syscall(SYS_rt_sigtimedwait, &m, &si, &ts, 8), SIGUSR1);
	}
	CHECK_EQ(si.si_signo, SIGUSR1);
	CHECK_EQ(si.si_code, SI_TKILL);
	CHECK_EQ(si.si_pid, getpid());
	CHECK_EQ(handled_usr1, 0);
	sigpending(&pend);
	CHECK(!sigismember(&pend, SIGUSR1));

	/* Nothing pending: zero timeout -> EAGAIN; 30 ms -> EAGAIN after at
	 * least 30 ms. */
	CHECK_ERR(sigtimedwait(&set, &si, &ts), EAGAIN);
	ts.tv_nsec = 30000000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_ERR(sigtimedwait(&set, &si, &ts), EAGAIN);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 30000000);

	/* From a child, while we wait. */
	pid = fork();
	if (pid == 0) {
		t_msleep(20);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	memset(&si, 0, sizeof si);
	CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR1);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, SI_USER);
	CHECK(t_wait_ok(pid));

	/* A handled signal outside the set interrupts the wait. */
	pid = fork();
	if (pid == 0) {
		t_msleep(20);
		kill(getppid(), SIGUSR2);
		_exit(0);
	}
	/* Raw call: musl's sigtimedwait retries on EINTR. */
	{
		unsigned long m = 1UL << (SIGUSR1 - 1);

		CHECK_ERR(syscall(SYS_rt_sigtimedwait, &m, &si, NULL, 8), EINTR);
	}
	CHECK_EQ(handled_usr2, 1);
	CHECK(t_wait_ok(pid));

	/* Bad timeouts, bad set size. */
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000000;
	CHECK_ERR(sigtimedwait(&set, &si, &ts), EINVAL);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	CHECK_ERR(sigtimedwait(&set, &si, &ts), EINVAL);
	{
		unsigned long m = 1UL << (SIGUSR1 - 1);

		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		CHECK_ERR(syscall(SYS_rt_sigtimedwait, &m, NULL, &ts, 4), EINVAL);
		CHECK_ERR(syscall(SYS_rt_sigtimedwait, BAD_PTR2, NULL, &ts, 8),
			  EFAULT);
		/* An unwritable siginfo: the signal is consumed, EFAULT. */
		t_raise(SIGUSR1);
		CHECK_ERR(syscall(SYS_rt_sigtimedwait, &m, BAD_PTR2, &ts, 8),
			  EFAULT);
	}
	DONE();
}
