/*
 * Short sleeps and timeouts (50 us .. 3 ms) on every path that takes one:
 * nanosleep, clock_nanosleep (relative and TIMER_ABSTIME), select,
 * pselect6, poll, ppoll, epoll_wait, futex (WAIT, WAIT_BITSET absolute on
 * both clocks), timerfd (relative and absolute), POSIX timers and
 * sigtimedwait.  Each must never end early -- an absolute deadline is
 * checked on its own clock, where a deadline derived from two clock
 * readings would show up as an early return -- and must time out with the
 * right result.  The only upper bound is a generous one (2 s for a
 * millisecond: a timeout that is lost, not one that is slow); how close to
 * the deadline a sleep ends is measured by the sleep_1ms benchmark row.
 *
 * Then timers armed in a shuffled order (timerfds) each become readable
 * no earlier than their own deadline, and a near timer armed after a far
 * one fires while the far one stays pending.
 */
#include "next.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/timerfd.h>

#define MS 1000000LL
#define LOST (2000 * MS) /* a timeout this late was lost */

static const long durations[] = { 50000, 300000, 1000000, 2500000 };
#define NDUR (int)(sizeof durations / sizeof durations[0])

static struct timespec ts_of(long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
	return ts;
}

/* Elapsed time `el` of a wait for `want` ns: never early, never lost. */
#define CHECK_SLEPT(el, want)                                              \
	do {                                                               \
		long long el_ = (el), want_ = (want);                      \
		if (el_ < want_ || el_ >= want_ + LOST)                    \
			t_printf("  %s:%d: waited %lld ns for %lld\n",       \
				 __FILE__, __LINE__, el_, want_);          \
		CHECK(el_ >= want_);                                       \
		CHECK(el_ < want_ + LOST);                                 \
	} while (0)

/* After an absolute wait for `target` on `clk`: the clock got there. */
#define CHECK_REACHED(clk, target)                                         \
	do {                                                               \
		long long now_ = t_now_ns(clk), tg_ = (target);            \
		if (now_ < tg_)                                            \
			t_printf("  %s:%d: clock %d at %lld, deadline %lld\n", \
				 __FILE__, __LINE__, (int)(clk), now_, tg_); \
		CHECK(now_ >= tg_);                                        \
		CHECK(now_ < tg_ + LOST);                                  \
	} while (0)

static void sleeps(void)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME };
	for (int i = 0; i < NDUR; i++) {
		long d = durations[i];
		struct timespec req = ts_of(d);
		for (int k = 0; k < 3; k++) {
			long long t0 = t_now_ns(CLOCK_MONOTONIC);
			CHECK_EQ(syscall(SYS_nanosleep, &req, NULL), 0);
			CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
		}
		for (unsigned c = 0; c < sizeof clocks / sizeof clocks[0]; c++) {
			/* Relative: measured on the monotonic clock (the
			 * wall clock may be slewed). */
			long long t0 = t_now_ns(CLOCK_MONOTONIC);
			CHECK_EQ(clock_nanosleep(clocks[c], 0, &req, NULL), 0);
			CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
			/* Absolute: the clock itself reads the deadline after. */
			long long target = t_now_ns(clocks[c]) + d;
			struct timespec abs = ts_of(target);
			CHECK_EQ(clock_nanosleep(clocks[c], TIMER_ABSTIME, &abs, NULL), 0);
			CHECK_REACHED(clocks[c], target);
		}
	}
}

static void fd_waits(void)
{
	int p[2];
	CHECK_EQ(pipe(p), 0);
	for (int i = 0; i < NDUR; i++) {
		long d = durations[i];
		/* select: a pipe with nothing to read, and no descriptors. */
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		struct timeval tv = { 0, d / 1000 };
		long long t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(select(p[0] + 1, &rd, NULL, NULL, &tv), 0);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d / 1000 * 1000);
		CHECK(!FD_ISSET(p[0], &rd));
		tv.tv_sec = 0;
		tv.tv_usec = d / 1000;
		t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(select(0, NULL, NULL, NULL, &tv), 0);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d / 1000 * 1000);

		/* pselect6 and ppoll: nanosecond timeouts. */
		struct timespec ts = ts_of(d);
		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(pselect(p[0] + 1, &rd, NULL, NULL, &ts, NULL), 0);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(ppoll(&pfd, 1, &ts, NULL), 0);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
		CHECK_EQ(pfd.revents, 0);
	}
	/* poll and epoll_wait: milliseconds. */
	int ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 };
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	for (int ms = 1; ms <= 3; ms++) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		long long t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(poll(&pfd, 1, ms), 0);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, ms * MS);
		t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(epoll_wait(ep, &ev, 1, ms), 0);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, ms * MS);
	}
	/* A byte that arrives ends the wait with it, well before a long timeout. */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(epoll_wait(ep, &ev, 1, 60000), 1);
	CHECK_EQ(ev.data.u32, 7u);
	close(ep);
	close(p[0]);
	close(p[1]);
}

static void futex_waits(void)
{
	static int word;
	for (int i = 0; i < NDUR; i++) {
		long d = durations[i];
		struct timespec rel = ts_of(d);
		long long t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_ERR(syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0), ETIMEDOUT);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
		/* WAIT_BITSET: absolute, on CLOCK_MONOTONIC or CLOCK_REALTIME. */
		long long target = t_now_ns(CLOCK_MONOTONIC) + d;
		struct timespec abs = ts_of(target);
		CHECK_ERR(syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL,
				  FUTEX_BITSET_MATCH_ANY),
			  ETIMEDOUT);
		CHECK_REACHED(CLOCK_MONOTONIC, target);
		target = t_now_ns(CLOCK_REALTIME) + d;
		abs = ts_of(target);
		CHECK_ERR(syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME,
				  0, &abs, NULL, FUTEX_BITSET_MATCH_ANY),
			  ETIMEDOUT);
		CHECK_REACHED(CLOCK_REALTIME, target);
	}
}

static void timerfd_waits(void)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	for (unsigned c = 0; c < 2; c++) {
		int fd = timerfd_create(clocks[c], TFD_CLOEXEC);
		CHECK(fd >= 0);
		for (int i = 0; i < NDUR; i++) {
			long d = durations[i];
			struct itimerspec its = { .it_value = ts_of(d) };
			uint64_t n = 0;
			long long t0 = t_now_ns(CLOCK_MONOTONIC);
			CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
			CHECK_EQ(read(fd, &n, sizeof n), (ssize_t)sizeof n);
			CHECK_EQ(n, 1u);
			CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
			long long target = t_now_ns(clocks[c]) + d;
			its.it_value = ts_of(target);
			CHECK_EQ(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL), 0);
			CHECK_EQ(read(fd, &n, sizeof n), (ssize_t)sizeof n);
			CHECK_EQ(n, 1u);
			CHECK_REACHED(clocks[c], target);
		}
		close(fd);
	}
}

static void signal_waits(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	timer_t tm, rt;
	CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &tm), 0);
	CHECK_EQ(timer_create(CLOCK_REALTIME, &sev, &rt), 0);
	for (int i = 0; i < NDUR; i++) {
		long d = durations[i];
		struct itimerspec its = { .it_value = ts_of(d) };
		siginfo_t si;
		long long t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_EQ(timer_settime(tm, 0, &its, NULL), 0);
		CHECK_EQ(sigwaitinfo(&set, &si), SIGRTMIN);
		CHECK_EQ(si.si_code, SI_TIMER);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
		long long target = t_now_ns(CLOCK_REALTIME) + d;
		its.it_value = ts_of(target);
		CHECK_EQ(timer_settime(rt, TIMER_ABSTIME, &its, NULL), 0);
		CHECK_EQ(sigwaitinfo(&set, &si), SIGRTMIN);
		CHECK_REACHED(CLOCK_REALTIME, target);
		/* sigtimedwait: nothing comes, EAGAIN after the timeout. */
		struct timespec ts = ts_of(d);
		t0 = t_now_ns(CLOCK_MONOTONIC);
		CHECK_ERR(sigtimedwait(&set, &si, &ts), EAGAIN);
		CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, d);
	}
	timer_delete(tm);
	timer_delete(rt);
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
}

#define NTIMERS 24

static void shuffled_timers(void)
{
	int fds[NTIMERS];
	long long deadline[NTIMERS];
	/* Deadlines 100 us apart, armed in a scrambled order. */
	long long base = t_now_ns(CLOCK_MONOTONIC) + 500000;
	for (int k = 0; k < NTIMERS; k++) {
		int i = (k * 7 + 3) % NTIMERS; /* 7 is prime to 24: a permutation */
		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		CHECK(fds[i] >= 0);
		deadline[i] = base + i * 100000LL;
		struct itimerspec its = { .it_value = ts_of(deadline[i]) };
		CHECK_EQ(timerfd_settime(fds[i], TFD_TIMER_ABSTIME, &its, NULL), 0);
	}
	/* Read them in deadline order: each read ends at its deadline or later. */
	for (int i = 0; i < NTIMERS; i++) {
		uint64_t n = 0;
		CHECK_EQ(read(fds[i], &n, sizeof n), (ssize_t)sizeof n);
		CHECK_EQ(n, 1u);
		CHECK_REACHED(CLOCK_MONOTONIC, deadline[i]);
		close(fds[i]);
	}

	/* A far timer armed first, a near one after: the near one fires and
	 * the far one is still pending. */
	int far = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int near = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	CHECK(far >= 0 && near >= 0);
	struct itimerspec its = { .it_value = { 600, 0 } };
	CHECK_EQ(timerfd_settime(far, 0, &its, NULL), 0);
	its.it_value = ts_of(1500000);
	long long t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(timerfd_settime(near, 0, &its, NULL), 0);
	struct pollfd pfd[2] = { { .fd = far, .events = POLLIN }, { .fd = near, .events = POLLIN } };
	CHECK_EQ(poll(pfd, 2, 60000), 1);
	CHECK_EQ(pfd[0].revents, 0);
	CHECK_EQ(pfd[1].revents, POLLIN);
	CHECK_SLEPT(t_now_ns(CLOCK_MONOTONIC) - t0, 1500000);
	uint64_t n = 0;
	CHECK_ERR(read(far, &n, sizeof n), EAGAIN);
	struct itimerspec left;
	CHECK_EQ(timerfd_gettime(far, &left), 0);
	CHECK(left.it_value.tv_sec > 500);
	close(far);
	close(near);
}

/*
 * A periodic timerfd with a 1 ns interval that nobody reads expires all
 * the time; the system must still run tasks (the kernel must not spend
 * itself re-arming the timer), and a read returns the expirations since.
 */
static void tiny_interval(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	CHECK(fd >= 0);
	struct itimerspec its = { .it_interval = { 0, 1 }, .it_value = { 0, 1 } };
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	long long t0 = t_now_ns(CLOCK_MONOTONIC);
	struct timespec req = ts_of(5 * MS);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(syscall(SYS_nanosleep, &req, NULL), 0);
		for (int k = 0; k < 1000; k++)
			CHECK(getpid() > 0);
	}
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof n), (ssize_t)sizeof n);
	long long el = t_now_ns(CLOCK_MONOTONIC) - t0;
	CHECK(el >= 20 * MS);
	CHECK(n >= 20000000u); /* one per ns */
	close(fd);
}

int main(void)
{
	sleeps();
	fd_waits();
	futex_waits();
	timerfd_waits();
	signal_waits();
	shuffled_timers();
	tiny_interval();
	DONE();
}
