/* clock_gettime/clock_getres for every clock the issue names (REALTIME,
 * MONOTONIC, BOOTTIME, PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID) plus the
 * coarse and raw ones: valid timespecs, monotonic clocks never go back,
 * BOOTTIME >= MONOTONIC, REALTIME near time(), resolutions, EINVAL and
 * EFAULT. */
#include "next.h"

int main(void)
{
	static const clockid_t clocks[] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
		CLOCK_MONOTONIC_COARSE,
	};
	struct timespec ts, res, a, b;
	unsigned i;
	int k;

	for (i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
		CHECK_EQ(clock_gettime(clocks[i], &ts), 0);
		CHECK(ts.tv_sec >= 0);
		CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
		CHECK_EQ(syscall(SYS_clock_gettime, clocks[i], &ts), 0);
		CHECK_EQ(clock_getres(clocks[i], &res), 0);
		CHECK(res.tv_sec == 0 && res.tv_nsec > 0);
		CHECK_EQ(syscall(SYS_clock_getres, clocks[i], NULL), 0);
	}
	/* High resolution for the main clocks. */
	CHECK_EQ(clock_getres(CLOCK_MONOTONIC, &res), 0);
	CHECK(res.tv_nsec <= 1000000);

	/* Monotonic clocks never go backwards. */
	for (k = 0; k < 10000; k++) {
		CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a), 0);
		CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b), 0);
		if (t_ts_ns(&b) < t_ts_ns(&a)) {
			CHECK(!"CLOCK_MONOTONIC went backwards");
			break;
		}
	}
	/* MONOTONIC advances across a sleep. */
	clock_gettime(CLOCK_MONOTONIC, &a);
	t_msleep(20);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(t_ts_ns(&b) - t_ts_ns(&a) >= 20000000LL);
	/* BOOTTIME counts at least what MONOTONIC counts. */
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_BOOTTIME, &b);
	CHECK(t_ts_ns(&b) >= t_ts_ns(&a));
	/* REALTIME agrees with time() and gettimeofday(). */
	{
		struct timeval tv;
		time_t t0 = time(NULL);

		clock_gettime(CLOCK_REALTIME, &ts);
		gettimeofday(&tv, NULL);
		CHECK(ts.tv_sec >= t0 && ts.tv_sec <= t0 + 1);
		CHECK(tv.tv_sec >= ts.tv_sec && tv.tv_sec <= ts.tv_sec + 1);
		/* A sane wall clock (after 2020, from the RTC). */
		CHECK(ts.tv_sec > 1577836800);
	}

	/* Errors. */
	CHECK_ERR(syscall(SYS_clock_gettime, 100, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, -1, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_getres, 100, &res), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, BAD_PTR2), EFAULT);
	DONE();
}
