/*
 * Issue 11, exhaustion scenario 1: an unprivileged process touches memory
 * page by page until the OOM killer kills it. It must die of SIGKILL (not
 * SIGSEGV), its parent lives on, a second program then runs, the kernel
 * logs Linux's "Out of memory: Killed process" line, free memory comes
 * back while the victim is a zombie, and Committed_AS once it is reaped.
 *
 * Trellis only: on a host it would exhaust the host's memory.
 */
#include "next.h"

#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define CHUNK (1 << 20)

static void touch_until_killed(void)
{
	if (setgid(65534) != 0 || setuid(65534) != 0)
		_exit(2);
	for (;;) {
		char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(3);
		for (long i = 0; i < CHUNK; i += 4096)
			p[i] = 1;
	}
}

/* The second program: allocates and touches 8 MiB, checks it, exits 0. */
static int second_program(void)
{
	size_t n = 8 << 20;
	char *p = malloc(n);

	if (!p)
		return 4;
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (char)i;
	for (size_t i = 0; i < n; i += 4096)
		if (p[i] != (char)i)
			return 5;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "second"))
		return second_program();
	if (!t_is_trellis())
		SKIP("would exhaust the host's memory (no confinement)");
	if (!t_is_root())
		SKIP("needs root to drop to uid 65534");

	long long free0 = t_proc_kv("/proc/meminfo", "MemFree:");
	long long commit0 = t_proc_kv("/proc/meminfo", "Committed_AS:");
	CHECK(free0 > 0 && commit0 >= 0);

	long long t0 = t_now_ns(CLOCK_MONOTONIC);
	pid_t pid = fork();
	if (pid == 0)
		touch_until_killed();
	CHECK(pid > 0);
	/* Its memory is back while it is still a zombie: an address space
	 * goes at exit, not when the parent reaps (as on Linux). */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0);
	long long t1 = t_now_ns(CLOCK_MONOTONIC);
	long long free_zombie = t_proc_kv("/proc/meminfo", "MemFree:");
	CHECK(free_zombie > free0 - 1024);
	int st = t_wait(pid);
	CHECK(WIFSIGNALED(st));
	if (WIFSIGNALED(st))
		CHECK_EQ(WTERMSIG(st), SIGKILL);
	else
		t_note("child exited with status %d", WEXITSTATUS(st));

	/* The kernel said why, as Linux does. */
	static char log[1 << 15];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof log - 1);
	CHECK(n > 0);
	if (n > 0) {
		char want[64];
		log[n] = 0;
		snprintf(want, sizeof want, "Out of memory: Killed process %d ", pid);
		CHECK(strstr(log, want) != NULL);
		CHECK(strstr(log, "UID:65534 ") != NULL);
	}

	/* A second program runs. */
	pid_t second = fork();
	if (second == 0) {
		execl("/proc/self/exe", argv[0], "second", (char *)NULL);
		_exit(6);
	}
	CHECK(second > 0);
	CHECK(t_wait_ok(second));

	long long free1 = t_proc_kv("/proc/meminfo", "MemFree:");
	long long commit1 = t_proc_kv("/proc/meminfo", "Committed_AS:");
	t_note("touched until killed in %lld ms; MemFree %lld -> %lld (zombie) -> %lld kB",
	       (t1 - t0) / 1000000, free0, free_zombie, free1);
	/* Back within 1 MiB (kernel heap pages kept by the slab caches). */
	CHECK(free1 > free0 - 1024 && free1 <= free0 + 1024);
	CHECK_EQ(commit1, commit0);
	DONE();
}
