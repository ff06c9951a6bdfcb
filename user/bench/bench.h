/*
 * bench.h - timing and reporting helpers for the Trellis benchmarks.
 *
 * Method (after LMbench): a benchmark is a function that performs `n`
 * iterations of one operation.  The harness warms it up, doubles `n` until
 * one run takes at least TARGET_NS of CLOCK_MONOTONIC time, then takes the
 * median of REPS runs.  In smoke mode it runs one iteration once.
 *
 * Output, one line each, on fd 1 (write(2), no stdio buffering):
 *   BENCH <name> <value> <unit>      unit is ns (latency) or MB/s (bandwidth)
 *   BENCH <name> missing <reason>    a system call or device does not exist
 *   BENCH <name> error <reason>      anything else went wrong (exit status 1)
 */
#ifndef TRELLIS_BENCH_H
#define TRELLIS_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TARGET_NS 50000000.0 /* one measured run: at least 50 ms */
#define REPS 7
#define MAX_ITERS (1L << 24)

static inline void b_out(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

__attribute__((format(printf, 1, 2)))
static inline void b_printf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 1)
		n = (int)sizeof buf - 1;
	if (n > 0)
		b_out(buf, (size_t)n);
}

/*
 * Profiling marks (`lmb -p`): long NOPs with a magic displacement
 * (`0f 1f 80 <imm32>`) that the QEMU plugin user/bench/prof/insncount.c
 * recognises at translation time.  They do nothing in the guest.  The
 * inner window holds the measured runs (not warm-up or calibration); the
 * outer window one whole row.
 */
#define B_MARK_INNER_ON 0x7b5e1a01
#define B_MARK_INNER_OFF 0x7b5e1a02
#define B_MARK_OUTER_ON 0x7b5e1a03
#define B_MARK_OUTER_OFF 0x7b5e1a04
#define B_STR2(x) #x
#define B_STR(x) B_STR2(x)
#define B_MARK(m) __asm__ volatile("nopl " B_STR(m) "(%%rax)" ::: "memory")

static int b_profile;	      /* -p given */
static int b_prof_window;     /* inside the measured repetitions */
static long b_prof_iters;     /* iterations run inside the inner window */

static inline void b_inner_on(void)
{
	if (b_profile)
		B_MARK(B_MARK_INNER_ON);
}

static inline void b_inner_off(long iters)
{
	if (b_profile) {
		B_MARK(B_MARK_INNER_OFF);
		b_prof_iters += iters;
	}
}

/*
 * A body that times only part of each iteration (set-up excluded) stores
 * its own total here; b_time uses it instead of the whole call.
 */
static double b_self_ns = -1;

static inline double b_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Why a benchmark could not run.  `missing` means the kernel lacks what it
 * needs (ENOSYS, an unsupported socket family, an absent device); the
 * harness reports it as such rather than as a failure.
 */
struct b_status {
	int failed;
	int missing;
	char why[200];
};

static struct b_status b_status;

__attribute__((format(printf, 2, 3)))
static inline int b_fail(int missing, const char *fmt, ...)
{
	if (b_status.failed)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b_status.why, sizeof b_status.why, fmt, ap);
	va_end(ap);
	b_status.failed = 1;
	b_status.missing = missing;
	return -1;
}

/* Whether errno says the kernel lacks the facility rather than failed. */
static inline int b_errno_missing(int e)
{
	return e == ENOSYS || e == EAFNOSUPPORT || e == EPROTONOSUPPORT ||
	       e == ENODEV || e == ENXIO || e == EOPNOTSUPP;
}

/* Records a failed system call `what`; returns -1. */
static inline int b_sysfail(const char *what)
{
	int e = errno;
	return b_fail(b_errno_missing(e), "%s: %s", what, strerror(e));
}

/* Like b_sysfail, but a missing file also counts as missing (devices). */
static inline int b_openfail(const char *path)
{
	int e = errno;
	return b_fail(b_errno_missing(e) || e == ENOENT, "open %s: %s", path,
		      strerror(e));
}

/* A benchmark body: run `n` iterations; 0 on success, -1 after b_fail. */
typedef int (*b_body)(long n, void *arg);

static int b_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Time one run of `n` iterations; < 0 on failure. */
static inline double b_time(b_body body, void *arg, long n)
{
	b_self_ns = -1;
	int mark = b_prof_window;
	if (mark)
		b_inner_on();
	double t0 = b_now_ns();
	int r = body(n, arg);
	double t = b_now_ns() - t0;
	if (mark)
		b_inner_off(n);
	if (r < 0)
		return -1;
	if (b_self_ns >= 0)
		t = b_self_ns;
	return t > 0 ? t : 0.5; /* a coarse clock may not move in one op */
}

/*
 * Measures `body`: nanoseconds per iteration (median of REPS runs), or a
 * negative value after b_fail.  `max_n` bounds the iteration count (for
 * bodies whose iterations use memory).
 */
static inline double b_measure(b_body body, void *arg, int smoke, long max_n)
{
	if (smoke)
		return b_time(body, arg, 1);
	if (max_n <= 0 || max_n > MAX_ITERS)
		max_n = MAX_ITERS;
	/*
	 * Profiling (-p) needs instructions per iteration, not a stable
	 * time: a tenth of the run length and 3 repetitions keep the
	 * plugin-slowed boot short.
	 */
	const double target = b_profile ? TARGET_NS / 10 : TARGET_NS;
	const int reps = b_profile ? 3 : REPS;
	if (b_time(body, arg, 1) < 0) /* warm-up */
		return -1;
	long n = 1;
	for (;;) {
		double t = b_time(body, arg, n);
		if (t < 0)
			return -1;
		if (t >= target || n >= max_n)
			break;
		/* Jump close to the target once the run is long enough to trust. */
		long next = t > target / 64 ? (long)(n * (target * 1.2 / t)) + 1 : n * 2;
		n = next > max_n ? max_n : next;
	}
	double per[REPS];
	for (int i = 0; i < reps; i++) {
		b_prof_window = 1;
		double t = b_time(body, arg, n);
		b_prof_window = 0;
		if (t < 0)
			return -1;
		per[i] = t / (double)n;
	}
	qsort(per, (size_t)reps, sizeof per[0], b_cmp);
	return per[reps / 2];
}

#endif
