/*
 * next.h - helpers for the issue-3 tests (threads, signals, pipes, VFS,
 * /proc, TTY, time).  Builds on tests/t.h; unlike the first suite these
 * tests may use pipes, signals and threads freely.
 *
 * Notes and skips: a test that cannot check one thing in the current
 * environment prints "  note: ..." and goes on; one that cannot run at all
 * ends with SKIP(reason) (t.h), which the runner reports as SKIP.
 */
#ifndef TRELLIS_NEXT_H
#define TRELLIS_NEXT_H

#include "t.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <termios.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>

/* futex(2) constants (musl ships no kernel headers). */
#ifndef FUTEX_WAIT
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#endif
#ifndef FUTEX_WAIT_PRIVATE
#define FUTEX_WAIT_PRIVATE (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#endif
#ifndef FUTEX_WAIT_BITSET_PRIVATE
#define FUTEX_WAIT_BITSET_PRIVATE (FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_BITSET_PRIVATE (FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG)
#endif

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

__attribute__((format(printf, 1, 2)))
static inline void t_note(const char *fmt, ...)
{
	char buf[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	t_printf("  note: %s\n", buf);
}


static inline int t_is_root(void) { return geteuid() == 0; }

/* True under QEMU's TCG emulator (CPUID hypervisor leaf "TCGTCGTCGTCG"),
 * which does not emulate some CPU behaviour (SSE exceptions). */
static inline int t_on_qemu_tcg(void)
{
	unsigned a, b, c, d;
	char id[13];

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(1), "c"(0));
	if (!(c & (1u << 31)))
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(0x40000000), "c"(0));
	memcpy(id, &b, 4);
	memcpy(id + 4, &c, 4);
	memcpy(id + 8, &d, 4);
	id[12] = 0;
	return strcmp(id, "TCGTCGTCGTCG") == 0;
}

/* True when running on Trellis (its uname names it), false on Linux. */
static inline int t_is_trellis(void)
{
	struct utsname u;
	char all[sizeof u.release + sizeof u.version + 2];
	size_t i;

	if (uname(&u) != 0)
		return 0;
	snprintf(all, sizeof all, "%s %s", u.release, u.version);
	for (i = 0; all[i]; i++)
		if (all[i] >= 'A' && all[i] <= 'Z')
			all[i] = (char)(all[i] - 'A' + 'a');
	return strstr(all, "trellis") != NULL;
}

/* ---- raw syscalls ------------------------------------------------------ */

static inline long t_futex(volatile int *uaddr, int op, int val,
			   const struct timespec *ts, volatile int *uaddr2,
			   int val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static inline long t_gettid(void) { return syscall(SYS_gettid); }

static inline long t_tgkill(pid_t tgid, long tid, int sig)
{
	return syscall(SYS_tgkill, tgid, tid, sig);
}

/* Signal the calling thread with one syscall.  (glibc's raise() blocks
 * all signals around its tgkill, which changes nesting behaviour.) */
static inline long t_raise(int sig)
{
	return syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

/*
 * Raw clone(2) onto a new stack: the child calls fn(arg) and then exits
 * (SYS_exit, only that thread) with fn's return value.  The child must not
 * touch libc state that depends on its own thread pointer (errno, stdio)
 * unless CLONE_SETTLS gave it one.  Returns the child's tid or -errno.
 */
static inline long t_clone(unsigned long flags, void *stack_top, int *ptid,
			   int *ctid, unsigned long tls, int (*fn)(void *),
			   void *arg)
{
	void **sp = (void **)((uintptr_t)stack_top & ~15UL);
	register long r10 __asm__("r10") = (long)ctid;
	register long r8 __asm__("r8") = (long)tls;
	long ret;

	*--sp = arg;
	*--sp = (void *)fn;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "pop %%rax\n\t"
			 "pop %%rdi\n\t"
			 "call *%%rax\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov $60, %%eax\n\t"
			 "syscall\n\t"
			 "ud2\n\t"
			 "1:\n\t"
			 : "=a"(ret)
			 : "a"((long)SYS_clone), "D"(flags), "S"(sp), "d"(ptid),
			   "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

/* An anonymous stack for t_clone; returns its top. */
static inline void *t_stack(size_t size)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p + size;
}

/* ---- time -------------------------------------------------------------- */

static inline long long t_ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static inline long long t_now_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return -1;
	return t_ts_ns(&ts);
}

/*
 * Burn at least ns of this thread's CPU time.  Bounded by wall time too (a
 * CPU clock that never advances must not hang the test); returns 1 if the
 * CPU clock reached the target.
 */
static inline int t_burn_cpu(long long ns)
{
	long long c0 = t_now_ns(CLOCK_THREAD_CPUTIME_ID);
	long long w0 = t_now_ns(CLOCK_MONOTONIC);
	volatile unsigned long x = 0;

	for (;;) {
		int i;

		for (i = 0; i < 20000; i++)
			x += (unsigned long)i * 7;
		if (t_now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 >= ns)
			return 1;
		if (t_now_ns(CLOCK_MONOTONIC) - w0 > 100 * ns + 30000000000LL)
			return 0;
	}
}

static inline void t_msleep(long ms) { t_sleep_ns(ms * 1000000L); }

/* ---- pipes as sync points --------------------------------------------- */

static inline int t_post(int fd)
{
	char c = 'x';
	return write(fd, &c, 1) == 1 ? 0 : -1;
}

/* Read one byte (retrying EINTR); 0 on success, -1 on EOF or error. */
static inline int t_await(int fd)
{
	char c;
	ssize_t r;

	do {
		r = read(fd, &c, 1);
	} while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -1;
}

/* ---- processes --------------------------------------------------------- */

/* State letter of /proc/<pid>/stat ('R', 'S', 'Z', 'T', ...), or 0. */
static inline char t_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (t_read_file(path, buf, sizeof buf) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

/*
 * Wait (1 ms naps, bounded) until pid is in one of the given /proc states,
 * e.g. "S" for blocked in a syscall.  Returns 1 if seen.  Without /proc it
 * just sleeps a little and returns 0.
 */
static inline int t_wait_proc_state(pid_t pid, const char *states)
{
	int i;

	for (i = 0; i < 20000; i++) {
		char s = t_proc_state(pid);

		if (s && strchr(states, s))
			return 1;
		if (!s && i > 100)
			return 0;
		t_msleep(1);
	}
	return 0;
}

/* Same for one thread of ours: /proc/self/task/<tid>/stat. */
static inline int t_wait_thread_state(long tid, const char *states)
{
	char path[96], buf[512], *p;
	int i;

	snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)getpid(),
		 tid);
	for (i = 0; i < 20000; i++) {
		if (t_read_file(path, buf, sizeof buf) > 0 &&
		    (p = strrchr(buf, ')')) && p[1] == ' ' && strchr(states, p[2]))
			return 1;
		if (i > 100 && access(path, F_OK) != 0)
			return 0;
		t_msleep(1);
	}
	return 0;
}

/*
 * Wait for pid, but give up after secs seconds (a hang guard for kernels
 * that lack a feature, not a timing expectation): then SIGKILL it, reap
 * it, and return -2.  Otherwise the raw wait status (or -1).
 */
static inline int t_wait_bounded(pid_t pid, int secs)
{
	long i;
	int st;

	for (i = 0; i < secs * 100L; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		t_msleep(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -2;
}

/* Read and discard whatever is queued on fd, without blocking. */
static inline void t_drain(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	char buf[256];

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (read(fd, buf, sizeof buf) > 0)
		;
	fcntl(fd, F_SETFL, fl);
}

/* fork() that runs fn in the child and _exit()s with its result. */
static inline pid_t t_fork_fn(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

/* Install a handler with sigaction; flags as given, empty mask. */
static inline int t_sigaction(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static inline int t_siginfo_action(int sig,
				   void (*h)(int, siginfo_t *, void *),
				   int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = h;
	sa.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static inline int t_block(int sig, int how)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	return sigprocmask(how, &s, NULL);
}

/* ---- file systems ------------------------------------------------------- */

/*
 * Mount a fresh tmpfs on dir when running as root (so the checks do not
 * depend on what /tmp is on the host).  Returns 1 if mounted, 0 if not
 * (the caller then decides whether dir itself will do).
 */
static inline int t_mount_tmpfs(const char *dir)
{
	if (!t_is_root())
		return 0;
	return mount("none", dir, "tmpfs", 0, "size=64m") == 0;
}

static inline void t_umount(const char *dir)
{
	umount2(dir, MNT_DETACH);
}

/*
 * A scratch directory that is on tmpfs: /tmp/<name>.<pid>, with a fresh
 * tmpfs mounted on it when we are root.  Returns 1 if it mounted one
 * (undo with t_umount), 0 if the directory is on tmpfs anyway, -1 if no
 * tmpfs could be had (a note has been printed; the directory still exists).
 */
static inline int t_tmpfs_scratch(const char *name, char *dir, size_t n)
{
	struct statfs_min {
		long f_type;
		long rest[15];
	} sf;

	if (t_mktmp(name, dir, n) != 0)
		return -1;
	if (t_mount_tmpfs(dir))
		return 1;
	if (syscall(SYS_statfs, dir, &sf) == 0 && sf.f_type == 0x01021994)
		return 0;
	t_note("not root and %s is not on tmpfs", dir);
	return -1;
}

/*
 * The kernel heap from /proc/slabinfo: *bytes of live objects and *pages of
 * slabs (large blocks included).  Returns how many caches were read: 0 if
 * the file cannot be read (a host without root).  If `copy` is not NULL,
 * the text (up to n bytes, NUL-terminated) goes there too.
 */
static inline int t_heap_usage(long long *bytes, long long *pages, char *copy, size_t n)
{
	static char buf[16384];
	char *line, *save = NULL;
	int caches = 0;

	*bytes = *pages = 0;
	if (t_read_file("/proc/slabinfo", buf, sizeof buf) <= 0)
		return 0;
	if (copy && n) {
		size_t len = strlen(buf) < n - 1 ? strlen(buf) : n - 1;

		memcpy(copy, buf, len);
		copy[len] = 0;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		long long active, num, size, perslab, per, slabs;

		if (sscanf(line,
			   "%63s %lld %lld %lld %lld %lld : tunables %*d %*d %*d "
			   ": slabdata %*d %lld",
			   name, &active, &num, &size, &perslab, &per,
			   &slabs) != 7)
			continue;
		*bytes += active * size;
		*pages += slabs * per;
		caches++;
	}
	return caches;
}

/* Find "key" at a line start in text; return pointer after it or NULL. */
static inline const char *t_find_line(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, kl))
			return p + kl;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* Value of a "Key:   123 kB" line in a /proc file, or -1. */
static inline long long t_proc_kv(const char *path, const char *key)
{
	static char buf[16384];
	const char *v;

	if (t_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	v = t_find_line(buf, key);
	if (!v)
		return -1;
	return strtoll(v, NULL, 10);
}

/* ---- pseudo-terminals ------------------------------------------------- */

/*
 * Open a pty pair (master, slave; slave without becoming our controlling
 * terminal).  Returns 0, or -1 if the system has no ptys (no /dev/ptmx or
 * no devpts on /dev/pts; callers skip with a note).
 */
static inline int t_openpty(int *master, int *slave, char *name, size_t n)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	char *p;

	if (m < 0)
		return -1;
	if (grantpt(m) != 0 || unlockpt(m) != 0 || !(p = ptsname(m))) {
		close(m);
		return -1;
	}
	snprintf(name, n, "%s", p);
	*slave = open(name, O_RDWR | O_NOCTTY);
	if (*slave < 0) {
		close(m);
		return -1;
	}
	*master = m;
	return 0;
}

/* Read whatever arrives on fd within ms milliseconds (poll-driven). */
static inline ssize_t t_read_avail(int fd, char *buf, size_t n, int ms)
{
	size_t have = 0;
	struct pollfd pf;

	pf.fd = fd;
	pf.events = POLLIN;
	while (have < n && poll(&pf, 1, ms) == 1 && (pf.revents & POLLIN)) {
		ssize_t r = read(fd, buf + have, n - have);

		if (r <= 0)
			break;
		have += (size_t)r;
		ms = 20; /* after the first data, only wait for stragglers */
	}
	return (ssize_t)have;
}

#endif /* TRELLIS_NEXT_H */
