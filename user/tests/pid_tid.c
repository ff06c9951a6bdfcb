/* getpid/gettid/getppid: identities in parent and child. */
#include "t.h"

int main(void)
{
	pid_t me = getpid(), pp = getppid(), pid;
	long tid;

	/* Basic sanity and stability. */
	CHECK(me > 0);
	CHECK(pp > 0);
	CHECK(me != pp);
	CHECK_EQ(getpid(), me);
	CHECK_EQ(getppid(), pp);

	/* Raw syscalls agree with the wrappers. */
	CHECK_EQ(syscall(SYS_getpid), me);
	CHECK_EQ(syscall(SYS_getppid), pp);

	/* Single-threaded: the thread id equals the process id. */
	tid = syscall(SYS_gettid);
	CHECK_EQ(tid, me);

	/* Child: new pid and tid, parent is us. */
	pid = fork();
	if (pid == 0) {
		pid_t c = getpid();

		CHECK(c != me);
		CHECK_EQ(syscall(SYS_gettid), c);
		CHECK_EQ(syscall(SYS_getpid), c);
		CHECK_EQ(getppid(), me);
		CHECK_EQ(syscall(SYS_getppid), me);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* Sibling children get distinct pids. */
	{
		pid_t a = fork(), b;

		if (a == 0)
			_exit(0);
		b = fork();
		if (b == 0)
			_exit(0);
		CHECK(a > 0 && b > 0 && a != b && a != me && b != me);
		t_wait_ok(a);
		t_wait_ok(b);
	}

	/* Our own identity is unchanged by forking. */
	CHECK_EQ(getpid(), me);
	CHECK_EQ(syscall(SYS_gettid), me);
	CHECK_EQ(getppid(), pp);
	DONE();
}
