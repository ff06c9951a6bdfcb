/*
 * exhaust.h - shared parts of the exhaustion scenarios (issue 11 item 7):
 * kernel memory readings before and after a scenario, and the "second
 * program" that must run once the scenario is over.
 *
 * Include after next.h.
 */
#ifndef TRELLIS_EXHAUST_H
#define TRELLIS_EXHAUST_H

#include <sys/resource.h>

struct x_usage {
	long long heap_bytes; /* live objects, by /proc/slabinfo */
	long long heap_pages; /* slab pages and large blocks */
	long long free_kb;    /* /proc/meminfo MemFree */
	char meminfo[4096];   /* the raw files, to show what changed */
	char slabinfo[16384];
};

/* Sums /proc/slabinfo and reads MemFree; returns 0 if slabinfo cannot be
 * read (a host without root). */
static inline int x_read_usage(struct x_usage *u)
{
	memset(u, 0, sizeof *u);
	u->free_kb = t_proc_kv("/proc/meminfo", "MemFree:");
	if (t_read_file("/proc/meminfo", u->meminfo, sizeof u->meminfo) <= 0)
		u->meminfo[0] = 0;
	return t_heap_usage(&u->heap_bytes, &u->heap_pages, u->slabinfo,
			    sizeof u->slabinfo) > 0;
}

/* Call before the first reading, with the struct the second reading will
 * use: the test process then touches what a fork and a reading touch (its
 * own pages copied on write after a fork, the reading's buffers and that
 * struct on its stack) before the first reading, so those pages are not
 * counted as the scenario's. */
static inline void x_settle(struct x_usage *later)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		t_wait(pid);
	x_read_usage(later);
}

/* Prints the lines of `b` that are not in `a`, and those of `a` that are
 * not in `b` (what changed in a /proc file between two readings). */
static inline void x_diff_lines(const char *b, const char *a)
{
	const char *x[2] = { b, a };
	int k;

	for (k = 0; k < 2; k++) {
		const char *l = x[k], *other = x[1 - k];

		while (*l) {
			const char *e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l) : strlen(l);
			const char *o = other;
			int found = 0;

			while (*o && !found) {
				const char *oe = strchr(o, '\n');
				size_t on = oe ? (size_t)(oe - o) : strlen(o);

				found = on == n && memcmp(o, l, n) == 0;
				o = oe ? oe + 1 : o + on;
			}
			if (!found)
				t_printf("    %s %.*s\n", k ? "after: " : "before:",
					 (int)n, l);
			l = e ? e + 1 : l + n;
		}
	}
}

/* Prints the readings; on Trellis checks that the heap and free memory
 * came back to within the slack.  The slack every scenario shares (exact
 * counts, no timing), the same reasoning as leak_blocking_waits:
 *   - live heap objects: 16 KiB for objects whose number does not depend
 *     on the size of the scenario (this process in /proc, a log line);
 *   - heap pages: one empty slab kept per size class for reuse (8
 *     classes) plus 4;
 *   - free memory: those heap pages plus `extra_pages` (the scenario's
 *     own, explained at the call) plus 8 pages for the pages the test
 *     itself touches between the two readings and a kernel stack whose
 *     last reference goes at the next task switch.
 * A scenario that leaked one object per process, descriptor or page
 * would be far above it (hundreds to millions of each). */
static inline void x_check_usage(const char *what, const struct x_usage *b,
				 const struct x_usage *a, long extra_pages)
{
	t_note("%s: heap objects %lld -> %lld bytes, heap pages %lld -> "
	       "%lld, MemFree %lld -> %lld kB",
	       what, b->heap_bytes, a->heap_bytes, b->heap_pages,
	       a->heap_pages, b->free_kb, a->free_kb);
	if (!t_is_trellis())
		return; /* the host's counters are not ours alone */
	CHECK(b->heap_bytes > 0 && b->free_kb > 0);
	CHECK(a->heap_bytes <= b->heap_bytes + 16 * 1024);
	CHECK(a->heap_pages <= b->heap_pages + 8 + 4);
	CHECK(a->free_kb >= b->free_kb - 4 * (8 + 4 + 8 + extra_pages));
	if (a->heap_bytes > b->heap_bytes + 16 * 1024 ||
	    a->heap_pages > b->heap_pages + 8 + 4 ||
	    a->free_kb < b->free_kb - 4 * (8 + 4 + 8 + extra_pages)) {
		x_diff_lines(b->meminfo, a->meminfo);
		x_diff_lines(b->slabinfo, a->slabinfo);
	}
}

/* ---- the second program --------------------------------------------- */

/* The work the second program does: a checksum of a freshly allocated
 * megabyte, passed through a pipe to a child of its own, which sends it
 * back.  Run as `<this test> --second`: it prints "second ok <sum>". */
#define X_SECOND_ARG "--second"

static inline unsigned long x_second_sum(void)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < (1 << 20) / sizeof(unsigned long); i++)
		sum = sum * 31 + i;
	return sum;
}

static inline int x_second_main(void)
{
	size_t n = (1 << 20) / sizeof(unsigned long), i;
	unsigned long *buf = malloc(n * sizeof *buf), sum = 0, back = 0;
	int p[2], q[2];
	pid_t pid;

	if (!buf || pipe(p) != 0 || pipe(q) != 0)
		return 3;
	for (i = 0; i < n; i++)
		buf[i] = i;
	for (i = 0; i < n; i++)
		sum = sum * 31 + buf[i];
	pid = fork();
	if (pid < 0)
		return 4;
	if (pid == 0) {
		unsigned long v;

		if (read(p[0], &v, sizeof v) != sizeof v)
			_exit(5);
		_exit(write(q[1], &v, sizeof v) == sizeof v ? 0 : 6);
	}
	if (write(p[1], &sum, sizeof sum) != sizeof sum ||
	    read(q[0], &back, sizeof back) != sizeof back)
		return 7;
	if (t_wait(pid) != 0 || back != sum)
		return 8;
	free(buf);
	t_printf("second ok %lu\n", sum);
	return 0;
}

/* Call first thing in main: runs the second program when asked to. */
#define X_MAYBE_SECOND(argc, argv)                                         \
	do {                                                               \
		if ((argc) > 1 && strcmp((argv)[1], X_SECOND_ARG) == 0)     \
			return x_second_main();                            \
	} while (0)

/* Runs the second program (this test's binary, /proc/self/exe, with
 * --second) by fork and exec, and checks that it exited 0 and printed
 * the right checksum.  Returns 1 if it did. */
static inline int x_run_second(void)
{
	char out[128], want[64];
	int p[2], st;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(p) != 0) {
		CHECK(!"pipe for the second program");
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		CHECK(!"fork of the second program");
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		char *argv[] = { "second", X_SECOND_ARG, NULL };

		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[1]);
	while (got < (ssize_t)sizeof out - 1 &&
	       (n = read(p[0], out + got, sizeof out - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(p[0]);
	st = t_wait(pid);
	snprintf(want, sizeof want, "second ok %lu\n", x_second_sum());
	CHECK_EQ(st, 0);
	CHECK(strcmp(out, want) == 0);
	if (st != 0 || strcmp(out, want) != 0) {
		t_note("second program: status %#x, output \"%s\"", st, out);
		return 0;
	}
	return 1;
}

#endif
