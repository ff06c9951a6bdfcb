/*
 * leak_timers_at_exit: a process that exits with its timers armed leaves
 * no kernel memory behind.
 *
 * Found by the syscall fuzzer: the kernel heap grew by a few hundred bytes
 * per batch child, from a pending alarm(2)/setitimer(ITIMER_REAL) wake-up
 * that exit did not cancel (Linux cancels the real timer when the thread
 * group dies).  The entry stayed in the kernel's timer queue until its
 * deadline, which alarm() puts up to 136 years away.
 *
 * CHILDREN processes each arm ITIMER_REAL far in the future (by alarm or
 * by setitimer, alternately; some with an interval), some also a POSIX
 * timer, and exit; the parent reaps them.  After a warm-up round, the live
 * kernel heap (/proc/slabinfo) must come back to its level within 16 KiB:
 * a leak of one timer entry per child is several times that.  On a Linux
 * host the counters move with everything else, so there they are only
 * reported.
 */
#include "next.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#define CHILDREN 400
#define SLACK_BYTES (16 * 1024)

/* Live heap objects in bytes, by /proc/slabinfo (0 if unreadable). */
static long long heap_bytes(void)
{
	long long bytes, pages;

	return t_heap_usage(&bytes, &pages, NULL, 0) ? bytes : 0;
}

static void child(int i)
{
	struct itimerval it = { { 0, 0 }, { 1000000, 0 } };

	signal(SIGALRM, SIG_IGN);
	if (i % 2)
		alarm(4000000);
	else {
		if (i % 4 == 0)
			it.it_interval.tv_sec = 1000;
		if (setitimer(ITIMER_REAL, &it, NULL) != 0)
			_exit(1);
	}
	if (i % 3 == 0) {
		struct sigevent ev;
		struct itimerspec ts = { { 0, 0 }, { 1000000, 0 } };
		timer_t t;

		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGALRM;
		if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0 ||
		    timer_settime(t, 0, &ts, NULL) != 0)
			_exit(1);
	}
	_exit(0);
}

static void run(int n)
{
	int i, st;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			child(i);
		CHECK(pid > 0);
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

int main(void)
{
	long long before, after;

	run(20); /* warm-up: every cache the children use exists */
	before = heap_bytes();
	run(CHILDREN);
	after = heap_bytes();
	t_note("%d children with timers armed at exit: heap objects %lld -> %lld bytes",
	       CHILDREN, before, after);
	if (!t_is_trellis())
		DONE(); /* the host's counters are not ours alone */
	CHECK(before > 0);
	CHECK(after - before <= SLACK_BYTES);
	DONE();
}
