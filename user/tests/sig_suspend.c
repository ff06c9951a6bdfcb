/* sigsuspend/rt_sigsuspend: waits with a temporary mask, returns EINTR
 * after a handler, restores the mask; SIGKILL/SIGSTOP cannot be blocked. */
#include "next.h"

static volatile int got_usr1, got_usr2;

static void on_sig(int s)
{
	if (s == SIGUSR1)
		got_usr1++;
	else
		got_usr2++;
}

int main(void)
{
	sigset_t block, wait_mask, cur, pend;
	pid_t pid;

	t_sigaction(SIGUSR1, on_sig, 0);
	t_sigaction(SIGUSR2, on_sig, 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &block, NULL), 0);

	/* A pending signal is delivered as soon as sigsuspend unblocks it. */
	t_raise(SIGUSR1);
	sigemptyset(&wait_mask);
	CHECK_ERR(sigsuspend(&wait_mask), EINTR);
	CHECK_EQ(got_usr1, 1);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(sigismember(&cur, SIGUSR1) && sigismember(&cur, SIGUSR2));

	/* Waiting with USR1 still blocked: a USR1 from a child stays
	 * pending, the USR2 ends the wait. */
	pid = fork();
	if (pid == 0) {
		kill(getppid(), SIGUSR1);
		t_msleep(20);
		kill(getppid(), SIGUSR2);
		_exit(0);
	}
	sigemptyset(&wait_mask);
	sigaddset(&wait_mask, SIGUSR1);
	got_usr1 = got_usr2 = 0;
	CHECK_ERR(sigsuspend(&wait_mask), EINTR);
	CHECK_EQ(got_usr2, 1);
	CHECK_EQ(got_usr1, 0);
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGUSR1));
	CHECK(t_wait_ok(pid));
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &block, NULL), 0);
	CHECK_EQ(got_usr1, 1);

	/* Raw: the set size must be 8. */
	{
		unsigned long m = 0;

		CHECK_ERR(syscall(SYS_rt_sigsuspend, &m, 4), EINVAL);
		CHECK_ERR(syscall(SYS_rt_sigsuspend, &m, 16), EINVAL);
		CHECK_ERR(syscall(SYS_rt_sigsuspend, BAD_PTR2, 8), EFAULT);
	}

	/* SIGKILL and SIGSTOP are silently left out of any mask. */
	sigfillset(&block);
	CHECK_EQ(sigprocmask(SIG_SETMASK, &block, NULL), 0);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGKILL));
	CHECK(!sigismember(&cur, SIGSTOP));
	CHECK(sigismember(&cur, SIGTERM));
	sigemptyset(&block);
	sigprocmask(SIG_SETMASK, &block, NULL);
	DONE();
}
