/* SA_RESETHAND: the handler runs once and the disposition is SIG_DFL on
 * entry; (on Linux) the signal is still blocked inside the handler unless
 * SA_NODEFER, so a re-raise inside it takes the default action once the
 * handler returns. */
#include "next.h"

static int pfd[2];

static void once(int s)
{
	struct sigaction sa;
	sigset_t cur;
	char r[3];

	sigaction(s, NULL, &sa);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	r[0] = sa.sa_handler == SIG_DFL ? 'D' : 'h';
	r[1] = sigismember(&cur, s) ? 'B' : 'u';
	r[2] = 0;
	(void)!write(pfd[1], r, 2);
	t_raise(s); /* pending; default action after we return */
	(void)!write(pfd[1], "R", 1);
}

int main(void)
{
	char buf[16];
	pid_t pid;
	int st;
	ssize_t n;

	CHECK_EQ(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		t_sigaction(SIGUSR1, once, SA_RESETHAND);
		t_raise(SIGUSR1);
		(void)!write(pfd[1], "X", 1); /* not reached */
		_exit(0);
	}
	close(pfd[1]);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	n = read(pfd[0], buf, sizeof buf - 1);
	CHECK(n >= 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strcmp(buf, "DBR") == 0);
	if (strcmp(buf, "DBR") != 0)
		t_note("handler reported %s", buf);
	close(pfd[0]);

	/* With SA_NODEFER too, the re-raise inside kills at once. */
	CHECK_EQ(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		t_sigaction(SIGUSR2, once, SA_RESETHAND | SA_NODEFER);
		t_raise(SIGUSR2);
		_exit(0);
	}
	close(pfd[1]);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR2);
	n = read(pfd[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strcmp(buf, "Du") == 0);
	if (strcmp(buf, "Du") != 0)
		t_note("handler reported %s", buf);
	close(pfd[0]);

	/* The flag is reported back by sigaction. */
	{
		struct sigaction sa;

		t_sigaction(SIGHUP, once, SA_RESETHAND);
		sigaction(SIGHUP, NULL, &sa);
		CHECK(sa.sa_flags & SA_RESETHAND);
		signal(SIGHUP, SIG_DFL);
	}
	DONE();
}
