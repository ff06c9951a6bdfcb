/*
 * rt_sigaction: install and read back handler, flags and mask (no signal is
 * ever delivered); EINVAL for SIGKILL/SIGSTOP and out-of-range numbers.
 */
#include "t.h"

/* The kernel's struct sigaction layout on x86-64. */
struct x_ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

#define X_SA_RESTORER 0x04000000UL
#define BIT(sig) (1ULL << ((sig) - 1))

static long rt_raw(int sig, const struct x_ksigaction *a,
		   struct x_ksigaction *o, size_t sz)
{
	return syscall(SYS_rt_sigaction, sig, a, o, sz);
}

static void h1(int s)
{
	(void)s;
}

static void h2(int s)
{
	(void)s;
}

static void restorer(void)
{
}

int main(void)
{
	struct sigaction sa, old;
	struct x_ksigaction k, ko;
	pid_t pid;

	/* Install a handler with flags and a mask through libc. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h1;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaddset(&sa.sa_mask, SIGTERM);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);

	/* Read back through libc. */
	memset(&old, 0, sizeof old);
	CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
	CHECK(old.sa_handler == h1);
	CHECK((old.sa_flags & (SA_RESTART | SA_NODEFER)) == (SA_RESTART | SA_NODEFER));
	CHECK(sigismember(&old.sa_mask, SIGUSR2));
	CHECK(sigismember(&old.sa_mask, SIGTERM));
	CHECK(!sigismember(&old.sa_mask, SIGINT));

	/* Read back through the raw syscall. */
	memset(&ko, 0, sizeof ko);
	CHECK_EQ(rt_raw(SIGUSR1, NULL, &ko, 8), 0);
	CHECK(ko.handler == h1);
	CHECK(ko.flags & SA_RESTART);
	CHECK(ko.flags & SA_NODEFER);
	CHECK_EQ(ko.mask & (BIT(SIGUSR2) | BIT(SIGTERM) | BIT(SIGINT)),
		 BIT(SIGUSR2) | BIT(SIGTERM));

	/* Setting returns the previous action in oldact. */
	memset(&k, 0, sizeof k);
	k.handler = h2;
	k.flags = SA_SIGINFO | X_SA_RESTORER;
	k.restorer = restorer;
	k.mask = BIT(SIGHUP);
	memset(&ko, 0, sizeof ko);
	CHECK_EQ(rt_raw(SIGUSR1, &k, &ko, 8), 0);
	CHECK(ko.handler == h1);
	memset(&ko, 0, sizeof ko);
	CHECK_EQ(rt_raw(SIGUSR1, NULL, &ko, 8), 0);
	CHECK(ko.handler == h2);
	CHECK_EQ(ko.flags & (SA_SIGINFO | SA_RESTART | X_SA_RESTORER),
		 SA_SIGINFO | X_SA_RESTORER);
	CHECK(ko.restorer == restorer);
	CHECK_EQ(ko.mask, BIT(SIGHUP));

	/* SIGKILL and SIGSTOP can never be blocked by a handler mask. */
	k.mask = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(SIGINT);
	CHECK_EQ(rt_raw(SIGUSR2, &k, NULL, 8), 0);
	CHECK_EQ(rt_raw(SIGUSR2, NULL, &ko, 8), 0);
	CHECK_EQ(ko.mask, BIT(SIGINT));

	/* SIG_IGN and SIG_DFL round trip. */
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	CHECK_EQ(sigaction(SIGUSR2, &sa, &old), 0);
	CHECK(old.sa_handler == h2);
	CHECK_EQ(sigaction(SIGUSR2, NULL, &old), 0);
	CHECK(old.sa_handler == SIG_IGN);
	/* Real-time signals work the same way. */
	sa.sa_handler = h1;
	CHECK_EQ(sigaction(SIGRTMIN + 2, &sa, NULL), 0);
	CHECK_EQ(sigaction(SIGRTMIN + 2, NULL, &old), 0);
	CHECK(old.sa_handler == h1);
	CHECK_EQ(rt_raw(64, NULL, &ko, 8), 0);

	/* Children inherit dispositions. */
	pid = fork();
	if (pid == 0) {
		struct sigaction c;
		CHECK_EQ(sigaction(SIGUSR1, NULL, &c), 0);
		CHECK(c.sa_handler == h2);
		CHECK_EQ(sigaction(SIGUSR2, NULL, &c), 0);
		CHECK(c.sa_handler == SIG_IGN);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* EINVAL: changing SIGKILL or SIGSTOP (reading them is allowed). */
	sa.sa_handler = h1;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(SIGSTOP, &sa, NULL), EINVAL);
	sa.sa_handler = SIG_IGN;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CHECK_ERR(rt_raw(SIGKILL, &k, NULL, 8), EINVAL);
	CHECK_ERR(rt_raw(SIGSTOP, &k, NULL, 8), EINVAL);
	CHECK_EQ(rt_raw(SIGKILL, NULL, &ko, 8), 0);
	CHECK(ko.handler == SIG_DFL);

	/* EINVAL: signal 0 and 65 (out of range). */
	CHECK_ERR(rt_raw(0, &k, NULL, 8), EINVAL);
	CHECK_ERR(rt_raw(65, &k, NULL, 8), EINVAL);
	CHECK_ERR(rt_raw(0, NULL, &ko, 8), EINVAL);
	CHECK_ERR(rt_raw(65, NULL, &ko, 8), EINVAL);
	CHECK_ERR(sigaction(0, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(65, &sa, NULL), EINVAL);

	/* EINVAL: wrong sigset size. */
	CHECK_ERR(rt_raw(SIGUSR1, NULL, &ko, 4), EINVAL);
	CHECK_ERR(rt_raw(SIGUSR1, NULL, &ko, 16), EINVAL);

	/* EFAULT: unreadable act or unwritable oldact. */
	CHECK_ERR(rt_raw(SIGUSR1, BAD_PTR2, NULL, 8), EFAULT);
	CHECK_ERR(rt_raw(SIGUSR1, NULL, BAD_PTR2, 8), EFAULT);
	/* The new action is installed before the old one is written out: an
	 * unwritable oldact fails the call, yet the action has changed (as in
	 * Linux's rt_sigaction, do_sigaction then copy_to_user). */
	memset(&k, 0, sizeof k);
	k.handler = SIG_IGN;
	CHECK_ERR(rt_raw(SIGUSR2, &k, BAD_PTR2, 8), EFAULT);
	CHECK_EQ(rt_raw(SIGUSR2, NULL, &ko, 8), 0);
	CHECK(ko.handler == SIG_IGN);

	/* Restore defaults. */
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
	CHECK_EQ(sigaction(SIGRTMIN + 2, &sa, NULL), 0);
	DONE();
}
