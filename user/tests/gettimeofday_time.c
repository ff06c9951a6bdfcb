/* gettimeofday and time (raw syscalls): agree with CLOCK_REALTIME; EFAULT. */
#include "t.h"
#include <sys/time.h>

static long long us_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000 + t->tv_nsec / 1000;
}

int main(void)
{
	struct timespec t1, t2;
	struct timeval tv;
	struct timezone tz;
	time_t tt, tr;
	long long g;

	/* gettimeofday lies between two CLOCK_REALTIME readings. */
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_REALTIME, &t1), 0);
	CHECK_EQ(syscall(SYS_gettimeofday, &tv, NULL), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_REALTIME, &t2), 0);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	g = (long long)tv.tv_sec * 1000000 + tv.tv_usec;
	CHECK(us_of(&t1) <= g);
	CHECK(g <= us_of(&t2));

	/* Both pointers may be NULL; a timezone pointer is accepted. */
	CHECK_EQ(syscall(SYS_gettimeofday, NULL, NULL), 0);
	CHECK_EQ(syscall(SYS_gettimeofday, &tv, &tz), 0);
	CHECK_EQ(gettimeofday(&tv, NULL), 0);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);

	/* time: return value and stored value agree, and match REALTIME
	 * seconds (time may lag the fine clock by at most one tick). */
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_REALTIME, &t1), 0);
	tr = (time_t)syscall(SYS_time, &tt);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_REALTIME, &t2), 0);
	CHECK_EQ(tr, tt);
	CHECK(tr >= t1.tv_sec - 1);
	CHECK(tr <= t2.tv_sec);
	tr = (time_t)syscall(SYS_time, NULL);
	CHECK(tr >= t1.tv_sec - 1);
	CHECK(time(NULL) >= tr);

	/* EFAULT on a bad result pointer. */
	CHECK_ERR(syscall(SYS_gettimeofday, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_gettimeofday, BAD_PTR2, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_gettimeofday, &tv, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_time, BAD_PTR2), EFAULT);

	DONE();
}
