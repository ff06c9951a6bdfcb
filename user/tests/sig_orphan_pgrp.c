/* Orphaned process groups: SIGTSTP/SIGTTIN/SIGTTOU with the default action
 * are discarded there (SIGSTOP still stops); when a group with a stopped
 * member becomes orphaned, its members get SIGHUP then SIGCONT. */
#include "next.h"
#include <sys/prctl.h>

int main(void)
{
	pid_t c, g = 0;
	int p[2], st;
	char ch;

	/* A session leader's group is orphaned (its parent is in another
	 * session): job-control stops are discarded, SIGSTOP is not. */
	CHECK_EQ(pipe(p), 0);
	c = fork();
	if (c == 0) {
		close(p[0]);
		setsid();
		t_raise(SIGTSTP);
		t_raise(SIGTTIN);
		t_raise(SIGTTOU);
		(void)!write(p[1], "a", 1); /* still running */
		t_raise(SIGSTOP);
		_exit(0);
	}
	close(p[1]);
	/* The first stop must be the SIGSTOP (a kernel that stops on the
	 * discarded signals is caught here instead of hanging). */
	CHECK_EQ(wait4(c, &st, WUNTRACED, NULL), c);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP) {
		CHECK_EQ(read(p[0], &ch, 1), 1);
		kill(c, SIGCONT);
		CHECK(t_wait_ok(c));
	} else {
		kill(c, SIGKILL);
		t_wait(c);
	}
	close(p[0]);

	/* Orphaning with a stopped member: SIGHUP kills it. */
	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	CHECK_EQ(pipe(p), 0);
	c = fork();
	if (c == 0) {
		pid_t gg;
		int s;

		close(p[0]);
		setsid();
		gg = fork();
		if (gg == 0) {
			setpgid(0, 0);
			t_raise(SIGSTOP);
			_exit(0); /* SIGCONT alone would get here */
		}
		setpgid(gg, gg);
		if (waitpid(gg, &s, WUNTRACED) != gg || !WIFSTOPPED(s))
			_exit(2);
		(void)!write(p[1], &gg, sizeof gg);
		_exit(0); /* group gg becomes orphaned */
	}
	close(p[1]);
	CHECK_EQ(read(p[0], &g, sizeof g), (long)sizeof g);
	CHECK(t_wait_ok(c));
	/* g was adopted by us (subreaper).  Without the SIGHUP it would
	 * stay stopped for ever: bounded wait. */
	st = t_wait_bounded(g, 60);
	CHECK(st != -2);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGHUP);
	close(p[0]);
	DONE();
}
