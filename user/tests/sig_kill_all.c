/* kill(-1, sig) and group kills, probed with signal 0 only (so that the
 * host run sends nothing): kill(-1) counts every process but init and the
 * caller, and ignores those it may not signal (0, not EPERM, for an
 * unprivileged caller, EPERM for a single process); a group whose only
 * member is a zombie still counts (0), and once it is reaped the group is
 * ESRCH. Needs root (setuid). */
#include "next.h"

int main(void)
{
	pid_t pid, z, sleeper;
	int st;

	if (!t_is_root())
		SKIP("needs root to switch uid");
	/* Make sure there is someone besides init and us. */
	sleeper = fork();
	if (sleeper == 0) {
		pause();
		_exit(0);
	}
	CHECK_EQ(kill(-1, 0), 0);

	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setuid(54321), 0);
		/* Nothing here belongs to uid 54321 but us: all refused. */
		CHECK_EQ(kill(-1, 0), 0);
		/* A single process we may not signal is EPERM. */
		CHECK_ERR(kill(1, 0), EPERM);
		CHECK_ERR(kill(getppid(), 0), EPERM);
		CHILD_DONE();
	}
	st = t_wait(pid);
	CHECK_EQ(st, 0);

	/* A zombie keeps its group alive for kill until it is reaped. */
	z = fork();
	if (z == 0) {
		setpgid(0, 0);
		_exit(0);
	}
	CHECK(t_wait_proc_state(z, "Z"));
	CHECK_EQ(kill(-z, 0), 0);
	CHECK_EQ(kill(z, 0), 0);
	CHECK_EQ(waitpid(z, &st, 0), z);
	CHECK_ERR(kill(-z, 0), ESRCH);
	CHECK_ERR(kill(z, 0), ESRCH);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, &st, 0);
	DONE();
}
