/*
 * stress_futex_signal_storm: 200 threads in a futex ring under a storm of
 * signals (issue 11 item 7).  A child process starts 200 threads; a token
 * goes round the ring ROUNDS times, each thread futex-waiting on its own
 * word and waking the next, while the main thread sends SIGNALS queued
 * real-time signals: tgkill to a pseudo-random thread (SIGRTMIN) and, every
 * fourth, kill to the whole process (SIGRTMIN+1, which the main thread
 * blocks, so one of the ring's threads takes it).  A handler counts what
 * each thread receives.  Checked: every thread makes all its passes and is
 * joined (none lost: /proc/self/status says 201 threads while they wait,
 * 1 after), every signal sent was handled exactly once (queued signals are
 * not merged, and a signal to the process goes to one thread only), and
 * by whom it was meant for.  Then the kernel's memory is back where it was
 * and a second program (fork + exec) runs.  Fixed counts, not a fixed time.
 */
#include "next.h"
#include "exhaust.h"
#include <pthread.h>

#define NTHREADS 200
#define ROUNDS 20
#define SIGNALS 2000
#define IN_FLIGHT 32 /* most signals sent but not yet handled */

static volatile int slot[NTHREADS];   /* the ring's futex words */
static volatile int release_word;     /* threads may leave when 1 */
static volatile long tids[NTHREADS];
static volatile int passes[NTHREADS];
static volatile long got_thread[NTHREADS + 1]; /* SIGRTMIN, by receiver */
static volatile long got_process[NTHREADS + 1]; /* SIGRTMIN+1, by receiver */
static volatile int arrived;           /* threads done with the ring */
static volatile long handled;          /* all signals handled */
static __thread int my_index = NTHREADS; /* the main thread's */

static void handler(int sig)
{
	if (sig == SIGRTMIN)
		__atomic_fetch_add(&got_thread[my_index], 1, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_add(&got_process[my_index], 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&handled, 1, __ATOMIC_SEQ_CST);
}

/* Waits until *w >= want (futex wait on the value seen). */
static void await_at_least(volatile int *w, int want)
{
	int v;

	while ((v = __atomic_load_n(w, __ATOMIC_SEQ_CST)) < want)
		t_futex(w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void set_and_wake(volatile int *w, int v)
{
	__atomic_store_n(w, v, __ATOMIC_SEQ_CST);
	t_futex(w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *ring(void *arg)
{
	int i = (int)(long)arg, r;

	my_index = i;
	tids[i] = t_gettid();
	for (r = 0; r < ROUNDS; r++) {
		await_at_least(&slot[i], r + 1);
		passes[i]++;
		if (i == NTHREADS - 1)
			set_and_wake(&slot[0], r + 2);
		else
			set_and_wake(&slot[i + 1], r + 1);
	}
	__atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
	t_futex(&arrived, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	await_at_least(&release_word, 1);
	return NULL;
}

static int threads_in_status(void)
{
	return (int)t_proc_kv("/proc/self/status", "Threads:");
}

static void storm(void)
{
	static long sent_thread[NTHREADS];
	static pthread_t th[NTHREADS];
	long sent_process = 0, sent = 0, sum_t = 0, sum_p = 0, refused = 0;
	unsigned long rnd = 12345;
	pthread_attr_t a;
	int i, n;

	CHECK_EQ(t_sigaction(SIGRTMIN, handler, SA_RESTART), 0);
	CHECK_EQ(t_sigaction(SIGRTMIN + 1, handler, SA_RESTART), 0);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], &a, ring, (void *)(long)i) != 0)
			break;
	CHECK_EQ(i, NTHREADS);
	if (i != NTHREADS)
		_exit(1);
	/* Signals to the process go to the ring's threads, not the sender. */
	CHECK_EQ(t_block(SIGRTMIN + 1, SIG_BLOCK), 0);
	for (i = 0; i < NTHREADS; i++)
		while (tids[i] == 0)
			sched_yield();
	set_and_wake(&slot[0], 1); /* the token starts */
	for (n = 0; n < SIGNALS; n++) {
		/* Keep the queues short: wait for the handlers to catch up. */
		while (sent - __atomic_load_n(&handled, __ATOMIC_SEQ_CST) >=
		       IN_FLIGHT)
			sched_yield();
		rnd = rnd * 6364136223846793005UL + 1442695040888963407UL;
		if (n % 4 == 3) {
			if (kill(getpid(), SIGRTMIN + 1) == 0) {
				sent_process++;
				sent++;
			} else {
				refused++;
			}
		} else {
			int t = (int)((rnd >> 33) % NTHREADS);

			if (t_tgkill(getpid(), tids[t], SIGRTMIN) == 0) {
				sent_thread[t]++;
				sent++;
			} else {
				refused++;
			}
		}
	}
	/* Every thread finishes the ring and waits to be released. */
	while ((n = __atomic_load_n(&arrived, __ATOMIC_SEQ_CST)) < NTHREADS)
		t_futex(&arrived, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
	while (__atomic_load_n(&handled, __ATOMIC_SEQ_CST) < sent)
		sched_yield();
	CHECK_EQ(threads_in_status(), NTHREADS + 1);
	set_and_wake(&release_word, 1);
	t_futex(&release_word, FUTEX_WAKE_PRIVATE, NTHREADS, NULL, NULL, 0);
	for (i = 0; i < NTHREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	/* pthread_join returns once the kernel cleared the thread's tid
	 * word, which Linux does before the thread is gone from /proc: wait
	 * for the count to come down (a lost thread would hang here). */
	while (threads_in_status() > 1)
		sched_yield();
	CHECK_EQ(threads_in_status(), 1);
	for (i = 0; i < NTHREADS; i++) {
		CHECK_EQ(passes[i], ROUNDS);
		CHECK_EQ(got_thread[i], sent_thread[i]);
		sum_t += got_thread[i];
	}
	for (i = 0; i <= NTHREADS; i++)
		sum_p += got_process[i];
	CHECK_EQ(got_thread[NTHREADS], 0);
	CHECK_EQ(got_process[NTHREADS], 0);
	CHECK_EQ(sum_p, sent_process);
	CHECK_EQ(sum_t + sum_p, sent);
	CHECK_EQ(handled, sent);
	CHECK_EQ(refused, 0);
	t_note("%d threads, %d ring passes, %ld signals (%ld to threads, %ld "
	       "to the process)",
	       NTHREADS, NTHREADS * ROUNDS, sent, sum_t, sum_p);
}

/* One storm in a child process (its threads' stacks, which glibc caches,
 * go with it). */
static void run_storm(void)
{
	long long t0 = t_now_ns(CLOCK_MONOTONIC);
	pid_t pid = fork();

	if (pid == 0) {
		storm();
		CHILD_DONE();
	}
	CHECK(pid > 0 && t_wait_ok(pid));
	t_note("storm took %lld ms", (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
}

int main(int argc, char **argv)
{
	struct x_usage before, after;

	X_MAYBE_SECOND(argc, argv);
	/* A first storm sets the kernel's high-water marks (the futex
	 * waiter list and signal queues keep the capacity the most waiters
	 * needed); the second must leave nothing behind. */
	run_storm();
	x_settle(&after);
	x_read_usage(&before);
	run_storm();
	x_read_usage(&after);
	x_check_usage("before and after the storm", &before, &after, 0);
	x_run_second();
	DONE();
}
