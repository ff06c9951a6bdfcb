/* RLIMIT_NPROC for an unprivileged user: fork fails with EAGAIN once the
 * user has that many processes (threads count too), and works again when
 * one exits.  Uses an otherwise unused uid so that other processes of the
 * host do not count. */
#include "next.h"

#define UID 54321

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

int main(void)
{
	pid_t pid;

	/* The defaults, inherited from init: half of kernel.threads-max for
	 * RLIMIT_NPROC and RLIMIT_SIGPENDING (Linux's fork_init).  A host's
	 * session manager may have changed them: Trellis only. */
	if (t_is_trellis()) {
		struct rlimit np, sp;
		char buf[32];

		CHECK(t_read_file("/proc/sys/kernel/threads-max", buf, sizeof buf) > 0);
		CHECK_EQ(getrlimit(RLIMIT_NPROC, &np), 0);
		CHECK_EQ(getrlimit(RLIMIT_SIGPENDING, &sp), 0);
		CHECK_EQ((long)np.rlim_cur, atol(buf) / 2);
		CHECK_EQ((long)np.rlim_max, atol(buf) / 2);
		CHECK_EQ((long)sp.rlim_cur, atol(buf) / 2);
	}

	if (!t_is_root())
		SKIP("needs root to switch to an unused uid");
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 3, 3 };
		pid_t a, b;
		int p[2];

		if (setrlimit(RLIMIT_NPROC, &rl) != 0)
			_exit(20);
		if (setresgid(UID, UID, UID) || setresuid(UID, UID, UID))
			_exit(21);
		if (pipe(p) != 0)
			_exit(22);
		/* We are one; two more are allowed. */
		a = fork();
		if (a == 0) {
			close(p[1]);
			t_await(p[0]);
			_exit(0);
		}
		CHECK(a > 0);
		b = fork();
		if (b == 0) {
			close(p[1]);
			t_await(p[0]);
			_exit(0);
		}
		CHECK(b > 0);
		CHECK_ERR(fork(), EAGAIN);
		/* Threads count as well. */
		{
			pthread_t t;

			CHECK_EQ(pthread_create(&t, NULL, idle, NULL), EAGAIN);
		}
		/* One exits: room for one again. */
		kill(b, SIGKILL);
		t_wait(b);
		b = fork();
		if (b == 0)
			_exit(0);
		CHECK(b > 0);
		if (b > 0)
			t_wait(b);
		close(p[1]);
		t_wait(a);
		/* getrlimit reports it. */
		getrlimit(RLIMIT_NPROC, &rl);
		CHECK_EQ(rl.rlim_cur, 3);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Root is not limited. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1, 1 };
		pid_t g;

		setrlimit(RLIMIT_NPROC, &rl);
		g = fork();
		if (g == 0)
			_exit(0);
		_exit(g > 0 && t_wait(g) == 0 ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));
	DONE();
}
