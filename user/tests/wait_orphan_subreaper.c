/* Orphans are re-parented.  With PR_SET_CHILD_SUBREAPER the test process
 * itself adopts its orphaned grandchildren and can reap them. */
#include "next.h"
#include <sys/prctl.h>

int main(void)
{
	int p[2], flag = -1;
	pid_t child, grand = 0, ppid_seen = 0;
	int st;

	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&flag, 0, 0, 0), 0);
	CHECK_EQ(flag, 1);

	CHECK_EQ(pipe(p), 0);
	child = fork();
	if (child == 0) {
		pid_t parent = getpid(); /* before fork: the grandchild may
					  * run only after we exited */
		pid_t g = fork();

		if (g == 0) {
			pid_t me = getpid(), pp;
			int i;

			/* Re-parenting happens when the parent exits. */
			for (i = 0; i < 60000 && getppid() == parent; i++)
				t_msleep(1);
			pp = getppid();
			(void)!write(p[1], &me, sizeof me);
			(void)!write(p[1], &pp, sizeof pp);
			_exit(33);
		}
		_exit(g > 0 ? 0 : 1);
	}
	close(p[1]);
	CHECK(t_wait_ok(child));
	/* The child is reaped; the grandchild now reports its parent. */
	CHECK_EQ(read(p[0], &grand, sizeof grand), (long)sizeof grand);
	CHECK_EQ(read(p[0], &ppid_seen, sizeof ppid_seen), (long)sizeof ppid_seen);
	CHECK_EQ(ppid_seen, getpid());
	/* And we can reap it. */
	CHECK_EQ(wait4(grand, &st, 0, NULL), grand);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 33);
	CHECK_ERR(wait4(-1, &st, WNOHANG, NULL), ECHILD);
	close(p[0]);

	/* Clearing the attribute. */
	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&flag, 0, 0, 0), 0);
	CHECK_EQ(flag, 0);
	DONE();
}
