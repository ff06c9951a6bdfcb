/* Signal state across execve: handlers reset to SIG_DFL, ignored signals
 * stay ignored, the mask and pending signals are kept, the alternate stack
 * is dropped, and an ITIMER_REAL/alarm keeps running. */
#include "next.h"

static void handler(int s) { (void)s; }

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "after")) {
		struct sigaction sa;
		sigset_t mask, pend;
		stack_t ss;
		unsigned left;

		CHECK_EQ(sigaction(SIGUSR1, NULL, &sa), 0);
		CHECK(sa.sa_handler == SIG_DFL);
		CHECK_EQ(sigaction(SIGINT, NULL, &sa), 0);
		CHECK(sa.sa_handler == SIG_DFL);
		CHECK_EQ(sigaction(SIGUSR2, NULL, &sa), 0);
		CHECK(sa.sa_handler == SIG_IGN);
		CHECK_EQ(sigprocmask(SIG_SETMASK, NULL, &mask), 0);
		CHECK(sigismember(&mask, SIGHUP));
		CHECK(!sigismember(&mask, SIGUSR1));
		CHECK_EQ(sigpending(&pend), 0);
		CHECK(sigismember(&pend, SIGHUP));
		CHECK_EQ(sigaltstack(NULL, &ss), 0);
		CHECK(ss.ss_flags & SS_DISABLE);
		/* The alarm set before exec is still pending. */
		left = alarm(0);
		CHECK(left > 0 && left <= 1000);
		DONE();
	}

	t_self_path(argv[0], self, sizeof self);
	pid = fork();
	if (pid == 0) {
		char *av[] = { self, "after", NULL };
		static char altstack[65536];
		stack_t ss;

		t_sigaction(SIGUSR1, handler, SA_RESTART);
		t_sigaction(SIGINT, handler, SA_ONSTACK);
		signal(SIGUSR2, SIG_IGN);
		t_block(SIGHUP, SIG_BLOCK);
		kill(getpid(), SIGHUP);
		ss.ss_sp = altstack;
		ss.ss_size = sizeof altstack;
		ss.ss_flags = 0;
		sigaltstack(&ss, NULL);
		alarm(1000);
		execv(self, av);
		_exit(127);
	}
	CHECK(t_wait_ok(pid));
	DONE();
}
