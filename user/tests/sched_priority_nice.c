/* getpriority/setpriority/nice: the raw syscall returns 20 - nice; nice
 * values clamp to [-20, 19]; PRIO_PROCESS/PGRP/USER; a child inherits the
 * value; non-root may raise but not lower its nice value (EACCES); EINVAL
 * and ESRCH. */
#include "next.h"

int main(void)
{
	pid_t pid;
	int base;

	/* The suite may be started under nice(1) (a loaded CI machine): start
	 * from 0 when allowed to, otherwise there is nothing to check. */
	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	CHECK_EQ(errno, 0);
	if (base != 0 && setpriority(PRIO_PROCESS, 0, 0) != 0)
		SKIP("started with nice %d and may not lower it", base);
	errno = 0;
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 0);
	CHECK_EQ(errno, 0);
	CHECK_EQ(syscall(SYS_getpriority, PRIO_PROCESS, 0), 20);

	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setpriority(PRIO_PROCESS, 0, 5), 0);
		CHECK_EQ(getpriority(PRIO_PROCESS, 0), 5);
		CHECK_EQ(syscall(SYS_getpriority, PRIO_PROCESS, getpid()), 15);
		/* nice() adds and returns the new value. */
		errno = 0;
		CHECK_EQ(nice(2), 7);
		CHECK_EQ(errno, 0);
		CHECK_EQ(getpriority(PRIO_PROCESS, 0), 7);
		/* Clamped. */
		CHECK_EQ(setpriority(PRIO_PROCESS, 0, 100), 0);
		CHECK_EQ(getpriority(PRIO_PROCESS, 0), 19);
		/* Inherited. */
		{
			pid_t g = fork();

			if (g == 0)
				_exit(getpriority(PRIO_PROCESS, 0) == 19 ? 0 : 1);
			CHECK(t_wait_ok(g));
		}
		if (t_is_root()) {
			CHECK_EQ(setpriority(PRIO_PROCESS, 0, -100), 0);
			CHECK_EQ(getpriority(PRIO_PROCESS, 0), -20);
			CHECK_EQ(setpriority(PRIO_PROCESS, 0, 3), 0);
			/* Unprivileged: may go up, not down. */
			if (setresuid(65534, 65534, 65534) == 0) {
				CHECK_EQ(setpriority(PRIO_PROCESS, 0, 10), 0);
				CHECK_ERR(setpriority(PRIO_PROCESS, 0, 9), EACCES);
				CHECK_ERR(setpriority(PRIO_PROCESS, 1, 10), EPERM);
			}
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Process groups and users. */
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		CHECK_EQ(setpriority(PRIO_PGRP, 0, 4), 0);
		CHECK_EQ(getpriority(PRIO_PGRP, getpgrp()), 4);
		CHECK_EQ(getpriority(PRIO_PROCESS, 0), 4);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	errno = 0;
	CHECK(getpriority(PRIO_USER, getuid()) >= -20);
	CHECK_EQ(errno, 0);

	/* Errors. */
	CHECK_ERR(getpriority(7, 0), EINVAL);
	CHECK_ERR(setpriority(7, 0, 0), EINVAL);
	CHECK_ERR(getpriority(PRIO_PROCESS, 0x3ffffff0), ESRCH);
	CHECK_ERR(setpriority(PRIO_PROCESS, 0x3ffffff0, 1), ESRCH);
	CHECK_ERR(getpriority(PRIO_PGRP, 0x3ffffff0), ESRCH);
	DONE();
}
