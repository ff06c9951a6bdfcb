/* Signals and threads: pthread_kill/tgkill target one thread; a
 * process-directed signal goes to a thread that does not block it; masks
 * are per thread; sigwait in a thread; tgkill/tkill errors. */
#include "next.h"

static volatile long handler_tid;
static volatile int handled;
static volatile int worker_ready, worker_stop;
static long worker_tid;

static void on_sig(int sig)
{
	(void)sig;
	handler_tid = t_gettid();
	handled++;
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = t_gettid();
	__atomic_store_n(&worker_ready, 1, __ATOMIC_SEQ_CST);
	while (!worker_stop)
		t_msleep(1);
	return NULL;
}

static void *sigwaiter(void *arg)
{
	sigset_t s;
	int sig = 0;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	if (sigwait(&s, &sig) != 0)
		return (void *)-1L;
	return (void *)(long)sig;
}

static void *mask_reporter(void *arg)
{
	sigset_t cur;

	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	*(int *)arg = sigismember(&cur, SIGUSR1) * 10 + sigismember(&cur, SIGHUP);
	return NULL;
}

int main(void)
{
	pthread_t t;
	sigset_t s;
	void *ret;
	int r;

	CHECK_EQ(t_sigaction(SIGUSR1, on_sig, 0), 0);

	/* pthread_kill runs the handler in the target thread. */
	CHECK_EQ(pthread_create(&t, NULL, worker, NULL), 0);
	while (!__atomic_load_n(&worker_ready, __ATOMIC_SEQ_CST))
		sched_yield();
	CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
	while (!handled)
		sched_yield();
	CHECK_EQ(handler_tid, worker_tid);

	/* tgkill to the worker, same thing. */
	handled = 0;
	CHECK_EQ(t_tgkill(getpid(), worker_tid, SIGUSR1), 0);
	while (!handled)
		sched_yield();
	CHECK_EQ(handler_tid, worker_tid);

	/* Process-directed, blocked in main: the worker takes it. */
	handled = 0;
	CHECK_EQ(t_block(SIGUSR1, SIG_BLOCK), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	while (!handled)
		sched_yield();
	CHECK_EQ(handler_tid, worker_tid);
	CHECK_EQ(t_block(SIGUSR1, SIG_UNBLOCK), 0);

	/* tgkill to ourselves (main thread). */
	handled = 0;
	CHECK_EQ(t_tgkill(getpid(), t_gettid(), SIGUSR1), 0);
	CHECK_EQ(handled, 1);
	CHECK_EQ(handler_tid, getpid());

	/* tkill too. */
	handled = 0;
	CHECK_EQ(syscall(SYS_tkill, t_gettid(), SIGUSR1), 0);
	CHECK_EQ(handled, 1);

	worker_stop = 1;
	CHECK_EQ(pthread_join(t, NULL), 0);

	/* Errors: wrong tgid, bad tid, bad signal. */
	CHECK_ERR(t_tgkill(getpid() == 1 ? 2 : 1, t_gettid(), 0), ESRCH);
	CHECK_ERR(t_tgkill(getpid(), 0, SIGUSR1), EINVAL);
	CHECK_ERR(t_tgkill(getpid(), -5, SIGUSR1), EINVAL);
	CHECK_ERR(t_tgkill(0, t_gettid(), SIGUSR1), EINVAL);
	CHECK_ERR(t_tgkill(getpid(), t_gettid(), 65), EINVAL);
	CHECK_ERR(t_tgkill(getpid(), 0x3ffffff0, 0), ESRCH);
	CHECK_ERR(syscall(SYS_tkill, 0, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, 0x3ffffff0, 0), ESRCH);
	CHECK_EQ(t_tgkill(getpid(), t_gettid(), 0), 0);

	/* A new thread inherits the creator's mask. */
	sigemptyset(&s);
	sigaddset(&s, SIGHUP);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
	r = -1;
	CHECK_EQ(pthread_create(&t, NULL, mask_reporter, &r), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(r, 1);
	CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);

	/* sigwait in a thread consumes a process-directed signal that every
	 * thread blocks. */
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
	CHECK_EQ(pthread_create(&t, NULL, sigwaiter, NULL), 0);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK_EQ((long)ret, SIGUSR2);
	{
		sigset_t pend;

		sigpending(&pend);
		CHECK(!sigismember(&pend, SIGUSR2));
	}
	DONE();
}
