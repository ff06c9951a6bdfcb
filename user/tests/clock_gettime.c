/* clock_gettime: REALTIME and MONOTONIC, monotonicity, EINVAL, EFAULT. */
#include "t.h"

static long cg_raw(clockid_t c, struct timespec *ts)
{
	return syscall(SYS_clock_gettime, c, ts);
}

static int ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

static int ts_valid(const struct timespec *t)
{
	return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000L;
}

int main(void)
{
	struct timespec a, b, prev;
	int i, backwards, invalid;

	/* REALTIME: valid timespec via libc and via the raw syscall. */
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &a), 0);
	CHECK(ts_valid(&a));
	CHECK_EQ(cg_raw(CLOCK_REALTIME, &b), 0);
	CHECK(ts_valid(&b));

	/* MONOTONIC: valid, and never goes backwards over 1000 calls. */
	CHECK_EQ(cg_raw(CLOCK_MONOTONIC, &prev), 0);
	CHECK(ts_valid(&prev));
	backwards = invalid = 0;
	for (i = 0; i < 1000; i++) {
		CHECK_EQ(cg_raw(CLOCK_MONOTONIC, &a), 0);
		if (!ts_valid(&a))
			invalid++;
		if (!ts_le(&prev, &a))
			backwards++;
		prev = a;
	}
	CHECK_EQ(backwards, 0);
	CHECK_EQ(invalid, 0);

	/* Same through libc (which may use a vDSO). */
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &prev), 0);
	backwards = 0;
	for (i = 0; i < 1000; i++) {
		CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &a), 0);
		if (!ts_le(&prev, &a))
			backwards++;
		prev = a;
	}
	CHECK_EQ(backwards, 0);

	/* Monotonic time advances across real work (a child's lifetime). */
	CHECK_EQ(cg_raw(CLOCK_MONOTONIC, &a), 0);
	{
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		CHECK(pid > 0);
		t_wait_ok(pid);
	}
	CHECK_EQ(cg_raw(CLOCK_MONOTONIC, &b), 0);
	CHECK(ts_le(&a, &b));

	/* EINVAL: unknown clock ids. */
	CHECK_ERR(cg_raw(12345, &a), EINVAL);
	CHECK_ERR(cg_raw(100, &a), EINVAL);
	CHECK_ERR(clock_gettime(12345, &a), EINVAL);

	/* EFAULT: result pointer outside the address space (raw syscall;
	 * a vDSO would fault in user space instead). */
	CHECK_ERR(cg_raw(CLOCK_REALTIME, BAD_PTR), EFAULT);
	CHECK_ERR(cg_raw(CLOCK_MONOTONIC, BAD_PTR2), EFAULT);

	DONE();
}
