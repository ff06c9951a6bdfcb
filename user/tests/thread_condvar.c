/* Condition variables: producer/consumer, broadcast, timed waits. */
#include "next.h"

#define ITEMS 5000
#define WAITERS 6

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int queue[8], qhead, qlen;
static long consumed_sum;

static void *producer(void *arg)
{
	int i;

	(void)arg;
	for (i = 1; i <= ITEMS; i++) {
		pthread_mutex_lock(&m);
		while (qlen == 8)
			pthread_cond_wait(&not_full, &m);
		queue[(qhead + qlen) % 8] = i;
		qlen++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ITEMS; i++) {
		pthread_mutex_lock(&m);
		while (qlen == 0)
			pthread_cond_wait(&not_empty, &m);
		consumed_sum += queue[qhead];
		qhead = (qhead + 1) % 8;
		qlen--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int go_flag, waiting, woke;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	waiting++;
	while (!go_flag)
		pthread_cond_wait(&go, &m);
	woke++;
	pthread_mutex_unlock(&m);
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
	pthread_t p, c, w[WAITERS];
	pthread_condattr_t ca;
	pthread_cond_t mono;
	struct timespec ts;
	long long t0;
	int i;

	CHECK_EQ(pthread_create(&p, NULL, producer, NULL), 0);
	CHECK_EQ(pthread_create(&c, NULL, consumer, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	CHECK_EQ(pthread_join(c, NULL), 0);
	CHECK_EQ(consumed_sum, (long)ITEMS * (ITEMS + 1) / 2);

	/* Broadcast wakes every waiter. */
	for (i = 0; i < WAITERS; i++)
		CHECK_EQ(pthread_create(&w[i], NULL, waiter, NULL), 0);
	for (;;) {
		pthread_mutex_lock(&m);
		if (waiting == WAITERS)
			break;
		pthread_mutex_unlock(&m);
		t_msleep(1);
	}
	go_flag = 1;
	CHECK_EQ(pthread_cond_broadcast(&go), 0);
	pthread_mutex_unlock(&m);
	for (i = 0; i < WAITERS; i++)
		CHECK_EQ(pthread_join(w[i], NULL), 0);
	CHECK_EQ(woke, WAITERS);

	/* Timed wait on CLOCK_REALTIME times out, no earlier than asked. */
	pthread_mutex_lock(&m);
	clock_gettime(CLOCK_REALTIME, &ts);
	add_ns(&ts, 30000000);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(pthread_cond_timedwait(&go, &m, &ts), ETIMEDOUT);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 20000000);
	/* The mutex is held again after the timeout. */
	CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
	pthread_mutex_unlock(&m);

	/* ... and on CLOCK_MONOTONIC. */
	pthread_condattr_init(&ca);
	CHECK_EQ(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
	CHECK_EQ(pthread_cond_init(&mono, &ca), 0);
	pthread_mutex_lock(&m);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = t_ts_ns(&ts);
	add_ns(&ts, 30000000);
	CHECK_EQ(pthread_cond_timedwait(&mono, &m, &ts), ETIMEDOUT);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 30000000);
	/* A deadline in the past times out at once. */
	ts.tv_sec -= 10;
	CHECK_EQ(pthread_cond_timedwait(&mono, &m, &ts), ETIMEDOUT);
	pthread_mutex_unlock(&m);
	DONE();
}
