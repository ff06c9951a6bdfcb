/*
 * exhaust_fork_nproc: a flat fork bomb by an unprivileged user (uid
 * 65534) under RLIMIT_NPROC (issue 11 item 7).  The limit is set 64 above
 * the tasks that user already has (Linux counts threads per real uid), so
 * fork fails with EAGAIN after 64 children; they are all killed and
 * reaped, fork works again, the kernel's memory is back where it was, and
 * a second program (fork + exec) runs.  Safe on a host: the user gets only
 * 64 more tasks.  Needs root to switch to uid 65534.
 */
#include "next.h"
#include "exhaust.h"
#include "exhaust_fork.h"

#define UID 65534
#define EXTRA 64

static long existing; /* tasks of UID before the bomb */

/* Threads of processes whose real uid is `uid` (/proc/<pid>/status). */
static long tasks_of(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300];
		long long threads;
		static char buf[8192];
		const char *l;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		if (t_read_file(path, buf, sizeof buf) <= 0)
			continue;
		l = t_find_line(buf, "Uid:");
		if (!l || strtol(l, NULL, 10) != (long)uid)
			continue;
		threads = t_proc_kv(path, "Threads:");
		n += threads > 0 ? threads : 1;
	}
	closedir(d);
	return n;
}

static void setup(void)
{
	/* The bomber itself is one more task of UID. */
	struct rlimit rl = { existing + 1 + EXTRA, existing + 1 + EXTRA };

	if (setrlimit(RLIMIT_NPROC, &rl) != 0)
		_exit(20);
	if (setresgid(UID, UID, UID) != 0 || setresuid(UID, UID, UID) != 0)
		_exit(21);
}

int main(int argc, char **argv)
{
	struct x_usage before, after;
	struct x_bomb r;
	long long t0;

	X_MAYBE_SECOND(argc, argv);
	if (!t_is_root())
		SKIP("needs root to switch to uid 65534");
	existing = tasks_of(UID);
	CHECK(existing >= 0);
	x_settle(&after);
	x_read_usage(&before);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	r = x_run_bomber(setup);
	t_note("uid %d had %ld tasks; %ld children, then errno %d; %d reaped "
	       "(%d by SIGKILL); %lld ms",
	       UID, existing, r.children, r.err, r.reaped, r.killed,
	       (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
	CHECK_EQ(r.err, EAGAIN);
	/* Exact where nothing else runs as UID; on a host another process
	 * of that user may come or go meanwhile. */
	if (t_is_trellis())
		CHECK_EQ(r.children, EXTRA);
	else
		CHECK(r.children > 0 && r.children <= EXTRA + 8);
	CHECK_EQ(r.reaped, r.children);
	CHECK_EQ(r.killed, r.children);
	CHECK(r.leftover);
	CHECK(r.after);
	x_read_usage(&after);
	/* 64 processes' worth of kernel memory must come back: no extra. */
	x_check_usage("before and after the bomb", &before, &after, 0);
	x_run_second();
	DONE();
}
