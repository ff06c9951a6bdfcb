/*
 * exhaust_fork_root: a flat fork bomb by root, without RLIMIT_NPROC
 * (issue 11 item 7).  Only kernel.threads-max (derived from RAM as Linux
 * does: RAM / (8 * 16 KiB), at least 20) or memory can stop it: fork must
 * end with EAGAIN (threads-max) or ENOMEM, never a panic or a hang.  All
 * children are killed and reaped, and fork works again.  Before it a
 * thread bomb (raw clone of threads until clone fails) must end with
 * EAGAIN exactly at threads-max; after the fork bomb the kernel's memory
 * is back where it was before it; a fork bomb under a lowered threads-max
 * ends with EAGAIN exactly there; kernel.pid_max lowered to 400 makes pids
 * wrap round to 300-399, skipping those in use, and a fork bomb then ends
 * with EAGAIN when none is left; then a second program (fork + exec)
 * runs.
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

/* ---- the thread bomb ---------------------------------------------------- */

#define THREAD_STACK 8192
#define MAX_THREADS 65536

static volatile int go_word; /* threads leave when it is 1 */

/* A raw futex call: the threads have no TLS of their own (no errno). */
static long raw_futex(volatile int *w, int op, int val)
{
	register long r10 __asm__("r10") = 0;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_futex), "D"(w), "S"((long)op),
			   "d"((long)val), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

static int parked(void *arg)
{
	(void)arg;
	while (go_word == 0)
		raw_futex(&go_word, FUTEX_WAIT, 0);
	return 0;
}

struct x_tbomb {
	long threads; /* clones that succeeded */
	long err;     /* -errno of the clone that failed */
};

/* A child process clones threads until clone fails, reports, and exits
 * (exit_group ends them all). */
static struct x_tbomb thread_bomb(void)
{
	struct x_tbomb r = { -1, 0 };
	int p[2];
	pid_t pid;

	if (pipe(p) != 0)
		return r;
	pid = fork();
	if (pid == 0) {
		char *stacks = mmap(NULL, (size_t)MAX_THREADS * THREAD_STACK,
				    PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				    -1, 0);
		struct x_tbomb b = { 0, 0 };

		close(p[0]);
		if (stacks == MAP_FAILED)
			_exit(2);
		while (b.threads < MAX_THREADS) {
			long t = t_clone(CLONE_VM | CLONE_FS | CLONE_FILES |
						 CLONE_SIGHAND | CLONE_THREAD |
						 CLONE_SYSVSEM,
					 stacks + (b.threads + 1) * THREAD_STACK,
					 NULL, NULL, 0, parked, NULL);
			if (t < 0) {
				b.err = t;
				break;
			}
			b.threads++;
		}
		if (write(p[1], &b, sizeof b) != sizeof b)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof r) != sizeof r)
		r.threads = -1;
	close(p[0]);
	if (pid > 0)
		CHECK(t_wait_ok(pid));
	return r;
}

/* Writes /proc/sys/kernel/<name>; 0 or the errno. */
static int write_kernel_sysctl(const char *name, long long v)
{
	char text[32], path[64];
	int fd, e = 0;
	int n = snprintf(text, sizeof text, "%lld\n", v);

	snprintf(path, sizeof path, "/proc/sys/kernel/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, text, n) != n)
		e = errno;
	close(fd);
	return e;
}

/* How many numbers in [lo, hi) are in use as a pid, tid, process group
 * or session (/proc/<pid>/stat and /proc/<pid>/task). */
static int ids_in_use(int lo, int hi)
{
	static char used[1 << 16];
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0, i;

	memset(used, 0, sizeof used);
	if (!d || hi - lo > (int)sizeof used)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512];
		int pid, pgrp, sid;
		const char *close_paren;
		DIR *td;
		struct dirent *te;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		pid = atoi(e->d_name);
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		if (t_read_file(path, buf, sizeof buf) <= 0)
			continue;
		close_paren = strrchr(buf, ')');
		if (!close_paren ||
		    sscanf(close_paren + 2, "%*c %*d %d %d", &pgrp, &sid) != 2)
			continue;
		if (pid >= lo && pid < hi)
			used[pid - lo] = 1;
		if (pgrp >= lo && pgrp < hi)
			used[pgrp - lo] = 1;
		if (sid >= lo && sid < hi)
			used[sid - lo] = 1;
		snprintf(path, sizeof path, "/proc/%s/task", e->d_name);
		td = opendir(path);
		while (td && (te = readdir(td))) {
			int tid = atoi(te->d_name);

			if (tid >= lo && tid < hi)
				used[tid - lo] = 1;
		}
		if (td)
			closedir(td);
	}
	closedir(d);
	for (i = 0; i < hi - lo; i++)
		n += used[i];
	return n;
}

/* Writes kernel.threads-max; 0 or the errno. */
static int write_threads_max(long long v)
{
	char text[32];
	int fd = open("/proc/sys/kernel/threads-max", O_WRONLY), e = 0;
	int n = snprintf(text, sizeof text, "%lld\n", v);

	if (fd < 0)
		return errno;
	if (write(fd, text, n) != n)
		e = errno;
	close(fd);
	return e;
}

/* One bomb, with its checks; returns the children it had. */
static long bomb(long threads, long long max, long at_least)
{
	struct x_bomb r;
	long long t0 = t_now_ns(CLOCK_MONOTONIC);

	r = x_run_bomber(setup);
	t_note("threads-max %lld, %ld threads before; %ld children, then errno "
	       "%d; %d reaped (%d by SIGKILL); %lld ms",
	       max, threads, r.children, r.err, r.reaped, r.killed,
	       (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
	CHECK(r.err == EAGAIN || r.err == ENOMEM);
	CHECK(r.children >= at_least);
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
	long long max, want, t0;
	struct x_tbomb tb;
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
	/* First as many threads as clone gives: kernel.threads-max stops
	 * them (a thread costs less memory than a process).  This also sets
	 * the kernel's high-water marks for the fork bomb: the page tables
	 * of the kernel-stack region (one page per 2 MiB of stacks) and the
	 * free list of stack slots keep the size the most tasks needed, as
	 * Linux keeps its vmalloc page tables.  They are shown, not checked;
	 * the fork bomb, which has fewer tasks at once, must then leave
	 * nothing behind. */
	x_settle(&after);
	x_read_usage(&start);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	tb = thread_bomb();
	t_note("thread bomb: %ld threads, then clone gave %ld; %lld ms",
	       tb.threads, tb.err, (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
	CHECK(tb.err == -EAGAIN || tb.err == -ENOMEM);
	if (tb.err == -EAGAIN) /* the bomb's main thread counts too */
		CHECK_EQ(threads + 1 + tb.threads, max);
	CHECK_EQ(threads_now(), threads);
	/* kernel.threads-max lowered to 64 above what runs: a fork bomb ends
	 * with EAGAIN exactly there, for root too.  Right after the thread
	 * bomb was reaped: wait(2) reports a process only once all its
	 * threads are gone (they no longer count against the limit). */
	CHECK_EQ(write_threads_max(threads + 64), 0);
	CHECK_EQ(bomb(threads, threads + 64, 0), 64 - 1);
	CHECK_EQ(write_threads_max(max), 0);
	CHECK_EQ(t_proc_kv("/proc/sys/kernel/threads-max", ""), max);
	x_read_usage(&before);
	t_note("high-water after the thread bomb: heap objects %lld -> %lld "
	       "bytes, heap pages %lld -> %lld, MemFree %lld -> %lld kB",
	       start.heap_bytes, before.heap_bytes, start.heap_pages,
	       before.heap_pages, start.free_kb, before.free_kb);
	bomb(threads, max, 100);
	x_read_usage(&after);
	x_check_usage("before and after the fork bomb", &before, &after, 0);
	/* kernel.pid_max lowered to 400: new pids wrap round to 300-399,
	 * skipping those in use, and a fork bomb runs out of them with
	 * EAGAIN (a holder process and the bomber take one each).  Linux's bounds: 301 to
	 * PID_MAX_LIMIT (4194304, Debian's value). */
	CHECK_EQ(t_proc_kv("/proc/sys/kernel/pid_max", ""), 4194304);
	CHECK_EQ(write_kernel_sysctl("pid_max", 300), EINVAL);
	CHECK_EQ(write_kernel_sysctl("pid_max", 4194305), EINVAL);
	{
		int busy = ids_in_use(300, 400);
		struct x_bomb r;

		CHECK(busy >= 0);
		int hold[2];
		pid_t holder;

		CHECK_EQ(pipe(hold), 0);
		CHECK_EQ(write_kernel_sysctl("pid_max", 400), 0);
		/* A process that keeps its pid in the range while the bomb
		 * wraps round it. */
		holder = fork();
		if (holder == 0) {
			close(hold[1]);
			t_await(hold[0]);
			_exit(0);
		}
		close(hold[0]);
		r = x_run_bomber(setup);
		CHECK_EQ(write_kernel_sysctl("pid_max", 4194304), 0);
		close(hold[1]);
		CHECK(holder >= 300 && holder < 400);
		CHECK(holder > 0 && t_wait_ok(holder));
		t_note("pid_max 400, %d of 300-399 in use, holder %d: %ld "
		       "children (pids %d-%d), then errno %d",
		       busy, holder, r.children, r.min_pid, r.max_pid, r.err);
		CHECK_EQ(r.err, EAGAIN);
		/* Less the holder and the bomber. */
		CHECK_EQ(r.children, 100 - busy - 2);
		CHECK(r.min_pid >= 300 && r.max_pid < 400);
		CHECK_EQ(r.reaped, r.children);
		CHECK(r.after);
	}
	CHECK_EQ(t_proc_kv("/proc/sys/kernel/pid_max", ""), 4194304);
	/* Linux's bounds: 1 to FUTEX_TID_MASK. */
	CHECK_EQ(write_threads_max(0), EINVAL);
	CHECK_EQ(write_threads_max(0x40000000LL), EINVAL);
	CHECK_EQ(t_proc_kv("/proc/sys/kernel/threads-max", ""), max);
	x_run_second();
	DONE();
}
