/* pthread_create/join: return values, shared memory, ids, many threads. */
#include "next.h"

#define N 16

static int shared_counter;
static long tids[N];
static pid_t pids[N];

static void *worker(void *arg)
{
	long i = (long)arg;

	tids[i] = t_gettid();
	pids[i] = getpid();
	__atomic_add_fetch(&shared_counter, 1, __ATOMIC_SEQ_CST);
	return (void *)(i * 3 + 1);
}

static void *touch_stack(void *arg)
{
	int *p = arg;

	*p = 1234; /* the creator's stack variable */
	return NULL;
}

static void *self_id(void *arg)
{
	*(pthread_t *)arg = pthread_self();
	return NULL;
}

int main(void)
{
	pthread_t th[N];
	long i, j;
	int on_stack = 0;
	void *ret;

	for (i = 0; i < N; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	for (i = 0; i < N; i++) {
		ret = NULL;
		CHECK_EQ(pthread_join(th[i], &ret), 0);
		CHECK_EQ((long)ret, i * 3 + 1);
	}
	CHECK_EQ(shared_counter, N);
	for (i = 0; i < N; i++) {
		CHECK_EQ(pids[i], getpid());
		CHECK(tids[i] > 0);
		CHECK(tids[i] != getpid());
		for (j = 0; j < i; j++)
			CHECK(tids[i] != tids[j]);
	}
	/* The main thread's tid is the pid. */
	CHECK_EQ(t_gettid(), getpid());

	/* A thread writes into the creator's stack. */
	CHECK_EQ(pthread_create(&th[0], NULL, touch_stack, &on_stack), 0);
	CHECK_EQ(pthread_join(th[0], NULL), 0);
	CHECK_EQ(on_stack, 1234);

	/* pthread_self in the thread equals the handle the creator got. */
	{
		pthread_t seen;

		CHECK_EQ(pthread_create(&th[0], NULL, self_id, &seen), 0);
		CHECK_EQ(pthread_join(th[0], NULL), 0);
		CHECK(pthread_equal(seen, th[0]));
		CHECK(!pthread_equal(seen, pthread_self()));
	}
	DONE();
}
