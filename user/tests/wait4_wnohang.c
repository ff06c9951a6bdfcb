/* wait4 WNOHANG: 0 while a child is still running, then the child. */
#include "t.h"

int main(void)
{
	char dir[128], flag[256];
	pid_t pid, r;
	int st, i;

	/* ECHILD even with WNOHANG when there are no children. */
	CHECK_ERR(wait4(-1, &st, WNOHANG, NULL), ECHILD);

	if (t_mktmp("wait4_wnohang", dir, sizeof dir))
		DONE();
	t_join(flag, sizeof flag, dir, "go");

	/* The child cannot exit before we create the flag file. */
	pid = fork();
	if (pid == 0) {
		if (t_wait_for_file(flag) != 0)
			_exit(2);
		_exit(23);
	}
	CHECK(pid > 0);

	/* Still running: WNOHANG returns 0 and leaves status untouched. */
	st = 0x5555;
	CHECK_EQ(wait4(pid, &st, WNOHANG, NULL), 0);
	CHECK_EQ(st, 0x5555);
	CHECK_EQ(wait4(-1, &st, WNOHANG, NULL), 0);
	CHECK_EQ(syscall(SYS_wait4, pid, &st, WNOHANG, NULL), 0);

	/* Release the child and reap it with a blocking wait. */
	CHECK_EQ(t_touch(flag), 0);
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 23);

	/* Polling with WNOHANG eventually reports an exiting child once. */
	pid = fork();
	if (pid == 0)
		_exit(24);
	CHECK(pid > 0);
	r = 0;
	for (i = 0; i < 600000 && r == 0; i++) {
		r = wait4(pid, &st, WNOHANG, NULL);
		if (r == 0)
			t_sleep_ns(1000000L);
	}
	CHECK_EQ(r, pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 24);
	CHECK_ERR(wait4(pid, &st, WNOHANG, NULL), ECHILD);

	t_rmtree(dir);
	DONE();
}
