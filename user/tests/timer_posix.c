/* POSIX timers (timer_create(2), timer_settime(2), timer_gettime(2),
 * timer_getoverrun(2), timer_delete(2)), through raw syscalls so that
 * both libcs test the kernel: without a sigevent the timer sends SIGALRM
 * with the timer id as si_value; SIGEV_SIGNAL carries si_code SI_TIMER,
 * si_timerid and sigev_value; a one-shot timer disarms itself; a periodic
 * timer whose signal stays blocked queues it once and counts the missed
 * expirations in si_overrun (= timer_getoverrun after delivery);
 * TIMER_ABSTIME, including a time already past; SIGEV_NONE counts down
 * silently; SIGEV_THREAD_ID targets one thread; timers are not inherited
 * by fork; and the errors (EINVAL, EFAULT). */
#include "next.h"

struct ksigevent {
	union sigval value;
	int signo;
	int notify;
	int tid;
	int pad[11];
};

#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID 4
#endif

static long tcreate(clockid_t c, struct ksigevent *ev, int *id)
{
	return syscall(SYS_timer_create, c, ev, id);
}

static long tset(int id, int flags, long long val_ns, long long int_ns,
		 struct itimerspec *old)
{
	struct itimerspec its;

	its.it_value.tv_sec = val_ns / 1000000000LL;
	its.it_value.tv_nsec = val_ns % 1000000000LL;
	its.it_interval.tv_sec = int_ns / 1000000000LL;
	its.it_interval.tv_nsec = int_ns % 1000000000LL;
	return syscall(SYS_timer_settime, id, flags, &its, old);
}

static long tget(int id, struct itimerspec *cur)
{
	return syscall(SYS_timer_gettime, id, cur);
}

static long tdel(int id)
{
	return syscall(SYS_timer_delete, id);
}

/* Waits up to `ms` for `sig` (blocked by the caller). */
static int wait_sig(int sig, siginfo_t *si, long ms)
{
	sigset_t set;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	sigemptyset(&set);
	sigaddset(&set, sig);
	return (int)syscall(SYS_rt_sigtimedwait, &set, si, &ts, 8);
}

static volatile long thread_tid;
static volatile int thread_got;

static void *waiter(void *arg)
{
	siginfo_t si;

	(void)arg;
	thread_tid = t_gettid();
	if (wait_sig(SIGRTMIN + 2, &si, 10000) == SIGRTMIN + 2 &&
	    si.si_code == SI_TIMER)
		thread_got = 1;
	return NULL;
}

int main(void)
{
	struct ksigevent ev;
	struct itimerspec cur;
	siginfo_t si;
	int id, id2, st;
	pid_t pid;
	pthread_t th;

	t_block(SIGALRM, SIG_BLOCK);
	t_block(SIGRTMIN + 1, SIG_BLOCK);
	t_block(SIGRTMIN + 2, SIG_BLOCK);

	/* No sigevent: SIGALRM, si_value is the timer id. */
	CHECK_EQ(tcreate(CLOCK_MONOTONIC, NULL, &id), 0);
	CHECK_EQ(tget(id, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);
	CHECK_EQ(tset(id, 0, 20000000, 0, NULL), 0);
	memset(&si, 0, sizeof si);
	CHECK_EQ(wait_sig(SIGALRM, &si, 5000), SIGALRM);
	CHECK_EQ(si.si_code, SI_TIMER);
	CHECK_EQ(si.si_value.sival_int, id);
	CHECK_EQ(si.si_overrun, 0);
	/* One-shot: disarmed after firing. */
	CHECK_EQ(tget(id, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);
	CHECK_EQ(tdel(id), 0);
	CHECK_ERR(tdel(id), EINVAL);

	/* SIGEV_SIGNAL with a value; gettime while armed. */
	memset(&ev, 0, sizeof ev);
	ev.notify = SIGEV_SIGNAL;
	ev.signo = SIGRTMIN + 1;
	ev.value.sival_ptr = &ev;
	CHECK_EQ(tcreate(CLOCK_REALTIME, &ev, &id), 0);
	CHECK_EQ(tset(id, 0, 3000000000LL, 1500000000LL, NULL), 0);
	CHECK_EQ(tget(id, &cur), 0);
	CHECK(cur.it_value.tv_sec <= 2 || (cur.it_value.tv_sec == 3 &&
					   cur.it_value.tv_nsec == 0));
	CHECK(cur.it_value.tv_sec >= 1);
	CHECK_EQ(cur.it_interval.tv_sec, 1);
	CHECK_EQ(cur.it_interval.tv_nsec, 500000000);
	/* Re-arm to fire soon; the old setting comes back. */
	CHECK_EQ(tset(id, 0, 10000000, 0, &cur), 0);
	CHECK_EQ(cur.it_interval.tv_sec, 1);
	CHECK_EQ(wait_sig(SIGRTMIN + 1, &si, 5000), SIGRTMIN + 1);
	CHECK_EQ(si.si_code, SI_TIMER);
	CHECK(si.si_value.sival_ptr == &ev);
	CHECK_EQ(si.si_timerid, id);

	/* Periodic, blocked: one queued signal, the rest are overruns. */
	CHECK_EQ(tset(id, 0, 10000000, 10000000, NULL), 0);
	t_msleep(200);
	CHECK_EQ(wait_sig(SIGRTMIN + 1, &si, 5000), SIGRTMIN + 1);
	CHECK(si.si_overrun >= 3);
	CHECK_EQ(syscall(SYS_timer_getoverrun, id), si.si_overrun);
	/* (Whether disarming drops a pending timer signal differs between
	 * Linux versions: not checked.) */
	CHECK_EQ(tset(id, 0, 0, 0, NULL), 0);
	wait_sig(SIGRTMIN + 1, &si, 0);

	/* TIMER_ABSTIME on the timer's clock, and a time already past. */
	{
		struct timespec now;
		long long at;

		clock_gettime(CLOCK_REALTIME, &now);
		at = t_ts_ns(&now) + 30000000LL;
		CHECK_EQ(tset(id, TIMER_ABSTIME, at, 0, NULL), 0);
		CHECK_EQ(wait_sig(SIGRTMIN + 1, &si, 5000), SIGRTMIN + 1);
		clock_gettime(CLOCK_REALTIME, &now);
		CHECK(t_ts_ns(&now) >= at);
		CHECK_EQ(tset(id, TIMER_ABSTIME, 1000000000LL, 0, NULL), 0);
		CHECK_EQ(wait_sig(SIGRTMIN + 1, &si, 5000), SIGRTMIN + 1);
	}

	/* Errors. */
	{
		struct itimerspec bad = { { 0, 0 }, { 0, 1000000000L } };

		CHECK_ERR(syscall(SYS_timer_settime, id, 0, &bad, NULL), EINVAL);
		bad.it_value.tv_nsec = -1;
		CHECK_ERR(syscall(SYS_timer_settime, id, 0, &bad, NULL), EINVAL);
	}
	CHECK_ERR(syscall(SYS_timer_settime, id, 0, (void *)8, NULL), EFAULT);
	CHECK_ERR(tset(id + 1000, 0, 1000, 0, NULL), EINVAL);
	CHECK_ERR(tget(id + 1000, &cur), EINVAL);
	CHECK_ERR(tget(id, (void *)8), EFAULT);
	CHECK_ERR(syscall(SYS_timer_getoverrun, id + 1000), EINVAL);
	CHECK_ERR(tdel(-1), EINVAL);
	CHECK_ERR(tcreate(123, NULL, &id2), EINVAL);
	CHECK_ERR(tcreate(CLOCK_MONOTONIC, (void *)8, &id2), EFAULT);
	ev.notify = 99;
	CHECK_ERR(tcreate(CLOCK_MONOTONIC, &ev, &id2), EINVAL);
	ev.notify = SIGEV_SIGNAL;
	ev.signo = 0;
	CHECK_ERR(tcreate(CLOCK_MONOTONIC, &ev, &id2), EINVAL);
	ev.signo = 65;
	CHECK_ERR(tcreate(CLOCK_MONOTONIC, &ev, &id2), EINVAL);
	ev.signo = SIGRTMIN + 2;
	ev.notify = SIGEV_THREAD_ID;
	ev.tid = 999999;
	CHECK_ERR(tcreate(CLOCK_MONOTONIC, &ev, &id2), EINVAL);

	/* Timers are not inherited by fork. */
	pid = fork();
	if (pid == 0) {
		CHECK_ERR(tget(id, &cur), EINVAL);
		CHILD_DONE();
	}
	st = t_wait(pid);
	CHECK_EQ(st, 0);
	CHECK_EQ(tdel(id), 0);

	/* SIGEV_NONE: counts down, sends nothing. */
	ev.notify = SIGEV_NONE;
	CHECK_EQ(tcreate(CLOCK_MONOTONIC, &ev, &id), 0);
	CHECK_EQ(tset(id, 0, 2000000000LL, 0, NULL), 0);
	t_msleep(20);
	CHECK_EQ(tget(id, &cur), 0);
	CHECK(cur.it_value.tv_sec == 1 ||
	      (cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0));
	CHECK_EQ(tset(id, 0, 10000000, 0, NULL), 0);
	t_msleep(50);
	CHECK_EQ(tget(id, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);
	CHECK_EQ(tdel(id), 0);

	/* SIGEV_THREAD_ID: the signal goes to that thread. */
	CHECK_EQ(pthread_create(&th, NULL, waiter, NULL), 0);
	while (thread_tid == 0)
		sched_yield();
	ev.notify = SIGEV_THREAD_ID;
	ev.signo = SIGRTMIN + 2;
	ev.tid = (int)thread_tid;
	CHECK_EQ(tcreate(CLOCK_MONOTONIC, &ev, &id), 0);
	CHECK_EQ(tset(id, 0, 20000000, 0, NULL), 0);
	pthread_join(th, NULL);
	CHECK_EQ(thread_got, 1);
	CHECK_EQ(tdel(id), 0);
	DONE();
}
