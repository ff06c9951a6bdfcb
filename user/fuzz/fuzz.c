/*
 * fuzz: a system-call fuzzer that runs inside Trellis as init.
 *
 *   fuzz [--seed S] [--calls N] [--batch B] [--threads T] [--uid U]
 *        [--first-batch K] [--batches M] [--range A:B | --only I]
 *        [--nrs LO-HI] [--trace] [--force]
 *
 * The parent (init) runs batches.  Each batch is B calls per worker thread,
 * issued by a forked child that is killed (with everything it left behind)
 * when the batch ends.  The child:
 *   - starts a new session, opens a fixed set of descriptors (file,
 *     read-only file, directory, pipes, eventfds, timerfd, signalfd, epoll,
 *     memfd, /dev/null and /dev/zero, a pty pair, sockets, a pidfd, procfs
 *     files, an O_PATH descriptor, a FIFO, a closed number), installs a
 *     no-op handler for every catchable non-fault signal, optionally drops
 *     to uid U, and starts T worker threads;
 *   - each worker issues calls generated from (seed, batch, worker, index)
 *     (gen.c): random numbers over the whole table plus out-of-range ones,
 *     arguments drawn per argument kind from pools of interesting values;
 *   - its main thread is a watchdog: a worker that stays in one call for
 *     more than a tick is sent SIGALRM (handled, no SA_RESTART) so that
 *     blocking calls return EINTR; one that ignores 25 of them is marked
 *     stuck, and the parent kills the child.
 * When a child dies (a fuzzed call killed it) or is killed, a new child
 * resumes the batch after the call in flight, so every call of the batch
 * is issued once.
 *
 * What is never done inline, and why (each such call still runs, in a
 * sacrificial process forked for the one call, unless noted):
 *   - exit, exit_group, execve, execveat: they end the worker's process;
 *   - rt_sigreturn: it loads registers from whatever is on the stack;
 *   - mmap(MAP_FIXED), munmap, mprotect, pkey_mprotect, madvise, mremap,
 *     remap_file_pages, mseal, map_shadow_stack, brk (shrinking),
 *     shmat(SHM_REMAP), arch_prctl(ARCH_MAP_VDSO_*) over memory the fuzzer
 *     itself runs from (text, data, heap, stacks, the shared page, the
 *     path strings): every mapping that exists when fuzzing starts,
 *     outside the fuzz zone.  The same calls on the zone run inline.
 *   - fork, vfork, clone, clone3 run inline; the new process or thread
 *     exits at once (checked in the same asm block as the syscall, before
 *     any stack use).
 * Arguments that are rewritten (sanitised), and why:
 *   - signal-sending calls (kill, tkill, tgkill, rt_sigqueueinfo,
 *     rt_tgsigqueueinfo) and calls that act on another process (ptrace,
 *     prlimit64, process_vm_writev, pidfd_open) never target init, the
 *     parent, every process (-1) or the parent's group: they would end the
 *     campaign, not test the kernel.  The target becomes the child itself.
 *   - reboot's first magic number is changed, so it can never succeed.
 *   - close, dup2, dup3 and close_range never close or replace TRACE_FD,
 *     the descriptor trace lines go to.
 * After rt_sigaction and rt_sigprocmask the watchdog's SIGALRM handler and
 * mask are restored.
 *
 * The parent prints `fuzz: ...` lines: the memory figures before the first
 * batch and after the last (all children reaped, scratch state reset),
 * one `fuzz: batch K calls N` line per batch (the host watchdog counts a
 * hang when these stop), deaths and stalls with the call in flight, and a
 * `fuzz: done ...` summary.  With --trace, every call is printed before it
 * is issued (`fz K.I tT name(args)`) and its result after (`fz K.I tT =
 * ret`), so that when the kernel panics the last line names the call.
 */
#define _GNU_SOURCE
#include <sys/personality.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

struct config cfg = {
	.seed = 1,
	.batch_calls = 1000,
	.range_lo = 0,
	.range_hi = ~0UL,
	.threads = 1,
	.uid = -1,
};

#define SCRATCH "/tmp/fz"
#define WATCH_NS 20000000L /* watchdog period */
#define STUCK_TICKS 25	   /* interrupts ignored before "stuck" */
#define SAC_TRIES 50	   /* interrupted waits before killing a sacrifice */
#define STALL_SECS 10	   /* no progress at all: kill the child */
#define SETUP_SECS 5	   /* a child's setup takes longer: reset scratch */
#define WORKER_STACK (256 * 1024)

static struct shared *sh;

/* ---- output (parent) ----------------------------------------------------- */

static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	write_all(1, buf, (size_t)n);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- signals (child) ----------------------------------------------------- */

__asm__(".pushsection .text\n"
	".globl fz_restorer\n"
	"fz_restorer:\n\t"
	"mov $15, %eax\n\t"
	"syscall\n\t"
	"hlt\n"
	".popsection\n");

void fz_noop_handler(int sig)
{
	(void)sig;
}

struct ksigaction {
	uint64_t handler, flags, restorer, mask;
};

#define SA_RESTORER_ 0x04000000UL

static void set_handler(int sig)
{
	struct ksigaction ka = { (uint64_t)fz_noop_handler, SA_RESTORER_,
				 (uint64_t)fz_restorer, 0 };

	raw4(SYS_rt_sigaction, sig, &ka, 0, 8);
}

static void unblock_alarm(void)
{
	uint64_t set = 1UL << (SIGALRM - 1);

	raw4(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, 0, 8);
}

/* Fault signals keep their default action (a handler that returns would
 * fault again forever); KILL and STOP cannot be caught; 32-34 belong to
 * musl; CHLD is ignored by default anyway. */
static int keep_default(int sig)
{
	return sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV ||
	       sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGTRAP || sig == SIGABRT || sig == SIGCHLD ||
	       (sig >= 32 && sig <= 34);
}

/* ---- the fuzzed call ------------------------------------------------------ */

/* The syscall number as a kernel that looks only at the low 32 bits
 * would see it, without the x32 bit. */
static uint64_t base_nr(uint64_t nr)
{
	return nr & 0xffffffffUL & ~0x40000000UL;
}

static int forklike(uint64_t nr)
{
	uint64_t b = base_nr(nr);

	return b == SYS_clone || b == SYS_fork || b == SYS_vfork || b == 435;
}

/*
 * Issues the call.  If it is fork-like and returns 0 (we are the new
 * process or thread), exit at once, before touching the stack: a clone
 * may have given us any stack pointer, or the parent's stack.
 */
static long fz_syscall(const struct call *c, long fl)
{
	register long r10 __asm__("r10") = (long)c->a[3];
	register long r8 __asm__("r8") = (long)c->a[4];
	register long r9 __asm__("r9") = (long)c->a[5];
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %[fl], %[fl]\n\t"
			 "jz 1f\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "mov $60, %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "syscall\n\t"
			 "ud2\n"
			 "1:"
			 : "=a"(ret)
			 : "a"(c->nr), "D"(c->a[0]), "S"(c->a[1]),
			   "d"(c->a[2]), "r"(r10), "r"(r8), "r"(r9),
			   [fl] "r"(fl)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Protected memory: every mapping outside the zone when fuzzing starts. */
static struct range prot[MAX_PROTECTED];
static int nprot;
static uint64_t init_brk;
static int self_pid, parent_pid, parent_pgid;

static int overlaps(uint64_t addr, uint64_t len)
{
	uint64_t lo = addr & ~0xfffUL, hi;
	int i;

	if (len == 0)
		return 0;
	if (__builtin_add_overflow(addr, len, &hi) || hi > ~0xfffUL)
		return 1;
	hi = (hi + 0xfff) & ~0xfffUL;
	for (i = 0; i < nprot; i++)
		if (lo < prot[i].hi && prot[i].lo < hi)
			return 1;
	return 0;
}

static int needs_sacrifice(const struct call *c)
{
	const uint64_t *a = c->a;

	switch (base_nr(c->nr)) {
	case SYS_rt_sigreturn:
	case SYS_execve:
	case SYS_exit:
	case SYS_exit_group:
	case SYS_execveat:
		return 1;
	case SYS_mmap:
		return (a[3] & (MAP_FIXED | 0x100000)) && overlaps(a[0], a[1]);
	case SYS_mprotect:
	case SYS_munmap:
	case SYS_madvise:
	case SYS_remap_file_pages:
	case 329: /* pkey_mprotect */
	case 453: /* map_shadow_stack */
	case 462: /* mseal */
		return overlaps(a[0], a[1]);
	case SYS_mremap:
		return overlaps(a[0], a[1]) ||
		       ((a[3] & 2 /* MREMAP_FIXED */) && overlaps(a[4], a[2]));
	case SYS_brk:
		return a[0] < init_brk && overlaps(a[0], init_brk - a[0]);
	case SYS_shmat:
		return (a[2] & 040000 /* SHM_REMAP */) && a[0] &&
		       overlaps(a[0], 1UL << 32);
	case SYS_arch_prctl:
		return a[0] >= 0x2001 && a[0] <= 0x2003;
	default:
		return 0;
	}
}

static uint64_t safe_pid(uint64_t v)
{
	int p = (int)v;

	if (p == -1 || p == 1 || p == parent_pid || p == -parent_pid ||
	    p == -parent_pgid || p == parent_pgid)
		return (uint64_t)self_pid;
	return v;
}

static uint64_t safe_fd(uint64_t v)
{
	return (uint32_t)v == TRACE_FD ? TRACE_FD - 1 : v;
}

static void sanitize(struct call *c)
{
	uint64_t *a = c->a;

	switch (base_nr(c->nr)) {
	case SYS_kill:
	case SYS_tkill:
	case SYS_rt_sigqueueinfo:
	case SYS_prlimit64:
	case SYS_process_vm_writev:
	case 434: /* pidfd_open */
		a[0] = safe_pid(a[0]);
		break;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		a[0] = safe_pid(a[0]);
		a[1] = safe_pid(a[1]);
		break;
	case SYS_ptrace:
		a[1] = safe_pid(a[1]);
		break;
	case SYS_reboot:
		if ((uint32_t)a[0] == 0xfee1deadU)
			a[0] = 0;
		break;
	case SYS_close:
		a[0] = safe_fd(a[0]);
		break;
	case SYS_dup2:
	case SYS_dup3:
		a[1] = safe_fd(a[1]);
		break;
	case 436: /* close_range */
		if (!(a[2] & 4 /* CLOSE_RANGE_CLOEXEC */) &&
		    (uint32_t)a[0] <= TRACE_FD && (uint32_t)a[1] >= TRACE_FD) {
			a[1] = TRACE_FD - 1;
			if ((uint32_t)a[0] > TRACE_FD - 1)
				a[0] = TRACE_FD - 1;
		}
		break;
	}
}

/* ---- the child: workers and watchdog -------------------------------------- */

static uint64_t cur_batch;
static uint64_t start_idx[MAX_THREADS];
static volatile int worker_tid[MAX_THREADS];
static volatile int go;

static void trace_line(const char *what, int t, uint64_t idx,
		       const struct call *c, const struct labels *lab,
		       long ret)
{
	char buf[1024];
	char *p = buf, *end = buf + sizeof buf - 1;

	p = put_str(p, end, "fz ");
	p = put_udec(p, end, cur_batch);
	p = put_str(p, end, ".");
	p = put_udec(p, end, idx);
	p = put_str(p, end, " t");
	p = put_udec(p, end, (uint64_t)t);
	p = put_str(p, end, " ");
	if (c) {
		p = put_str(p, end, what);
		p += format_call(p, (size_t)(end - p), c, lab);
	} else {
		p = put_str(p, end, "= ");
		if (ret < 0 && ret > -4096)
			p = put_dec(p, end, ret);
		else
			p = put_hex(p, end, (uint64_t)ret);
	}
	*p++ = '\n';
	write_all(TRACE_FD, buf, (size_t)(p - buf));
}

/*
 * Runs the call in a process forked for it, and waits (interrupted by the
 * watchdog every tick) until it is gone; after SAC_TRIES interrupts it is
 * killed.  Returns the fork's error, or the wait status.
 */
static long run_sacrificial(const struct call *c, int t)
{
	long pid, r;
	int st = 0, tries = 0;

	sh->waiting[t] = 1;
	pid = raw0(SYS_fork);
	if (pid == 0) {
		long ret = fz_syscall(c, 0);

		raw1(SYS_exit_group, ret < 0 ? 1 : 0);
	}
	if (pid < 0) {
		__atomic_fetch_add(&sh->n_sac_fail, 1, __ATOMIC_RELAXED);
		sh->waiting[t] = 0;
		return pid;
	}
	__atomic_fetch_add(&sh->n_sacrificed, 1, __ATOMIC_RELAXED);
	for (;;) {
		r = raw4(SYS_wait4, pid, &st, __WALL, 0);
		if (r == -EINTR) {
			if (++tries == SAC_TRIES)
				raw2(SYS_kill, pid, SIGKILL);
			continue;
		}
		break;
	}
	sh->waiting[t] = 0;
	return r == pid ? st : r;
}

static void account(const struct call *c, long ret, uint64_t idx)
{
	uint64_t nr = c->nr;

	if (ret == -ENOSYS) {
		__atomic_fetch_add(&sh->n_enosys, 1, __ATOMIC_RELAXED);
		if (nr < 1024)
			__atomic_fetch_or(&sh->enosys[nr / 64], 1UL << (nr % 64),
					  __ATOMIC_RELAXED);
		return;
	}
	if (nr < 1024)
		__atomic_fetch_or(&sh->answered[nr / 64], 1UL << (nr % 64),
				  __ATOMIC_RELAXED);
	if (ret < 0 && ret > -4096) {
		__atomic_fetch_add(&sh->n_err, 1, __ATOMIC_RELAXED);
		/* Linux's errnos end at EHWPOISON (133); anything else is a
		 * kernel-internal code leaking out (ERESTARTSYS...). */
		if (-ret > 133) {
			uint64_t k = __atomic_fetch_add(&sh->n_odd, 1,
							__ATOMIC_RELAXED);
			if (k < MAX_ODD) {
				sh->odd[k].batch = cur_batch;
				sh->odd[k].idx = idx;
				sh->odd[k].ret = (uint64_t)ret;
				sh->odd[k].c = *c;
			}
		}
	} else {
		__atomic_fetch_add(&sh->n_ok, 1, __ATOMIC_RELAXED);
	}
}

static void *worker(void *arg)
{
	int t = (int)(long)arg;
	uint64_t i, end = cfg.batch_calls;
	uint64_t none = 0;

	worker_tid[t] = (int)raw0(SYS_gettid);
	while (!go)
		raw0(SYS_sched_yield);
	raw4(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, 8);
	for (i = start_idx[t]; i < end; i++) {
		struct call c;
		struct labels lab;
		long ret;
		int sac;

		if (i < cfg.range_lo || i >= cfg.range_hi) {
			sh->cur[t] = i + 1;
			sh->done[t] = i + 1;
			continue;
		}
		gen_call(&c, cfg.trace ? &lab : 0, cur_batch, t, i);
		sanitize(&c);
		sac = needs_sacrifice(&c);
		sh->inflight[t] = c;
		sh->ring[t][i % RING] = c;
		__atomic_store_n(&sh->cur[t], i + 1, __ATOMIC_SEQ_CST);
		if (cfg.trace)
			trace_line(sac ? "sac " : "", t, i, &c, &lab, 0);
		if (sac)
			ret = run_sacrificial(&c, t);
		else
			ret = fz_syscall(&c, forklike(c.nr));
		switch (base_nr(c.nr)) {
		case SYS_rt_sigaction:
			set_handler(SIGALRM);
			break;
		case SYS_rt_sigprocmask:
			unblock_alarm();
			break;
		}
		if (!sac)
			account(&c, ret, i);
		__atomic_store_n(&sh->done[t], i + 1, __ATOMIC_SEQ_CST);
		if (cfg.trace)
			trace_line("", t, i, 0, 0, ret);
	}
	raw1(SYS_exit, 0);
	return 0;
}

static void watchdog(void)
{
	uint64_t last[MAX_THREADS] = { 0 };
	int quiet[MAX_THREADS] = { 0 };
	uint64_t all = ~0UL;
	struct timespec tick = { 0, WATCH_NS };
	int t;

	raw4(SYS_rt_sigprocmask, SIG_BLOCK, &all, 0, 8);
	for (;;) {
		int busy = 0;

		raw2(SYS_nanosleep, &tick, 0);
		for (t = 0; t < cfg.threads; t++) {
			uint64_t cur = sh->cur[t];

			if (sh->done[t] >= cfg.batch_calls)
				continue;
			busy = 1;
			if (cur > sh->done[t] && cur == last[t]) {
				raw3(SYS_tgkill, self_pid, worker_tid[t],
				     SIGALRM);
				if (++quiet[t] >= STUCK_TICKS && !sh->waiting[t])
					sh->stuck[t] = 1;
			} else {
				last[t] = cur;
				quiet[t] = 0;
			}
		}
		if (!busy) {
			sh->finished = 1;
			raw1(SYS_exit_group, 0);
		}
	}
}

static void setup_fail(const char *what)
{
	int e = errno, fd, open_fds = 0;
	char *p = (char *)sh->setup_msg, *end = p + sizeof sh->setup_msg - 1;

	for (fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			open_fds++;
	p = put_str(p, end, what);
	p = put_str(p, end, ": errno ");
	p = put_dec(p, end, e);
	p = put_str(p, end, ", open fds ");
	p = put_dec(p, end, open_fds);
	*p = 0;
	sh->setup_failed = 1;
	raw1(SYS_exit_group, 99);
}

static struct fdent fds[MAX_FDS];
static int nfd;

static void add_fd(int fd, const char *name)
{
	if (fd >= 0 && nfd < MAX_FDS) {
		fds[nfd].fd = fd;
		fds[nfd].name = name;
		nfd++;
	}
}

static void open_fds(void)
{
	int null, p[2], sp[2], fd;
	sigset_t usr1;
	struct epoll_event ev = { .events = EPOLLIN };

	null = open("/dev/null", O_RDWR);
	if (null < 0)
		setup_fail("/dev/null");
	dup2(cfg.trace ? 1 : null, TRACE_FD);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	add_fd(null, "null");
	add_fd(0, "stdin");
	/* A child that resumes a batch finds the scratch tree as the one
	 * before it left it: anything may be missing. */
	mkdir(SCRATCH, 0777);
	/* O_NONBLOCK: a FIFO or a terminal may stand where a file was. */
	add_fd(open(SCRATCH "/file", O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY,
		    0666),
	       "file");
	add_fd(open(SCRATCH "/ro", O_RDONLY | O_NONBLOCK | O_NOCTTY), "ro");
	add_fd(open(SCRATCH, O_RDONLY | O_DIRECTORY | O_NONBLOCK), "dir");
	if (pipe2(p, 0) == 0) {
		add_fd(p[0], "pipe_r");
		add_fd(p[1], "pipe_w");
		ev.data.fd = p[0];
	}
	if (pipe2(p, O_NONBLOCK) == 0) {
		add_fd(p[0], "npipe_r");
		add_fd(p[1], "npipe_w");
	}
	add_fd(eventfd(0, EFD_NONBLOCK), "eventfd");
	add_fd(eventfd(1, 0), "eventfd_b");
	add_fd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), "timerfd");
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	add_fd(signalfd(-1, &usr1, SFD_NONBLOCK), "signalfd");
	fd = epoll_create1(0);
	if (fd >= 0)
		epoll_ctl(fd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	add_fd(fd, "epoll");
	fd = (int)syscall(SYS_memfd_create, "fz", 2 /* MFD_ALLOW_SEALING */);
	if (fd >= 0 && ftruncate(fd, 8192) != 0)
		fd = -1;
	add_fd(fd, "memfd");
	add_fd(open("/dev/zero", O_RDWR), "zero");
	fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK);
	add_fd(fd, "ptmx");
	if (fd >= 0) {
		int unlock = 0, n = -1;
		char name[32];

		ioctl(fd, TIOCSPTLCK, &unlock);
		if (ioctl(fd, TIOCGPTN, &n) == 0) {
			snprintf(name, sizeof name, "/dev/pts/%d", n);
			add_fd(open(name, O_RDWR | O_NOCTTY | O_NONBLOCK),
			       "pts");
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0) {
		add_fd(sp[0], "unix0");
		add_fd(sp[1], "unix1");
	}
	add_fd(socket(AF_INET, SOCK_DGRAM, 0), "udp");
	add_fd((int)syscall(434, self_pid, 0), "pidfd");
	add_fd(open("/proc/self/maps", O_RDONLY), "maps");
	add_fd(open(SCRATCH "/file", O_PATH), "opath");
	add_fd(open(SCRATCH "/fifo", O_RDONLY | O_NONBLOCK | O_NOCTTY), "fifo");
	add_fd((int)syscall(SYS_inotify_init1, O_NONBLOCK), "inotify");
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		close(fd);
		add_fd(fd, "closed");
	}
}

static void read_protected(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	nprot = 0;
	if (!f)
		setup_fail("/proc/self/maps");
	while (fgets(line, sizeof line, f) && nprot < MAX_PROTECTED) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (lo >= ZONE && hi <= ZONE_END)
			continue;
		prot[nprot].lo = lo;
		prot[nprot].hi = hi;
		nprot++;
	}
	fclose(f);
	if (nprot == MAX_PROTECTED)
		setup_fail("too many mappings");
}

static void child_main(void)
{
	static pthread_t th[MAX_THREADS];
	pthread_attr_t attr;
	char *stacks;
	int t, sig;

	setsid();
	self_pid = getpid();
	parent_pid = getppid();
	parent_pgid = getpgid(parent_pid);
	if (parent_pgid < 0)
		parent_pgid = parent_pid;
	open_fds();
	if (chdir(SCRATCH) != 0)
		chdir("/tmp");
	for (sig = 1; sig <= 64; sig++)
		if (!keep_default(sig))
			set_handler(sig);
	/* The shared arena pages are the child's own, not the parent's. */
	mmap((void *)(ARENA + 48 * 0x1000UL), 8 * 0x1000, PROT_READ | PROT_WRITE,
	     MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	pools_child_fill(fds, nfd, self_pid);
	stacks = mmap(0, (size_t)cfg.threads * WORKER_STACK,
		      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (stacks == MAP_FAILED)
		setup_fail("worker stacks");
	if (cfg.uid >= 0) {
		/* Raw calls before any thread exists, so that the workers
		 * inherit the credentials (musl's wrappers are not needed). */
		raw2(SYS_setgroups, 0, 0);
		if (raw3(SYS_setresgid, cfg.uid, cfg.uid, cfg.uid) ||
		    raw3(SYS_setresuid, cfg.uid, cfg.uid, cfg.uid))
			setup_fail("setuid");
	}
	for (t = 0; t < cfg.threads; t++) {
		pthread_attr_init(&attr);
		pthread_attr_setstack(&attr, stacks + (size_t)t * WORKER_STACK,
				      WORKER_STACK);
		if (pthread_create(&th[t], &attr, worker, (void *)(long)t))
			setup_fail("pthread_create");
	}
	for (t = 0; t < cfg.threads; t++)
		while (!worker_tid[t])
			raw0(SYS_sched_yield);
	read_protected();
	init_brk = (uint64_t)raw1(SYS_brk, 0);
	sh->setup_done = 1;
	go = 1;
	watchdog();
}

/* ---- the parent: scratch state, memory, batches --------------------------- */

static void rm_tree(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d;
	struct dirent *e;

	if (fd >= 0) {
		d = fdopendir(fd);
		if (d) {
			while ((e = readdir(d)))
				if (strcmp(e->d_name, ".") &&
				    strcmp(e->d_name, ".."))
					rm_tree(fd, e->d_name);
			closedir(d);
		} else {
			close(fd);
		}
		unlinkat(dirfd, name, AT_REMOVEDIR);
	} else {
		unlinkat(dirfd, name, 0);
	}
}

#define MAX_MOUNTS 64
static char snapshot[MAX_MOUNTS][128];
static int nsnapshot;

/* The mount point of a /proc/mounts line: the second field, fields being
 * separated by exactly one space (the first, the source, may be empty: a
 * mount(2) with "" as its source, which Linux shows so too), with the
 * octal escapes (\040 for a space...) undone. 0 if there is none. */
static int mount_point(const char *line, char *out, size_t size)
{
	const char *p = strchr(line, ' ');
	size_t n = 0;

	if (!p)
		return 0;
	for (p++; *p && *p != ' ' && *p != '\n' && n + 1 < size; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' &&
		    p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
			out[n++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 +
					  (p[3] - '0'));
			p += 3;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = 0;
	return n > 0;
}

static int read_mounts(char out[][128], int max)
{
	FILE *f = fopen("/proc/mounts", "r");
	char *line = 0;
	size_t cap = 0;
	int n = 0;

	if (!f)
		return -1;
	/* getline: a fuzzed source may be up to a page long, and a piece of
	 * a cut line must not pass for a mount. */
	while (getline(&line, &cap, f) > 0 && n < max)
		if (mount_point(line, out[n], 128) && out[n][0] == '/')
			n++;
	free(line);
	fclose(f);
	return n;
}

/* Unmounts what the fuzzer mounted: the entries beyond the snapshot's
 * (counting duplicates), newest first. */
static void unmount_extras(void)
{
	static char cur[MAX_MOUNTS][128];
	int round, n, i, j;

	for (round = 0; round < 2 * MAX_MOUNTS; round++) {
		int used[MAX_MOUNTS] = { 0 }, extra = -1;

		n = read_mounts(cur, MAX_MOUNTS);
		if (n < 0)
			return;
		for (i = 0; i < n; i++) {
			int found = 0;

			for (j = 0; j < nsnapshot && !found; j++)
				if (!used[j] && !strcmp(cur[i], snapshot[j])) {
					used[j] = 1;
					found = 1;
				}
			if (!found)
				extra = i;
		}
		if (extra < 0 && n > nsnapshot)
			extra = n - 1;
		if (extra < 0)
			return;
		if (umount2(cur[extra], MNT_DETACH) != 0) {
			say("fuzz: warning: cannot unmount %s: %s", cur[extra],
			    strerror(errno));
			return;
		}
	}
}

static void ipc_cleanup(void)
{
	static const char *const files[] = { "/proc/sysvipc/shm",
					     "/proc/sysvipc/sem",
					     "/proc/sysvipc/msg" };
	int k;

	for (k = 0; k < 3; k++) {
		FILE *f = fopen(files[k], "r");
		char line[512];
		long key, id;

		if (!f)
			continue;
		while (fgets(line, sizeof line, f)) {
			if (sscanf(line, "%ld %ld", &key, &id) != 2)
				continue;
			if (k == 0)
				shmctl((int)id, IPC_RMID, 0);
			else if (k == 1)
				semctl((int)id, 0, IPC_RMID);
			else
				msgctl((int)id, IPC_RMID, 0);
		}
		fclose(f);
	}
}

static void write_file(const char *path, const char *data, size_t len,
		       mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0)
		return;
	while (len) {
		ssize_t w = write(fd, data, len);

		if (w <= 0)
			break;
		data += w;
		len -= (size_t)w;
	}
	close(fd);
	chmod(path, mode);
}

/* Puts the scratch tree, device modes and IPC namespace back into the
 * state every batch starts from. */
static void reset_scratch(void)
{
	static char content[8192];
	size_t i;

	unmount_extras();
	rm_tree(AT_FDCWD, SCRATCH);
	mkdir(SCRATCH, 0777);
	chmod(SCRATCH, 0777);
	for (i = 0; i < sizeof content; i++)
		content[i] = (char)(i % 61 == 60 ? '\n' : 'a' + i % 26);
	write_file(SCRATCH "/file", content, sizeof content, 0666);
	write_file(SCRATCH "/ro", content, 4096, 0444);
	mkdir(SCRATCH "/dir", 0777);
	mkdir(SCRATCH "/dir/sub", 0777);
	mkdir(SCRATCH "/mnt", 0777);
	chmod(SCRATCH "/dir", 0777);
	chmod(SCRATCH "/dir/sub", 0777);
	chmod(SCRATCH "/mnt", 0777);
	mkfifo(SCRATCH "/fifo", 0666);
	chmod(SCRATCH "/fifo", 0666);
	write_file(SCRATCH "/x.sh", "#!" SCRATCH "/x.sh\n", 16, 0777);
	write_file(SCRATCH "/y", "#!/bin/busybox true\n", 20, 0777);
	symlink("file", SCRATCH "/link");
	chmod("/dev/null", 0666);
	chmod("/dev/zero", 0666);
	chmod("/dev/ptmx", 0666);
	ipc_cleanup();
}

struct mem {
	long v[5];
};
static const char *const mem_keys[5] = { "MemFree", "Slab", "KernelStack",
					 "PageTables", "Shmem" };

static void read_mem(struct mem *m)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	int k;

	for (k = 0; k < 5; k++)
		m->v[k] = -1;
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		for (k = 0; k < 5; k++) {
			size_t n = strlen(mem_keys[k]);

			if (!strncmp(line, mem_keys[k], n) && line[n] == ':')
				m->v[k] = strtol(line + n + 1, 0, 10);
		}
	fclose(f);
}

static void print_mem(const char *when, const struct mem *m)
{
	char buf[512];
	int n, k;

	n = snprintf(buf, sizeof buf, "fuzz: mem %s", when);
	for (k = 0; k < 5; k++)
		if (m->v[k] >= 0)
			n += snprintf(buf + n, sizeof buf - (size_t)n,
				      " %s=%ld kB", mem_keys[k], m->v[k]);
	say("%s", buf);
}

/* /proc/slabinfo (root only): live objects and slabs per cache. */
#define MAX_CACHES 32
struct slabs {
	int n;
	struct {
		char name[32];
		long active, slabs;
	} c[MAX_CACHES];
};

static void read_slabs(struct slabs *s)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];

	s->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof line, f) && s->n < MAX_CACHES) {
		long active, num, size, per, pages, aslabs;
		char name[32];

		if (sscanf(line, "%31s %ld %ld %ld %ld %ld : tunables %*d %*d %*d : slabdata %ld",
			   name, &active, &num, &size, &per, &pages, &aslabs) != 7)
			continue;
		snprintf(s->c[s->n].name, sizeof s->c[s->n].name, "%s", name);
		s->c[s->n].active = active;
		s->c[s->n].slabs = aslabs;
		s->n++;
	}
	fclose(f);
}

/* One line with the caches whose live objects or slabs changed. */
static void print_slab_change(const struct slabs *a, const struct slabs *b)
{
	char buf[1024];
	int n, i, j, any = 0;

	n = snprintf(buf, sizeof buf, "fuzz: slab change (live objects, slabs):");
	for (i = 0; i < b->n; i++) {
		long oa = 0, os = 0;

		for (j = 0; j < a->n; j++)
			if (!strcmp(a->c[j].name, b->c[i].name)) {
				oa = a->c[j].active;
				os = a->c[j].slabs;
			}
		if (oa == b->c[i].active && os == b->c[i].slabs)
			continue;
		any = 1;
		if (n < (int)sizeof buf - 64)
			n += snprintf(buf + n, sizeof buf - (size_t)n,
				      " %s %+ld %+ld", b->c[i].name,
				      b->c[i].active - oa, b->c[i].slabs - os);
	}
	if (b->n)
		say("%s", any ? buf : "fuzz: slab change: none");
}

/* Kills every process but us (we are init) and reaps them all. */
static void reap_all(int use_kill_all, pid_t group)
{
	double start = now();
	int warned = 0;

	for (;;) {
		pid_t w;
		int st;

		if (use_kill_all)
			kill(-1, SIGKILL);
		else if (group > 0)
			kill(-group, SIGKILL);
		while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
			;
		if (w < 0 && errno == ECHILD)
			return;
		if (!use_kill_all && group <= 0)
			return;
		if (!warned && now() - start > 20) {
			say("fuzz: warning: processes survive SIGKILL for 20 s");
			warned = 1;
		}
		usleep(10000);
	}
}

static struct {
	uint64_t calls, deaths, stalls, batches, continued, setup_stalls;
	uint64_t ok, err, enosys, sacrificed, sac_fail, odd;
	uint64_t answered[16], enosys_set[16];
} tot;
static int kill_all_ok;

static void print_inflight(const char *what, uint64_t batch, int t,
			   const char *extra)
{
	char line[1024];

	format_call(line, sizeof line, &sh->inflight[t], 0);
	say("fuzz: %s batch %llu t%d call %llu%s: %s", what,
	    (unsigned long long)batch, t,
	    (unsigned long long)(sh->cur[t] - 1), extra, line);
}

/* The calls before the one in flight (those this child issued). */
static void print_ring(uint64_t batch, int t, uint64_t first)
{
	uint64_t cur = sh->cur[t], i;

	if (!cur)
		return;
	for (i = cur - 1 > RING - 1 ? cur - RING : 0; i + 1 < cur; i++) {
		char line[1024];

		if (i < first)
			continue;
		format_call(line, sizeof line, &sh->ring[t][i % RING], 0);
		say("fuzz:   before: batch %llu t%d call %llu: %s",
		    (unsigned long long)batch, t, (unsigned long long)i, line);
	}
}

static void collect(void)
{
	int k;

	tot.ok += sh->n_ok;
	tot.err += sh->n_err;
	tot.enosys += sh->n_enosys;
	tot.sacrificed += sh->n_sacrificed;
	tot.sac_fail += sh->n_sac_fail;
	for (k = 0; k < 16; k++) {
		tot.answered[k] |= sh->answered[k];
		tot.enosys_set[k] |= sh->enosys[k];
	}
	if (sh->n_odd) {
		uint64_t i, n = sh->n_odd < MAX_ODD ? sh->n_odd : MAX_ODD;

		for (i = 0; i < n; i++) {
			char line[1024];

			format_call(line, sizeof line, &sh->odd[i].c, 0);
			say("fuzz: odd return batch %llu call %llu ret=%lld: %s",
			    (unsigned long long)sh->odd[i].batch,
			    (unsigned long long)sh->odd[i].idx,
			    (long long)sh->odd[i].ret, line);
		}
		tot.odd += sh->n_odd;
	}
}

static void run_batch(uint64_t batch)
{
	uint64_t next[MAX_THREADS] = { 0 };
	int t, fruitless = 0, setup_fails = 0;
	double last_print = now();

	reset_scratch();
	cur_batch = batch;
	memset(sh, 0, sizeof *sh);
	for (;;) {
		pid_t pid, w;
		int st = 0, gone = 0, killed = 0, remaining = 0, progressed = 0;
		uint64_t seen = 0;
		double last_progress = now(), killed_at = 0, started;
		int setup_stalled = 0;
		char why[64] = "";

		for (t = 0; t < cfg.threads; t++) {
			if (next[t] < cfg.batch_calls)
				remaining = 1;
			start_idx[t] = next[t];
			sh->cur[t] = next[t];
			sh->done[t] = next[t];
			sh->stuck[t] = 0;
			sh->waiting[t] = 0;
		}
		if (!remaining)
			break;
		sh->finished = 0;
		sh->setup_done = 0;
		started = now();
		pid = fork();
		if (pid == 0)
			child_main();
		if (pid < 0) {
			say("fuzz: fork failed: %s", strerror(errno));
			exit(1);
		}
		while (!gone) {
			uint64_t sum = 0;

			usleep(20000);
			while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED |
						       __WALL)) > 0) {
				if (w != pid)
					continue;
				if (WIFSTOPPED(st)) {
					/* A fuzzed SIGSTOP: let it go on. */
					kill(pid, SIGCONT);
					tot.continued++;
					continue;
				}
				gone = 1;
				break;
			}
			if (gone)
				break;
			for (t = 0; t < cfg.threads; t++)
				sum += sh->done[t] + sh->cur[t];
			if (sum != seen) {
				seen = sum;
				last_progress = now();
				progressed = 1;
			}
			if (killed) {
				if (killed_at && now() - killed_at > 20) {
					say("fuzz: warning: child %d survives SIGKILL for 20 s",
					    pid);
					killed_at = 0;
				}
				continue;
			}
			if (!sh->setup_done && now() - started > SETUP_SECS) {
				/* Something the last child left in the scratch
				 * tree blocks the next one's setup: start over
				 * from a clean tree. */
				say("fuzz: batch %llu: a child's setup did not finish in %d s; resetting the scratch tree",
				    (unsigned long long)batch, SETUP_SECS);
				setup_stalled = 1;
				killed = 1;
				kill(pid, SIGKILL);
				killed_at = now();
				tot.setup_stalls++;
				continue;
			}
			for (t = 0; t < cfg.threads; t++)
				if (sh->stuck[t]) {
					print_inflight("stall", batch, t,
						       " (ignores signals)");
					print_ring(batch, t, start_idx[t]);
					snprintf(why, sizeof why, "stall");
					killed = 1;
				}
			if (!killed && sh->setup_done &&
			    now() - last_progress > STALL_SECS) {
				for (t = 0; t < cfg.threads; t++)
					if (sh->cur[t] > sh->done[t]) {
						print_inflight("stall", batch, t,
							       " (no progress)");
						print_ring(batch, t,
							   start_idx[t]);
					}
				snprintf(why, sizeof why, "stall");
				killed = 1;
			}
			if (killed) {
				kill(pid, SIGKILL);
				killed_at = now();
				tot.stalls++;
			}
			if (progressed && now() - last_print > 10) {
				uint64_t at = 0;

				for (t = 0; t < cfg.threads; t++)
					at += sh->done[t];
				say("fuzz: batch %llu at %llu",
				    (unsigned long long)batch,
				    (unsigned long long)at);
				last_print = now();
				progressed = 0;
			}
		}
		reap_all(kill_all_ok, pid);
		if (sh->setup_failed) {
			struct mem m;

			say("fuzz: child setup failed: %s (status %d); giving up",
			    (const char *)sh->setup_msg, st);
			read_mem(&m);
			print_mem("now", &m);
			exit(1);
		}
		if (sh->finished)
			break;
		if (setup_stalled) {
			if (++setup_fails == 3) {
				say("fuzz: batch %llu: three children could not set up, even from a clean scratch tree; giving up",
				    (unsigned long long)batch);
				exit(1);
			}
			reset_scratch();
			continue;
		}
		setup_fails = 0;
		if (!killed) {
			char extra[64];

			if (WIFSIGNALED(st))
				snprintf(extra, sizeof extra, " (signal %d)",
					 WTERMSIG(st));
			else
				snprintf(extra, sizeof extra, " (exit %d)",
					 WEXITSTATUS(st));
			for (t = 0; t < cfg.threads; t++)
				if (sh->cur[t] > sh->done[t])
					print_inflight("death", batch, t, extra);
			tot.deaths++;
		}
		/* Resume after the call in flight.  A child that died before
		 * any worker started a call must not be restarted forever. */
		{
			int moved = 0;

			for (t = 0; t < cfg.threads; t++) {
				if (sh->cur[t] != next[t])
					moved = 1;
				next[t] = sh->cur[t];
			}
			if (!moved && ++fruitless >= 3) {
				say("fuzz: warning: batch %llu: three children made no progress; skipping a call",
				    (unsigned long long)batch);
				for (t = 0; t < cfg.threads; t++)
					next[t]++;
				fruitless = 0;
			} else if (moved) {
				fruitless = 0;
			}
		}
		(void)why;
	}
	collect();
	tot.calls += cfg.batch_calls * (uint64_t)cfg.threads;
	tot.batches++;
	say("fuzz: batch %llu calls %llu", (unsigned long long)batch,
	    (unsigned long long)tot.calls);
}

/*
 * Which of the known syscalls the kernel implements: each is called once,
 * with every argument -1, in a process of its own running as nobody with
 * a 20 ms alarm (default action: die) in case the call blocks.  Only the
 * answer ENOSYS counts as "not implemented"; a probe that dies or blocks
 * counts as implemented.  Returns how many are implemented.
 */
static int probe_implemented(uint64_t bits[8])
{
	/* [0..7]: the call returned; [8..15]: it returned other than ENOSYS */
	volatile uint64_t *res = mmap(0, 4096, PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int nr, n = 0;

	if (res == MAP_FAILED)
		return -1;
	memset(bits, 0, 8 * sizeof bits[0]);
	for (nr = 0; nr <= FUZZ_SC_LAST; nr++) {
		uint64_t bit = 1UL << (nr % 64);
		struct call c;
		pid_t pid;
		int k;

		if (!sc_known(nr))
			continue;
		c.nr = (uint64_t)nr;
		for (k = 0; k < 6; k++)
			c.a[k] = ~0UL;
		pid = fork();
		if (pid == 0) {
			struct itimerval it = { { 0, 0 }, { 0, 20000 } };
			long r;

			raw3(SYS_setresgid, 65534, 65534, 65534);
			raw3(SYS_setresuid, 65534, 65534, 65534);
			setitimer(ITIMER_REAL, &it, 0);
			r = fz_syscall(&c, forklike(c.nr));
			if (r != -ENOSYS)
				__atomic_fetch_or(&res[8 + nr / 64], bit,
						  __ATOMIC_SEQ_CST);
			__atomic_fetch_or(&res[nr / 64], bit, __ATOMIC_SEQ_CST);
			raw1(SYS_exit_group, 0);
		}
		if (pid < 0)
			break;
		while (waitpid(pid, 0, __WALL) < 0 && errno == EINTR)
			;
		reap_all(kill_all_ok, 0);
		if (!(res[nr / 64] & bit) || (res[8 + nr / 64] & bit)) {
			bits[nr / 64] |= bit;
			n++;
		}
	}
	munmap((void *)res, 4096);
	return n;
}

static void print_set(const char *what, const uint64_t *set)
{
	char buf[4096];
	int n, k, count = 0;

	n = snprintf(buf, sizeof buf, "fuzz: %s:", what);
	for (k = 0; k < 1024; k++)
		if (set[k / 64] & (1UL << (k % 64))) {
			count++;
			if (n < (int)sizeof buf - 8)
				n += snprintf(buf + n, sizeof buf - (size_t)n,
					      " %d", k);
		}
	say("%s (%d)", buf, count);
}

static int is_trellis(void)
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
	return strstr(all, "trellis") != 0;
}

static uint64_t num_arg(const char *s, const char *opt)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (!*s || *end) {
		fprintf(stderr, "fuzz: bad number for %s: %s\n", opt, s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fuzz [--seed S] [--calls N] [--batch B] [--threads T] [--uid U]\n"
		"            [--first-batch K] [--batches M] [--range A:B | --only I]\n"
		"            [--nrs LO-HI] [--trace] [--force]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t calls = 20000, first = 0, nbatches = 0, b;
	int force = 0, i;
	struct mem before, after;
	static struct slabs slabs_before, slabs_after;
	double t0, secs;

	/* Replays need the same addresses run after run: start again
	 * without address-space randomization (setarch -R). */
	if (personality(0xffffffff) != -1 &&
	    !(personality(0xffffffff) & ADDR_NO_RANDOMIZE) &&
	    personality(ADDR_NO_RANDOMIZE) != -1)
		execv("/proc/self/exe", argv);

	for (i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : 0;

		if (!strcmp(o, "--trace")) {
			cfg.trace = 1;
			continue;
		}
		if (!strcmp(o, "--force")) {
			force = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(o, "--seed"))
			cfg.seed = num_arg(v, o);
		else if (!strcmp(o, "--calls"))
			calls = num_arg(v, o);
		else if (!strcmp(o, "--batch"))
			cfg.batch_calls = num_arg(v, o);
		else if (!strcmp(o, "--threads"))
			cfg.threads = (int)num_arg(v, o);
		else if (!strcmp(o, "--uid"))
			cfg.uid = (int)num_arg(v, o);
		else if (!strcmp(o, "--first-batch"))
			first = num_arg(v, o);
		else if (!strcmp(o, "--batches"))
			nbatches = num_arg(v, o);
		else if (!strcmp(o, "--only")) {
			cfg.range_lo = num_arg(v, o);
			cfg.range_hi = cfg.range_lo + 1;
		} else if (!strcmp(o, "--nrs")) {
			/* Triage: only syscall numbers LO..=HI (the calls
			 * differ from the unrestricted campaign's). */
			char lo[32];
			const char *dash = strchr(v, '-');

			if (!dash || dash - v >= (long)sizeof lo)
				usage();
			memcpy(lo, v, (size_t)(dash - v));
			lo[dash - v] = 0;
			gen_limit_nrs(num_arg(lo, o), num_arg(dash + 1, o));
		} else if (!strcmp(o, "--range")) {
			char lo[32];
			const char *colon = strchr(v, ':');

			if (!colon || colon - v >= (long)sizeof lo)
				usage();
			memcpy(lo, v, (size_t)(colon - v));
			lo[colon - v] = 0;
			cfg.range_lo = num_arg(lo, o);
			cfg.range_hi = num_arg(colon + 1, o);
		} else
			usage();
	}
	if (cfg.threads < 1 || cfg.threads > MAX_THREADS ||
	    cfg.batch_calls == 0)
		usage();
	if (!nbatches)
		nbatches = (calls + cfg.batch_calls * (uint64_t)cfg.threads - 1) /
			   (cfg.batch_calls * (uint64_t)cfg.threads);
	/* The fuzzer changes mounts, devices and IPC state as root and
	 * kills every other process: only as init of a Trellis guest. */
	if (!force && (getpid() != 1 || !is_trellis())) {
		fprintf(stderr, "fuzz: refusing to run: not init of a Trellis guest (--force)\n");
		return 2;
	}
	kill_all_ok = getpid() == 1;
	sh = mmap(0, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("fuzz: mmap");
		return 1;
	}
	pools_init();
	{
		uint64_t impl[8];
		int n = probe_implemented(impl);

		if (n > 0)
			gen_set_implemented(impl);
		say("fuzz: the kernel implements %d of the syscalls the fuzzer knows",
		    n);
	}
	nsnapshot = read_mounts(snapshot, MAX_MOUNTS);
	if (nsnapshot < 0)
		nsnapshot = 0;
	say("fuzz: seed %llu batches %llu..%llu batch %llu threads %d uid %d%s",
	    (unsigned long long)cfg.seed, (unsigned long long)first,
	    (unsigned long long)(first + nbatches - 1),
	    (unsigned long long)cfg.batch_calls, cfg.threads, cfg.uid,
	    cfg.trace ? " trace" : "");
	reset_scratch();
	reap_all(kill_all_ok, 0);
	read_mem(&before);
	read_slabs(&slabs_before);
	print_mem("before", &before);
	t0 = now();
	for (b = first; b < first + nbatches; b++)
		run_batch(b);
	secs = now() - t0;
	reset_scratch();
	reap_all(kill_all_ok, 0);
	/* Let deferred frees (reaped tasks, timers) settle. */
	for (i = 0; i < 30; i++) {
		struct mem again;

		read_mem(&after);
		usleep(100000);
		read_mem(&again);
		if (again.v[0] == after.v[0])
			break;
	}
	print_mem("after", &after);
	read_slabs(&slabs_after);
	print_slab_change(&slabs_before, &slabs_after);
	print_set("answered", tot.answered);
	{
		uint64_t only_enosys[16];
		int k;

		for (k = 0; k < 16; k++)
			only_enosys[k] = tot.enosys_set[k] & ~tot.answered[k];
		print_set("enosys", only_enosys);
	}
	say("fuzz: done calls %llu batches %llu secs %.1f calls/s %.0f deaths %llu stalls %llu setup-stalls %llu continued %llu sacrificial %llu sacrificial-fork-failed %llu ok %llu err %llu enosys %llu odd %llu",
	    (unsigned long long)tot.calls, (unsigned long long)tot.batches,
	    secs, secs > 0 ? (double)tot.calls / secs : 0.0,
	    (unsigned long long)tot.deaths, (unsigned long long)tot.stalls,
	    (unsigned long long)tot.setup_stalls,
	    (unsigned long long)tot.continued,
	    (unsigned long long)tot.sacrificed,
	    (unsigned long long)tot.sac_fail, (unsigned long long)tot.ok,
	    (unsigned long long)tot.err, (unsigned long long)tot.enosys,
	    (unsigned long long)tot.odd);
	return 0;
}
