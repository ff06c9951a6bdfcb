/* A FUTEX_WAIT interrupted by a signal handler returns EINTR (a futex
 * wait is never restarted across a handler, SA_RESTART or not), and the
 * handler ran. */
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

int main(void)
{
	CHECK_ERR(wait_interrupted(0), EINTR);
	CHECK(handled >= 1);
	/* With SA_RESTART and a timeout Linux still returns EINTR. */
	CHECK_ERR(wait_interrupted(SA_RESTART), EINTR);
	CHECK(handled >= 1);
	DONE();
}
