/* CLONE_VFORK | CLONE_VM: the parent is suspended until the child exits or
 * execs; the child's writes are visible (shared memory). */
#include "next.h"

static volatile int step;

static int vchild(void *arg)
{
	(void)arg;
	step = 1;
	t_msleep(30); /* the parent must still be suspended */
	step = 2;
	return 5;
}

static char self[PATH_MAX];

static int vexec(void *arg)
{
	char *argv[] = { self, "exec-child", NULL };

	(void)arg;
	step = 3;
	syscall(SYS_execve, self, argv, NULL);
	return 99;
}

int main(int argc, char **argv)
{
	long pid;
	int st;

	if (argc == 2 && !strcmp(argv[1], "exec-child")) {
		t_msleep(20);
		return 6;
	}
	t_self_path(argv[0], self, sizeof self);

	pid = t_clone(CLONE_VM | CLONE_VFORK | SIGCHLD, t_stack(65536), NULL,
		      NULL, 0, vchild, NULL);
	CHECK(pid > 0);
	/* By the time clone returns, the child has exited. */
	CHECK_EQ(step, 2);
	st = t_wait((pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);

	/* Released at execve: the child is still running (or done). */
	step = 0;
	pid = t_clone(CLONE_VM | CLONE_VFORK | SIGCHLD, t_stack(65536), NULL,
		      NULL, 0, vexec, NULL);
	CHECK(pid > 0);
	CHECK_EQ(step, 3);
	st = t_wait((pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 6);

	/* vfork(3) itself. */
	step = 0;
	pid = vfork();
	if (pid == 0) {
		step = 9;
		_exit(7);
	}
	CHECK_EQ(step, 9);
	st = t_wait((pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	DONE();
}
