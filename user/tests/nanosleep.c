/*
 * nanosleep (the raw syscall: musl's nanosleep() uses clock_nanosleep):
 * sleeps at least the requested time (never checked against an upper bound);
 * EINVAL for out-of-range values; EFAULT.
 */
#include "t.h"

static long ns_raw(const struct timespec *req, struct timespec *rem)
{
	return syscall(SYS_nanosleep, req, rem);
}

static long long elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL +
	       (b->tv_nsec - a->tv_nsec);
}

int main(void)
{
	struct timespec req, rem, t0, t1;

	/* 20 ms: elapsed monotonic time is at least that (no upper bound). */
	req.tv_sec = 0;
	req.tv_nsec = 20000000L;
	rem.tv_sec = 77;
	rem.tv_nsec = 77;
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t0), 0);
	CHECK_EQ(ns_raw(&req, &rem), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t1), 0);
	CHECK(elapsed_ns(&t0, &t1) >= 20000000LL);

	/* 1.1 s: the seconds field is honoured too. */
	req.tv_sec = 1;
	req.tv_nsec = 100000000L;
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t0), 0);
	CHECK_EQ(ns_raw(&req, NULL), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t1), 0);
	CHECK(elapsed_ns(&t0, &t1) >= 1100000000LL);

	/* Zero-length sleep succeeds. */
	req.tv_sec = 0;
	req.tv_nsec = 0;
	CHECK_EQ(ns_raw(&req, NULL), 0);

	/* A 1 ns request still returns 0 and time does not run backwards. */
	req.tv_sec = 0;
	req.tv_nsec = 1;
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t0), 0);
	CHECK_EQ(ns_raw(&req, &rem), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t1), 0);
	CHECK(elapsed_ns(&t0, &t1) >= 1);

	/* The request struct is not modified. */
	CHECK_EQ(req.tv_sec, 0);
	CHECK_EQ(req.tv_nsec, 1);

	/* EINVAL: tv_nsec out of range, negative tv_sec. */
	req.tv_sec = 0;
	req.tv_nsec = 1000000000L;
	CHECK_ERR(ns_raw(&req, NULL), EINVAL);
	req.tv_nsec = 999999999L + 1000;
	CHECK_ERR(ns_raw(&req, NULL), EINVAL);
	req.tv_nsec = -1;
	CHECK_ERR(ns_raw(&req, NULL), EINVAL);
	req.tv_sec = -1;
	req.tv_nsec = 0;
	CHECK_ERR(ns_raw(&req, NULL), EINVAL);

	/* EFAULT: request pointer unreadable. */
	CHECK_ERR(ns_raw(BAD_PTR, NULL), EFAULT);
	CHECK_ERR(ns_raw(BAD_PTR2, NULL), EFAULT);

	DONE();
}
