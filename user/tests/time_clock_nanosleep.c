/* clock_nanosleep: relative sleeps last at least as long as asked,
 * TIMER_ABSTIME deadlines (past: at once; future: not before) on
 * MONOTONIC and REALTIME, EINTR with the remaining time for relative
 * sleeps only, errors returned as values (EINVAL for bad times and for
 * THREAD_CPUTIME_ID, ENOTSUP for unknown clocks). */
#include "next.h"

static volatile int hits;

static void on_alrm(int s)
{
	(void)s;
	hits++;
}

int main(void)
{
	struct timespec req, rem, now;
	long long t0;

	/* Relative. */
	req.tv_sec = 0;
	req.tv_nsec = 50000000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), 0);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 50000000LL);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, 0, &req, NULL), 0);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 50000000LL);
	/* Zero: returns at once. */
	req.tv_nsec = 0;
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), 0);

	/* Absolute in the past. */
	req.tv_sec = 1;
	req.tv_nsec = 0;
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, NULL), 0);
	/* Absolute 40 ms ahead. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	req = now;
	req.tv_nsec += 40000000;
	if (req.tv_nsec >= 1000000000) {
		req.tv_sec++;
		req.tv_nsec -= 1000000000;
	}
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	CHECK(t_ts_ns(&now) >= t_ts_ns(&req));
	clock_gettime(CLOCK_REALTIME, &now);
	req = now;
	req.tv_nsec += 40000000;
	if (req.tv_nsec >= 1000000000) {
		req.tv_sec++;
		req.tv_nsec -= 1000000000;
	}
	CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &req, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &now);
	CHECK(t_ts_ns(&now) >= t_ts_ns(&req));

	/* Interrupted: EINTR, remaining time written (relative only). */
	t_sigaction(SIGALRM, on_alrm, SA_RESTART);
	alarm(1);
	req.tv_sec = 30;
	req.tv_nsec = 0;
	rem.tv_sec = rem.tv_nsec = -1;
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem), EINTR);
	CHECK(rem.tv_sec >= 27 && rem.tv_sec < 30);
	CHECK(rem.tv_nsec >= 0 && rem.tv_nsec < 1000000000);
	CHECK_EQ(hits, 1);
	/* Absolute: EINTR, rem untouched. */
	clock_gettime(CLOCK_MONOTONIC, &req);
	req.tv_sec += 30;
	alarm(1);
	rem.tv_sec = rem.tv_nsec = -1;
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, &rem), EINTR);
	CHECK_EQ(rem.tv_sec, -1);
	CHECK_EQ(hits, 2);

	/* Errors (returned, not via errno). */
	req.tv_sec = 0;
	req.tv_nsec = 1000000000;
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), EINVAL);
	req.tv_sec = -1;
	req.tv_nsec = 0;
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), EINVAL);
	req.tv_sec = 0;
	CHECK_EQ(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL), EINVAL);
	CHECK_EQ(clock_nanosleep(100, 0, &req, NULL), EINVAL);
	/* The raw syscall reports them through errno. */
	req.tv_nsec = -1;
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, BAD_PTR2, NULL),
		  EFAULT);
	DONE();
}
