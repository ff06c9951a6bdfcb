/*
 * Shared declarations of the in-guest syscall fuzzer (see fuzz.c for the
 * design).  The fuzzer is built static against musl, with no stack
 * protector: a fuzzed arch_prctl(ARCH_SET_FS) may point %fs anywhere, so
 * nothing that runs after fuzzing starts may touch thread-local storage.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdint.h>
#include <stddef.h>

#define MAX_THREADS 8
#define MAX_PROTECTED 64
#define MAX_FDS 40
#define MAX_ODD 16
#define RING 8
/* Highest syscall number in the table (syscalls.h). */
#define FUZZ_SC_LAST 462

/* The descriptor that trace lines go to (a copy of the console in --trace
 * mode, of /dev/null otherwise, so that fd numbering is the same). */
#define TRACE_FD 1000

/* The fuzz zone: the buffers and structures that pointer arguments point
 * to, at fixed addresses so that a replay sees the same values.  Every
 * page of it may be unmapped, remapped or overwritten by fuzzed calls. */
#define ZONE 0x200000000UL
#define RW_BUF (ZONE + 0x1000)
#define RW_LEN 0x4000UL
#define RO_BUF (ZONE + 0x6000)
#define RO_LEN 0x2000UL
#define HOLE (ZONE + 0x9000)
#define STRUCTS (ZONE + 0x10000)
#define STRUCTS_LEN 0x8000UL
#define ARENA (ZONE + 0x20000)
#define ARENA_PAGES 64
#define ZONE_END (ARENA + ARENA_PAGES * 0x1000UL)
/* The path strings: outside the zone, read-only, never unmapped (calls
 * that would unmap or remap them run in a sacrificial process). */
#define PATHS 0x300000000UL
#define PATHS_LEN 0x2000UL

/* Linux's end of user space on x86-64 (TASK_SIZE_MAX). */
#define USER_END 0x7ffffffff000UL

struct call {
	uint64_t nr;
	uint64_t a[6];
};

/* Labels for the trace: which pool each argument came from. */
struct labels {
	const char *l[6];
};

/* One fuzzed descriptor: its number and a name for traces. */
struct fdent {
	int fd;
	const char *name;
};

struct range {
	uint64_t lo, hi;
};

/* The page the parent and the batch's child share (MAP_SHARED). */
struct shared {
	/* Per worker: index of the call started last, calls finished. */
	volatile uint64_t cur[MAX_THREADS];
	volatile uint64_t done[MAX_THREADS];
	/* The call in flight, for the parent's reports, and the calls
	 * before it (ring[t][i % RING] holds call i). */
	struct call inflight[MAX_THREADS];
	struct call ring[MAX_THREADS][RING];
	/* Waiting for a sacrificial process (the watchdog leaves it be). */
	volatile int waiting[MAX_THREADS];
	/* Set by the watchdog when a worker ignores its interrupts. */
	volatile int stuck[MAX_THREADS];
	volatile int finished;
	volatile int setup_done;
	volatile int setup_failed;
	volatile char setup_msg[128];
	/* Counters, summed by the parent over every child. */
	volatile uint64_t n_ok, n_err, n_enosys, n_sacrificed, n_sac_fail;
	volatile uint64_t n_odd;
	struct {
		uint64_t batch, idx, ret;
		struct call c;
	} odd[MAX_ODD];
	/* Syscall numbers (below 1024) that answered other than ENOSYS, and
	 * that answered ENOSYS. */
	volatile uint64_t answered[16];
	volatile uint64_t enosys[16];
};

/* Campaign settings, identical in the parent and every child. */
struct config {
	uint64_t seed;
	uint64_t batch_calls; /* per worker */
	uint64_t range_lo, range_hi;
	int threads;
	int uid; /* -1: stay root */
	int trace;
};

extern struct config cfg;

/* gen.c */
void pools_init(void);
void pools_child_fill(const struct fdent *fds, int nfds, int self_pid);
void gen_set_implemented(const uint64_t *bits);
void gen_limit_nrs(uint64_t lo, uint64_t hi);
int sc_known(int nr);
void gen_call(struct call *c, struct labels *lab, uint64_t batch, int thread,
	      uint64_t idx);
const char *sc_name(uint64_t nr, char *tmp);
int format_call(char *out, size_t cap, const struct call *c,
		const struct labels *lab);

/* fuzz.c: the no-op signal handler and its sigreturn trampoline */
void fz_noop_handler(int sig);
void fz_restorer(void);

/* raw system calls, no errno */
static inline long raw6(long n, long a, long b, long c, long d, long e,
			long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define raw0(n) raw6(n, 0, 0, 0, 0, 0, 0)
#define raw1(n, a) raw6(n, (long)(a), 0, 0, 0, 0, 0)
#define raw2(n, a, b) raw6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define raw3(n, a, b, c) raw6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define raw4(n, a, b, c, d) \
	raw6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* Small formatting helpers that use no libc state. */
size_t fz_strlen(const char *s);
char *put_str(char *p, char *end, const char *s);
char *put_hex(char *p, char *end, uint64_t v);
char *put_dec(char *p, char *end, int64_t v);
char *put_udec(char *p, char *end, uint64_t v);
void write_all(int fd, const char *buf, size_t n);

#endif
