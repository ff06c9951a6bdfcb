/* Invalid syscall numbers fail with ENOSYS and the process carries on. */
#include "t.h"

int main(void)
{
	pid_t me = getpid();

	CHECK_ERR(syscall(1000), ENOSYS);
	CHECK_ERR(syscall(1000, 1, 2, 3, 4, 5, 6), ENOSYS);
	CHECK_ERR(syscall(1024), ENOSYS);
	CHECK_ERR(syscall(4095), ENOSYS);
	CHECK_ERR(syscall(100000), ENOSYS);
	CHECK_ERR(syscall(-1), ENOSYS);

	/* Nothing was disturbed. */
	CHECK_EQ(getpid(), me);
	CHECK_EQ(syscall(SYS_getpid), me);

	/* Same in a child. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			CHECK_ERR(syscall(1000), ENOSYS);
			CHILD_DONE();
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
	}
	DONE();
}
