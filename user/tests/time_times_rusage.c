/* times() and getrusage(): user time accounting follows busy work (in
 * clock ticks and timevals), children's time appears after they are
 * reaped, RUSAGE_THREAD, the return value of times() moves with elapsed
 * time, sysconf(_SC_CLK_TCK) is 100. */
#include "next.h"
#include <sys/times.h>

static long long tv_ns(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000000LL + tv->tv_usec * 1000LL;
}

int main(void)
{
	struct tms t0, t1;
	struct rusage r0, r1;
	clock_t c0, c1;
	pid_t pid;
	long tck = sysconf(_SC_CLK_TCK);

	CHECK_EQ(tck, 100);
	c0 = times(&t0);
	CHECK(c0 != (clock_t)-1);
	CHECK_EQ(getrusage(RUSAGE_SELF, &r0), 0);
	CHECK(t_burn_cpu(300000000LL));
	c1 = times(&t1);
	CHECK_EQ(getrusage(RUSAGE_SELF, &r1), 0);
	/* 0.3 s is 30 ticks; allow for tick boundaries. */
	CHECK(t1.tms_utime + t1.tms_stime - t0.tms_utime - t0.tms_stime >= 20);
	CHECK(tv_ns(&r1.ru_utime) + tv_ns(&r1.ru_stime) - tv_ns(&r0.ru_utime) -
		      tv_ns(&r0.ru_stime) >=
	      250000000LL);
	CHECK(tv_ns(&r1.ru_utime) - tv_ns(&r0.ru_utime) >= 200000000LL);
	CHECK(c1 - c0 >= 20);

	/* RUSAGE_THREAD: this thread's part. */
	CHECK_EQ(getrusage(RUSAGE_THREAD, &r1), 0);
	CHECK(tv_ns(&r1.ru_utime) >= 200000000LL);

	/* Children: counted after reaping. */
	CHECK_EQ(times(&t0) != (clock_t)-1, 1);
	pid = fork();
	if (pid == 0)
		_exit(t_burn_cpu(300000000LL) ? 0 : 1);
	CHECK(t_wait_ok(pid));
	times(&t1);
	CHECK(t1.tms_cutime + t1.tms_cstime - t0.tms_cutime - t0.tms_cstime >= 20);
	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &r1), 0);
	CHECK(tv_ns(&r1.ru_utime) + tv_ns(&r1.ru_stime) >= 250000000LL);

	/* Page faults are counted. */
	{
		struct rusage a, b;
		size_t sz = 4 << 20, k;
		char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		getrusage(RUSAGE_SELF, &a);
		for (k = 0; k < sz; k += 4096)
			m[k] = 1;
		getrusage(RUSAGE_SELF, &b);
		CHECK(b.ru_minflt - a.ru_minflt >= 500);
		munmap(m, sz);
	}
	CHECK_ERR(syscall(SYS_times, BAD_PTR2), EFAULT);
	CHECK_EQ(syscall(SYS_times, NULL) > 0, 1);
	DONE();
}
