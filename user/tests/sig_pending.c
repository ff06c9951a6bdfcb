/* Pending signals: blocked standard signals are pending once (not
 * queued) per set -- the thread's own (tgkill) and the process-wide one
 * (kill) are separate sets, so one of each is two deliveries;
 * rt_sigpending reports their union; unblocking delivers them before
 * sigprocmask returns, thread-directed first, lowest number first within
 * a set; ignoring a pending signal discards it; a fork child starts with
 * nothing pending. */
#include "next.h"

static volatile int n_usr1, n_usr2, n_hup;
static volatile char order[8];
static volatile int olen;

static void on_sig(int s)
{
	if (s == SIGUSR1)
		n_usr1++;
	else if (s == SIGUSR2)
		n_usr2++;
	else if (s == SIGHUP)
		n_hup++;
	if (olen < 7)
		order[olen++] = s == SIGHUP ? 'H' : s == SIGUSR1 ? '1' : '2';
}

int main(void)
{
	sigset_t set, pend;
	pid_t pid;

	/* Handlers block everything, so one runs at a time and the order
	 * they run in is the order of delivery. */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sig;
		sigfillset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}

	/* Unblocked: delivered before kill returns. */
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(n_usr1, 1);

	/* Blocked: pending, once. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGHUP);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	n_usr1 = 0;
	t_raise(SIGUSR2);
	t_raise(SIGUSR1);
	t_raise(SIGUSR1);
	kill(getpid(), SIGUSR1);
	t_raise(SIGHUP);
	CHECK_EQ(n_usr1, 0);
	sigemptyset(&pend);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(sigismember(&pend, SIGUSR1));
	CHECK(sigismember(&pend, SIGUSR2));
	CHECK(sigismember(&pend, SIGHUP));
	CHECK(!sigismember(&pend, SIGTERM));
	/* The raw call, with the kernel's 8-byte set. */
	{
		unsigned long raw = 0;

		CHECK_EQ(syscall(SYS_rt_sigpending, &raw, 8), 0);
		CHECK_EQ(raw, (1UL << (SIGUSR1 - 1)) | (1UL << (SIGUSR2 - 1)) |
				      (1UL << (SIGHUP - 1)));
		CHECK_ERR(syscall(SYS_rt_sigpending, &raw, 16), EINVAL);
		CHECK_ERR(syscall(SYS_rt_sigpending, BAD_PTR2, 8), EFAULT);
	}

	/* A fork child has nothing pending (but the same mask). */
	pid = fork();
	if (pid == 0) {
		sigset_t p2, m2;

		sigpending(&p2);
		sigprocmask(SIG_SETMASK, NULL, &m2);
		_exit(!sigismember(&p2, SIGUSR1) && sigismember(&m2, SIGUSR1) ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));

	/* Unblock: the thread's set (HUP, USR1, USR2: lowest first), then
	 * the process-wide USR1, all before sigprocmask returns. */
	olen = 0;
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
	CHECK_EQ(n_usr1, 2);
	CHECK_EQ(n_usr2, 1);
	CHECK_EQ(n_hup, 1);
	CHECK_EQ(olen, 4);
	CHECK(order[0] == 'H' && order[1] == '1' && order[2] == '2' &&
	      order[3] == '1');
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(!sigismember(&pend, SIGUSR1));

	/* Setting SIG_IGN discards a pending signal. */
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	t_raise(SIGUSR2);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(sigismember(&pend, SIGUSR2));
	signal(SIGUSR2, SIG_IGN);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(!sigismember(&pend, SIGUSR2));
	/* It is not delivered after unblocking either. */
	t_sigaction(SIGUSR2, on_sig, 0);
	n_usr2 = 0;
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
	CHECK_EQ(n_usr2, 0);

	/* A blocked signal whose default action is to ignore (SIGWINCH)
	 * is still made pending while blocked. */
	t_block(SIGWINCH, SIG_BLOCK);
	t_raise(SIGWINCH);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(sigismember(&pend, SIGWINCH));
	t_block(SIGWINCH, SIG_UNBLOCK);

	/* Installing a disposition that ignores the signal discards it from
	 * both sets (thread and process), also when the disposition is the
	 * one already installed (SIG_DFL for SIGWINCH, then SIG_IGN twice). */
	t_block(SIGWINCH, SIG_BLOCK);
	t_raise(SIGWINCH);
	CHECK_EQ(kill(getpid(), SIGWINCH), 0);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(sigismember(&pend, SIGWINCH));
	CHECK(signal(SIGWINCH, SIG_DFL) != SIG_ERR);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(!sigismember(&pend, SIGWINCH));
	t_block(SIGWINCH, SIG_UNBLOCK);

	t_block(SIGUSR2, SIG_BLOCK);
	CHECK(signal(SIGUSR2, SIG_IGN) != SIG_ERR);
	t_sigaction(SIGUSR2, on_sig, 0);
	t_raise(SIGUSR2);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK(signal(SIGUSR2, SIG_IGN) != SIG_ERR);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(!sigismember(&pend, SIGUSR2));
	t_raise(SIGUSR2);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK(signal(SIGUSR2, SIG_IGN) == SIG_IGN);
	CHECK_EQ(sigpending(&pend), 0);
	CHECK(!sigismember(&pend, SIGUSR2));
	t_sigaction(SIGUSR2, on_sig, 0);
	n_usr2 = 0;
	t_block(SIGUSR2, SIG_UNBLOCK);
	CHECK_EQ(n_usr2, 0);
	DONE();
}
