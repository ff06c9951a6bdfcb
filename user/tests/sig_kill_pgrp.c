/* kill to process groups: kill(-pgid), killpg, kill(0, sig) hits the
 * caller's group including itself; kill(pid, 0) existence checks; ESRCH
 * and EINVAL.  (kill(-1, sig) is deliberately not tested: on a host it
 * would signal every process the user may signal.) */
#include "next.h"

static volatile int self_hit;

static void on_usr2(int s)
{
	(void)s;
	self_hit++;
}

int main(void)
{
	pid_t kids[3], leader, pid;
	int p[2], i, st;

	/* Three children in a new group led by the first. */
	CHECK_EQ(pipe(p), 0);
	for (i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			close(p[1]);
			setpgid(0, i == 0 ? 0 : kids[0]);
			t_await(p[0]); /* until killed */
			_exit(0);
		}
		setpgid(kids[i], kids[0]);
	}
	leader = kids[0];
	for (i = 0; i < 3; i++)
		CHECK_EQ(getpgid(kids[i]), leader);
	CHECK_EQ(kill(-leader, 0), 0);
	CHECK_EQ(killpg(leader, 0), 0);
	CHECK_EQ(kill(-leader, SIGUSR1), 0);
	for (i = 0; i < 3; i++) {
		st = t_wait(kids[i]);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	}
	/* The group is gone now. */
	CHECK_ERR(kill(-leader, 0), ESRCH);
	CHECK_ERR(killpg(leader, SIGUSR1), ESRCH);
	close(p[0]);
	close(p[1]);

	/* kill(0, sig): the caller's own group, the caller included. */
	pid = fork();
	if (pid == 0) {
		pid_t g1, g2;
		int s1, s2, q[2];

		setpgid(0, 0);
		if (pipe(q) != 0)
			_exit(9);
		/* The grandchildren keep the default action (terminate). */
		g1 = fork();
		if (g1 == 0) {
			t_await(q[0]);
			_exit(0);
		}
		g2 = fork();
		if (g2 == 0) {
			t_await(q[0]);
			_exit(0);
		}
		t_sigaction(SIGUSR2, on_usr2, 0);
		kill(0, SIGUSR2);
		s1 = t_wait(g1);
		s2 = t_wait(g2);
		if (self_hit != 1)
			_exit(2);
		if (!WIFSIGNALED(s1) || WTERMSIG(s1) != SIGUSR2 ||
		    !WIFSIGNALED(s2) || WTERMSIG(s2) != SIGUSR2)
			_exit(3);
		_exit(0);
	}
	CHECK(t_wait_ok(pid));

	/* Existence checks and errors. */
	CHECK_EQ(kill(getpid(), 0), 0);
	CHECK_EQ(kill(0, 0), 0);
	CHECK_ERR(kill(0x3ffffff0, 0), ESRCH);
	CHECK_ERR(kill(-0x3ffffff0, 0), ESRCH);
	CHECK_ERR(kill(getpid(), 65), EINVAL);
	CHECK_ERR(kill(getpid(), -1), EINVAL);
	CHECK_ERR(killpg(-5, SIGUSR1), EINVAL);
	DONE();
}
