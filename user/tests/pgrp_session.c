/* setsid/getsid: new sessions and groups, EPERM for group leaders, ESRCH,
 * no controlling terminal afterwards. */
#include "next.h"

int main(void)
{
	pid_t pid;
	int st;

	CHECK(getsid(0) > 0);
	CHECK_EQ(getsid(0), getsid(getpid()));
	CHECK_ERR(getsid(0x3ffffff0), ESRCH);
	CHECK_ERR(getsid(-1), ESRCH);

	pid = fork();
	if (pid == 0) {
		pid_t me = getpid(), old = getsid(0), s;

		s = setsid();
		CHECK_EQ(s, me);
		CHECK_EQ(getsid(0), me);
		CHECK_EQ(getpgid(0), me);
		CHECK_EQ(getpgrp(), me);
		CHECK(old != me);
		/* Already a session (and group) leader. */
		CHECK_ERR(setsid(), EPERM);
		/* The new session has no controlling terminal. */
		CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
		/* Children inherit session and group. */
		{
			pid_t g = fork();

			if (g == 0) {
				_exit(getsid(0) == me && getpgid(0) == me ? 0 : 1);
			}
			CHECK(t_wait_ok(g));
		}
		/* A session leader cannot move to another group. */
		CHECK_ERR(setpgid(0, getppid()), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* A process group leader cannot create a session. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setpgid(0, 0), 0);
		CHECK_ERR(setsid(), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* getsid of a child in another session. */
	{
		int p[2];
		char c;

		CHECK_EQ(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			setsid();
			t_post(p[1]);
			t_msleep(100000);
			_exit(0);
		}
		close(p[1]);
		CHECK_EQ(read(p[0], &c, 1), 1);
		CHECK_EQ(getsid(pid), pid);
		CHECK_EQ(getpgid(pid), pid);
		kill(pid, SIGKILL);
		st = t_wait(pid);
		CHECK(WIFSIGNALED(st));
		close(p[0]);
	}
	DONE();
}
