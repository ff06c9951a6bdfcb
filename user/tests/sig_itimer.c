/* setitimer/getitimer ITIMER_REAL: one-shot and periodic SIGALRM, the old
 * value returned, the remaining time counting down, sharing with alarm,
 * not inherited by fork, and the error cases. */
#include "next.h"

static volatile int rang;

static void on_alrm(int s)
{
	(void)s;
	rang++;
}

static long long tv_us(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000LL + tv->tv_usec;
}

int main(void)
{
	struct itimerval it, old, cur;
	sigset_t empty;
	long long t0;
	pid_t pid;

	/* Disarmed at start. */
	CHECK_EQ(getitimer(ITIMER_REAL, &cur), 0);
	CHECK_EQ(tv_us(&cur.it_value), 0);
	CHECK_EQ(tv_us(&cur.it_interval), 0);

	/* Arm for 100 s; the remaining time is <= 100 s and > 99 s. */
	memset(&it, 0, sizeof it);
	it.it_value.tv_sec = 100;
	CHECK_EQ(setitimer(ITIMER_REAL, &it, &old), 0);
	CHECK_EQ(tv_us(&old.it_value), 0);
	CHECK_EQ(getitimer(ITIMER_REAL, &cur), 0);
	CHECK(tv_us(&cur.it_value) <= 100000000LL);
	CHECK(tv_us(&cur.it_value) > 99000000LL);
	/* alarm sees the same timer. */
	{
		unsigned left = alarm(0);

		CHECK(left >= 99 && left <= 100);
	}
	CHECK_EQ(getitimer(ITIMER_REAL, &cur), 0);
	CHECK_EQ(tv_us(&cur.it_value), 0);

	/* Not inherited by fork. */
	it.it_value.tv_sec = 100;
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	pid = fork();
	if (pid == 0) {
		getitimer(ITIMER_REAL, &cur);
		_exit(tv_us(&cur.it_value) == 0 ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));

	/* Periodic: 5 expiries of 20 ms take at least 100 ms. */
	CHECK_EQ(t_sigaction(SIGALRM, on_alrm, SA_RESTART), 0);
	t_block(SIGALRM, SIG_BLOCK);
	it.it_value.tv_sec = 0;
	it.it_value.tv_usec = 20000;
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_usec = 20000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(setitimer(ITIMER_REAL, &it, &old), 0);
	/* The old value was the 100 s one-shot. */
	CHECK(tv_us(&old.it_value) > 99000000LL);
	CHECK_EQ(tv_us(&old.it_interval), 0);
	sigemptyset(&empty);
	while (rang < 5)
		sigsuspend(&empty);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 100000000LL - 1000000LL);
	/* Still armed, with the interval. */
	CHECK_EQ(getitimer(ITIMER_REAL, &cur), 0);
	CHECK_EQ(tv_us(&cur.it_interval), 20000);
	CHECK(tv_us(&cur.it_value) <= 20000);
	/* Disarm. */
	memset(&it, 0, sizeof it);
	CHECK_EQ(setitimer(ITIMER_REAL, &it, &old), 0);
	CHECK_EQ(tv_us(&old.it_interval), 20000);
	CHECK_EQ(getitimer(ITIMER_REAL, &cur), 0);
	CHECK_EQ(tv_us(&cur.it_value), 0);
	t_block(SIGALRM, SIG_UNBLOCK);
	/* A possibly pending last SIGALRM was delivered now; no more come. */
	rang = 0;
	t_msleep(60);
	CHECK_EQ(rang, 0);

	/* One-shot 30 ms. */
	it.it_value.tv_usec = 30000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	while (!rang)
		pause();
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
	CHECK_EQ(getitimer(ITIMER_REAL, &cur), 0);
	CHECK_EQ(tv_us(&cur.it_value), 0);

	/* Errors. */
	it.it_value.tv_sec = 0;
	it.it_value.tv_usec = 1000000;
	CHECK_ERR(setitimer(ITIMER_REAL, &it, NULL), EINVAL);
	it.it_value.tv_usec = -1;
	CHECK_ERR(setitimer(ITIMER_REAL, &it, NULL), EINVAL);
	it.it_value.tv_usec = 0;
	CHECK_ERR(setitimer(99, &it, NULL), EINVAL);
	CHECK_ERR(getitimer(99, &cur), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, BAD_PTR2, NULL), EFAULT);
	DONE();
}
