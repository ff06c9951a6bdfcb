/* FUTEX_REQUEUE and FUTEX_CMP_REQUEUE: counts of woken + requeued waiters,
 * the compare, and that requeued waiters are woken on the second word. */
#include "next.h"

#define N 6

static volatile int f1, f2, f3;
static int woken;

static void *waiter(void *arg)
{
	(void)arg;
	while (t_futex(&f1, FUTEX_WAIT, 0, NULL, NULL, 0) != 0)
		;
	__atomic_add_fetch(&woken, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(void)
{
	pthread_t th[N];
	int i, total = 0;
	long r;

	for (i = 0; i < N; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, waiter, NULL), 0);

	/* Compare fails: EAGAIN, nothing moves. */
	CHECK_ERR(t_futex(&f1, FUTEX_CMP_REQUEUE, 0,
			  (struct timespec *)(long)INT_MAX, &f2, 1),
		  EAGAIN);

	/* Move all waiters to f2 (looping until every thread arrived). */
	while (total < N) {
		r = t_futex(&f1, FUTEX_CMP_REQUEUE, 0,
			    (struct timespec *)(long)INT_MAX, &f2, 0);
		CHECK(r >= 0);
		if (r < 0)
			break;
		total += (int)r;
		if (total < N)
			t_msleep(1);
	}
	CHECK_EQ(total, N);
	/* Nobody is left on f1. */
	CHECK_EQ(t_futex(&f1, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), 0);

	/* CMP_REQUEUE f2 -> f3: wake 1, requeue at most 2: returns 3. */
	CHECK_EQ(t_futex(&f2, FUTEX_CMP_REQUEUE, 1, (struct timespec *)2L, &f3,
			 0),
		 3);
	/* Plain REQUEUE f2 -> f3: wake 0, requeue 1: Linux returns woken +
	 * requeued here too, so 1. */
	CHECK_EQ(t_futex(&f2, FUTEX_REQUEUE, 0, (struct timespec *)1L, &f3, 0),
		 1);
	/* f2 keeps N - 1 - 2 - 1 = 2, f3 has 3. */
	CHECK_EQ(t_futex(&f2, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), N - 4);
	CHECK_EQ(t_futex(&f3, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), 3);
	for (i = 0; i < N; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(woken, N);

	/* Negative counts are invalid for CMP_REQUEUE. */
	CHECK_ERR(t_futex(&f1, FUTEX_CMP_REQUEUE, -1, (struct timespec *)1L,
			  &f2, 0),
		  EINVAL);
	CHECK_ERR(t_futex(&f1, FUTEX_CMP_REQUEUE, 1, (struct timespec *)-1L,
			  &f2, 0),
		  EINVAL);
	DONE();
}
