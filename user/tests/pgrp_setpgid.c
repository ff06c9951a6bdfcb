/* setpgid rules (setpgid(2)): joining and creating groups, EINVAL, ESRCH,
 * EPERM across sessions and for missing groups, EACCES after the child
 * execs. */
#include "next.h"

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	int p[2], q[2];
	pid_t a, b;
	char c;

	if (argc == 2 && !strcmp(argv[1], "exec-wait")) {
		/* Wait for EOF on stdin, which the parent set up as a pipe. */
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	t_self_path(argv[0], self, sizeof self);

	CHECK_EQ(setpgid(0, 0), 0);
	CHECK_EQ(getpgrp(), getpid());
	CHECK_EQ(setpgid(getpid(), getpgid(0)), 0);
	CHECK_ERR(setpgid(0, -1), EINVAL);
	CHECK_ERR(setpgid(-1, 0), EINVAL);
	CHECK_ERR(setpgid(0x3ffffff0, 0), ESRCH);
	CHECK_ERR(setpgid(getppid(), 0), ESRCH);
	CHECK_EQ(getpgid(0), getpid());
	CHECK_ERR(getpgid(0x3ffffff0), ESRCH);

	/* Parent puts child a in a new group, then b into a's group. */
	CHECK_EQ(pipe(p), 0);
	a = fork();
	if (a == 0) {
		close(p[1]);
		t_await(p[0]);
		_exit(0);
	}
	b = fork();
	if (b == 0) {
		close(p[1]);
		t_await(p[0]);
		_exit(0);
	}
	CHECK_EQ(setpgid(a, a), 0);
	CHECK_EQ(getpgid(a), a);
	CHECK_EQ(setpgid(b, a), 0);
	CHECK_EQ(getpgid(b), a);
	/* Back to our group. */
	CHECK_EQ(setpgid(b, getpgid(0)), 0);
	CHECK_EQ(getpgid(b), getpid());
	/* A group that does not exist in our session. */
	CHECK_ERR(setpgid(b, 0x3ffffff0), EPERM);
	close(p[0]);
	close(p[1]);
	CHECK(t_wait_ok(a));
	CHECK(t_wait_ok(b));

	/* A child in another session cannot be moved (EPERM). */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	a = fork();
	if (a == 0) {
		close(p[1]);
		close(q[0]);
		setsid();
		t_post(q[1]);
		t_await(p[0]);
		_exit(0);
	}
	close(q[1]);
	CHECK_EQ(t_await(q[0]), 0);
	CHECK_ERR(setpgid(a, a), EPERM);
	CHECK_ERR(setpgid(a, getpgid(0)), EPERM);
	/* ...nor can we join its group. */
	CHECK_ERR(setpgid(0, a), EPERM);
	close(p[1]);
	close(p[0]);
	close(q[0]);
	CHECK(t_wait_ok(a));

	/* After the child has execve'd: EACCES. */
	CHECK_EQ(pipe(p), 0);
	a = fork();
	if (a == 0) {
		char *av[] = { self, "exec-wait", NULL };

		close(p[1]);
		dup2(p[0], 0);
		close(p[0]);
		execv(self, av);
		_exit(127);
	}
	close(p[0]);
	/* Wait until the exec happened: its cmdline changes. */
	{
		char path[64], buf[256];
		int i;
		ssize_t n = -1;

		snprintf(path, sizeof path, "/proc/%d/cmdline", (int)a);
		for (i = 0; i < 10000; i++) {
			n = t_read_file(path, buf, sizeof buf);
			if (n > 0 && memmem(buf, (size_t)n, "exec-wait", 9))
				break;
			t_msleep(1);
		}
		if (n < 0) {
			t_note("no /proc/<pid>/cmdline; sleeping instead");
			t_msleep(500);
		}
	}
	CHECK_ERR(setpgid(a, a), EACCES);
	close(p[1]);
	CHECK(t_wait_ok(a));
	DONE();
}
