/* wait4: selecting children, ECHILD, EINVAL, EFAULT, orphans. */
#include "t.h"

int main(void)
{
	pid_t a, b, r, child;
	int st;

	/* ECHILD with no children at all. */
	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);
	CHECK_ERR(wait4(0, &st, 0, NULL), ECHILD);
	CHECK_ERR(syscall(SYS_wait4, -1, &st, 0, NULL), ECHILD);

	/* ECHILD for a pid that is not our child (our parent; a huge pid). */
	CHECK_ERR(wait4(getppid(), &st, 0, NULL), ECHILD);
	CHECK_ERR(wait4(0x3fffffff, &st, 0, NULL), ECHILD);
	CHECK_ERR(wait4(getpid(), &st, 0, NULL), ECHILD);

	/* Waiting for a specific child returns that child even if another
	 * child exits first. */
	a = fork();
	if (a == 0)
		_exit(1);
	b = fork();
	if (b == 0)
		_exit(2);
	CHECK(a > 0 && b > 0);
	CHECK_EQ(wait4(b, &st, 0, NULL), b);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	CHECK_EQ(wait4(a, &st, 0, NULL), a);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);

	/* A reaped child cannot be waited for again. */
	CHECK_ERR(wait4(a, &st, 0, NULL), ECHILD);

	/* pid 0 waits for any child in our process group. */
	a = fork();
	if (a == 0)
		_exit(3);
	CHECK(a > 0);
	CHECK_EQ(wait4(0, &st, 0, NULL), a);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);

	/* -pgid waits for any child in that group. */
	a = fork();
	if (a == 0)
		_exit(4);
	CHECK(a > 0);
	CHECK_EQ(wait4(-getpgid(0), &st, 0, NULL), a);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 4);

	/* EINVAL: unknown option bits. */
	a = fork();
	if (a == 0)
		_exit(5);
	CHECK(a > 0);
	CHECK_ERR(wait4(a, &st, 0x100, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_wait4, a, &st, 0x100, NULL), EINVAL);
	/* The child is still there to be reaped normally. */
	CHECK_EQ(wait4(a, &st, 0, NULL), a);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);

	/* EFAULT: unwritable status pointer (the child is consumed). */
	a = fork();
	if (a == 0)
		_exit(6);
	CHECK(a > 0);
	CHECK_ERR(syscall(SYS_wait4, a, BAD_PTR2, 0, NULL), EFAULT);
	CHECK_ERR(wait4(a, &st, 0, NULL), ECHILD);

	/* Grandchildren are not our children: after the middle child exits
	 * without reaping, only it can be waited for. */
	child = fork();
	if (child == 0) {
		pid_t g = fork();
		if (g == 0)
			_exit(0);
		_exit(g > 0 ? 8 : 9);
	}
	CHECK(child > 0);
	r = wait4(-1, &st, 0, NULL);
	CHECK_EQ(r, child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 8);
	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);

	DONE();
}
