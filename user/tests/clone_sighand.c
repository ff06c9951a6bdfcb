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

/* The restorer libc installed for `sig` (glibc and musl both install one):
 * the child borrows ours. */
static void *libc_restorer(int sig)
{
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		unsigned long mask;
	} k;

	if (syscall(SYS_rt_sigaction, sig, NULL, &k, 8) != 0)
		return NULL;
	return k.restorer;
}

/* A CLONE_VM | CLONE_SIGHAND child that installs the SIGUSR1 handler (with
 * `restorer`) and exits; its status is checked. */
static void child_sets_handler(char *stack_top, void *restorer)
{
	long pid = t_clone(CLONE_VM | CLONE_SIGHAND | SIGCHLD, stack_top, NULL, NULL, 0, set_handler, restorer);
	int st;

	CHECK(pid > 0);
	CHECK_EQ(waitpid((pid_t)pid, &st, __WALL), (pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	struct sigaction old, sa;
	void *restorer;
	long pid;
	int st;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
	restorer = libc_restorer(SIGUSR2);
	CHECK(restorer != NULL);
	sa.sa_handler = SIG_DFL;
	CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
	child_sets_handler(stack + sizeof stack, restorer);
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
	restorer = libc_restorer(SIGUSR1);
	CHECK(restorer != NULL);
	sa.sa_handler = SIG_IGN;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	child_sets_handler(stack + sizeof stack, restorer);
	CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
	CHECK(old.sa_handler == on_usr1);
	/* CLONE_SIGHAND needs CLONE_VM. */
	CHECK_ERR(syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, 0, 0, 0, 0), EINVAL);
	DONE();
}
