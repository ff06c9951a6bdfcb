/* Robust mutexes (set_robust_list(2)): a holder that dies — a thread that
 * exits, a process that exits with the mutex in shared memory — leaves it
 * marked FUTEX_OWNER_DIED, so the next locker gets EOWNERDEAD and can make
 * it consistent; a waiter blocked on it is woken. And FUTEX_WAKE_OP: the
 * second word is updated by the encoded operation and its waiters are
 * woken only when the old value passes the comparison. */
#include "next.h"

#ifndef FUTEX_OP
#define FUTEX_OP(op, oparg, cmp, cmparg) \
	((((op) & 0xf) << 28) | (((cmp) & 0xf) << 24) | (((oparg) & 0xfff) << 12) | ((cmparg) & 0xfff))
#endif

static pthread_mutex_t *shared_m;
static pthread_mutex_t thread_m;
static volatile int w1, w2, woke2;
static volatile long waiter_tid;

static void *lock_and_exit(void *arg)
{
	pthread_mutex_lock(arg);
	return NULL; /* exits holding it */
}

static void *wait_w2(void *arg)
{
	(void)arg;
	waiter_tid = t_gettid();
	t_futex(&w2, FUTEX_WAIT, 5, NULL, NULL, 0);
	woke2 = 1;
	return NULL;
}

static void init_robust(pthread_mutex_t *m, int pshared)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

int main(void)
{
	pthread_t t;
	pid_t pid;
	int st, i;

	/* A thread exits holding a robust mutex. */
	init_robust(&thread_m, 0);
	CHECK_EQ(pthread_create(&t, NULL, lock_and_exit, &thread_m), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(pthread_mutex_lock(&thread_m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(&thread_m), 0);
	CHECK_EQ(pthread_mutex_unlock(&thread_m), 0);
	CHECK_EQ(pthread_mutex_lock(&thread_m), 0);
	CHECK_EQ(pthread_mutex_unlock(&thread_m), 0);

	/* A process dies holding one in shared memory, while we wait on it. */
	shared_m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared_m != MAP_FAILED);
	init_robust(shared_m, 1);
	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(shared_m);
		t_msleep(100);
		_exit(0); /* holding it */
	}
	t_msleep(30);
	CHECK_EQ(pthread_mutex_lock(shared_m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(shared_m), 0);
	CHECK_EQ(pthread_mutex_unlock(shared_m), 0);
	st = t_wait(pid);
	CHECK_EQ(st, 0);

	/* FUTEX_WAKE_OP: w2 += 3 (5 -> 8); wake w2's waiter if old == 5. */
	w2 = 5;
	CHECK_EQ(pthread_create(&t, NULL, wait_w2, NULL), 0);
	for (i = 0; i < 1000 && !waiter_tid; i++)
		t_msleep(1);
	CHECK(t_wait_thread_state(waiter_tid, "S"));
	CHECK_EQ(t_futex(&w1, FUTEX_WAKE_OP, 1, (void *)1, (int *)&w2,
			 FUTEX_OP(1 /* ADD */, 3, 0 /* EQ */, 5)), 1);
	CHECK_EQ(w2, 8);
	pthread_join(t, NULL);
	CHECK_EQ(woke2, 1);
	/* The comparison fails: the word changes, nobody is woken. */
	CHECK_EQ(t_futex(&w1, FUTEX_WAKE_OP, 1, (void *)1, (int *)&w2,
			 FUTEX_OP(0 /* SET */, 1, 2 /* LT */, 0)), 0);
	CHECK_EQ(w2, 1);
	/* FUTEX_OP_OPARG_SHIFT: OR with 1 << 4. */
	CHECK_EQ(t_futex(&w1, FUTEX_WAKE_OP, 1, (void *)1, (int *)&w2,
			 FUTEX_OP(2 | 8, 4, 0, 0)), 0);
	CHECK_EQ(w2, 17);
	/* Bad operation or comparison: ENOSYS; bad address: EFAULT. */
	CHECK_ERR(t_futex(&w1, FUTEX_WAKE_OP, 1, (void *)1, (int *)&w2,
			  FUTEX_OP(7, 0, 0, 0)), ENOSYS);
	CHECK_ERR(t_futex(&w1, FUTEX_WAKE_OP, 1, (void *)1, (int *)&w2,
			  FUTEX_OP(0, 0, 9, 0)), ENOSYS);
	CHECK_ERR(t_futex(&w1, FUTEX_WAKE_OP, 1, (void *)1, (int *)8, 0), EFAULT);
	DONE();
}
