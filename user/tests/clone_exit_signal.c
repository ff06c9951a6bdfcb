/* The exit signal of clone: SIGCHLD children are ordinary; a child with
 * another (or no) exit signal is a "clone" child, seen by wait only with
 * __WCLONE or __WALL, and signals its parent with that signal. */
#include "next.h"

static volatile int got_usr1;

static void on_usr1(int s)
{
	(void)s;
	got_usr1++;
}

static int quit(void *arg) { return (int)(long)arg; }

int main(void)
{
	long pid;
	int st;

	CHECK_EQ(t_sigaction(SIGUSR1, on_usr1, 0), 0);

	/* Exit signal SIGUSR1. */
	pid = t_clone(SIGUSR1, t_stack(65536), NULL, NULL, 0, quit, (void *)3L);
	CHECK(pid > 0);
	/* Plain waits do not see it... */
	CHECK_EQ(t_wait_proc_state((pid_t)pid, "Z"), 1);
	CHECK_ERR(wait4((pid_t)pid, &st, WNOHANG, NULL), ECHILD);
	/* ...__WCLONE does. */
	CHECK_EQ(wait4((pid_t)pid, &st, __WCLONE, NULL), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	CHECK_EQ(got_usr1, 1);

	/* No exit signal at all: __WALL reaps it, no signal arrives. */
	got_usr1 = 0;
	pid = t_clone(0, t_stack(65536), NULL, NULL, 0, quit, (void *)4L);
	CHECK(pid > 0);
	CHECK_EQ(wait4((pid_t)pid, &st, __WALL, NULL), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 4);
	CHECK_EQ(got_usr1, 0);

	/* SIGCHLD children are not seen with __WCLONE. */
	pid = t_clone(SIGCHLD, t_stack(65536), NULL, NULL, 0, quit, (void *)5L);
	CHECK(pid > 0);
	CHECK_EQ(t_wait_proc_state((pid_t)pid, "Z"), 1);
	CHECK_ERR(wait4((pid_t)pid, &st, __WCLONE | WNOHANG, NULL), ECHILD);
	CHECK_EQ(wait4((pid_t)pid, &st, 0, NULL), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);
	DONE();
}
