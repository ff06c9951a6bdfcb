/* ITIMER_PROF and ITIMER_VIRTUAL with a 1 us interval (found by the
 * syscall fuzzer: after setitimer(ITIMER_PROF, {{0,1},{0,1}}) the process
 * got SIGPROF on every return to user mode and made no progress at all).
 * Linux checks CPU-time itimers at the timer tick, so however short the
 * interval, such a timer raises at most one signal per tick and the
 * process goes on between them.  The test runs a fixed amount of work with
 * the timer armed: a storm (1000 signals in a row that find the loop
 * where the previous one left it) fails at once, and the work must end
 * with the signal seen at least once. */
#include "next.h"

#include <sys/time.h>

/* The work: a counter the main loop advances. */
static volatile unsigned long progress;
static volatile unsigned long hits, stuck, last_seen;

static void on_signal(int sig)
{
	(void)sig;
	hits++;
	/* Signals in a row that found the loop where the last one did. */
	if (hits > 1 && progress == last_seen)
		stuck++;
	else
		stuck = 0;
	last_seen = progress;
	/* A storm: give up at once rather than spin until the runner's
	 * timeout (no progress between 1000 signals in a row). */
	if (stuck >= 1000) {
		static const char msg[] = "  check failed: a signal on every return to user mode, no progress\n";

		if (write(2, msg, sizeof msg - 1) < 0) {
		}
		_exit(1);
	}
}

static void run(int which, int sig)
{
	struct itimerval it = { { 0, 1 }, { 0, 1 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	unsigned long i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	CHECK_EQ(sigaction(sig, &sa, NULL), 0);
	hits = stuck = 0;
	last_seen = progress = 0;
	CHECK_EQ(setitimer(which, &it, NULL), 0);
	/* Some tens of milliseconds of CPU time natively, more under TCG:
	 * several ticks either way. */
	for (i = 0; i < 50000000UL; i++)
		progress = i + 1;
	CHECK_EQ(setitimer(which, &off, NULL), 0);
	CHECK(hits > 0);
	signal(sig, SIG_IGN);
}

int main(void)
{
	run(ITIMER_PROF, SIGPROF);
	run(ITIMER_VIRTUAL, SIGVTALRM);
	DONE();
}
