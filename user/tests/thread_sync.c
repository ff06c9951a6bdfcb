/* Barriers, semaphores, rwlocks and pthread_once over futexes. */
#include "next.h"
#include <semaphore.h>

#define T 6
#define ROUNDS 200

static pthread_barrier_t bar;
static int round_count[ROUNDS];
static int bad_round;
static sem_t sem;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int readers_inside, max_readers, writer_inside, rw_bad;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;

static void *barrier_worker(void *arg)
{
	int r;

	(void)arg;
	for (r = 0; r < ROUNDS; r++) {
		__atomic_add_fetch(&round_count[r], 1, __ATOMIC_SEQ_CST);
		pthread_barrier_wait(&bar);
		/* Everybody has arrived at round r. */
		if (__atomic_load_n(&round_count[r], __ATOMIC_SEQ_CST) != T)
			bad_round = 1;
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

static void *sem_consumer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 1000; i++)
		sem_wait(&sem);
	return NULL;
}

static void *rw_worker(void *arg)
{
	long id = (long)arg;
	int i;

	for (i = 0; i < 2000; i++) {
		if ((i + id) % 10 == 0) {
			pthread_rwlock_wrlock(&rw);
			if (writer_inside || readers_inside)
				rw_bad = 1;
			writer_inside = 1;
			sched_yield();
			writer_inside = 0;
			pthread_rwlock_unlock(&rw);
		} else {
			int n;

			pthread_rwlock_rdlock(&rw);
			if (writer_inside)
				rw_bad = 1;
			n = __atomic_add_fetch(&readers_inside, 1, __ATOMIC_SEQ_CST);
			if (n > max_readers)
				max_readers = n;
			__atomic_sub_fetch(&readers_inside, 1, __ATOMIC_SEQ_CST);
			pthread_rwlock_unlock(&rw);
		}
	}
	return NULL;
}

static void init_once(void) { once_runs++; }

static void *once_worker(void *arg)
{
	(void)arg;
	pthread_once(&once, init_once);
	return NULL;
}

int main(void)
{
	pthread_t th[T];
	struct timespec ts;
	int i, v;

	CHECK_EQ(pthread_barrier_init(&bar, NULL, T), 0);
	for (i = 0; i < T; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, barrier_worker, NULL), 0);
	for (i = 0; i < T; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(bad_round, 0);
	CHECK_EQ(pthread_barrier_destroy(&bar), 0);

	/* Semaphores. */
	CHECK_EQ(sem_init(&sem, 0, 0), 0);
	CHECK_ERR(sem_trywait(&sem), EAGAIN);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	CHECK_ERR(sem_timedwait(&sem, &ts), ETIMEDOUT);
	CHECK_EQ(pthread_create(&th[0], NULL, sem_consumer, NULL), 0);
	for (i = 0; i < 1000; i++)
		CHECK_EQ(sem_post(&sem), 0);
	CHECK_EQ(pthread_join(th[0], NULL), 0);
	CHECK_EQ(sem_getvalue(&sem, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(sem_post(&sem), 0);
	CHECK_EQ(sem_trywait(&sem), 0);

	/* rwlock: never a writer together with anybody else. */
	for (i = 0; i < T; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, rw_worker, (void *)(long)i), 0);
	for (i = 0; i < T; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(rw_bad, 0);
	CHECK(max_readers >= 1);
	CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_tryrdlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_trywrlock(&rw), EBUSY);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);

	for (i = 0; i < T; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, once_worker, NULL), 0);
	for (i = 0; i < T; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(once_runs, 1);
	DONE();
}
