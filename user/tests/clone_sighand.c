/* clone(2) with CLONE_SIGHAND (and CLONE_VM) but without CLONE_THREAD: two
 * processes share one table of signal dispositions, so sigaction in either
 * is seen by the other; pending signals and masks stay per process; an
 * execve in one of them gives it a private copy first. */
#include "next.h"

static char stack[65536] __attribute__((aligned(16)));
static volatile int hits;

static void on_usr1(int s)
{
	(void)s;
	hits++;
}

/* The child: installs a SIGUSR1 handler with raw rt_sigaction (no libc
 * state touched in a shared address space) and exits. */
static int set_handler(void *arg)
{
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		unsigned long mask;
	} act = { on_usr1, 0x04000000 /* SA_RESTORER */, (void (*)(void))arg, 0 };

	return syscall(SYS_rt_sigaction, SIGUSR1, &act, NULL, 8) ? 1 : 0;
}

static int exec_sh(void *arg)
{
	char *argv[] = { "sh", "-c", "trap 'echo x' USR2; exit 0", NULL };

	(void)arg;
	execv("/bin/sh", argv);
	return 99;
}

int main(void)
{
	struct sigaction old, sa;
	long pid;
	int st;

	/* glibc and musl both install a restorer; borrow ours. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
	{
		struct {
			void *handler;
			unsigned long flags;
			void *restorer;
			unsigned long mask;
		} k;
		CHECK_EQ(syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, 8), 0);
		sa.sa_handler = SIG_DFL;
		CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
		pid = t_clone(CLONE_VM | CLONE_SIGHAND | SIGCHLD, stack + sizeof stack, NULL, NULL, 0,
			      set_handler, k.restorer);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid((pid_t)pid, &st, __WALL), (pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The child's sigaction changed ours. */
	CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
	CHECK(old.sa_handler == on_usr1);
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(hits, 1);

	/* An execve in a sharer unshares: the shell's trap stays its own.
	 * Several times over: the table a sharer got at an earlier execve
	 * (and left when it exited) must not be taken for ours. */
	for (int i = 0; i < 3; i++) {
		pid = t_clone(CLONE_VM | CLONE_SIGHAND | CLONE_VFORK | SIGCHLD, stack + sizeof stack, NULL, NULL,
			      0, exec_sh, NULL);
		CHECK(pid > 0);
		CHECK_EQ(waitpid((pid_t)pid, &st, 0), (pid_t)pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHECK_EQ(sigaction(SIGUSR2, NULL, &old), 0);
		CHECK(old.sa_handler == SIG_DFL);
		/* ... and its execve did not reset our handlers. */
		CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
		CHECK(old.sa_handler == on_usr1);
	}
	/* Sharing still works after the sharers that exec'd have left. */
	{
		struct {
			void *handler;
			unsigned long flags;
			void *restorer;
			unsigned long mask;
		} k;
		CHECK_EQ(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8), 0);
		sa.sa_handler = SIG_IGN;
		CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
		pid = t_clone(CLONE_VM | CLONE_SIGHAND | SIGCHLD, stack + sizeof stack, NULL, NULL, 0, set_handler,
			      k.restorer);
		CHECK(pid > 0);
		CHECK_EQ(waitpid((pid_t)pid, &st, __WALL), (pid_t)pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
		CHECK(old.sa_handler == on_usr1);
	}
	/* CLONE_SIGHAND needs CLONE_VM. */
	CHECK_ERR(syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, 0, 0, 0, 0), EINVAL);
	DONE();
}
