/* Signals whose default action is to ignore (SIGCHLD, SIGURG, SIGWINCH,
 * SIGCONT) do not kill; SIG_IGN protects from terminating signals (but
 * not from SIGKILL); ignoring is inherited by fork children. */
#include "next.h"

int main(void)
{
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		t_raise(SIGCHLD);
		t_raise(SIGURG);
		t_raise(SIGWINCH);
		t_raise(SIGCONT);
		kill(getpid(), SIGCHLD);
		_exit(0);
	}
	CHECK(t_wait_ok(pid));

	pid = fork();
	if (pid == 0) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGSEGV, SIG_IGN);
		t_raise(SIGTERM);
		kill(getpid(), SIGINT);
		t_raise(SIGSEGV); /* a sent SIGSEGV is ignorable */
		_exit(0);
	}
	CHECK(t_wait_ok(pid));

	/* Ignored in the parent, inherited by the child. */
	pid = fork();
	if (pid == 0) {
		pid_t g;

		signal(SIGHUP, SIG_IGN);
		g = fork();
		if (g == 0) {
			t_raise(SIGHUP);
			_exit(0);
		}
		_exit(t_wait(g) == 0 ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));

	/* SIGKILL cannot be ignored (and the attempt is EINVAL). */
	pid = fork();
	if (pid == 0) {
		if (signal(SIGKILL, SIG_IGN) != SIG_ERR)
			_exit(2);
		t_raise(SIGKILL);
		_exit(3);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	DONE();
}
