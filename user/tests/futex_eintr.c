/* A FUTEX_WAIT interrupted by a signal handler returns EINTR, and the
 * handler ran; with SA_RESTART it returns EINTR only if it had a timeout
 * (signal(7)), and without one it is restarted until woken. */
#include "next.h"

static volatile int word, handled;

static void on_usr1(int s)
{
	(void)s;
	handled++;
}

struct target {
	long tid;
	volatile int stop;
};

static void *poker(void *arg)
{
	struct target *t = arg;

	while (!t->stop) {
		t_tgkill(getpid(), t->tid, SIGUSR1);
		t_msleep(2);
	}
	return NULL;
}

static long wait_interrupted(int flags)
{
	static struct target t;
	pthread_t p;
	struct timespec ts = { 30, 0 };
	long r;
	int e;

	CHECK_EQ(t_sigaction(SIGUSR1, on_usr1, flags), 0);
	t.tid = t_gettid();
	t.stop = 0;
	handled = 0;
	CHECK_EQ(pthread_create(&p, NULL, poker, &t), 0);
	/* With and without a timeout. */
	r = t_futex(&word, FUTEX_WAIT, 0, flags ? &ts : NULL, NULL, 0);
	e = errno;
	t.stop = 1;
	pthread_join(p, NULL);
	errno = e;
	return r;
}

/* Pokes us with SA_RESTART signals, then sets the word and wakes us. */
static void *poke_then_wake(void *arg)
{
	struct target *t = arg;
	int i;

	for (i = 0; i < 10; i++) {
		t_tgkill(getpid(), t->tid, SIGUSR1);
		t_msleep(5);
	}
	word = 1;
	t_futex(&word, FUTEX_WAKE, 1, NULL, NULL, 0);
	return NULL;
}

int main(void)
{
	static struct target t;
	pthread_t p;
	long r;

	CHECK_ERR(wait_interrupted(0), EINTR);
	CHECK(handled >= 1);
	/* With SA_RESTART and a timeout Linux still returns EINTR. */
	CHECK_ERR(wait_interrupted(SA_RESTART), EINTR);
	CHECK(handled >= 1);

	/* SA_RESTART without a timeout: restarted until the wake (or EAGAIN
	 * if a restart read the new value), never EINTR. */
	handled = 0;
	word = 0;
	t.tid = t_gettid();
	CHECK_EQ(pthread_create(&p, NULL, poke_then_wake, &t), 0);
	errno = 0;
	r = t_futex(&word, FUTEX_WAIT, 0, NULL, NULL, 0);
	CHECK(r == 0 || (r == -1 && errno == EAGAIN));
	pthread_join(p, NULL);
	CHECK(handled >= 1);
	DONE();
}
