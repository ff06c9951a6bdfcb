/* Without a subreaper, an orphan is re-parented away from its dead parent:
 * to init (pid 1) on Trellis; on a host the new parent may be a subreaper
 * such as systemd, so there only "changed" is checked. */
#include "next.h"

int main(void)
{
	int p[2];
	pid_t child, old_parent = 0, new_parent = 0;

	CHECK_EQ(pipe(p), 0);
	child = fork();
	if (child == 0) {
		pid_t parent = getpid(); /* before fork: the grandchild may
					  * run only after we exited */
		pid_t g = fork();

		if (g == 0) {
			pid_t pp;
			int i;

			for (i = 0; i < 60000 && getppid() == parent; i++)
				t_msleep(1);
			pp = getppid();
			(void)!write(p[1], &parent, sizeof parent);
			(void)!write(p[1], &pp, sizeof pp);
			_exit(0);
		}
		_exit(g > 0 ? 0 : 1);
	}
	close(p[1]);
	CHECK(t_wait_ok(child));
	CHECK_EQ(read(p[0], &old_parent, sizeof old_parent), (long)sizeof old_parent);
	CHECK_EQ(read(p[0], &new_parent, sizeof new_parent), (long)sizeof new_parent);
	CHECK_EQ(old_parent, child);
	CHECK(new_parent != child);
	CHECK(new_parent > 0);
	if (t_is_trellis())
		CHECK_EQ(new_parent, 1);
	else if (new_parent != 1)
		t_note("host: orphan adopted by pid %d (a subreaper), not 1",
		       (int)new_parent);
	/* It is not our child. */
	CHECK_ERR(waitpid(-1, NULL, WNOHANG), ECHILD);
	close(p[0]);
	DONE();
}
