/* Priority-inheritance futexes: FUTEX_LOCK_PI takes a free word (it then
 * holds the caller's tid) or sleeps until FUTEX_UNLOCK_PI hands it over;
 * FUTEX_TRYLOCK_PI does not sleep (EAGAIN); the owner locking again is
 * EDEADLK, a non-owner unlocking EPERM, a word naming no thread ESRCH.
 * (Another process's tid in a private word only serves as "some live
 * owner" for TRYLOCK here.)
 * Through both libcs: PTHREAD_PRIO_INHERIT mutexes count exactly under
 * contention, trylock is EBUSY, and a robust PI mutex left by a dead
 * thread gives EOWNERDEAD. */
#include "next.h"

#define FUTEX_LOCK_PI_ 6
#define FUTEX_UNLOCK_PI_ 7
#define FUTEX_TRYLOCK_PI_ 8

static pthread_mutex_t m, rm;
static long counter;
static volatile int word;

static void *inc(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 20000; i++) {
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static void *hold_and_exit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rm);
	return NULL;
}

static void *try_unlock(void *arg)
{
	(void)arg;
	return (void *)(long)(t_futex(&word, FUTEX_UNLOCK_PI_, 0, NULL, NULL, 0) == -1 ? errno : 0);
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t[4];
	void *ret;
	int i;

	/* Raw protocol. */
	word = 0;
	CHECK_EQ(t_futex(&word, FUTEX_LOCK_PI_, 0, NULL, NULL, 0), 0);
	CHECK_EQ(word, t_gettid());
	CHECK_ERR(t_futex(&word, FUTEX_LOCK_PI_, 0, NULL, NULL, 0), EDEADLK);
	CHECK_ERR(t_futex(&word, FUTEX_TRYLOCK_PI_, 0, NULL, NULL, 0), EDEADLK);
	CHECK_EQ(pthread_create(&t[0], NULL, try_unlock, NULL), 0);
	pthread_join(t[0], &ret);
	CHECK_EQ((long)ret, EPERM);
	CHECK_EQ(t_futex(&word, FUTEX_UNLOCK_PI_, 0, NULL, NULL, 0), 0);
	CHECK_EQ(word, 0);
	word = 0x3ffffff0; /* a tid nobody has */
	CHECK_ERR(t_futex(&word, FUTEX_LOCK_PI_, 0, NULL, NULL, 0), ESRCH);
	CHECK_ERR(t_futex(&word, FUTEX_TRYLOCK_PI_, 0, NULL, NULL, 0), ESRCH);
	/* Held by a live thread: TRYLOCK_PI does not wait. */
	word = getppid() == 1 ? 1 : (int)getppid();
	CHECK_ERR(t_futex(&word, FUTEX_TRYLOCK_PI_, 0, NULL, NULL, 0), EAGAIN);

	/* PI mutexes from libc. */
	pthread_mutexattr_init(&a);
	CHECK_EQ(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	CHECK_EQ(pthread_mutex_init(&m, &a), 0);
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, inc, NULL), 0);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(counter, 80000);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);

	/* Robust and PI: the owner dies. */
	CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	CHECK_EQ(pthread_mutex_init(&rm, &a), 0);
	CHECK_EQ(pthread_create(&t[0], NULL, hold_and_exit, NULL), 0);
	pthread_join(t[0], NULL);
	CHECK_EQ(pthread_mutex_lock(&rm), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(&rm), 0);
	CHECK_EQ(pthread_mutex_unlock(&rm), 0);
	pthread_mutexattr_destroy(&a);
	DONE();
}
