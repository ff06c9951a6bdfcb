/* CPU-time clocks: PROCESS_CPUTIME_ID and THREAD_CPUTIME_ID increase with
 * busy work and barely with sleep; the process clock includes other
 * threads' time; pthread_getcpuclockid and clock_getcpuclockid of another
 * process (ours via the child) work. */
#include "next.h"

static void *burner(void *arg)
{
	(void)arg;
	t_burn_cpu(150000000LL);
	return NULL;
}

int main(void)
{
	long long p0, p1, t0, t1, w0;
	pthread_t th;
	clockid_t cid;
	struct timespec ts;

	p0 = t_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(t_burn_cpu(100000000LL));
	/* Thread clock first: the process clock read after it is larger. */
	t1 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	p1 = t_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	CHECK(t1 - t0 >= 100000000LL);
	CHECK(p1 - p0 >= 100000000LL);
	CHECK(p1 >= t1);

	/* Sleeping costs (almost) no CPU time: far less than the sleep. */
	t0 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	w0 = t_now_ns(CLOCK_MONOTONIC);
	t_msleep(200);
	t1 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - w0 >= 200000000LL);
	CHECK(t1 - t0 < 100000000LL);

	/* Another thread's work shows in the process clock, not in ours. */
	p0 = t_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK_EQ(pthread_create(&th, NULL, burner, NULL), 0);
	CHECK_EQ(pthread_getcpuclockid(th, &cid), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	p1 = t_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t1 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(p1 - p0 >= 150000000LL);
	CHECK(t1 - t0 < p1 - p0);

	/* A running thread's clock via its clockid. */
	CHECK_EQ(pthread_getcpuclockid(pthread_self(), &cid), 0);
	CHECK_EQ(clock_gettime(cid, &ts), 0);
	CHECK(t_ts_ns(&ts) > 0);

	/* Another process's CPU clock. */
	{
		int p[2];
		pid_t pid;
		char c;

		CHECK_EQ(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			t_burn_cpu(100000000LL);
			(void)!write(p[1], "b", 1);
			pause();
			_exit(0);
		}
		CHECK_EQ(read(p[0], &c, 1), 1);
		CHECK_EQ(clock_getcpuclockid(pid, &cid), 0);
		CHECK_EQ(clock_gettime(cid, &ts), 0);
		CHECK(t_ts_ns(&ts) >= 100000000LL);
		kill(pid, SIGKILL);
		t_wait(pid);
		close(p[0]);
		close(p[1]);
	}
	DONE();
}
