/* SA_RESETHAND resets only the handler to SIG_DFL when the handler runs:
 * sigaction then reports SIG_DFL with the other flags (SA_SIGINFO,
 * SA_RESETHAND, SA_RESTART) and the mask as they were, and the handler
 * still got its siginfo. The next signal takes the default action. */
#include "next.h"

static volatile int runs, code;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	runs++;
	code = si->si_code;
}

int main(void)
{
	struct sigaction sa, got;
	pid_t pid;
	int st;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(t_raise(SIGUSR1), 0);
	CHECK_EQ(runs, 1);
	CHECK_EQ(code, SI_TKILL);

	CHECK_EQ(sigaction(SIGUSR1, NULL, &got), 0);
	CHECK(got.sa_handler == SIG_DFL);
	CHECK(got.sa_flags & SA_SIGINFO);
	CHECK(got.sa_flags & SA_RESETHAND);
	CHECK(got.sa_flags & SA_RESTART);
	CHECK(sigismember(&got.sa_mask, SIGUSR2));

	/* Now the default action (termination), in a child. */
	pid = fork();
	if (pid == 0) {
		t_raise(SIGUSR1);
		_exit(0);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	CHECK_EQ(runs, 1);
	DONE();
}
