/*
 * exhaust_fork_root: a flat fork bomb by root, without RLIMIT_NPROC
 * (issue 11 item 7).  Only kernel.threads-max (derived from RAM as Linux
 * does: RAM / (8 * 16 KiB), at least 20) or memory can stop it: fork must
 * end with EAGAIN (threads-max) or ENOMEM, never a panic or a hang.  All
 * children are killed and reaped, and fork works again.  Twice: after the
 * second bomb the kernel's memory is back where it was before it, and a
 * second program (fork + exec) runs.
 *
 * On a Linux host it would fill the host's process table: skipped there.
 */
#include "next.h"
#include "exhaust.h"
#include "exhaust_fork.h"
#include <sys/sysinfo.h>

static void setup(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_NPROC, &rl) != 0)
		_exit(20);
}

/* Threads in the system: the total of /proc/loadavg's "running/total". */
static long threads_now(void)
{
	char buf[256];
	const char *slash;

	if (t_read_file("/proc/loadavg", buf, sizeof buf) <= 0)
		return -1;
	slash = strchr(buf, '/');
	return slash ? strtol(slash + 1, NULL, 10) : -1;
}

/* One bomb, with its checks; returns the children it had. */
static long bomb(long threads, long long max)
{
	struct x_bomb r;
	long long t0 = t_now_ns(CLOCK_MONOTONIC);

	r = x_run_bomber(setup);
	t_note("threads-max %lld, %ld threads before; %ld children, then errno "
	       "%d; %d reaped (%d by SIGKILL); %lld ms",
	       max, threads, r.children, r.err, r.reaped, r.killed,
	       (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
	CHECK(r.err == EAGAIN || r.err == ENOMEM);
	CHECK(r.children > 100);
	/* The bomber is one more thread; threads-max is a hard bound. */
	CHECK(threads + 1 + r.children <= max);
	if (r.err == EAGAIN)
		CHECK_EQ(threads + 1 + r.children, max);
	CHECK_EQ(r.reaped, r.children);
	CHECK_EQ(r.killed, r.children);
	CHECK(r.leftover);
	CHECK(r.after);
	CHECK_EQ(threads_now(), threads);
	return r.children;
}

int main(int argc, char **argv)
{
	struct x_usage start, before, after;
	struct sysinfo si;
	long long max, want;
	long threads;

	X_MAYBE_SECOND(argc, argv);
	if (!t_is_trellis())
		SKIP("a fork bomb as root would fill the host's process table");
	if (!t_is_root())
		SKIP("needs root (no RLIMIT_NPROC)");
	/* kernel.threads-max as Linux's set_max_threads() computes it. */
	CHECK_EQ(sysinfo(&si), 0);
	want = (long long)si.totalram * si.mem_unit / (16384 * 8);
	if (want < 20)
		want = 20;
	max = t_proc_kv("/proc/sys/kernel/threads-max", "");
	CHECK_EQ(max, want);
	threads = threads_now();
	/* The first bomb sets the kernel's high-water marks: the page
	 * tables of the kernel-stack region (one page per 2 MiB of stacks)
	 * and the free list of stack slots keep the size the most children
	 * needed, as Linux keeps its vmalloc page tables.  They are shown,
	 * not checked; the second bomb must then leave nothing behind. */
	x_read_usage(&start);
	bomb(threads, max);
	x_read_usage(&before);
	t_note("high-water after the first bomb: heap objects %lld -> %lld "
	       "bytes, heap pages %lld -> %lld, MemFree %lld -> %lld kB",
	       start.heap_bytes, before.heap_bytes, start.heap_pages,
	       before.heap_pages, start.free_kb, before.free_kb);
	bomb(threads, max);
	x_read_usage(&after);
	x_check_usage("before and after the second bomb", &before, &after, 0);
	x_run_second();
	DONE();
}
