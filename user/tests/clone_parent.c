/* clone(2) used as fork with extra flags: CLONE_PARENT makes the child
 * the caller's sibling (its parent reaps it; the caller gets ECHILD) with
 * the caller's own exit signal; CLONE_PARENT_SETTID with a bad pointer
 * still creates the child (the tid is simply not stored), as on Linux;
 * CLONE_UNTRACED, CLONE_PTRACE and CLONE_IO are accepted; an exit signal
 * above 64 sends nothing. */
#include "next.h"

int main(void)
{
	pid_t mid, c, got;
	int st, i, seen;
	long r;

	mid = fork();
	if (mid == 0) {
		pid_t top = getppid();

		c = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
		if (c == 0)
			_exit(getppid() == top ? 42 : 1);
		CHECK(c > 0);
		CHECK_ERR(waitpid(c, &st, 0), ECHILD);
		/* Hand the sibling's pid to the parent through our status. */
		_exit(t_failures ? 255 : (c & 0x7f));
	}
	CHECK(mid > 0);
	/* Reap both: the middle process and the sibling it made. */
	seen = 0;
	for (i = 0; i < 2; i++) {
		got = wait(&st);
		CHECK(got > 0);
		if (got == mid) {
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) != 255);
			seen |= 1;
		} else {
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42);
			seen |= 2;
		}
	}
	CHECK_EQ(seen, 3);

	/* A bad parent-tid pointer does not undo the clone. */
	r = syscall(SYS_clone, CLONE_PARENT_SETTID | SIGCHLD, 0, (void *)8, 0, 0);
	if (r == 0)
		_exit(7);
	CHECK(r > 0);
	CHECK_EQ(waitpid((pid_t)r, &st, 0), (pid_t)r);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);

	/* Tracing and I/O-context flags change nothing here. */
	r = syscall(SYS_clone, CLONE_UNTRACED | CLONE_PTRACE | CLONE_IO | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(8);
	CHECK(r > 0);
	CHECK_EQ(waitpid((pid_t)r, &st, 0), (pid_t)r);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 8);

	/* An exit "signal" above 64 is no signal: none is sent, the child is
	 * still reaped (with __WALL, as for any non-SIGCHLD child). */
	r = syscall(SYS_clone, 200, 0, 0, 0, 0);
	if (r == 0)
		_exit(9);
	CHECK(r > 0);
	CHECK_EQ(waitpid((pid_t)r, &st, __WALL), (pid_t)r);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 9);
	DONE();
}
