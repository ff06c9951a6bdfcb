/* RLIMIT_CPU (setrlimit(2)): at the soft limit of CPU time the process
 * gets SIGXCPU, and the soft limit moves on by a second, so SIGXCPU comes
 * once a CPU second while the process goes on; at the hard limit it gets
 * SIGKILL.  SIGXCPU's default action ends the process (with a core). */
#include "next.h"

static int report = -1;

static void on_xcpu(int sig)
{
	struct rlimit rl;
	char c;

	(void)sig;
	getrlimit(RLIMIT_CPU, &rl);
	c = (char)rl.rlim_cur;
	(void)!write(report, &c, 1);
}

static void burn(void)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
}

int main(void)
{
	int p[2], st;
	char seen[16];
	ssize_t n;
	pid_t pid;

	/* soft 1 s, hard 3 s, SIGXCPU handled: SIGXCPU at 1 s and 2 s (the
	 * soft limit reads 2, then 3), SIGKILL at 3 s. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1, 3 };

		close(p[0]);
		report = p[1];
		signal(SIGXCPU, on_xcpu);
		if (setrlimit(RLIMIT_CPU, &rl))
			_exit(2);
		burn();
	}
	close(p[1]);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	n = read(p[0], seen, sizeof seen);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(seen[0], 2);
		CHECK_EQ(seen[1], 3);
	}
	close(p[0]);

	/* Unhandled, SIGXCPU ends the process at the soft limit. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1, RLIM_INFINITY }, nocore = { 0, 0 };

		setrlimit(RLIMIT_CORE, &nocore); /* no core file on a host */
		if (setrlimit(RLIMIT_CPU, &rl))
			_exit(2);
		burn();
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU);

	/* Soft equal to hard: SIGKILL at once, no SIGXCPU first. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1, 1 };

		close(p[0]);
		report = p[1];
		signal(SIGXCPU, on_xcpu);
		if (setrlimit(RLIMIT_CPU, &rl))
			_exit(2);
		burn();
	}
	close(p[1]);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_EQ(read(p[0], seen, sizeof seen), 0);
	close(p[0]);
	DONE();
}
