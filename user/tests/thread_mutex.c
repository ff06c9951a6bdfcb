/* pthread mutexes: contention, trylock, error-checking and recursive kinds,
 * timed lock. */
#include "next.h"

#define THREADS 4
#define ITERS 20000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static volatile int holder_ready, release_holder;

static void *inc(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static void *hold(void *arg)
{
	pthread_mutex_t *mx = arg;

	pthread_mutex_lock(mx);
	holder_ready = 1;
	while (!release_holder)
		sched_yield();
	pthread_mutex_unlock(mx);
	return NULL;
}

static void *try_other(void *arg)
{
	return (void *)(long)pthread_mutex_unlock((pthread_mutex_t *)arg);
}

int main(void)
{
	pthread_t th[THREADS], h;
	pthread_mutexattr_t a;
	pthread_mutex_t ec, rec, tm;
	struct timespec ts;
	long long t0;
	void *ret;
	int i;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, inc, NULL), 0);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(counter, THREADS * ITERS);

	/* trylock fails with EBUSY while another thread holds the lock. */
	holder_ready = release_holder = 0;
	CHECK_EQ(pthread_create(&h, NULL, hold, &m), 0);
	while (!holder_ready)
		sched_yield();
	CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
	release_holder = 1;
	CHECK_EQ(pthread_join(h, NULL), 0);
	CHECK_EQ(pthread_mutex_trylock(&m), 0);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);

	/* Error-checking mutex. */
	pthread_mutexattr_init(&a);
	CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(pthread_mutex_init(&ec, &a), 0);
	CHECK_EQ(pthread_mutex_lock(&ec), 0);
	CHECK_EQ(pthread_mutex_lock(&ec), EDEADLK);
	CHECK_EQ(pthread_create(&h, NULL, try_other, &ec), 0);
	CHECK_EQ(pthread_join(h, &ret), 0);
	CHECK_EQ((long)ret, EPERM);
	CHECK_EQ(pthread_mutex_unlock(&ec), 0);
	CHECK_EQ(pthread_mutex_unlock(&ec), EPERM);

	/* Recursive mutex. */
	CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
	CHECK_EQ(pthread_mutex_init(&rec, &a), 0);
	for (i = 0; i < 3; i++)
		CHECK_EQ(pthread_mutex_lock(&rec), 0);
	CHECK_EQ(pthread_mutex_trylock(&rec), 0);
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_mutex_unlock(&rec), 0);
	CHECK_EQ(pthread_mutex_unlock(&rec), EPERM);

	/* Timed lock times out (and waits at least the time asked). */
	CHECK_EQ(pthread_mutex_init(&tm, NULL), 0);
	holder_ready = release_holder = 0;
	CHECK_EQ(pthread_create(&h, NULL, hold, &tm), 0);
	while (!holder_ready)
		sched_yield();
	clock_gettime(CLOCK_REALTIME, &ts);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	ts.tv_nsec += 50000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	CHECK_EQ(pthread_mutex_timedlock(&tm, &ts), ETIMEDOUT);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 40000000);
	release_holder = 1;
	CHECK_EQ(pthread_join(h, NULL), 0);
	CHECK_EQ(pthread_mutex_timedlock(&tm, &ts), 0);
	CHECK_EQ(pthread_mutex_unlock(&tm), 0);
	DONE();
}
