/* rt_sigprocmask: SIG_BLOCK/UNBLOCK/SETMASK read back; SIGKILL unblockable. */
#include "t.h"

#define BIT(sig) (1ULL << ((sig) - 1))

static long pm_raw(int how, const uint64_t *set, uint64_t *old, size_t sz)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, sz);
}

static uint64_t cur(void)
{
	uint64_t m = ~0ULL;

	if (pm_raw(SIG_BLOCK, NULL, &m, 8) != 0)
		return ~0ULL;
	return m;
}

int main(void)
{
	uint64_t orig, s, o;
	sigset_t set, oset;
	pid_t pid;

	/* Start from an empty mask (remember the inherited one). */
	CHECK_EQ(pm_raw(SIG_SETMASK, NULL, &orig, 8), 0);
	s = 0;
	CHECK_EQ(pm_raw(SIG_SETMASK, &s, NULL, 8), 0);
	CHECK_EQ(cur(), 0);

	/* SIG_BLOCK adds. */
	s = BIT(SIGUSR1);
	CHECK_EQ(pm_raw(SIG_BLOCK, &s, &o, 8), 0);
	CHECK_EQ(o, 0);
	CHECK_EQ(cur(), BIT(SIGUSR1));
	s = BIT(SIGUSR2) | BIT(SIGTERM);
	CHECK_EQ(pm_raw(SIG_BLOCK, &s, &o, 8), 0);
	CHECK_EQ(o, BIT(SIGUSR1));
	CHECK_EQ(cur(), BIT(SIGUSR1) | BIT(SIGUSR2) | BIT(SIGTERM));

	/* SIG_UNBLOCK removes. */
	s = BIT(SIGUSR1) | BIT(SIGINT);
	CHECK_EQ(pm_raw(SIG_UNBLOCK, &s, NULL, 8), 0);
	CHECK_EQ(cur(), BIT(SIGUSR2) | BIT(SIGTERM));

	/* SIG_SETMASK replaces. */
	s = BIT(SIGHUP) | BIT(40);
	CHECK_EQ(pm_raw(SIG_SETMASK, &s, &o, 8), 0);
	CHECK_EQ(o, BIT(SIGUSR2) | BIT(SIGTERM));
	CHECK_EQ(cur(), BIT(SIGHUP) | BIT(40));

	/* SIGKILL and SIGSTOP are silently left out. */
	s = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(SIGINT);
	CHECK_EQ(pm_raw(SIG_SETMASK, &s, NULL, 8), 0);
	CHECK_EQ(cur(), BIT(SIGINT));
	s = BIT(SIGKILL);
	CHECK_EQ(pm_raw(SIG_BLOCK, &s, NULL, 8), 0);
	CHECK_EQ(cur() & BIT(SIGKILL), 0);
	sigfillset(&set);
	CHECK_EQ(sigprocmask(SIG_SETMASK, &set, NULL), 0);
	CHECK_EQ(sigprocmask(SIG_SETMASK, NULL, &oset), 0);
	CHECK(!sigismember(&oset, SIGKILL));
	CHECK(!sigismember(&oset, SIGSTOP));
	CHECK(sigismember(&oset, SIGUSR1));
	CHECK(sigismember(&oset, SIGTERM));

	/* libc wrapper round trip. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	CHECK_EQ(sigprocmask(SIG_SETMASK, &set, NULL), 0);
	CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &oset), 0);
	CHECK(sigismember(&oset, SIGALRM));
	CHECK(!sigismember(&oset, SIGUSR1));
	CHECK_EQ(cur(), BIT(SIGALRM));

	/* The mask is inherited by children. */
	pid = fork();
	if (pid == 0)
		_exit(cur() == BIT(SIGALRM) ? 0 : 1);
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* EINVAL: bad "how" (with a set); the mask is unchanged. */
	s = BIT(SIGUSR1);
	CHECK_ERR(pm_raw(3, &s, NULL, 8), EINVAL);
	CHECK_ERR(pm_raw(-1, &s, NULL, 8), EINVAL);
	CHECK_ERR(pm_raw(1000, &s, &o, 8), EINVAL);
	CHECK_EQ(cur(), BIT(SIGALRM));
	/* With no new set, "how" is ignored. */
	CHECK_EQ(pm_raw(1000, NULL, &o, 8), 0);
	CHECK_EQ(o, BIT(SIGALRM));

	/* EINVAL: wrong sigset size. */
	CHECK_ERR(pm_raw(SIG_BLOCK, &s, NULL, 4), EINVAL);
	CHECK_ERR(pm_raw(SIG_BLOCK, NULL, &o, 16), EINVAL);

	/* EFAULT. */
	CHECK_ERR(pm_raw(SIG_BLOCK, BAD_PTR2, NULL, 8), EFAULT);
	CHECK_ERR(pm_raw(SIG_BLOCK, NULL, BAD_PTR2, 8), EFAULT);
	CHECK_EQ(cur(), BIT(SIGALRM));

	/* Restore. */
	CHECK_EQ(pm_raw(SIG_SETMASK, &orig, NULL, 8), 0);
	CHECK_EQ(cur(), orig);
	DONE();
}
