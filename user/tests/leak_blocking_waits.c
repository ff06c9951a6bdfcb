/*
 * leak_blocking_waits: many blocking waits leave no kernel memory behind.
 *
 * Issue 11: every blocking wait (a pipe read, a futex wait, a poll) left
 * an entry in the kernel's timer wake-up list, holding the task, so the
 * kernel heap grew by one entry per wait until an allocation failed.  This
 * test runs WAITS blocking waits in total (argv[1]; default below, small
 * enough for `make test` under QEMU TCG; the 10^6 is run by hand:
 * `cargo xtask run -- /tests/leak_blocking_waits 1000000`), split evenly
 * between
 *   - pipe ping-pong between two processes (each side blocks in read),
 *   - futex wait/wake ping-pong between two threads, half of the waits
 *     without a timeout and half with a long one (a deadline that never
 *     comes during the test: the waiter is woken early every time),
 *   - poll ping-pong between two processes, half with an infinite timeout
 *     and half with a long one,
 * after a warm-up round of the same mix, and compares the kernel heap
 * (/proc/slabinfo: bytes of live objects, and slab pages) and free memory
 * (/proc/meminfo MemFree) before and after.
 *
 * The slack allowed (exact counts, no timing):
 *   - live heap objects: 16 KiB, for kernel objects whose number does
 *     not depend on the number of waits (the test's own process and
 *     threads appear in /proc, a log line);
 *   - heap pages: one page per cache (the heap keeps one empty slab per
 *     size class for reuse; 8 classes) plus 4 pages;
 *   - free memory: those heap pages plus 8 pages.  The measurement
 *     itself costs a constant 4 pages today (the same with 6 waits as
 *     with 10^6: pages this process touches between the two readings);
 *     the rest covers a kernel stack of a task whose last reference goes
 *     at the next switch.
 * The leak this guards against costs at least 16 bytes per wait: with the
 * default count that is several hundred KiB, far above the slack.
 *
 * On a Linux host the counters move with everything else the machine does,
 * so there the numbers are only reported; the waits still have to work.
 */
#include "next.h"
#include <poll.h>
#include <pthread.h>

#define DEFAULT_WAITS 100000L
#define LONG_TIMEOUT_MS (3600 * 1000) /* never reached while the test runs */

struct usage {
	long long heap_bytes; /* live objects, by slabinfo */
	long long heap_pages; /* slab pages and large blocks */
	long long free_kb;    /* MemFree */
	long long stack_kb;   /* KernelStack (reported only) */
	long long tables_kb;  /* PageTables (reported only) */
};

/* Sums /proc/slabinfo; 0 if it cannot be read (a host without root). */
static int read_usage(struct usage *u)
{
	memset(u, 0, sizeof *u);
	u->free_kb = t_proc_kv("/proc/meminfo", "MemFree:");
	u->stack_kb = t_proc_kv("/proc/meminfo", "KernelStack:");
	u->tables_kb = t_proc_kv("/proc/meminfo", "PageTables:");
	return t_heap_usage(&u->heap_bytes, &u->heap_pages, NULL, 0) > 0;
}

/* ---- pipe ping-pong between two processes ------------------------------ */

static void pipe_pingpong(long rounds, int use_poll)
{
	int to_child[2], to_parent[2];
	pid_t pid;
	long i;
	char c = 'p';

	CHECK_EQ(pipe(to_child), 0);
	CHECK_EQ(pipe(to_parent), 0);
	pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		for (i = 0; i < rounds; i++) {
			if (use_poll) {
				struct pollfd pf = { to_child[0], POLLIN, 0 };
				int ms = (i & 1) ? LONG_TIMEOUT_MS : -1;

				if (poll(&pf, 1, ms) != 1) {
					CHECK(!"child poll");
					break;
				}
			}
			if (read(to_child[0], &c, 1) != 1 ||
			    write(to_parent[1], &c, 1) != 1) {
				CHECK(!"child read/write");
				break;
			}
		}
		CHILD_DONE();
	}
	CHECK(pid > 0);
	close(to_child[0]);
	close(to_parent[1]);
	for (i = 0; i < rounds; i++) {
		if (use_poll) {
			struct pollfd pf = { to_parent[0], POLLIN, 0 };
			int ms = (i & 1) ? -1 : LONG_TIMEOUT_MS;

			if (write(to_child[1], &c, 1) != 1 ||
			    poll(&pf, 1, ms) != 1 || read(to_parent[0], &c, 1) != 1) {
				CHECK(!"parent poll round");
				break;
			}
			continue;
		}
		if (write(to_child[1], &c, 1) != 1 ||
		    read(to_parent[0], &c, 1) != 1) {
			CHECK(!"parent pipe round");
			break;
		}
	}
	close(to_child[1]);
	close(to_parent[0]);
	t_wait_ok(pid);
}

/* ---- futex ping-pong between two threads ------------------------------- */

static volatile int turn; /* 0: main thread's turn, 1: the other's */
static long futex_rounds;
static volatile int futex_errors;

/* Waits until turn == want; with a (never reached) timeout on odd rounds. */
static void futex_await(int want, long round)
{
	struct timespec ts = { LONG_TIMEOUT_MS / 1000, 0 };

	for (;;) {
		int v = __atomic_load_n(&turn, __ATOMIC_ACQUIRE);
		long r;

		if (v == want)
			return;
		r = t_futex(&turn, FUTEX_WAIT_PRIVATE, v, (round & 1) ? &ts : NULL,
			    NULL, 0);
		if (r != 0 && errno != EAGAIN && errno != EINTR) {
			futex_errors++;
			return;
		}
	}
}

static void futex_pass(int to)
{
	__atomic_store_n(&turn, to, __ATOMIC_RELEASE);
	t_futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *futex_partner(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < futex_rounds; i++) {
		futex_await(1, i);
		futex_pass(0);
	}
	return NULL;
}

static void futex_pingpong(long rounds)
{
	pthread_t th;
	long i;

	turn = 0;
	futex_rounds = rounds;
	CHECK_EQ(pthread_create(&th, NULL, futex_partner, NULL), 0);
	for (i = 0; i < rounds; i++) {
		futex_pass(1);
		futex_await(0, i + 1);
	}
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(futex_errors, 0);
}

/* Each round trip is two blocking waits, one on each side. */
static void run_waits(long waits)
{
	long rounds = waits / 6 + 1;

	pipe_pingpong(rounds, 0);
	futex_pingpong(rounds);
	pipe_pingpong(rounds, 1);
}

int main(int argc, char **argv)
{
	long waits = argc > 1 ? atol(argv[1]) : DEFAULT_WAITS;
	struct usage before, after;
	int have;
	long long t0;

	if (waits <= 0) {
		t_printf("usage: %s [WAITS]\n", argv[0]);
		return 2;
	}
	/* Warm-up: the same mix, so that every cache the waits use exists. */
	run_waits(600);
	have = read_usage(&before);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	run_waits(waits);
	read_usage(&after);
	t_note("%ld blocking waits in %lld ms; heap objects %lld -> %lld bytes, "
	       "heap pages %lld -> %lld, MemFree %lld -> %lld kB, KernelStack "
	       "%lld -> %lld kB, PageTables %lld -> %lld kB",
	       waits, (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000,
	       before.heap_bytes, after.heap_bytes, before.heap_pages,
	       after.heap_pages, before.free_kb, after.free_kb, before.stack_kb,
	       after.stack_kb, before.tables_kb, after.tables_kb);
	if (!t_is_trellis())
		DONE(); /* the host's counters are not ours alone */
	CHECK(have);
	CHECK(before.heap_bytes > 0 && before.free_kb > 0);
	CHECK(after.heap_bytes <= before.heap_bytes + 16 * 1024);
	CHECK(after.heap_pages <= before.heap_pages + 8 + 4);
	CHECK(after.free_kb >= before.free_kb - 4 * (8 + 4 + 8));
	DONE();
}
