/*
 * syscall_robustness_ipc: the issue-3 syscalls (clone, futex, wait, process
 * groups, signals, timers, pipes, readiness, fcntl locks, mount, the *at
 * family, attributes, credentials, terminals, clocks, limits, scheduling)
 * are called many times with garbage arguments and must come back with a
 * value or a real -errno: never a panic, a hang or a kernel-internal code.
 *
 * Like syscall_robustness (the issue-2 fuzzer) each syscall's batch runs in
 * a forked child that calls the kernel with inline-asm `syscall`, with
 * arguments drawn by a deterministic PRNG from pools of bad values.  New
 * here: a batch child owns a set of real objects that the pools name by
 * role, so the same seed means the same calls on any kernel:
 *   fds      a read-only and a read-write scratch file, the scratch
 *            directory, an O_PATH fd, a non-blocking pipe (with data), an
 *            eventfd, an epoll instance watching both, /dev/null, and on
 *            Trellis the console (a copy of stdin, if it is a terminal);
 *   pids     the batch child itself, a helper thread of it, a child that
 *            sleeps (the "victim", which may be stopped or killed), an
 *            unreaped zombie child, and pids that cannot exist;
 *   memory   a page of "interesting" words (0, -1, sizes, bad pointers,
 *            INT_MAX, ...) placed so that structures may run into an
 *            unmapped guard page, and two futex words.
 *
 * Safety on the host (`make test` runs this on Linux as root):
 *   - path arguments are only ever invalid pointers, so nothing is created,
 *     mounted, chroot'ed or changed outside the scratch directory (a tmpfs
 *     when root, which also bounds fallocate);
 *   - signals, priorities, affinities, limits and fcntl owners only ever
 *     name the batch child, its own thread and children, or pids above
 *     pid_max; never 0, -1 or a negative group; SIGKILL and SIGSTOP are
 *     never sent to the batch child itself;
 *   - fchmod/fchown only reach scratch files and pipes (never /dev/null,
 *     anonymous inodes or terminals); terminals are only fuzzed on Trellis,
 *     and the console's settings are restored after every batch;
 *   - setuid-family calls run in the disposable batch child; sync is
 *     called a few times only; real-time scheduling classes get only bad
 *     parameter pointers; no call can sleep for long (timeouts are zero,
 *     tiny or invalid, futex words never hold the compared value).
 *
 * Checked: every call returns a value or -errno for a real errno (1..133);
 * no call stalls (the parent kills a batch child that makes no progress for
 * STALL_SECS and records a failure); exit/exit_group end the process with
 * the given status; death of a batch child by a signal is accepted (garbage
 * handlers, stacks and rt_sigreturn frames kill it) and the batch goes on
 * in a fresh child after the call that killed it.  Exact errnos of calls
 * with one bad argument are checked in exact_errnos().
 *
 * Environment: FUZZ_SEED (number) changes the seed, FUZZ_ITERS the calls
 * per syscall, FUZZ_ONLY=name runs one syscall, FUZZ_TRACE=1 prints every
 * call's result ("T name iter result") for comparing two kernels (2: and
 * its arguments, as the parent computes them),
 * FUZZ_VERBOSE=1 the time each syscall's batches took.
 */
#include "next.h"
#include <sys/epoll.h>
#include <sys/prctl.h>

#define PER_SYSCALL 160
#define MAX_ITERS 4096
#define MAX_DEATHS 24
#define STALL_SECS 30
#define DEFAULT_SEED 0x1bc3f00d5eedULL

/* The futex words hold this; the 'V' pool never produces it. */
#define FUTEX_VAL 0x1a7a7a7a

#ifndef __WALL
#define __WALL 0x40000000
#endif

static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
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

#define raw0(n) raw6((n), 0, 0, 0, 0, 0, 0)
#define raw1(n, a) raw6((n), (long)(a), 0, 0, 0, 0, 0)
#define raw2(n, a, b) raw6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define raw3(n, a, b, c) raw6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define raw4(n, a, b, c, d) \
	raw6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/*
 * clone(2) whose child runs no C code: it calls exit(0) at once, touching
 * neither memory nor the stack, so any flags and stack are harmless.
 */
static inline long raw_clone(long flags, long stack, long ptid, long ctid,
			     long tls)
{
	register long r10 __asm__("r10") = ctid;
	register long r8 __asm__("r8") = tls;
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "mov $60, %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "syscall\n\t"
			 "ud2\n\t"
			 "1:\n\t"
			 : "=a"(ret)
			 : "a"((long)SYS_clone), "D"(flags), "S"(stack),
			   "d"(ptid), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

/* A syscall made with the stack pointer at sp (signals are delivered on
 * the way back, onto that stack). */
static inline long raw_on_stack(long n, long a, long b, long c,
				unsigned long sp)
{
	long ret;

	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %[sp], %%rsp\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rsp\n\t"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), [sp] "r"(sp)
			 : "rcx", "r11", "r12", "memory");
	return ret;
}

/*
 * Argument kinds:
 *   P bad pointer (never valid)        B garbage buffer, or bad pointer
 *   t timespec/timeval pointer (tiny or invalid values, never NULL)
 *   T like t, or NULL or a bad pointer  M poll/epoll timeout in ms (0, 1)
 *   v timeval pointer (tiny or negative values, never NULL)
 *   F any fd of the pool               f fd safe for fchmod/fchown/writes
 *   I int / flags                      L length / offset
 *   K pid to signal (never 0/-1/<0)    k K, or 0 (= self where harmless)
 *   J wait4 pid (any: only our children are ever waited for)
 *   S signal number                    C clock id
 *   U futex address                    O futex op       V futex value
 *   W wait4 options (always WNOHANG)   w waitid options (always WNOHANG)
 *   H fcntl command                    X fcntl / ioctl argument
 *   R ioctl request                    G uid / gid
 *   Y small selector (which, resource, how, idtype)
 *   N clone flags                      E exit status
 *   Z clone stack (B, canonical only)
 */
enum { XF_DEADLY = 1, XF_EXIT = 2, XF_NOTHREAD = 4 };

struct sc {
	const char *name;
	long nr;
	const char *args;
	int flags;
	int count; /* calls per batch (0: the default) */
};

/* Pseudo syscall numbers for the custom steps. */
#define X_SIGFRAME (-2)
#define X_SIGRETURN (-3)

static const struct sc table[] = {
	{ "clone", SYS_clone, "NZBBB", 0, 0 },
	{ "futex", SYS_futex, "UOVTUV", 0, 0 },
	{ "exit_group", SYS_exit_group, "E", XF_EXIT, 12 },
	{ "exit", SYS_exit, "E", XF_EXIT | XF_NOTHREAD, 12 },
	{ "setsid", SYS_setsid, "", 0, 8 },
	{ "setpgid", SYS_setpgid, "kk", 0, 0 },
	{ "getpgid", SYS_getpgid, "k", 0, 0 },
	{ "getsid", SYS_getsid, "k", 0, 0 },
	{ "wait4", SYS_wait4, "JBWB", 0, 0 },
	{ "waitid", SYS_waitid, "YJBwB", 0, 0 },
	{ "rt_sigaction", SYS_rt_sigaction, "SBBL", 0, 0 },
	{ "rt_sigprocmask", SYS_rt_sigprocmask, "YBBL", 0, 0 },
	{ "rt_sigreturn", X_SIGRETURN, "", XF_DEADLY, 24 },
	{ "sigframe", X_SIGFRAME, "", XF_DEADLY, 48 },
	{ "rt_sigpending", SYS_rt_sigpending, "BL", 0, 0 },
	{ "rt_sigsuspend", SYS_rt_sigsuspend, "PL", 0, 0 },
	{ "rt_sigtimedwait", SYS_rt_sigtimedwait, "BBtL", 0, 0 },
	{ "rt_sigqueueinfo", SYS_rt_sigqueueinfo, "KSB", 0, 0 },
	{ "rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo, "KKSB", 0, 0 },
	{ "sigaltstack", SYS_sigaltstack, "BB", 0, 0 },
	{ "kill", SYS_kill, "KS", 0, 0 },
	{ "tkill", SYS_tkill, "KS", 0, 0 },
	{ "tgkill", SYS_tgkill, "KKS", 0, 0 },
	{ "alarm", SYS_alarm, "I", 0, 0 },
	{ "setitimer", SYS_setitimer, "YBB", 0, 0 },
	{ "getitimer", SYS_getitimer, "YB", 0, 0 },
	{ "pipe", SYS_pipe, "B", 0, 0 },
	{ "pipe2", SYS_pipe2, "BI", 0, 0 },
	{ "mknod", SYS_mknod, "PII", 0, 0 },
	{ "mknodat", SYS_mknodat, "FPII", 0, 0 },
	{ "poll", SYS_poll, "BLM", 0, 0 },
	{ "ppoll", SYS_ppoll, "BLtBL", 0, 0 },
	{ "select", SYS_select, "IBBBv", 0, 0 },
	{ "pselect6", SYS_pselect6, "IBBBtB", 0, 0 },
	{ "epoll_create1", SYS_epoll_create1, "I", 0, 0 },
	{ "epoll_ctl", SYS_epoll_ctl, "FYFB", 0, 0 },
	{ "epoll_wait", SYS_epoll_wait, "FBIM", 0, 0 },
	{ "epoll_pwait", SYS_epoll_pwait, "FBIMBL", 0, 0 },
	{ "epoll_pwait2", SYS_epoll_pwait2, "FBItBL", 0, 0 },
	{ "eventfd2", SYS_eventfd2, "II", 0, 0 },
	{ "fcntl", SYS_fcntl, "FHX", 0, 0 },
	{ "flock", SYS_flock, "FI", 0, 0 },
	{ "mount", SYS_mount, "PPPIP", 0, 0 },
	{ "umount2", SYS_umount2, "PI", 0, 0 },
	{ "mkdirat", SYS_mkdirat, "FPI", 0, 0 },
	{ "unlinkat", SYS_unlinkat, "FPI", 0, 0 },
	{ "renameat", SYS_renameat, "FPFP", 0, 0 },
	{ "linkat", SYS_linkat, "FPFPI", 0, 0 },
	{ "symlinkat", SYS_symlinkat, "PFP", 0, 0 },
	{ "fchownat", SYS_fchownat, "fPGGI", 0, 0 },
	{ "fchmodat", SYS_fchmodat, "fPII", 0, 0 },
	{ "futimesat", SYS_futimesat, "fPB", 0, 0 },
	{ "faccessat2", SYS_faccessat2, "FPII", 0, 0 },
	{ "link", SYS_link, "PP", 0, 0 },
	{ "symlink", SYS_symlink, "PP", 0, 0 },
	{ "chmod", SYS_chmod, "PI", 0, 0 },
	{ "fchmod", SYS_fchmod, "fI", 0, 0 },
	{ "chown", SYS_chown, "PGG", 0, 0 },
	{ "fchown", SYS_fchown, "fGG", 0, 0 },
	{ "lchown", SYS_lchown, "PGG", 0, 0 },
	{ "utimensat", SYS_utimensat, "fPBI", 0, 0 },
	{ "truncate", SYS_truncate, "PL", 0, 0 },
	{ "ftruncate", SYS_ftruncate, "fL", 0, 0 },
	{ "fallocate", SYS_fallocate, "fILL", 0, 0 },
	{ "fsync", SYS_fsync, "f", 0, 24 },
	{ "fdatasync", SYS_fdatasync, "f", 0, 24 },
	{ "sync", SYS_sync, "", 0, 3 },
	{ "syncfs", SYS_syncfs, "f", 0, 12 },
	{ "statfs", SYS_statfs, "PB", 0, 0 },
	{ "fstatfs", SYS_fstatfs, "FB", 0, 0 },
	{ "chroot", SYS_chroot, "P", 0, 0 },
	{ "sendfile", SYS_sendfile, "ffBL", 0, 0 },
	{ "copy_file_range", SYS_copy_file_range, "fBfBLI", 0, 0 },
	{ "setuid", SYS_setuid, "G", 0, 0 },
	{ "setgid", SYS_setgid, "G", 0, 0 },
	{ "setreuid", SYS_setreuid, "GG", 0, 0 },
	{ "setregid", SYS_setregid, "GG", 0, 0 },
	{ "setresuid", SYS_setresuid, "GGG", 0, 0 },
	{ "setresgid", SYS_setresgid, "GGG", 0, 0 },
	{ "getresuid", SYS_getresuid, "BBB", 0, 0 },
	{ "getresgid", SYS_getresgid, "BBB", 0, 0 },
	{ "setfsuid", SYS_setfsuid, "G", 0, 0 },
	{ "setfsgid", SYS_setfsgid, "G", 0, 0 },
	{ "setgroups", SYS_setgroups, "LB", 0, 0 },
	{ "getgroups", SYS_getgroups, "LB", 0, 0 },
	{ "ioctl", SYS_ioctl, "FRX", 0, 0 },
	{ "clock_gettime", SYS_clock_gettime, "CB", 0, 0 },
	{ "clock_getres", SYS_clock_getres, "CB", 0, 0 },
	{ "clock_nanosleep", SYS_clock_nanosleep, "CITB", 0, 0 },
	{ "nanosleep", SYS_nanosleep, "TB", 0, 0 },
	{ "times", SYS_times, "B", 0, 0 },
	{ "getrusage", SYS_getrusage, "YB", 0, 0 },
	{ "prlimit64", SYS_prlimit64, "kYBB", 0, 0 },
	{ "getrlimit", SYS_getrlimit, "YB", 0, 0 },
	{ "setrlimit", SYS_setrlimit, "YB", 0, 0 },
	{ "sched_yield", SYS_sched_yield, "", 0, 16 },
	{ "sched_getaffinity", SYS_sched_getaffinity, "kLB", 0, 0 },
	{ "sched_setaffinity", SYS_sched_setaffinity, "kLB", 0, 0 },
	{ "getcpu", SYS_getcpu, "BBB", 0, 0 },
	{ "getpriority", SYS_getpriority, "Yk", 0, 0 },
	{ "setpriority", SYS_setpriority, "YKI", 0, 0 },
	{ "sched_setparam", SYS_sched_setparam, "kB", 0, 0 },
	{ "sched_getparam", SYS_sched_getparam, "kB", 0, 0 },
	{ "sched_setscheduler", SYS_sched_setscheduler, "kIB", 0, 0 },
	{ "sched_getscheduler", SYS_sched_getscheduler, "k", 0, 0 },
	{ "sched_get_priority_max", SYS_sched_get_priority_max, "Y", 0, 0 },
	{ "sched_get_priority_min", SYS_sched_get_priority_min, "Y", 0, 0 },
	{ "sched_rr_get_interval", SYS_sched_rr_get_interval, "kB", 0, 0 },
	{ "set_tid_address", SYS_set_tid_address, "B", 0, 0 },
	{ "set_robust_list", SYS_set_robust_list, "BL", 0, 0 },
	{ "get_robust_list", SYS_get_robust_list, "kBB", 0, 0 },
};
#define NSC (sizeof table / sizeof table[0])

static const unsigned long bad_ptrs[] = {
	0UL,
	1UL,
	0xdead0000UL,
	0x7fffffffffffUL,
	0x7ffffffff000UL,
	0xffff800000000000UL,
	0xffffffff80000000UL,
	0x8000000000000000UL,
	~0UL,
	~0UL - 4095,
};
#define NBAD (sizeof bad_ptrs / sizeof bad_ptrs[0])

static const unsigned long lengths[] = {
	0UL,
	1UL,
	4UL,
	8UL,	/* sigsetsize, cpu mask */
	16UL,
	24UL,	/* robust list head */
	128UL,
	4096UL,
	65536UL,
	0x7fffffffUL,
	0x80000000UL,
	0xffffffffUL,
	0x100000008UL,
	1UL << 62,
	~0UL,		/* SIZE_MAX, -1 */
	(unsigned long)-4096L,
	0x8000000000000000UL, /* LONG_MIN */
	0x7fffffffffffffffUL, /* LONG_MAX */
};
#define NLEN (sizeof lengths / sizeof lengths[0])

/* Words the garbage buffer is made of. */
static const unsigned long interesting[] = {
	0, 0, 0, 1, 2, 3, 4, 7, 8, 16, 24, 64, 128, 255, 256, 1000, 2048,
	4096, 65535, 65536, 999999, 999999999, 1000000000,
	0x7fffffffUL, 0x80000000UL, 0xffffffffUL, 0x100000000UL,
	~0UL, ~0UL - 1, (unsigned long)-4096L, (unsigned long)-100L,
	1UL << 62, 0x7fffffffffffffffUL, 0x8000000000000000UL,
	0xdead0000UL, 0x7fffffffffffUL, 0x7ffffffff000UL,
	0xffff800000000000UL, 0xffffffff80000000UL, ~0UL - 4095,
};
#define NINT (sizeof interesting / sizeof interesting[0])


static struct shared *sh;
static unsigned long long seed = DEFAULT_SEED;
static long iters = PER_SYSCALL;
static int trace;
static char scratch[PATH_MAX];
static int scratch_tmpfs;
static int on_trellis;

/* The batch child's objects (roles the generators name). */
struct objects {
	int ro, rw, dir, path, pr, pw, ev, ep, null, tty;
	pid_t self, victim, zombie;
	long helper;
	char *buf;	       /* garbage page, followed by a guard page */
	volatile int *fw;      /* two futex words in their own page */
};
static struct objects o;

struct shared {
	volatile long current;	 /* iteration being run */
	volatile long calls;	 /* calls that returned */
	volatile long errors;	 /* ... with -errno */
	volatile long bad;	 /* returns outside the valid encodings */
	volatile long bad_ret, bad_iter;
	volatile long victim;
	struct objects objs; /* the last batch child's, for messages */
	volatile long ret[MAX_ITERS];
	volatile char done[MAX_ITERS];
};

static unsigned long long rng_state;

static unsigned long long rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static unsigned long pick(const unsigned long *pool, size_t n)
{
	return pool[rnd() % n];
}

/* A pid that no process can have (above the largest pid_max). */
static long no_pid(void)
{
	switch (rnd() % 3) {
	case 0: return 999999 + 4194304;
	case 1: return INT_MAX;
	default: return 4194305 + (long)(rnd() % (INT_MAX - 4194305L));
	}
}

/* The garbage page has its own PRNG stream, so that the arguments do not
 * depend on it. */
static void fill_buf(unsigned long long st)
{
	unsigned long long saved = rng_state;
	unsigned long *w = (unsigned long *)o.buf;
	size_t i;

	rng_state = st;

	for (i = 0; i < PAGE / 8; i++) {
		switch (rnd() % 4) {
		case 0:
		case 1:
			w[i] = pick(interesting, NINT);
			break;
		case 2:
			w[i] = (pick(interesting, NINT) & 0xffffffffUL) |
			       (pick(interesting, NINT) << 32);
			break;
		default:
			w[i] = rnd();
		}
	}
	rng_state = saved;
}

static long gen_ptr(void)
{
	return (long)pick(bad_ptrs, NBAD);
}

static long gen_buf(void)
{
	static const unsigned long offs[] = { 0, 8, 64, 2048, PAGE - 128,
					      PAGE - 64, PAGE - 24, PAGE - 8,
					      PAGE - 4 };

	if (rnd() % 5 == 0)
		return gen_ptr();
	return (long)(o.buf + pick(offs, sizeof offs / sizeof offs[0]));
}

/*
 * A timespec that is zero, tiny or invalid; with micro a timeval that is
 * zero, tiny or negative (select(2) folds tv_usec >= 1000000 into seconds,
 * so large values would be long sleeps there).
 */
static long gen_time(int null_ok, int micro)
{
	static const long vals[][2] = {
		{ 0, 0 }, { 0, 1000 }, { 0, 100000 }, { 0, 1000000 },
		{ -1, 0 }, { 0, -1 }, { 0, 1000000000 }, { 0, 999999 },
		{ LONG_MIN, 0 }, { 0, LONG_MAX }, { -1, -1 }, { 0, 1 },
	};
	static const long tv[][2] = {
		{ 0, 0 }, { 0, 1 }, { 0, 100 }, { 0, 1000 }, { -1, 0 },
		{ 0, -1 }, { LONG_MIN, 0 }, { -1, -1 }, { 0, LONG_MIN },
	};
	long *ts;

	if (null_ok && rnd() % 6 == 0)
		return rnd() % 2 ? 0 : gen_ptr();
	ts = (long *)(o.buf + PAGE - 16);
	/* The buffer's last 16 bytes hold the time (refilled per call). */
	if (micro)
		memcpy(ts, tv[rnd() % (sizeof tv / sizeof tv[0])], 16);
	else
		memcpy(ts, vals[rnd() % (sizeof vals / sizeof vals[0])], 16);
	return (long)ts;
}

static long gen_fd(int safe)
{
	if (safe) {
		const int pool[] = { -1, 999999, INT_MAX, -100, o.ro, o.rw,
				     o.dir, o.path, o.pr, o.pw };
		return pool[rnd() % (sizeof pool / sizeof pool[0])];
	} else {
		const int pool[] = { -1, 999999, INT_MAX, INT_MIN, -100, o.ro,
				     o.rw, o.dir, o.path, o.pr, o.pw, o.ev,
				     o.ep, o.null, o.tty, 0x1234 };
		return pool[rnd() % (sizeof pool / sizeof pool[0])];
	}
}

static long gen_int(void)
{
	switch (rnd() % 7) {
	case 0: return 0;
	case 1: return -1;
	case 2: return (long)(rnd() % 64);
	case 3: return 1L << (rnd() % 32);
	case 4: return (long)(int)rnd();
	case 5: return (long)pick(interesting, NINT);
	default: return (long)rnd();
	}
}

static long gen_kpid(void)
{
	switch (rnd() % 6) {
	case 0: return o.self;
	case 1: return o.victim;
	case 2: return o.zombie;
	case 3: return o.helper > 0 ? o.helper : o.self;
	default: return no_pid();
	}
}

static long gen_futex_op(void)
{
	long cmd = (long)(rnd() % 14);

	if (rnd() % 8 == 0)
		return gen_int();
	if (rnd() % 2)
		cmd |= 128; /* FUTEX_PRIVATE_FLAG */
	if (rnd() % 4 == 0)
		cmd |= 256; /* FUTEX_CLOCK_REALTIME */
	return cmd;
}

static long gen_clone_flags(void)
{
	static const long bits[] = {
		0x100 /* VM */, 0x200 /* FS */, 0x400 /* FILES */,
		0x800 /* SIGHAND */, 0x2000 /* PTRACE */, 0x4000 /* VFORK */,
		0x8000 /* PARENT */, 0x10000 /* THREAD */,
		0x40000 /* SYSVSEM */, 0x80000 /* SETTLS */,
		0x100000 /* PARENT_SETTID */, 0x200000 /* CHILD_CLEARTID */,
		0x400000 /* DETACHED */, 0x800000 /* UNTRACED */,
		0x1000000 /* CHILD_SETTID */, 0x80000000L /* IO */,
	};
	static const long sigs[] = { 0, 17, 17, 17, 10, 12, 34, 64, 1, 0x41 };
	long f = 0;
	size_t i;

	if (rnd() % 10 == 0)
		return (long)rnd(); /* fixed up below */
	for (i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (rnd() % 4 == 0)
			f |= bits[i];
	if (rnd() % 3 == 0)
		f |= 0x100 | 0x800 | 0x10000; /* a thread */
	if (rnd() % 8 == 0)
		f |= 1L << (32 + rnd() % 32); /* above the 32 bits clone reads */
	return f | sigs[rnd() % (sizeof sigs / sizeof sigs[0])];
}

static long gen_arg(char kind)
{
	switch (kind) {
	case 'P': return gen_ptr();
	case 'B': return gen_buf();
	case 't': return gen_time(0, 0);
	case 'T': return gen_time(1, 0);
	case 'v': return gen_time(0, 1);
	case 'M': return (long)(rnd() % 2);
	case 'F': return gen_fd(0);
	case 'f': return gen_fd(1);
	case 'I': return gen_int();
	case 'L':
		if (rnd() % 5 == 0)
			return (long)rnd();
		return (long)pick(lengths, NLEN);
	case 'K': return gen_kpid();
	case 'k': return rnd() % 5 == 0 ? 0 : gen_kpid();
	case 'J':
		switch (rnd() % 8) {
		case 0: return -1;
		case 1: return 0;
		case 2: return INT_MIN;
		case 3: return -(long)no_pid();
		case 4: return -(long)o.self;
		default: return gen_kpid();
		}
	case 'S':
		return (long)(rnd() % 70) - 2;
	case 'C':
		switch (rnd() % 5) {
		case 0: return (long)(int)rnd();
		case 1: {
			/* A CPU clock of a process or thread (maybe not ours). */
			long pid = rnd() % 2 ? o.self : gen_kpid();
			return (~pid << 3) | (long)(rnd() % 8);
		}
		default: return (long)(rnd() % 16) - 2;
		}
	case 'U': {
		switch (rnd() % 6) {
		case 0: return gen_ptr();
		case 1: return (long)o.fw + 1; /* misaligned */
		case 2: return (long)(o.fw + 1);
		case 3: return (long)((char *)o.fw + PAGE - 4);
		default: return (long)o.fw;
		}
	}
	case 'O': return gen_futex_op();
	case 'V': {
		long v = rnd() % 3 ? gen_int() : (long)pick(lengths, NLEN);
		if ((unsigned)v == FUTEX_VAL)
			v ^= 1;
		return v;
	}
	case 'W': return 1 /* WNOHANG */ | (gen_int() & ~0x1L);
	case 'w': return 1 /* WNOHANG */ | gen_int();
	case 'H': {
		static const long cmds[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					     11, 15, 16, 36, 37, 38, 1024, 1025,
					     1026, 1030, 1031, 1032, 1033,
					     1034 };
		if (rnd() % 6 == 0)
			return gen_int();
		return cmds[rnd() % (sizeof cmds / sizeof cmds[0])];
	}
	case 'X': return rnd() % 2 ? gen_buf() : gen_int();
	case 'R': {
		static const long reqs[] = {
			0x5401 /* TCGETS */, 0x5402 /* TCSETS */,
			0x5403 /* TCSETSW */, 0x5404 /* TCSETSF */,
			0x5409 /* TCSBRK */, 0x540A /* TCXONC */,
			0x540B /* TCFLSH */, 0x540E /* TIOCSCTTY */,
			0x540F /* TIOCGPGRP */, 0x5410 /* TIOCSPGRP */,
			0x5411 /* TIOCOUTQ */, 0x5412 /* TIOCSTI */,
			0x5413 /* TIOCGWINSZ */, 0x5414 /* TIOCSWINSZ */,
			0x541B /* FIONREAD */, 0x5421 /* FIONBIO */,
			0x5422 /* TIOCNOTTY */, 0x5424 /* TIOCGETD */,
			0x5425 /* TCSBRKP */, 0x5429 /* TIOCGSID */,
			0x5450 /* FIONCLEX */, 0x5451 /* FIOCLEX */,
			0x5452 /* FIOASYNC */, 0x5460 /* FIOQSIZE */,
			0x80045430 /* TIOCGPTN */, 0x5401 | (1L << 32),
		};
		if (rnd() % 5 == 0)
			return (long)(unsigned)rnd();
		return reqs[rnd() % (sizeof reqs / sizeof reqs[0])];
	}
	case 'G': {
		static const long ids[] = { 0, 1, 65534, 1000, -1,
					    0xffffffffL, 0x7fffffffL, 12345 };
		if (rnd() % 4 == 0)
			return (long)rnd();
		return ids[rnd() % (sizeof ids / sizeof ids[0])];
	}
	case 'Y':
		if (rnd() % 6 == 0)
			return gen_int();
		return (long)(rnd() % 18) - 2;
	case 'N': return gen_clone_flags();
	case 'Z': {
		/* A new thread's stack: Trellis kills a thread that returns
		 * to user mode with a non-canonical stack pointer (Linux
		 * only faults once it is used), so only canonical ones. */
		long v = gen_buf();
		return (unsigned long)v >= 0x800000000000UL ? 0xdead0000L : v;
	}
	case 'E': return gen_int();
	}
	return 0;
}

/* Calls that would break the rules of the header are made harmless. */
static void fixup(const struct sc *s, long a[6])
{
	long self_ids[] = { o.self, o.helper };
	size_t i;

	switch (s->nr) {
	case SYS_kill:
	case SYS_tkill:
	case SYS_rt_sigqueueinfo:
		/* Never SIGKILL/SIGSTOP ourselves (the victim may get them). */
		for (i = 0; i < 2; i++)
			if (a[0] == self_ids[i] && (a[1] == 9 || a[1] == 19))
				a[1] = 0;
		break;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		for (i = 0; i < 2; i++)
			if ((a[0] == o.self || a[1] == self_ids[i]) &&
			    (a[2] == 9 || a[2] == 19))
				a[2] = 0;
		break;
	case SYS_setpriority:
		/* Only PRIO_PROCESS may name a real pid; groups and users
		 * only ids that cannot exist (0 would be our own group or
		 * root, i.e. every root process of the host). */
		if (a[0] != 0 || a[1] == o.helper)
			a[1] = no_pid();
		break;
	case SYS_sched_setscheduler: {
		long pol = a[1] & ~0x40000000L;
		/* Real-time classes (and deadline) only with a bad param. */
		if (pol == 1 || pol == 2 || pol == 6 || (int)a[1] < 0)
			a[2] = gen_ptr();
		break;
	}
	case SYS_fcntl:
		switch (a[1]) {
		case 8:	/* F_SETOWN: only our own processes, or nobody */
			a[2] = rnd() % 2 ? gen_kpid() : -(long)no_pid();
			break;
		case 15: /* F_SETOWN_EX: the pid inside could be anyone's */
		case 7:	 /* F_SETLKW and F_OFD_SETLKW could wait forever */
		case 38:
			a[2] = gen_ptr();
			break;
		}
		break;
	case SYS_futex: {
		/* The requeue and wake-op commands read a count from the
		 * timeout slot; a pointer there would make the result depend
		 * on where the buffer happens to be mapped. */
		long cmd = a[1] & 127;
		if (cmd == 3 || cmd == 4 || cmd == 5 || cmd == 12)
			a[3] = rnd() % 4 ? (long)(rnd() % 4) : gen_int();
		break;
	}
	case SYS_clone: {
		/* Exit signals that would stop or kill the batch child are
		 * never SIGKILL/SIGSTOP; clone reads only the low 32 bits. */
		long sig = a[0] & 0xff;
		if (sig == 9 || sig == 19)
			a[0] &= ~0xffL;
		/* CLONE_PARENT|CLONE_THREAD|... fine; CLONE_SETTLS tls is
		 * anything (the child never uses it). */
		break;
	}
	}
}

/* The iteration's arguments depend only on (seed, syscall index, iteration)
 * and on the roles of the batch child's objects. */
static void gen_args(size_t idx, long iter, long args[6])
{
	const char *k = table[idx].args;
	int i, n = (int)strlen(k);

	rng_state = seed ^ ((unsigned long long)(idx + 1) << 32) ^
		    (unsigned long long)(iter + 1) * 0x9E3779B97F4A7C15ULL;
	rnd();
	fill_buf(rng_state ^ 0xb0f5eedULL);
	for (i = 0; i < 6; i++)
		args[i] = i < n ? gen_arg(k[i]) : (long)rnd();
	fixup(&table[idx], args);
}

static int valid_return(long r)
{
	return r >= 0 || (r <= -1 && r >= -133);
}

/* ---- the batch child ---------------------------------------------------- */

static int helper_fn(void *arg)
{
	(void)arg;
	for (;;)
		raw0(SYS_pause);
	return 0;
}

/* The victim: sleeps with default dispositions and mask, dies with us. */
static pid_t spawn_victim(void)
{
	long pid = raw0(SYS_fork);

	if (pid == 0) {
		unsigned long none = 0;

		raw2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
		raw4(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
		for (;;)
			raw0(SYS_pause);
	}
	return (pid_t)pid;
}

static void make_objects(const struct sc *s)
{
	char path[PATH_MAX];
	unsigned long all = ~0UL;
	int p[2];
	long fd;

	for (fd = 3; fd < 256; fd++)
		raw1(SYS_close, fd);
	/* Everything blockable is blocked: signals the calls generate stay
	 * pending instead of killing the batch (the fuzzed calls may change
	 * that, and a death is accepted). */
	raw4(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, 8);
	{
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
	}
	o.self = (pid_t)raw0(SYS_getpid);

	t_join(path, sizeof path, scratch, "ro");
	o.ro = open(path, O_RDONLY);
	t_join(path, sizeof path, scratch, "rw");
	o.rw = scratch_tmpfs ? open(path, O_RDWR) : -1;
	o.dir = open(scratch, O_RDONLY | O_DIRECTORY);
	o.path = open(scratch, O_PATH);
	if (pipe2(p, O_NONBLOCK) == 0) {
		o.pr = p[0];
		o.pw = p[1];
		if (write(o.pw, "abc", 3) != 3)
			o.pw = -1;
	} else {
		o.pr = o.pw = -1;
	}
	o.ev = (int)raw2(SYS_eventfd2, 5, O_NONBLOCK);
	o.ep = (int)raw1(SYS_epoll_create1, 0);
	if (o.ep >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
		epoll_ctl(o.ep, EPOLL_CTL_ADD, o.pr, &ev);
		epoll_ctl(o.ep, EPOLL_CTL_ADD, o.ev, &ev);
	}
	o.null = open("/dev/null", O_RDWR);
	o.tty = on_trellis && isatty(0) ? dup(0) : -1;

	o.zombie = (pid_t)raw_clone(SIGCHLD, 0, 0, 0, 0);
	o.victim = spawn_victim();
	sh->victim = o.victim;
	if (!(s->flags & XF_NOTHREAD)) {
		void *stk = t_stack(64 * 1024);
		o.helper = stk ? t_clone(CLONE_VM | CLONE_FS | CLONE_FILES |
					 CLONE_SIGHAND | CLONE_THREAD |
					 CLONE_SYSVSEM,
					 stk, NULL, NULL, 0, helper_fn, NULL)
			       : -1;
	} else {
		o.helper = -1;
	}
	memcpy((void *)&sh->objs, &o, sizeof o);
}

/* ---- custom steps: signal delivery and rt_sigreturn with garbage ------- */

/* A signal restorer: rt_sigreturn. */
__asm__(".text\n"
	"fuzz_restorer:\n\t"
	"mov $15, %eax\n\t"
	"syscall\n\t"
	"ud2\n");
extern void fuzz_restorer(void);

static void noop_handler(int sig)
{
	(void)sig;
}

/*
 * rt_sigreturn with the stack pointer at sp; if the kernel resumes at
 * fuzz_resume (the rip planted in the frame) or returns, the batch child
 * exits with status 42 without touching its stack (r12 survives both).
 */
static void sigreturn_at(unsigned long sp)
{
	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %[sp], %%rsp\n\t"
			 "syscall\n\t"
			 "fuzz_resume:\n\t"
			 "mov %%r12, %%rsp\n\t"
			 "mov $231, %%eax\n\t"
			 "mov $42, %%edi\n\t"
			 "syscall\n\t"
			 "ud2\n\t"
			 :
			 : "a"(15L), [sp] "r"(sp)
			 : "rcx", "r11", "r12", "memory");
}
extern char fuzz_resume[];

#define SURVIVED_SIGRETURN 42

static void step_sigreturn(void)
{
	static const unsigned long offs[] = { 0, 512, 1024, PAGE - 304,
					      PAGE - 200, PAGE - 8 };
	unsigned long off = pick(offs, sizeof offs / sizeof offs[0]);
	unsigned long *uc = (unsigned long *)(o.buf + off);
	unsigned long sp = (unsigned long)uc;

	if (rnd() % 4 == 0) {
		sp = pick(bad_ptrs, NBAD);
	} else if (off + 304 <= PAGE && rnd() % 2) {
		/* A plausible frame: resume at fuzz_resume with r12 valid;
		 * flags, segments, fpstate and mask stay garbage. */
		uc[5 + 4] = (unsigned long)(o.buf + 64);  /* r12 */
		uc[5 + 16] = (unsigned long)fuzz_resume;  /* rip */
		if (rnd() % 2)
			uc[5 + 23] = rnd() % 2 ? 0 : (unsigned long)(o.buf + 1024);
		if (rnd() % 2)
			uc[5 + 18] = 0x33 | (0x2bUL << 48); /* cs, ss */
	}
	sigreturn_at(sp);
}

static void step_sigframe(void)
{
	struct {
		unsigned long sp;
		int flags, pad;
		unsigned long size;
	} ss;
	struct {
		unsigned long handler, flags, restorer, mask;
	} act;
	static const unsigned long sps[] = {
		0, 8, 64, 127, 128, 600, 4096, 0xdead0000UL, 0x7fffffffffffUL,
		0x800000000000UL, ~0UL, ~0UL - 4095, 0xffff800000000000UL,
	};
	unsigned long none = 0, sp;
	int fault = rnd() % 3 == 0;

	ss.sp = rnd() % 3 ? pick(interesting, NINT) : (unsigned long)o.buf;
	ss.flags = rnd() % 4 == 0 ? 2 /* SS_DISABLE */ : 0;
	ss.pad = 0;
	ss.size = rnd() % 2 ? pick(interesting, NINT) : pick(lengths, NLEN);
	raw2(SYS_sigaltstack, &ss, NULL);

	switch (rnd() % 3) {
	case 0: act.handler = (unsigned long)noop_handler; break;
	case 1: act.handler = pick(bad_ptrs, NBAD); break;
	default: act.handler = pick(interesting, NINT); break;
	}
	if (act.handler <= 1)
		act.handler = (unsigned long)noop_handler; /* not DFL/IGN */
	act.flags = SA_RESTORER | (rnd() % 2 ? SA_ONSTACK : 0) |
		    (rnd() % 2 ? SA_SIGINFO : 0) |
		    (rnd() % 3 == 0 ? SA_NODEFER : 0) |
		    (fault || rnd() % 3 == 0 ? SA_RESETHAND : 0);
	act.restorer = rnd() % 4 ? (unsigned long)fuzz_restorer
				 : pick(bad_ptrs, NBAD);
	act.mask = rnd();
	raw4(SYS_rt_sigaction, fault ? SIGILL : SIGUSR1, &act, NULL, 8);
	raw4(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);

	if (rnd() % 3 == 0)
		sp = (unsigned long)(o.buf + PAGE - (rnd() % 8) * 256);
	else
		sp = pick(sps, sizeof sps / sizeof sps[0]);
	if (fault) {
		/* A CPU exception taken with that stack pointer; the handler
		 * runs at most once (SA_RESETHAND), then SIGILL kills us. */
		__asm__ volatile("mov %%rsp, %%r12\n\t"
				 "mov %0, %%rsp\n\t"
				 "ud2\n\t"
				 :
				 : "r"(sp)
				 : "r12", "memory");
	}
	raw_on_stack(SYS_tgkill, o.self, o.self, SIGUSR1, sp);
	/* Survived (the handler ran and returned): block again. */
	none = ~0UL;
	raw4(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
}

static void run_batch(size_t idx, long start)
{
	const struct sc *s = &table[idx];
	long i, args[6], r, n = s->count ? s->count : iters;

	make_objects(s);
	for (i = start; i < n; i++) {
		sh->current = i;
		gen_args(idx, i, args);
		*o.fw = FUTEX_VAL;
		o.fw[1] = FUTEX_VAL;
		*(volatile int *)((char *)o.fw + PAGE - 4) = FUTEX_VAL;
		if (s->nr == X_SIGFRAME) {
			step_sigframe();
			r = 0;
		} else if (s->nr == X_SIGRETURN) {
			step_sigreturn();
			r = 0;
		} else if (s->nr == SYS_clone) {
			r = raw_clone(args[0], args[1], args[2], args[3],
				      args[4]);
			/* Reap a process child at once (it exits at once);
			 * threads and CLONE_PARENT children are not ours. */
			if (r > 0 && !(args[0] & 0x10000))
				raw4(SYS_wait4, r, NULL, __WALL, NULL);
		} else {
			r = raw6(s->nr, args[0], args[1], args[2], args[3],
				 args[4], args[5]);
		}
		sh->ret[i] = r;
		sh->done[i] = 1;
		sh->calls++;
		if (r < 0 && r >= -4095)
			sh->errors++;
		if (!valid_return(r)) {
			sh->bad++;
			sh->bad_ret = r;
			sh->bad_iter = i;
		}
	}
	raw1(SYS_exit_group, 0);
}

/* exit/exit_group: one call per child; the status must come back. */
static void run_exit(size_t idx, long i)
{
	long args[6];

	make_objects(&table[idx]);
	sh->current = i;
	gen_args(idx, i, args);
	raw1(table[idx].nr, args[0]);
	raw1(SYS_exit_group, 99); /* not reached */
}

/* ---- the parent ---------------------------------------------------------- */

static struct termios saved_tio;
static struct winsize saved_ws;
static pid_t saved_fg = -1;
static int have_tty;

static void save_tty(void)
{
	have_tty = on_trellis && isatty(0) &&
		   ioctl(0, TCGETS, &saved_tio) == 0 &&
		   ioctl(0, TIOCGWINSZ, &saved_ws) == 0;
	if (have_tty)
		saved_fg = tcgetpgrp(0);
}

/* Puts the console back as it was; returns whether there is one. */
static int restore_tty(void)
{
	if (!have_tty)
		return 0;
	ioctl(0, TCSETS, &saved_tio);
	ioctl(0, TIOCSWINSZ, &saved_ws);
	if (saved_fg > 0)
		tcsetpgrp(0, saved_fg);
	ioctl(0, TCFLSH, TCIFLUSH);
	return 1;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Our children as /proc shows them (diagnostics). */
static void show_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[512], *p;
		int ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if (t_read_file(path, buf, sizeof buf) <= 0)
			continue;
		p = strrchr(buf, ')');
		if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 &&
		    ppid == getpid())
			t_note("  child %s", buf);
	}
	closedir(d);
}

/* Kill and reap whatever a batch left behind (we are a subreaper). */
static void reap_leftovers(void)
{
	int st, n;

	if (sh->victim > 0 && waitpid((pid_t)sh->victim, &st, WNOHANG | __WALL) == 0)
		kill((pid_t)sh->victim, SIGKILL);
	for (n = 0; n < 400; n++) {
		pid_t r = waitpid(-1, &st, WNOHANG | __WALL);

		if (r < 0 && errno == ECHILD)
			return;
		if (r <= 0)
			t_msleep(5);
	}
	t_note("leftover children could not be reaped:");
	show_children();
}

/*
 * Wait for a batch child; kill it if it makes no progress for STALL_SECS.
 * Returns the wait status, or -2 after a stall.
 */
static int wait_batch(pid_t pid)
{
	long last = -1;
	long long since = mono_ms();

	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG | __WALL);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (sh->calls != last) {
			last = sh->calls;
			since = mono_ms();
		} else if (mono_ms() - since > STALL_SECS * 1000LL) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, __WALL);
			return -2;
		}
		t_msleep(2);
	}
}

static void print_trace(size_t idx, long n, const long *death)
{
	long i, a[6];

	if (trace > 1) {
		struct objects b;

		memcpy(&b, (void *)&sh->objs, sizeof b);
		t_printf("  O %s ro=%d rw=%d dir=%d path=%d pr=%d pw=%d ev=%d "
			 "ep=%d null=%d tty=%d self=%d victim=%d zombie=%d "
			 "helper=%ld buf=%p\n", table[idx].name, b.ro, b.rw,
			 b.dir, b.path, b.pr, b.pw, b.ev, b.ep, b.null, b.tty,
			 b.self, b.victim, b.zombie, b.helper, (void *)b.buf);
	}
	for (i = 0; i < n; i++) {
		long r = sh->ret[i];

		if (trace > 1) {
			memcpy(&o, (void *)&sh->objs, sizeof o);
			gen_args(idx, i, a);
			t_printf("  A %s %ld %#lx %#lx %#lx %#lx %#lx %#lx\n",
				 table[idx].name, i, a[0], a[1], a[2], a[3],
				 a[4], a[5]);
		}

		if (death[i] > 0)
			t_printf("  T %s %ld D%ld\n", table[idx].name, i, death[i]);
		else if (death[i] == -2)
			t_printf("  T %s %ld STALL\n", table[idx].name, i);
		else if (!sh->done[i])
			t_printf("  T %s %ld -\n", table[idx].name, i);
		else if (r < 0)
			t_printf("  T %s %ld E%ld\n", table[idx].name, i, -r);
		else
			t_printf("  T %s %ld %s\n", table[idx].name, i,
				 r == 0 ? "0" : "+");
	}
}

static long total_calls, total_errors, total_deaths;

static void fuzz_one(size_t idx)
{
	const struct sc *s = &table[idx];
	long n = s->count ? s->count : iters, start = 0;
	static long death[MAX_ITERS];
	int died = 0;

	if (n > MAX_ITERS)
		n = MAX_ITERS;
	memset((void *)sh, 0, sizeof *sh);
	memset(death, 0, sizeof death);
	while (start < n) {
		pid_t pid;
		int st;

		sh->current = start;
		pid = fork();
		if (pid < 0) {
			CHECK(pid >= 0);
			break;
		}
		if (pid == 0) {
			if (s->flags & XF_EXIT)
				run_exit(idx, start);
			run_batch(idx, start);
		}
		st = wait_batch(pid);
		reap_leftovers();
		if (restore_tty() && s->nr == SYS_ioctl)
			t_out("\n", 1); /* after anything TIOCSTI echoed */
		if (st == -1) {
			CHECK(st != -1);
			break;
		}
		if (st == -2) {
			long args[6];

			gen_args(idx, sh->current, args);
			t_failures++;
			death[sh->current] = -2;
			t_printf("  check failed: %s: call %ld (%#lx, %#lx, "
				 "%#lx, %#lx, ...) made no progress for %d s\n",
				 s->name, sh->current, args[0], args[1],
				 args[2], args[3], STALL_SECS);
			start = sh->current + 1;
			continue;
		}
		if (s->flags & XF_EXIT) {
			long args[6];

			gen_args(idx, start, args);
			sh->done[start] = 1;
			sh->ret[start] = 0;
			sh->calls++;
			if (!WIFEXITED(st) ||
			    WEXITSTATUS(st) != (int)(args[0] & 0xff)) {
				t_failures++;
				t_printf("  check failed: %s(%#lx): wait status "
					 "%#x, expected exit status %ld\n",
					 s->name, args[0], st, args[0] & 0xff);
			}
			start++;
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == SURVIVED_SIGRETURN &&
		    (s->flags & XF_DEADLY)) {
			sh->done[sh->current] = 1;
			sh->calls++;
			start = sh->current + 1;
			continue;
		}
		if (WIFEXITED(st)) {
			CHECK_EQ(WEXITSTATUS(st), 0);
			break;
		}
		if (WIFSIGNALED(st)) {
			long args[6];

			death[sh->current] = WTERMSIG(st);
			total_deaths++;
			if (!(s->flags & XF_DEADLY)) {
				gen_args(idx, sh->current, args);
				t_printf("  note: %s: batch child killed by "
					 "signal %d at call %ld (%#lx, %#lx, "
					 "%#lx, ...); continuing\n",
					 s->name, WTERMSIG(st), sh->current,
					 args[0], args[1], args[2]);
				if (++died >= MAX_DEATHS) {
					t_printf("  note: %s: %d deaths, rest "
						 "of the batch skipped\n",
						 s->name, died);
					break;
				}
			}
			start = sh->current + 1;
			continue;
		}
		CHECK(!"unexpected wait status");
		break;
	}
	if (sh->bad) {
		long args[6];

		gen_args(idx, sh->bad_iter, args);
		t_failures++;
		t_printf("  check failed: %s returned %ld (%#lx) at call %ld "
			 "(%#lx, %#lx, %#lx, ...): not a value or -errno\n",
			 s->name, sh->bad_ret, (unsigned long)sh->bad_ret,
			 sh->bad_iter, args[0], args[1], args[2]);
	}
	if (trace)
		print_trace(idx, n, death);
	total_calls += sh->calls;
	total_errors += sh->errors;
}

/* ---- exact errnos of calls with one bad argument (checked on Linux) ---- */

/* raw_clone(flags), then the child must be ours to reap, exiting 0. */
static void clone_reaped(long flags, long ptid, long ctid)
{
	long pid = raw_clone(flags, 0, ptid, ctid, 0);
	int st = -1;

	if (pid <= 0) {
		t_failures++;
		t_printf("  check failed: clone(%#lx) = %ld\n", flags, pid);
		return;
	}
	CHECK_EQ(waitpid((pid_t)pid, &st, __WALL), pid);
	CHECK_EQ(st, 0);
}

static int set_usr2_ignored(void *arg)
{
	struct sigaction sa;

	(void)arg;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	return (int)raw4(SYS_rt_sigaction, SIGUSR2, &sa, NULL, 8);
}

/* Whether a CLONE_VM child's change of disposition reaches us. */
static int sighand_shared(long flags)
{
	struct sigaction sa;
	void *stk = t_stack(64 * 1024);
	long pid;
	int st = -1, shared;

	signal(SIGUSR2, SIG_DFL);
	pid = t_clone(flags, stk, NULL, NULL, 0, set_usr2_ignored, NULL);
	CHECK(pid > 0);
	if (pid > 0) {
		CHECK_EQ(waitpid((pid_t)pid, &st, __WALL), pid);
		CHECK_EQ(st, 0);
	}
	sigaction(SIGUSR2, NULL, &sa);
	shared = sa.sa_handler == SIG_IGN;
	signal(SIGUSR2, SIG_DFL);
	return shared;
}

/* Runs fn in a child, which must be killed by signal sig. */
static void expect_death(void (*fn)(void), int sig, const char *what)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		fn();
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != sig) {
		t_failures++;
		t_printf("  check failed: %s: wait status %#x, expected death "
			 "by signal %d\n", what, st, sig);
	}
}

/* An alternate stack whose end wraps around the address space. */
static void wrapping_altstack(void)
{
	stack_t ss = { .ss_sp = (void *)(~0UL - 0x7ff), .ss_flags = 0,
		       .ss_size = 0x1000 };
	struct sigaction sa;

	if (sigaltstack(&ss, NULL) != 0 || sigaltstack(NULL, &ss) != 0)
		_exit(1);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = noop_handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raw3(SYS_tgkill, getpid(), raw0(SYS_gettid), SIGUSR1);
}

/* A signal handler entered with the stack pointer near address 0. */
static void low_stack_pointer(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = noop_handler;
	sigaction(SIGUSR1, &sa, NULL);
	raw_on_stack(SYS_tgkill, getpid(), raw0(SYS_gettid), SIGUSR1, 64);
}

/* An alternate stack too small for the frame (the size check is only
 * MINSIGSTKSZ): the frame must not be written below it. */
static void small_altstack(void)
{
	static char area[3 * 4096] __attribute__((aligned(4096)));
	stack_t ss = { .ss_sp = area + 4096, .ss_flags = 0, .ss_size = 2048 };
	struct sigaction sa;

	memset(area, 0x5a, sizeof area);
	if (sigaltstack(&ss, NULL) != 0)
		_exit(1);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = noop_handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raw3(SYS_tgkill, getpid(), raw0(SYS_gettid), SIGUSR1);
	/* Survived: nothing below the alternate stack was touched. */
	if (area[4095] != 0x5a)
		_exit(2);
	_exit(3);
}

#define KPTR ((void *)0xffff800000000000UL)
#define NOPID (999999 + 4194304)

/* rt_sigreturn on a frame at an unmapped address: SIGSEGV, never a
 * return with -EFAULT. */
static void bad_sigreturn_frame(void)
{
	raw_on_stack(SYS_rt_sigreturn, 0, 0, 0, 0xdead0000UL);
}

static volatile int autodisarm_seen = -1;

static void autodisarm_handler(int sig)
{
	stack_t cur;

	(void)sig;
	if (sigaltstack(NULL, &cur) == 0)
		autodisarm_seen = cur.ss_flags;
}

/* Signals: lookups before signal checks, rt_tgsigqueueinfo, the mask,
 * sigaltstack's SS_AUTODISARM, rt_sigreturn's bad frames. */
static void signal_errnos(void)
{
	static char area[2 * 4096] __attribute__((aligned(4096)));
	siginfo_t *si;
	sigset_t set, old;
	stack_t ss, cur;

	CHECK_ERR(syscall(SYS_kill, NOPID, 999), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, getpid(), NOPID, 999), ESRCH);
	CHECK_ERR(syscall(SYS_tkill, NOPID, -1), ESRCH);
	CHECK_ERR(syscall(SYS_kill, getpid(), 999), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, 99, BAD_PTR2, NULL, 8), EFAULT);
	/* A queued signal to ourselves, its siginfo ending 48 bytes before
	 * unmapped memory (only the common part is read for SI_QUEUE). */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	mprotect(area + 4096, 4096, PROT_NONE);
	si = (siginfo_t *)(area + 4096 - 48);
	memset(si, 0, 48);
	si->si_code = SI_QUEUE;
	CHECK_EQ(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, si), 0);
	CHECK_EQ(syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid),
			 SIGUSR1, si), 0);
	mprotect(area + 4096, 4096, PROT_READ | PROT_WRITE);
	CHECK_ERR(syscall(SYS_rt_tgsigqueueinfo, getpid(), 0, SIGUSR1, si),
		  EINVAL);
	{
		struct timespec zero = { 0, 0 };
		CHECK_EQ(sigtimedwait(&set, NULL, &zero), SIGUSR1);
		CHECK_EQ(sigtimedwait(&set, NULL, &zero), SIGUSR1);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* SS_AUTODISARM: disarmed while the handler runs, back afterwards. */
	ss.ss_sp = area;
	ss.ss_size = sizeof area;
	ss.ss_flags = SS_AUTODISARM;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	t_sigaction(SIGUSR2, autodisarm_handler, SA_ONSTACK);
	t_raise(SIGUSR2);
	CHECK_EQ(autodisarm_seen, SS_DISABLE);
	CHECK_EQ(sigaltstack(NULL, &cur), 0);
	CHECK_EQ((unsigned)cur.ss_flags, SS_AUTODISARM);
	CHECK(cur.ss_sp == area && cur.ss_size == sizeof area);
	ss.ss_flags = SS_DISABLE;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	signal(SIGUSR2, SIG_DFL);

	expect_death(bad_sigreturn_frame, SIGSEGV, "rt_sigreturn, bad frame");

	/* Processes, waits, process groups. */
	CHECK_ERR(syscall(SYS_waitid, 99, 0, BAD_PTR2, WEXITED, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_waitid, P_PID, -1, NULL, WEXITED, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_waitid, P_PGID, -1, NULL, WEXITED, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_waitid, 3 /* P_PIDFD */, 0, NULL,
			  WEXITED | WNOHANG, NULL), EBADF);
	CHECK_ERR(syscall(SYS_setpgid, -1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_setpgid, NOPID, 0), ESRCH);
	CHECK_ERR(syscall(SYS_getrusage, 0xffffffffUL, BAD_PTR2), EFAULT);
}

static void *tid_thread(void *arg)
{
	volatile long *tid = arg;

	*tid = syscall(SYS_gettid);
	while (*tid > 0)
		t_msleep(1);
	return NULL;
}

/* A non-leader thread's id names its process; setpgid refuses it. */
static void thread_id_errnos(void)
{
	volatile long tid = 0;
	pthread_t th;
	struct rlimit rl;

	if (pthread_create(&th, NULL, tid_thread, (void *)&tid) != 0) {
		CHECK(!"pthread_create");
		return;
	}
	while (tid == 0)
		t_msleep(1);
	CHECK_EQ(syscall(SYS_getsid, tid), getsid(0));
	CHECK_EQ(syscall(SYS_getpgid, tid), getpgid(0));
	CHECK_ERR(syscall(SYS_setpgid, tid, 0), EINVAL);
	CHECK_EQ(syscall(SYS_prlimit64, tid, RLIMIT_NOFILE, NULL, &rl), 0);
	CHECK_EQ(syscall(SYS_getpriority, PRIO_PROCESS, tid) > 0, 1);
	CHECK_EQ(syscall(SYS_kill, tid, 0), 0);
	tid = -1;
	pthread_join(th, NULL);
}

/* Scheduling, clocks, timers, limits, credentials. */
static void misc_errnos(void)
{
	unsigned long mask[16];
	struct timespec ts = { 0, 1000 };
	struct rlimit rl;
	pid_t pid;
	long a, b;

	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, 0, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, -1, BAD_PTR2), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, NOPID, 0, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_sched_setparam, 0, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getparam, 0, NULL), EINVAL);
	CHECK_EQ(syscall(SYS_sched_get_priority_max, 6), 0);
	CHECK_EQ(syscall(SYS_sched_get_priority_min, 6), 0);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 0x80000000UL, mask), EINVAL);
	CHECK(syscall(SYS_sched_getaffinity, 0, (1UL << 32) | 64, mask) >= 8);
	CHECK_ERR(syscall(SYS_sched_setaffinity, NOPID, 8, BAD_PTR2), EFAULT);
	CHECK(syscall(SYS_getpriority, 1UL << 63, 0) > 0);

	CHECK_EQ(syscall(SYS_clock_gettime, 11 /* TAI */, &ts), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, -2 /* own thread */, &ts), 0);
	CHECK_EQ(syscall(SYS_clock_getres, -6 /* own process */, &ts), 0);
	CHECK_EQ(syscall(SYS_clock_getres, -8 /* own process, PROF */, &ts), 0);
	ts.tv_sec = 0;
	ts.tv_nsec = 1000;
	CHECK_EQ(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0xfffe, &ts,
			 NULL), 0);
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &ts,
			  NULL), EOPNOTSUPP);
	CHECK_ERR(syscall(SYS_clock_nanosleep, -1, 0, BAD_PTR2, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_clock_nanosleep, -1, 0, &ts, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_clock_nanosleep, -2, 0, &ts, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_setitimer, 99, BAD_PTR2, NULL), EFAULT);

	CHECK_ERR(syscall(SYS_prlimit64, NOPID, RLIMIT_NOFILE, BAD_PTR2, NULL),
		  EFAULT);
	CHECK_ERR(syscall(SYS_prlimit64, -5, RLIMIT_NOFILE, NULL, &rl), ESRCH);
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_NOFILE, NULL), EFAULT);

	a = syscall(SYS_setfsuid, -1);
	b = syscall(SYS_setfsuid, -1);
	CHECK_EQ(a, b);
	pid = fork();
	if (pid == 0) {
		gid_t bad = (gid_t)-1;

		if (geteuid() == 0) {
			CHECK_ERR(syscall(SYS_setgroups, 1, &bad), EINVAL);
			CHECK_EQ(syscall(SYS_setgroups, 1UL << 32, NULL), 0);
			CHECK_EQ(getgroups(0, NULL), 0);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

/* Descriptors: O_PATH, fcntl commands, fsync, sendfile, ranges, epoll,
 * poll, pipes, flock, umount2, mknod, utimensat. */
static void fd_errnos(void)
{
	char path[PATH_MAX];
	struct f_owner_ex { int type, pid; } own;
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec omit[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
	struct timespec badts = { -1, 0 };
	int p[2], opath, ro, rw, ep, null;

	t_join(path, sizeof path, scratch, "ro");
	ro = open(path, O_RDONLY);
	opath = open(path, O_PATH);
	t_join(path, sizeof path, scratch, "errno-rw");
	rw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ep = epoll_create1(0);
	null = open("/dev/null", O_RDWR);
	CHECK(ro >= 0 && opath >= 0 && rw >= 0 && ep >= 0 && null >= 0 &&
	      pipe(p) == 0);

	CHECK_ERR(fcntl(opath, F_SETFL, 0), EBADF);
	CHECK_EQ(fcntl(opath, F_GETFD), 0);
	CHECK_EQ(fcntl(ro, F_SETSIG, 64), 0);
	CHECK_EQ(fcntl(ro, F_GETSIG), 64);
	CHECK_ERR(fcntl(ro, F_SETSIG, 65), EINVAL);
	CHECK_ERR(fcntl(ro, F_SETOWN, -NOPID), ESRCH);
	CHECK_EQ(fcntl(ro, F_SETOWN, getpid()), 0);
	CHECK_EQ(fcntl(ro, F_GETOWN), getpid());
	CHECK_ERR(syscall(SYS_fcntl, ro, F_GETOWN_EX, BAD_PTR2), EFAULT);
	own.type = 9;
	own.pid = 0;
	CHECK_ERR(fcntl(ro, F_SETOWN_EX, &own), EINVAL);
	CHECK_EQ(fcntl(ro, F_GETLEASE), F_UNLCK);
	CHECK_EQ(fcntl(ro, F_NOTIFY, 0), 0);
	CHECK_ERR(fcntl(ro, F_NOTIFY, 1), ENOTDIR);
	CHECK_ERR(fcntl(p[0], F_ADD_SEALS, 1), EPERM);

	CHECK_ERR(fsync(p[0]), EINVAL);
	CHECK_ERR(fsync(opath), EBADF);
	CHECK_EQ(syscall(SYS_syncfs, p[0]), 0);
	CHECK_EQ(fsync(ro), 0);

	CHECK_ERR(syscall(SYS_sendfile, -1, -1, BAD_PTR2, 1), EFAULT);
	CHECK_ERR(syscall(SYS_sendfile, rw, opath, NULL, 1), EBADF);
	{
		long long off = 1;

		CHECK_ERR(syscall(SYS_copy_file_range, ro, &off, rw, NULL, ~0UL,
				  0), EOVERFLOW);
	}
	CHECK_ERR(syscall(SYS_fallocate, opath, 0, 0, 1), EBADF);

	CHECK_ERR(syscall(SYS_epoll_wait, p[0], NULL, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_wait, -1, KPTR, 1, 0), EBADF);
	CHECK_ERR(syscall(SYS_epoll_wait, ep, KPTR, 1, 0), EFAULT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, null, &ev), EPERM);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, opath, &ev), EBADF);
	CHECK_EQ(syscall(SYS_poll, NULL, 1UL << 32, 0), 0);
	CHECK_ERR(syscall(SYS_poll, (void *)0x8000000000000000UL, 0, 0), EFAULT);
	CHECK_ERR(syscall(SYS_ppoll, NULL, 0, &badts, BAD_PTR2, 8), EINVAL);

	CHECK_EQ(fchmod(p[0], 0640), 0);
	CHECK_EQ(fchown(p[0], -1, -1), 0);
	{
		struct stat st;

		CHECK_EQ(fstat(p[1], &st), 0);
		CHECK_EQ(st.st_mode & 07777, 0640);
		CHECK_EQ(st.st_uid, geteuid());
	}

	CHECK_EQ(syscall(SYS_flock, -1, 32), 0);
	CHECK_ERR(syscall(SYS_flock, -1, 3), EINVAL);
	CHECK_ERR(syscall(SYS_umount2, BAD_PTR2, 1UL << 62), EFAULT);
	CHECK_ERR(syscall(SYS_mknod, BAD_PTR2, 0170000, 0), EINVAL);
	CHECK_ERR(syscall(SYS_mknod, BAD_PTR2, S_IFDIR | 0700, 0), EPERM);
	CHECK_EQ(syscall(SYS_utimensat, -1, NULL, omit, 0), 0);
	omit[1].tv_nsec = 2000000000L;
	CHECK_ERR(syscall(SYS_utimensat, AT_FDCWD, BAD_PTR2, omit, 0), EFAULT);
	CHECK_ERR(syscall(SYS_utimensat, rw, NULL, omit, 0), EINVAL);

	close(ro);
	close(opath);
	close(rw);
	close(ep);
	close(null);
	close(p[0]);
	close(p[1]);
}

static void exact_errnos(void)
{
	pid_t pid;
	int st;

	/* clone's exit signal is any byte; one above 64 is not sent. */
	clone_reaped(65, 0, 0);
	/* clone reads an int: the upper half of the flags is ignored. */
	clone_reaped(SIGCHLD | (0x10000L << 32), 0, 0);
	/* Flags without meaning here (no tracer, no I/O contexts). */
	clone_reaped(SIGCHLD | 0x2000 | 0x800000 | 0x80000000L | 0x400000,
		     0, 0);
	/* Bad CLONE_PARENT_SETTID/CHILD_SETTID addresses are not errors. */
	clone_reaped(SIGCHLD | 0x100000 | 0x1000000, 0xdead0000L, 1);
	clone_reaped(SIGCHLD | 0x100 | 0x4000 | 0x100000, 0xdead0000L, 0);
	/* CLONE_PARENT: the new process is our sibling; from a child of
	 * ours, it is ours to reap. */
	pid = fork();
	if (pid == 0)
		_exit(raw_clone(SIGCHLD | 0x8000, 0, 0, 0, 0) > 0 ? 0 : 1);
	CHECK(t_wait_ok(pid));
	{
		int reaped = 0;
		long i;

		for (i = 0; i < 5000 && !reaped; i++) {
			pid_t r = waitpid(-1, &st, WNOHANG | __WALL);

			if (r > 0 && r != pid)
				reaped = 1;
			else
				t_msleep(1);
		}
		CHECK(reaped);
	}
	/* CLONE_SIGHAND shares the dispositions with the new process
	 * (CLONE_VM only does not). */
	CHECK_EQ(sighand_shared(CLONE_VM | CLONE_SIGHAND | SIGCHLD), 1);
	CHECK_EQ(sighand_shared(CLONE_VM | SIGCHLD), 0);

	/* Signal frames on stacks at the ends of the address space: the
	 * process dies of SIGSEGV (the kernel must not do the arithmetic
	 * with overflow checks, or write below a small alternate stack). */
	expect_death(wrapping_altstack, SIGSEGV, "altstack wrapping around");
	expect_death(low_stack_pointer, SIGSEGV, "signal with rsp 64");
	pid = fork();
	if (pid == 0)
		small_altstack();
	st = t_wait(pid);
	/* Linux's frame (xsave) never fits in 2048 bytes: SIGSEGV; a kernel
	 * whose frame fits may run the handler (exit 3), but never writes
	 * below the stack (exit 2). */
	CHECK(st != -1 && ((WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) ||
			   (WIFEXITED(st) && WEXITSTATUS(st) == 3)));

	signal_errnos();
	thread_id_errnos();
	misc_errnos();
	fd_errnos();
}

int main(int argc, char **argv)
{
	const char *env, *only = getenv("FUZZ_ONLY");
	char path[PATH_MAX], *m;
	size_t idx;
	int ran = 0, mounted, verbose = getenv("FUZZ_VERBOSE") != NULL;
	long long t0;

	(void)argc;
	(void)argv;
	if ((env = getenv("FUZZ_SEED")) != NULL)
		seed = strtoull(env, NULL, 0);
	if ((env = getenv("FUZZ_ITERS")) != NULL) {
		iters = strtol(env, NULL, 0);
		if (iters < 1 || iters > MAX_ITERS)
			iters = PER_SYSCALL;
	}
	if ((env = getenv("FUZZ_TRACE")) != NULL)
		trace = atoi(env) > 1 ? 2 : 1;
	on_trellis = t_is_trellis();

	/* Not on tmpfs: no writable file (fallocate could fill a disk);
	 * the rest still runs. */
	mounted = t_tmpfs_scratch("syscall_robustness_ipc", scratch,
				  sizeof scratch);
	scratch_tmpfs = mounted >= 0;
	t_join(path, sizeof path, scratch, "ro");
	CHECK_EQ(t_write_file(path, "0123456789abcdef", 16, 0644), 0);

	exact_errnos();

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	/* The garbage page, a guard page, the futex page (private: each
	 * batch child has its own copy). */
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	if (sh == MAP_FAILED || m == MAP_FAILED)
		DONE();
	CHECK_EQ(mprotect(m + PAGE, PAGE, PROT_NONE), 0);
	o.buf = m;
	o.fw = (volatile int *)(m + 2 * PAGE);
	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	/* Batch children may make the console's foreground group ours. */
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	save_tty();

	for (idx = 0; idx < NSC; idx++) {
		if (only && strcmp(only, table[idx].name) != 0)
			continue;
		/* Undo what the last batch did to the scratch files (fchmod,
		 * fchown, ftruncate, fallocate on them). */
		chmod(scratch, 0755);
		t_join(path, sizeof path, scratch, "ro");
		chmod(path, 0644);
		t_join(path, sizeof path, scratch, "rw");
		unlink(path);
		if (scratch_tmpfs &&
		    t_write_file(path, "0123456789abcdef", 16, 0644) != 0)
			CHECK(!"rw scratch file");
		t0 = mono_ms();
		fuzz_one(idx);
		if (verbose)
			t_note("%s: %lld ms", table[idx].name, mono_ms() - t0);
		ran++;
	}
	restore_tty();

	/* The parent is intact and the kernel still answers normally. */
	CHECK_EQ(syscall(SYS_getpid), getpid());
	CHECK_ERR(syscall(1000), ENOSYS);
	CHECK_ERR(waitpid(-1, NULL, WNOHANG), ECHILD);

	t_note("seed %#llx: %d syscalls, %ld calls returned (%ld errors), "
	       "%ld batch children killed by signals",
	       seed, ran, total_calls, total_errors, total_deaths);
	chmod(scratch, 0755);
	if (mounted == 1)
		t_umount(scratch);
	t_rmtree(scratch);
	DONE();
}
