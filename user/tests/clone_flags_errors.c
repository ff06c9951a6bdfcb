/* clone flag combinations that must be rejected with EINVAL (clone(2)),
 * and the process is unharmed. */
#include "next.h"

static int nop(void *arg)
{
	(void)arg;
	return 0;
}

int main(void)
{
	void *stk = t_stack(65536);

	/* CLONE_THREAD requires CLONE_SIGHAND. */
	CHECK_EQ(t_clone(CLONE_VM | CLONE_THREAD, stk, NULL, NULL, 0, nop, NULL),
		 -EINVAL);
	/* CLONE_SIGHAND requires CLONE_VM. */
	CHECK_EQ(t_clone(CLONE_SIGHAND | SIGCHLD, stk, NULL, NULL, 0, nop, NULL),
		 -EINVAL);
	CHECK_EQ(t_clone(CLONE_SIGHAND | CLONE_THREAD, stk, NULL, NULL, 0, nop,
			 NULL),
		 -EINVAL);
	/* CLONE_NEWNS with CLONE_FS. */
	CHECK_EQ(t_clone(CLONE_FS | CLONE_NEWNS | SIGCHLD, stk, NULL, NULL, 0,
			 nop, NULL),
		 -EINVAL);
	/* CLONE_NEWUSER with CLONE_FS; CLONE_NEWUSER with CLONE_THREAD. */
	CHECK_EQ(t_clone(CLONE_FS | CLONE_NEWUSER | SIGCHLD, stk, NULL, NULL, 0,
			 nop, NULL),
		 -EINVAL);
	/* CLONE_PARENT from init is not applicable here; CLONE_THREAD with
	 * CLONE_NEWPID is invalid. */
	CHECK_EQ(t_clone(CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_NEWPID,
			 stk, NULL, NULL, 0, nop, NULL),
		 -EINVAL);

	/* Still fine afterwards. */
	{
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		CHECK(t_wait_ok(pid));
	}
	DONE();
}
