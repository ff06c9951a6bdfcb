/* getpgid/setpgid: basic queries, moving a child, ESRCH/EINVAL. */
#include "t.h"

int main(void)
{
	char dir[128], flag[256];
	pid_t me = getpid(), pg, pid;

	/* getpgid(0) is our group; equals getpgid(getpid()) and getpgrp(). */
	pg = getpgid(0);
	CHECK(pg > 0);
	CHECK_EQ(getpgid(me), pg);
	CHECK_EQ(getpgrp(), pg);
	CHECK_EQ(syscall(SYS_getpgid, 0), pg);

	/* ESRCH: no such process. */
	CHECK_ERR(getpgid(0x3fffffff), ESRCH);
	CHECK_ERR(setpgid(0x3fffffff, 0), ESRCH);

	/* EINVAL: negative pgid. */
	CHECK_ERR(setpgid(0, -1), EINVAL);

	/* A child starts in our group; setpgid(0, 0) makes it a leader. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(getpgid(0), pg);
		CHECK_EQ(getpgid(getppid()), pg);
		CHECK_EQ(setpgid(0, 0), 0);
		CHECK_EQ(getpgid(0), getpid());
		/* The parent's group is unchanged. */
		CHECK_EQ(getpgid(getppid()), pg);
		/* Moving back into the parent's group (same session). */
		CHECK_EQ(setpgid(0, pg), 0);
		CHECK_EQ(getpgid(0), pg);
		/* setpgid(pid, pid) naming ourselves explicitly. */
		CHECK_EQ(setpgid(getpid(), getpid()), 0);
		CHECK_EQ(getpgid(0), getpid());
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
	CHECK_EQ(getpgid(0), pg);

	/* The parent can move a (not yet exec'd) child into its own group. */
	if (t_mktmp("pgid", dir, sizeof dir))
		DONE();
	t_join(flag, sizeof flag, dir, "go");
	pid = fork();
	if (pid == 0) {
		if (t_wait_for_file(flag) != 0)
			_exit(2);
		_exit(getpgid(0) == getpid() ? 0 : 3);
	}
	CHECK(pid > 0);
	CHECK_EQ(getpgid(pid), pg);
	CHECK_EQ(setpgid(pid, pid), 0);
	CHECK_EQ(getpgid(pid), pid);
	CHECK_EQ(t_touch(flag), 0);
	t_wait_ok(pid);

	/* After the child is reaped, its pid is gone: ESRCH. */
	CHECK_ERR(getpgid(pid), ESRCH);

	t_rmtree(dir);
	DONE();
}
