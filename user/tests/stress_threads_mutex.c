/* Stress: 16 threads x 100000 increments under one mutex give exactly
 * 1600000; the same with a futex-based spin/wait lock made by hand. */
#include "next.h"

#define THREADS 16
#define ITERS 100000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static volatile int lockword;
static long counter2;

static void *with_mutex(void *arg)
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

/* A classic three-state futex lock (0 free, 1 locked, 2 contended). */
static void lock(void)
{
	int c = __sync_val_compare_and_swap(&lockword, 0, 1);

	if (c == 0)
		return;
	if (c != 2)
		c = __atomic_exchange_n(&lockword, 2, __ATOMIC_SEQ_CST);
	while (c != 0) {
		t_futex(&lockword, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(&lockword, 2, __ATOMIC_SEQ_CST);
	}
}

static void unlock(void)
{
	if (__atomic_fetch_sub(&lockword, 1, __ATOMIC_SEQ_CST) != 1) {
		lockword = 0;
		t_futex(&lockword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void *with_futex(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ITERS; i++) {
		lock();
		counter2++;
		unlock();
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	int i;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, with_mutex, NULL), 0);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(counter, (long)THREADS * ITERS);

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, with_futex, NULL), 0);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(counter2, (long)THREADS * ITERS);
	DONE();
}
