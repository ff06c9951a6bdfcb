/* Writing to a pipe or FIFO with no reader: SIGPIPE (default: killed),
 * EPIPE when it is ignored, caught or blocked; a writer blocked on a full
 * pipe gets EPIPE when the reader goes away. */
#include "next.h"

static volatile int caught;

static void on_pipe(int s)
{
	(void)s;
	caught++;
}

int main(void)
{
	int p[2], st;
	pid_t pid;
	sigset_t pend;

	/* Default action. */
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
	CHECK(!WCOREDUMP(st));

	/* Ignored: EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	{
		struct iovec iov = { "ab", 2 };

		CHECK_ERR(writev(p[1], &iov, 1), EPIPE);
	}

	/* Caught: handler runs, then EPIPE. */
	CHECK_EQ(t_sigaction(SIGPIPE, on_pipe, 0), 0);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK_EQ(caught, 1);

	/* Blocked: EPIPE and SIGPIPE left pending. */
	t_block(SIGPIPE, SIG_BLOCK);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGPIPE));
	t_block(SIGPIPE, SIG_UNBLOCK);
	CHECK_EQ(caught, 2);
	close(p[1]);

	/* A writer blocked on a full pipe, then the reader closes. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		static char big[1 << 17];
		ssize_t r;

		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		r = write(p[1], big, sizeof big);
		/* Either a partial count (some went in) or EPIPE; the next
		 * write must fail with EPIPE. */
		if (r < 0 && errno != EPIPE)
			_exit(2);
		r = write(p[1], big, 1);
		_exit(r < 0 && errno == EPIPE ? 0 : 3);
	}
	close(p[1]);
	t_wait_proc_state(pid, "S");
	close(p[0]);
	CHECK(t_wait_ok(pid));
	signal(SIGPIPE, SIG_DFL);
	DONE();
}
