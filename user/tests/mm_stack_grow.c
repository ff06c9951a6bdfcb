/* The main thread's stack is a grow-down area: execve maps a small
 * "[stack]" (Linux: 128 KiB plus the arguments) that grows as deeper
 * pages are touched, up to RLIMIT_STACK; /proc/self/maps and VmStk show
 * its current size, and a touch past the limit is SIGSEGV. */
#include "next.h"

static long stack_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;

		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &a, &b) == 2)
			kb = (long)((b - a) / 1024);
	}
	fclose(f);
	return kb;
}

static __attribute__((noinline)) int touch(size_t depth)
{
	volatile char buf[4096];

	buf[0] = (char)depth;
	buf[4095] = 1;
	if (depth == 0)
		return buf[0];
	return touch(depth - 1) + buf[4095];
}

int main(void)
{
	long before, after;
	pid_t pid;
	int st;

	before = stack_kb();
	CHECK(before > 0);
	/* Linux starts small; far below the 8 MiB limit. */
	CHECK(before < 1024);
	CHECK(t_proc_kv("/proc/self/status", "VmStk:") < 1024);
	CHECK_EQ(touch(512), 512); /* 2 MiB of frames */
	after = stack_kb();
	CHECK(after >= 2048);
	CHECK(t_proc_kv("/proc/self/status", "VmStk:") >= 2048);

	/* Beyond RLIMIT_STACK: SIGSEGV. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1 << 20, 1 << 20 };

		signal(SIGSEGV, SIG_DFL);
		setrlimit(RLIMIT_STACK, &rl);
		touch(1024); /* 4 MiB */
		_exit(0);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	DONE();
}
