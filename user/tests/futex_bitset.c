/* FUTEX_WAIT_BITSET / FUTEX_WAKE_BITSET: selective wake-ups by mask, and
 * absolute timeouts on CLOCK_MONOTONIC and (FUTEX_CLOCK_REALTIME)
 * CLOCK_REALTIME. */
#include "next.h"

static volatile int word;
static volatile int done_a, done_b;

static void *wait_mask(void *arg)
{
	unsigned mask = (unsigned)(long)arg;

	for (;;) {
		long r = t_futex(&word, FUTEX_WAIT_BITSET, 0, NULL, NULL,
				 (int)mask);
		if (r == 0)
			break;
	}
	if (mask == 1)
		done_a = 1;
	else
		done_b = 1;
	return NULL;
}

static void add_ns(struct timespec *ts, long ns)
{
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

int main(void)
{
	pthread_t a, b;
	struct timespec ts;
	long long t0;

	CHECK_EQ(pthread_create(&a, NULL, wait_mask, (void *)1L), 0);
	CHECK_EQ(pthread_create(&b, NULL, wait_mask, (void *)6L), 0);

	/* Mask 2 matches only b (6 = 0b110). */
	while (t_futex(&word, FUTEX_WAKE_BITSET, 1, NULL, NULL, 2) == 0)
		t_msleep(1);
	CHECK_EQ(pthread_join(b, NULL), 0);
	CHECK_EQ(done_b, 1);
	t_msleep(10);
	CHECK_EQ(done_a, 0);
	/* Mask 6 matches nobody left; mask 1 wakes a. */
	CHECK_EQ(t_futex(&word, FUTEX_WAKE_BITSET, 1, NULL, NULL, 6), 0);
	while (t_futex(&word, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL,
		       FUTEX_BITSET_MATCH_ANY) == 0)
		t_msleep(1);
	CHECK_EQ(pthread_join(a, NULL), 0);
	CHECK_EQ(done_a, 1);

	/* Absolute timeout, CLOCK_MONOTONIC. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = t_ts_ns(&ts);
	add_ns(&ts, 30000000);
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_BITSET, 0, &ts, NULL,
			  FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	CHECK(t_now_ns(CLOCK_MONOTONIC) >= t0 + 30000000);

	/* Absolute timeout, CLOCK_REALTIME. */
	clock_gettime(CLOCK_REALTIME, &ts);
	t0 = t_ts_ns(&ts);
	add_ns(&ts, 30000000);
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0,
			  &ts, NULL, FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	CHECK(t_now_ns(CLOCK_REALTIME) >= t0 + 30000000);

	/* A deadline in the past: ETIMEDOUT at once. */
	ts.tv_sec = 1;
	ts.tv_nsec = 0;
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, &ts, NULL, 1),
		  ETIMEDOUT);

	/* Bitset 0 is invalid for wait and wake. */
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_BITSET, 0, NULL, NULL, 0), EINVAL);
	CHECK_ERR(t_futex(&word, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0), EINVAL);
	/* Value mismatch is still EAGAIN. */
	CHECK_ERR(t_futex(&word, FUTEX_WAIT_BITSET, 5, NULL, NULL, 1), EAGAIN);
	DONE();
}
