/* FUTEX_WAIT / FUTEX_WAKE: value check, wake counts, relative timeouts,
 * private and shared variants. */
#include "next.h"

#define N 5

static volatile int word;
static int woken;

static void *waiter(void *arg)
{
	int op = (int)(long)arg;

	while (__atomic_load_n(&word, __ATOMIC_SEQ_CST) == 0)
		t_futex(&word, op, 0, NULL, NULL, 0);
	__atomic_add_fetch(&woken, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static volatile int gather, moved_to;
static int gather_woken;

static void *gather_waiter(void *arg)
{
	(void)arg;
	/* Woken only through moved_to (after requeue). Spurious returns
	 * simply wait again. */
	for (;;) {
		long r = t_futex(&gather, FUTEX_WAIT, 0, NULL, NULL, 0);

		if (r == 0)
			break;
	}
	__atomic_add_fetch(&gather_woken, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Requeue every waiter of gather onto moved_to; returns when n arrived. */
static void collect(int n)
{
	int total = 0;

	while (total < n) {
		long r = t_futex(&gather, FUTEX_CMP_REQUEUE, 0,
				 (struct timespec *)(long)INT_MAX, &moved_to, 0);
		if (r > 0)
			total += (int)r;
		else
			t_msleep(1);
	}
}

int main(void)
{
	struct timespec ts;
	long long t0;
	pthread_t th[N];
	int i, op;

	/* Value mismatch: EAGAIN at once. */
	word = 1;
	CHECK_ERR(t_futex(&word, FUTEX_WAIT, 0, NULL, NULL, 0), EAGAIN);
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0), EAGAIN);
	/* Nobody waiting: wake returns 0. */
	CHECK_EQ(t_futex(&word, FUTEX_WAKE, 1, NULL, NULL, 0), 0);
	CHECK_EQ(t_futex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 0);

	/* Relative timeout. */
	word = 0;
	ts.tv_sec = 0;
	ts.tv_nsec = 30000000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_ERR(t_futex(&word, FUTEX_WAIT, 0, &ts, NULL, 0), ETIMEDOUT);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 30000000);
	/* The timeout is not written back. */
	CHECK_EQ(ts.tv_nsec, 30000000);
	/* Zero timeout: immediate ETIMEDOUT. */
	ts.tv_nsec = 0;
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0), ETIMEDOUT);

	/* Waking real waiters, private and shared op codes. */
	for (op = 0; op < 2; op++) {
		word = 0;
		woken = 0;
		for (i = 0; i < N; i++)
			CHECK_EQ(pthread_create(&th[i], NULL, waiter,
						(void *)(long)(op ? FUTEX_WAIT_PRIVATE
								  : FUTEX_WAIT)),
				 0);
		t_msleep(20);
		word = 1;
		t_futex(&word, op ? FUTEX_WAKE_PRIVATE : FUTEX_WAKE, INT_MAX,
			NULL, NULL, 0);
		for (i = 0; i < N; i++)
			CHECK_EQ(pthread_join(th[i], NULL), 0);
		CHECK_EQ(woken, N);
	}

	/* Exact wake counts: gather N waiters (all provably asleep, since
	 * CMP_REQUEUE moved them), then wake 2, then the rest. */
	gather = 0;
	moved_to = 0;
	for (i = 0; i < N; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, gather_waiter, NULL), 0);
	collect(N);
	CHECK_EQ(t_futex(&moved_to, FUTEX_WAKE, 2, NULL, NULL, 0), 2);
	while (__atomic_load_n(&gather_woken, __ATOMIC_SEQ_CST) < 2)
		t_msleep(1);
	t_msleep(10);
	CHECK_EQ(gather_woken, 2);
	CHECK_EQ(t_futex(&moved_to, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), N - 2);
	for (i = 0; i < N; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(gather_woken, N);
	DONE();
}
