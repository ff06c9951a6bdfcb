/*
 * Writing to a pipe without readers: EPIPE and SIGPIPE (pipe(7)). The
 * default action kills the writer; a handler sees si_code SI_USER and the
 * write returns EPIPE; with SIGPIPE ignored or blocked only EPIPE remains
 * (and the blocked signal stays pending).
 */
#include "t.h"

static volatile int got;
static volatile int code;

static void on_pipe(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got = sig;
	code = si->si_code;
}

int main(void)
{
	int p[2], st;
	pid_t pid;
	struct sigaction sa;
	sigset_t set, pending;

	/* Default action: killed by SIGPIPE. */
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);

	/* A handler runs; write fails with EPIPE. */
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_pipe;
	sa.sa_flags = SA_SIGINFO;
	CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK_EQ(got, SIGPIPE);
	CHECK_EQ(code, SI_USER);

	/* Ignored: EPIPE only. */
	signal(SIGPIPE, SIG_IGN);
	got = 0;
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK_EQ(got, 0);

	/* Blocked: EPIPE, and SIGPIPE is left pending. */
	CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	CHECK_ERR(write(p[1], "xyz", 3), EPIPE);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(sigismember(&pending, SIGPIPE));
	CHECK_EQ(got, 0);
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
	CHECK_EQ(got, SIGPIPE);
	close(p[1]);

	/* The reader going away wakes a writer blocked on a full pipe. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		static char big[70000];

		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		/* Fills the pipe, blocks, then fails once the reader is gone. */
		if (write(p[1], big, sizeof big) != 65536)
			_exit(2);
		_exit(write(p[1], big, 1) == -1 && errno == EPIPE ? 0 : 3);
	}
	close(p[1]);
	t_sleep_ns(100 * 1000 * 1000);
	close(p[0]);
	CHECK(t_wait_ok(pid));
	DONE();
}
