/* ITIMER_VIRTUAL and ITIMER_PROF count the process's CPU time (user, and
 * user plus system, of all its threads): SIGVTALRM / SIGPROF come only
 * once that much CPU time has been used (sleeping does not count), a
 * periodic timer re-arms, getitimer counts down and setitimer returns the
 * old value, the default action kills, and a fork child starts without
 * them. */
#include "next.h"
#include <pthread.h>
#include <sys/time.h>

#define MS 1000000LL

static volatile int vt, prof;
static volatile long long vt_cpu;

static void on_vtalrm(int s)
{
	(void)s;
	vt++;
	vt_cpu = t_now_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static void on_prof(int s)
{
	(void)s;
	prof++;
}

static long long tv_ns(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000000LL + tv->tv_usec * 1000LL;
}

static int set(int which, long long value_ms, long long interval_ms, struct itimerval *old)
{
	struct itimerval it;

	it.it_value.tv_sec = value_ms / 1000;
	it.it_value.tv_usec = value_ms % 1000 * 1000;
	it.it_interval.tv_sec = interval_ms / 1000;
	it.it_interval.tv_usec = interval_ms % 1000 * 1000;
	return setitimer(which, &it, old);
}

/* Burns CPU until *flag reaches n (bounded by CPU time, in case the
 * timer never fires). Returns 1 if it did. */
static int burn_until(volatile int *flag, int n)
{
	int i;

	for (i = 0; i < 200 && *flag < n; i++)
		t_burn_cpu(10 * MS);
	return *flag >= n;
}

static volatile int stop;

static void *burner(void *arg)
{
	(void)arg;
	while (!stop && prof == 0)
		t_burn_cpu(5 * MS);
	return NULL;
}

int main(void)
{
	struct itimerval cur, old;
	pthread_t th;
	pid_t pid;
	int st;

	signal(SIGVTALRM, on_vtalrm);
	signal(SIGPROF, on_prof);
	CHECK_EQ(getitimer(ITIMER_VIRTUAL, &cur), 0);
	CHECK_EQ(tv_ns(&cur.it_value), 0);
	CHECK_EQ(getitimer(ITIMER_PROF, &cur), 0);
	CHECK_EQ(tv_ns(&cur.it_value), 0);

	/* One-shot ITIMER_VIRTUAL: not before 50 ms of CPU time. */
	CHECK_EQ(set(ITIMER_VIRTUAL, 50, 0, NULL), 0);
	CHECK_EQ(getitimer(ITIMER_VIRTUAL, &cur), 0);
	CHECK(tv_ns(&cur.it_value) > 0);
	CHECK_EQ(tv_ns(&cur.it_interval), 0);
	CHECK(burn_until(&vt, 1));
	/* Linux charges user time to the itimers a whole tick at a time (the
	 * task running at the tick gets the tick), while the process CPU clock
	 * is exact: on a loaded host the timer can fire when the exact figure
	 * is still short of 50 ms. Trellis charges both from the same exact
	 * count. */
	CHECK(vt_cpu >= (t_is_trellis() ? 50 * MS : 10 * MS));
	CHECK_EQ(getitimer(ITIMER_VIRTUAL, &cur), 0);
	CHECK_EQ(tv_ns(&cur.it_value), 0);
	CHECK_EQ(vt, 1);

	/* Sleeping uses no user time: it does not fire, nor count down much. */
	CHECK_EQ(set(ITIMER_VIRTUAL, 2000, 0, NULL), 0);
	t_msleep(100);
	CHECK_EQ(vt, 1);
	CHECK_EQ(getitimer(ITIMER_VIRTUAL, &cur), 0);
	CHECK(tv_ns(&cur.it_value) > 1500 * MS);
	/* setitimer returns what was left, and 0 disarms. */
	CHECK_EQ(set(ITIMER_VIRTUAL, 0, 0, &old), 0);
	CHECK(tv_ns(&old.it_value) > 1500 * MS);
	CHECK_EQ(getitimer(ITIMER_VIRTUAL, &cur), 0);
	CHECK_EQ(tv_ns(&cur.it_value), 0);

	/* Periodic ITIMER_PROF. */
	CHECK_EQ(set(ITIMER_PROF, 10, 10, NULL), 0);
	CHECK(burn_until(&prof, 3));
	CHECK_EQ(set(ITIMER_PROF, 0, 0, &old), 0);
	CHECK_EQ(tv_ns(&old.it_interval), 10 * MS);
	prof = 0;

	/* Another thread's CPU time counts for the process. */
	CHECK_EQ(set(ITIMER_PROF, 30, 0, NULL), 0);
	CHECK_EQ(pthread_create(&th, NULL, burner, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(prof, 1);
	stop = 1;

	/* Not inherited by a fork child. */
	CHECK_EQ(set(ITIMER_VIRTUAL, 5000, 0, NULL), 0);
	pid = fork();
	if (pid == 0) {
		getitimer(ITIMER_VIRTUAL, &cur);
		_exit(tv_ns(&cur.it_value) == 0 ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));
	CHECK_EQ(set(ITIMER_VIRTUAL, 0, 0, NULL), 0);

	/* SIGPROF kills by default. */
	pid = fork();
	if (pid == 0) {
		signal(SIGPROF, SIG_DFL);
		set(ITIMER_PROF, 20, 0, NULL);
		for (;;)
			t_burn_cpu(10 * MS);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGPROF);

	/* Bad arguments. */
	cur.it_value.tv_sec = 0;
	cur.it_value.tv_usec = 1000000;
	cur.it_interval.tv_sec = 0;
	cur.it_interval.tv_usec = 0;
	CHECK_ERR(setitimer(ITIMER_PROF, &cur, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_setitimer, 3, &cur, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, 3, &cur), EINVAL);
	DONE();
}
