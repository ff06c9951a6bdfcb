/* Permission to send signals (kill(2)): an unprivileged process may signal
 * processes with its uid but not root's (EPERM, also for signal 0); root
 * may signal anybody; SIGCONT within the same session is allowed. */
#include "next.h"

int main(void)
{
	pid_t pid;

	if (!t_is_root())
		SKIP("needs root to switch uids");

	pid = fork();
	if (pid == 0) {
		pid_t mine, parent = getppid();
		int st;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		CHECK_ERR(kill(parent, 0), EPERM);
		CHECK_ERR(kill(parent, SIGUSR1), EPERM);
		CHECK_ERR(kill(1, 0), EPERM);
		CHECK_ERR(t_tgkill(parent, parent, 0), EPERM);
		CHECK_ERR(syscall(SYS_tkill, parent, 0), EPERM);
		{
			union sigval v = { 0 };

			CHECK_ERR(sigqueue(parent, SIGUSR1, v), EPERM);
		}
		/* SIGCONT to a process of the same session is allowed. */
		CHECK_EQ(kill(parent, SIGCONT), 0);
		/* Same uid: allowed. */
		mine = fork();
		if (mine == 0) {
			pause();
			_exit(0);
		}
		CHECK_EQ(kill(mine, 0), 0);
		CHECK_EQ(kill(mine, SIGTERM), 0);
		st = t_wait(mine);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Root may signal a process of another uid. */
	pid = fork();
	if (pid == 0) {
		if (setresuid(65534, 65534, 65534))
			_exit(10);
		for (;;)
			pause();
	}
	t_msleep(10);
	CHECK_EQ(kill(pid, SIGTERM), 0);
	{
		int st = t_wait(pid);

		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	}
	DONE();
}
