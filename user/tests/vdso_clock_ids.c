/*
 * Every clock id through the C library's clock_gettime (the vDSO where
 * there is one) against the system call: the clocks the vDSO answers
 * itself (MONOTONIC first, then the rest of the monotonic and the wall
 * clocks, each through its own path) never go back when interleaved with
 * the system call and stay within a second of it; the ids it passes on
 * (the CPU-time clocks, a process's CPU clock from clock_getcpuclockid,
 * ids it does not know, negative ids) give the system call's result and
 * errno.
 */
#include "t.h"

#include <sys/syscall.h>

static long long ns(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

/* The vDSO and the system call agree on `clock`, interleaved. */
static void agree(clockid_t clock)
{
	for (int i = 0; i < 100; i++) {
		struct timespec a, b, d;
		CHECK_EQ(clock_gettime(clock, &a), 0);
		CHECK_EQ(syscall(SYS_clock_gettime, clock, &b), 0);
		CHECK_EQ(clock_gettime(clock, &d), 0);
		CHECK(a.tv_nsec >= 0 && a.tv_nsec < 1000000000);
		CHECK(d.tv_nsec >= 0 && d.tv_nsec < 1000000000);
		CHECK(ns(&a) <= ns(&d));
		/* A coarse clock may lag the fine one by a tick, on either side. */
		CHECK(ns(&b) - ns(&a) > -1000000000LL && ns(&b) - ns(&a) < 1000000000LL);
		CHECK(ns(&d) - ns(&b) > -1000000000LL && ns(&d) - ns(&b) < 1000000000LL);
	}
}

int main(void)
{
	static const clockid_t answered[] = {
		CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
		CLOCK_REALTIME, CLOCK_REALTIME_COARSE, CLOCK_TAI,
	};
	for (unsigned c = 0; c < sizeof answered / sizeof answered[0]; c++)
		agree(answered[c]);

	/* The fine monotonic clock is not behind BOOTTIME read after it
	 * (no suspend here), and REALTIME is far ahead of both. */
	struct timespec m, bt, rt;
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &m), 0);
	CHECK_EQ(clock_gettime(CLOCK_BOOTTIME, &bt), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt), 0);
	CHECK(ns(&m) <= ns(&bt));
	CHECK(rt.tv_sec > 1000000000);

	/* Passed on to the system call. */
	struct timespec t;
	CHECK_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t), 0);
	CHECK(t.tv_nsec >= 0 && t.tv_nsec < 1000000000);
	CHECK_EQ(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t), 0);
	clockid_t cpu;
	CHECK_EQ(clock_getcpuclockid(0, &cpu), 0);
	CHECK(cpu < 0);
	CHECK_EQ(clock_gettime(cpu, &t), 0);
	CHECK(t.tv_nsec >= 0 && t.tv_nsec < 1000000000);
	CHECK_ERR(clock_gettime(10, &t), EINVAL);   /* CLOCK_SGI_CYCLE: gone */
	CHECK_ERR(clock_gettime(32, &t), EINVAL);
	CHECK_ERR(clock_gettime(99, &t), EINVAL);
	CHECK_ERR(clock_gettime(-9, &t), EINVAL);   /* a CPU-clock id of type 7: no such type */
	DONE();
}
