/* RLIMIT_STACK limits how far the main stack grows: with 1 MiB, a 4 MiB
 * deep recursion dies with SIGSEGV; with 64 MiB a 16 MiB one works; a
 * child inherits the limit, and exec keeps it. */
#include "next.h"

static volatile int stop_at = -1;

static int recurse(int depth, int max)
{
	volatile char pad[4096];

	pad[0] = (char)depth;
	pad[4095] = pad[0];
	if (depth == max || depth == stop_at)
		return pad[4095];
	return recurse(depth + 1, max) + pad[0];
}

static int run_with(rlim_t limit, int kib)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit rl;

		getrlimit(RLIMIT_STACK, &rl);
		rl.rlim_cur = limit;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < limit)
			rl.rlim_max = limit;
		if (setrlimit(RLIMIT_STACK, &rl) != 0)
			_exit(50);
		recurse(0, kib / 4);
		_exit(0);
	}
	return t_wait(pid);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	int st;

	if (argc == 2 && !strcmp(argv[1], "report")) {
		struct rlimit rl;

		getrlimit(RLIMIT_STACK, &rl);
		return rl.rlim_cur == (rlim_t)3 << 20 ? 0 : 1;
	}
	t_self_path(argv[0], self, sizeof self);

	st = run_with((rlim_t)1 << 20, 4096);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	st = run_with((rlim_t)64 << 20, 16384);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* 2 MiB of stack under an 8 MiB limit. */
	st = run_with((rlim_t)8 << 20, 2048);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Kept across exec. */
	{
		pid_t pid = fork();

		if (pid == 0) {
			struct rlimit rl;
			char *av[] = { self, "report", NULL };

			getrlimit(RLIMIT_STACK, &rl);
			rl.rlim_cur = (rlim_t)3 << 20;
			setrlimit(RLIMIT_STACK, &rl);
			execv(self, av);
			_exit(127);
		}
		CHECK(t_wait_ok(pid));
	}
	DONE();
}
