/* clone used as fork: raw syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0). */
#include "t.h"

static int global_value = 100;

int main(void)
{
	pid_t parent = getpid(), pid;
	int st, local = 5;
	long r;

	/* Child returns 0, parent gets the pid. */
	r = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0) {
		int bad = 0;

		if (getppid() != parent)
			bad |= 1;
		if (getpid() == parent)
			bad |= 2;
		if (syscall(SYS_gettid) != getpid())
			bad |= 4;
		/* Separate copy of memory: write, parent must not see. */
		if (global_value != 100 || local != 5)
			bad |= 8;
		global_value = 200;
		local = 6;
		syscall(SYS_exit_group, bad ? bad : 42);
	}
	CHECK(r > 0);
	pid = (pid_t)r;
	CHECK(pid != parent);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 42);
	CHECK_EQ(global_value, 100);
	CHECK_EQ(local, 5);

	/* Several clones, reaped with wait4(-1). */
	{
		int i, sum = 0;

		for (i = 0; i < 3; i++) {
			r = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
			if (r == 0)
				syscall(SYS_exit_group, 1 << i);
			CHECK(r > 0);
		}
		for (i = 0; i < 3; i++) {
			CHECK(wait4(-1, &st, 0, NULL) > 0);
			if (WIFEXITED(st))
				sum += WEXITSTATUS(st);
		}
		CHECK_EQ(sum, 7);
	}

	/* A clone child can use libc normally and exit through it. */
	r = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0) {
		char dir[128];

		if (t_mktmp("clone_fork", dir, sizeof dir) == 0)
			t_rmtree(dir);
		CHILD_DONE();
	}
	CHECK(r > 0);
	t_wait_ok((pid_t)r);

	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);
	DONE();
}
