/*
 * stress_threads_signals: threads racing on pipes, futexes, poll, epoll,
 * eventfds, fork+wait, vfork, mmap/munmap/mprotect, thread creation,
 * record locks and timers, while a signaller thread sends signals to them
 * (tgkill, kill, SIGSTOP/SIGCONT/SIGKILL to child processes), and rounds
 * that end by exit_group while every thread is blocked (futex, pipe,
 * poll, epoll, nanosleep, wait4, sigsuspend, a record lock), by
 * exit_group from a worker in the middle of everything, by execve from a
 * worker thread, by SIGKILL from outside, or by the main thread leaving
 * first.  Its purpose is to drive the kernel through its rarer paths: a
 * lock-order violation panics Trellis, a lost wake-up hangs a round.
 *
 * Each round is a forked process (its own process group); the test, a
 * subreaper, checks how the round ended (exit status or signal), and that
 * every process the round created is gone afterwards (orphans come to us;
 * children die with their parent through PR_SET_PDEATHSIG, and whatever
 * is left is killed and counted as a failure).  A group stop is checked
 * too: the threads of a stopped process make no progress.
 *
 * Deterministic choices from a seed (STRESS_SEED overrides it, STRESS_ROUNDS
 * the number of rounds); each round runs for ROUND_MS of wall time, so the
 * whole test takes a few seconds, also under emulation.
 */
#include "next.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

#define DEFAULT_SEED 0x57e55eedULL
#define DEFAULT_ROUNDS 14
#define ROUND_MS 220
#define WORKERS 5
#define ROUND_LIMIT_S 120 /* hang guard per round (not a timing check) */
#define MAX_PIDS 4096

#ifndef __WALL
#define __WALL 0x40000000
#endif

enum ending {
	END_NORMAL,	    /* stop flag, join, exit 0 */
	END_EXIT_BLOCKED,   /* exit_group(42) while all threads block */
	END_EXIT_WORKER,    /* a worker calls exit_group(43) */
	END_THREAD_EXEC,    /* a worker execs: the new image exits 44 */
	END_KILLED,	    /* the test SIGKILLs the round */
	END_MAIN_EXIT,	    /* main thread exits first; last one exits 0 */
	END_COUNT
};

static const char *ending_name[END_COUNT] = {
	"normal", "exit_group while blocked", "exit_group from a worker",
	"execve from a thread", "SIGKILL", "main thread exits first",
};

/* Shared between the test and every process of a round. */
struct shared {
	volatile int npids;
	volatile int pids[MAX_PIDS]; /* every process a round created */
	volatile long ops;	     /* operations done (progress) */
	volatile int stop_checked, stop_failed;
};

static struct shared *sh;
static unsigned long long seed = DEFAULT_SEED;
static char self_path[PATH_MAX];
static char scratch[PATH_MAX];

/* ---- per round state ---------------------------------------------------- */

static enum ending ending;
static volatile int stop_flag, block_flag, running_workers;
static volatile long worker_tids[WORKERS];
static volatile int futex_words[4];
static int pipe_a[2], pipe_b[2], efd = -1, ep = -1, lock_fd = -1;
static volatile pid_t victim = -1;
static volatile unsigned long sig_counts[65];
static long long round_start;
static unsigned op_mask = ~0u; /* STRESS_OPS: which operations run */

struct rng {
	unsigned long long s;
};

static unsigned long long rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	syscall(SYS_nanosleep, &ts, NULL);
}

static void record_pid(pid_t pid)
{
	int i = __atomic_fetch_add(&sh->npids, 1, __ATOMIC_SEQ_CST);

	if (i < MAX_PIDS)
		sh->pids[i] = pid;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char buf[128];
	int n;

	(void)sig;
	n = snprintf(buf, sizeof buf, "  note: SIGSEGV code %d at %p rip %#llx\n",
		     si->si_code, si->si_addr,
		     (unsigned long long)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP]);
	(void)!write(1, buf, (size_t)n);
	syscall(SYS_exit_group, 77);
}

static void on_signal(int sig)
{
	if (sig > 0 && sig < 65)
		__atomic_fetch_add(&sig_counts[sig], 1, __ATOMIC_RELAXED);
}

/* In a child of round_fork: the process that forked it. */
static pid_t fork_parent;

/*
 * fork() for a round: the child dies with its parent and is recorded.
 * Only raw syscalls in the child after this (a multi-threaded parent).
 * PR_SET_PDEATHSIG follows the parent *thread* on Linux, which may be gone
 * already; children that live long also watch for being orphaned.
 */
static pid_t round_fork(void)
{
	pid_t parent = (pid_t)syscall(SYS_getpid);
	pid_t pid = (pid_t)syscall(SYS_fork);

	if (pid == 0) {
		fork_parent = parent;
		syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
		if (syscall(SYS_getppid) != parent)
			syscall(SYS_exit_group, 0);
		return 0;
	}
	if (pid > 0)
		record_pid(pid);
	return pid;
}

/* In a round_fork child: nap (doing `work`) until orphaned, then exit. */
static void nap_until_orphaned(int work)
{
	while (syscall(SYS_getppid) == fork_parent) {
		if (work)
			__atomic_fetch_add(&sh->ops, 1, __ATOMIC_RELAXED);
		nap_us(500);
	}
	syscall(SYS_exit_group, 0);
}

/* A child that naps until killed (the signaller stops and continues it). */
static pid_t spawn_victim(void)
{
	pid_t pid = round_fork();

	if (pid == 0)
		nap_until_orphaned(1);
	return pid;
}

/* ---- worker operations -------------------------------------------------- */

static void op_pipe(struct rng *r)
{
	char buf[64];
	int i, n = (int)(rnd(r) % 8) + 1;

	for (i = 0; i < n; i++)
		buf[i] = (char)('a' + rnd(r) % 26);
	if (rnd(r) % 2)
		(void)!write(pipe_a[1], buf, (size_t)n);
	else
		(void)!read(pipe_a[0], buf, sizeof buf);
}

static void op_futex(struct rng *r)
{
	volatile int *w = &futex_words[rnd(r) % 4];
	struct timespec ts = { 0, (long)(rnd(r) % 300) * 1000 };

	switch (rnd(r) % 4) {
	case 0:
		t_futex(w, FUTEX_WAIT_PRIVATE, *w, &ts, NULL, 0);
		break;
	case 1:
		__atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
		t_futex(w, FUTEX_WAKE_PRIVATE, (int)(rnd(r) % 3) + 1, NULL,
			NULL, 0);
		break;
	case 2:
		t_futex(w, FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG, 1,
			(struct timespec *)1UL, &futex_words[rnd(r) % 4], 0);
		break;
	default: {
		/* An absolute deadline a little ahead (the value may match). */
		struct timespec dl;

		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_nsec += 300000;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		t_futex(w, FUTEX_WAIT_BITSET_PRIVATE, *w + 1, &dl, NULL, -1);
	}
	}
}

static void op_poll(struct rng *r)
{
	struct pollfd pf[3] = {
		{ pipe_a[0], POLLIN, 0 },
		{ pipe_b[1], POLLOUT, 0 },
		{ efd, POLLIN, 0 },
	};
	struct epoll_event evs[4];
	struct timespec ts = { 0, 200000 };
	sigset_t mask;

	switch (rnd(r) % 3) {
	case 0:
		poll(pf, 3, (int)(rnd(r) % 2));
		break;
	case 1:
		sigemptyset(&mask);
		ppoll(pf, 3, &ts, &mask);
		break;
	default:
		epoll_wait(ep, evs, 4, (int)(rnd(r) % 2));
	}
}

static void op_eventfd(struct rng *r)
{
	uint64_t v = rnd(r) % 5 + 1;

	if (rnd(r) % 2)
		(void)!write(efd, &v, sizeof v);
	else
		(void)!read(efd, &v, sizeof v);
}

static void op_fork(struct rng *r)
{
	int how = (int)(rnd(r) % 5), st;
	pid_t pid = round_fork();

	if (pid == 0) {
		switch (how) {
		case 0:
			syscall(SYS_exit_group, 7);
			break;
		case 1:
			syscall(SYS_kill, syscall(SYS_getpid), SIGKILL);
			break;
		case 2:
			nap_us(300);
			syscall(SYS_exit_group, 8);
			break;
		case 3:
			(void)!syscall(SYS_write, pipe_b[1], "f", 1);
			syscall(SYS_exit_group, 9);
			break;
		default:
			syscall(SYS_kill, syscall(SYS_getpid), SIGBUS);
		}
		syscall(SYS_exit_group, 99);
	}
	if (pid < 0)
		return;
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
}

static void op_vfork(struct rng *r)
{
	pid_t pid;
	int st;

	(void)r;
	pid = vfork();
	if (pid == 0)
		_exit(5);
	if (pid > 0) {
		record_pid(pid);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
}

static void op_mm(struct rng *r)
{
	size_t pages = rnd(r) % 16 + 1, i;
	int shared = rnd(r) % 3 == 0;
	char *m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
		       -1, 0);

	if (m == MAP_FAILED)
		return;
	for (i = 0; i < pages; i += 1 + rnd(r) % 3)
		m[i * PAGE] = (char)i;
	if (rnd(r) % 2)
		mprotect(m, PAGE, PROT_READ);
	if (pages > 2 && rnd(r) % 2) {
		/* A hole first; then only what is left is unmapped (another
		 * thread's mmap may have landed in the hole meanwhile). */
		munmap(m + PAGE, PAGE);
		munmap(m, PAGE);
		munmap(m + 2 * PAGE, (pages - 2) * PAGE);
	} else {
		munmap(m, pages * PAGE);
	}
}

static void *short_thread(void *arg)
{
	struct rng r = { (unsigned long long)(uintptr_t)arg | 1 };
	int i;

	for (i = 0; i < 3; i++) {
		switch (rnd(&r) % 3) {
		case 0: op_pipe(&r); break;
		case 1: op_futex(&r); break;
		default: op_mm(&r);
		}
	}
	return NULL;
}

static void op_thread(struct rng *r)
{
	pthread_t th;

	if (pthread_create(&th, NULL, short_thread,
			   (void *)(uintptr_t)rnd(r)) != 0)
		return;
	if (rnd(r) % 2)
		pthread_join(th, NULL);
	else
		pthread_detach(th);
}

static void op_signals(struct rng *r)
{
	sigset_t set, old;
	struct timespec zero = { 0, 0 };
	long tid = worker_tids[rnd(r) % WORKERS];

	switch (rnd(r) % 5) {
	case 0:
		if (tid > 0)
			t_tgkill(getpid(), tid, rnd(r) % 2 ? SIGUSR1 : SIGUSR2);
		break;
	case 1:
		kill(getpid(), SIGUSR1);
		break;
	case 2:
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, &old);
		nap_us(100);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		break;
	case 3:
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, &old);
		syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, 8);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		break;
	default: {
		struct itimerval it = { { 0, 0 }, { 0, (long)(rnd(r) % 3000) + 100 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	}
}

static void op_lock(struct rng *r)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = (off_t)(rnd(r) % 4) * 8, .l_len = 8 };
	pid_t pid;
	int st;

	if (fcntl(lock_fd, F_SETLK, &fl) != 0)
		return;
	/* A child blocks on our lock until we drop it (or it is killed). */
	pid = round_fork();
	if (pid == 0) {
		struct flock c = fl;

		syscall(SYS_fcntl, lock_fd, F_SETLKW, &c);
		syscall(SYS_exit_group, 0);
	}
	nap_us(300);
	fl.l_type = F_UNLCK;
	fcntl(lock_fd, F_SETLK, &fl);
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
}

/* Blocks in one of several ways until exit_group ends the process. */
static void block_forever(int how)
{
	char c;
	int p[2];
	struct pollfd pf;
	struct epoll_event ev;
	sigset_t set;

	switch (how % 8) {
	case 0: {
		static volatile int never;

		for (;;)
			t_futex(&never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
	case 1:
		if (pipe(p) == 0)
			for (;;)
				(void)!read(p[0], &c, 1);
		break;
	case 2:
		if (pipe(p) == 0) {
			pf.fd = p[0];
			pf.events = POLLIN;
			for (;;)
				poll(&pf, 1, -1);
		}
		break;
	case 3:
		for (;;)
			epoll_wait(ep, &ev, 1, -1);
	case 4:
		for (;;)
			nap_us(10000000);
	case 5:
		for (;;) {
			int st;
			pid_t v = victim;

			if (v <= 0 || waitpid(v, &st, __WALL | WUNTRACED) < 0)
				nap_us(100000);
		}
	case 6:
		sigfillset(&set);
		sigdelset(&set, SIGRTMIN + 5); /* never sent */
		for (;;)
			sigsuspend(&set);
	default: {
		/* Wait for a lock a child holds (it naps forever). */
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 1000, .l_len = 1 };
		pid_t pid = round_fork();

		if (pid == 0) {
			syscall(SYS_fcntl, lock_fd, F_SETLK, &fl);
			nap_until_orphaned(0);
		}
		nap_us(2000);
		for (;;)
			fcntl(lock_fd, F_SETLKW, &fl);
	}
	}
	for (;;)
		nap_us(1000000);
}

struct worker {
	int index;
	pthread_t th;
};

static void worker_exec(void)
{
	char *argv[] = { self_path, "--exec-child", NULL };
	sigset_t all;

	/* Signals pending for the process survive execve with their
	 * handlers reset: keep them blocked (the mask survives too). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	execv(self_path, argv);
	syscall(SYS_exit_group, 50);
}

static void *worker(void *arg)
{
	struct worker *w = arg;
	struct rng r = { seed ^ ((unsigned long long)(w->index + 1) << 40) ^
			 (unsigned long long)round_start };
	long long deadline = round_start + ROUND_MS;
	int special = 0, op;

	worker_tids[w->index] = syscall(SYS_gettid);
	r.s = r.s ? r.s : 1;
	/* The worker that ends the round, at a random time. */
	if (w->index == 0 && (ending == END_EXIT_WORKER ||
			      ending == END_THREAD_EXEC))
		special = 1;
	while (!stop_flag) {
		if (block_flag)
			block_forever(w->index + (int)(rnd(&r) % 8));
		if (special && mono_ms() >= deadline - ROUND_MS / 2) {
			if (ending == END_EXIT_WORKER)
				syscall(SYS_exit_group, 43);
			worker_exec();
		}
		op = (int)(rnd(&r) % 12);
		if (!(op_mask & (1u << op)))
			op = 11;
		switch (op) {
		case 0: op_pipe(&r); break;
		case 1: op_futex(&r); break;
		case 2: op_poll(&r); break;
		case 3: op_eventfd(&r); break;
		case 4: op_fork(&r); break;
		case 5: op_vfork(&r); break;
		case 6: op_mm(&r); break;
		case 7: op_thread(&r); break;
		case 8: op_signals(&r); break;
		case 9: op_lock(&r); break;
		case 10: nap_us((long)(rnd(&r) % 300)); break;
		default: sched_yield();
		}
		__atomic_fetch_add(&sh->ops, 1, __ATOMIC_RELAXED);
		if (ending == END_NORMAL || ending == END_MAIN_EXIT)
			if (mono_ms() >= deadline)
				break;
	}
	/* The last worker out stops the signaller. */
	if (__atomic_sub_fetch(&running_workers, 1, __ATOMIC_SEQ_CST) == 0)
		stop_flag = 1;
	return NULL;
}

/* Signals the workers and stops, continues and kills the victim. */
static void *signaller(void *arg)
{
	struct rng r = { seed ^ 0x51615161ULL ^ (unsigned long long)round_start };
	int st;

	(void)arg;
	while (!stop_flag && !block_flag) {
		long tid = worker_tids[rnd(&r) % WORKERS];
		pid_t v = victim;

		switch (rnd(&r) % 8) {
		case 0:
		case 1:
		case 2:
			if (tid > 0)
				t_tgkill(getpid(), tid,
					 rnd(&r) % 2 ? SIGUSR1 : SIGUSR2);
			break;
		case 3:
			if (v > 0)
				kill(v, SIGSTOP);
			break;
		case 4:
			if (v > 0)
				kill(v, SIGCONT);
			break;
		case 5:
			if (v > 0 && rnd(&r) % 4 == 0) {
				kill(v, SIGKILL);
				if (waitpid(v, &st, __WALL) == v)
					victim = spawn_victim();
			}
			break;
		case 6:
			if (v > 0)
				waitpid(v, &st, WNOHANG | WUNTRACED | WCONTINUED);
			break;
		default:
			kill(getpid(), SIGUSR2);
		}
		nap_us((long)(rnd(&r) % 400) + 50);
	}
	return NULL;
}

static void set_handlers(struct rng *r)
{
	int sigs[] = { SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD };
	size_t i;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		t_sigaction(sigs[i], on_signal, rnd(r) % 2 ? SA_RESTART : 0);
}

/* The body of one round, in its own process. */
static int round_main(int round)
{
	struct worker w[WORKERS];
	pthread_t sig_th;
	struct rng r = { seed ^ (0x9E3779B97F4A7C15ULL * (unsigned)(round + 1)) };
	struct epoll_event ev = { .events = EPOLLIN };
	char path[PATH_MAX];
	int i;

	rnd(&r);
	ending = (enum ending)(rnd(&r) % END_COUNT);
	setpgid(0, 0);
	round_start = mono_ms();
	set_handlers(&r);
	if (getenv("STRESS_DEBUG"))
		t_siginfo_action(SIGSEGV, on_segv, 0);
	if (pipe2(pipe_a, O_NONBLOCK) || pipe2(pipe_b, O_NONBLOCK))
		return 60;
	efd = eventfd(0, EFD_NONBLOCK);
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, pipe_a[0], &ev);
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	t_join(path, sizeof path, scratch, "lock");
	lock_fd = open(path, O_RDWR | O_CREAT, 0600);
	if (efd < 0 || ep < 0 || lock_fd < 0)
		return 61;
	victim = spawn_victim();

	running_workers = WORKERS;
	for (i = 0; i < WORKERS; i++) {
		w[i].index = i;
		if (pthread_create(&w[i].th, NULL, worker, &w[i]) != 0)
			return 62;
	}
	if (pthread_create(&sig_th, NULL, signaller, NULL) != 0)
		return 63;

	switch (ending) {
	case END_EXIT_BLOCKED:
		nap_us(ROUND_MS * 1000L / 2);
		block_flag = 1;
		nap_us(20000);
		syscall(SYS_exit_group, 42);
		break;
	case END_MAIN_EXIT:
		/* The process goes on with the other threads; the last one
		 * to leave makes it exit 0. */
		nap_us(ROUND_MS * 1000L / 3);
		/* A raw thread exit: libc's pthread_exit takes a lock that
		 * only the kernel's clear-child-tid store releases, which a
		 * forked process's main thread (musl) has not set up. */
		for (;;)
			syscall(SYS_exit, 0);
		break;
	case END_NORMAL:
		for (i = 0; i < WORKERS; i++)
			pthread_join(w[i].th, NULL);
		stop_flag = 1;
		pthread_join(sig_th, NULL);
		return 0;
	default:
		/* Someone else ends the round (a worker, or the test). */
		for (;;)
			nap_us(1000000);
	}
	return 64;
}

/* ---- group stop --------------------------------------------------------- */

static volatile long group_ticks;

static void *ticker(void *arg)
{
	(void)arg;
	for (;;) {
		__atomic_fetch_add(&group_ticks, 1, __ATOMIC_RELAXED);
		sh->ops = group_ticks;
		nap_us(200);
	}
	return NULL;
}

/*
 * A process with several busy threads is stopped: none of its threads
 * may make progress until SIGCONT (signal(7): a stop signal stops the
 * whole thread group).
 */
static void check_group_stop(void)
{
	pid_t pid = fork();
	long before, after;
	int st;

	if (pid == 0) {
		pthread_t th[3];
		int i;

		for (i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, ticker, NULL);
		for (;;)
			nap_us(1000000);
	}
	CHECK(pid > 0);
	if (pid < 0)
		return;
	while (sh->ops < 20)
		nap_us(1000);
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	nap_us(20000); /* threads still in user mode stop at their next tick */
	before = sh->ops;
	nap_us(100000);
	after = sh->ops;
	if (after != before) {
		t_failures++;
		t_printf("  check failed: a stopped process's threads ran on "
			 "(%ld ticks while stopped)\n", after - before);
	}
	CHECK_EQ(kill(pid, SIGCONT), 0);
	before = sh->ops;
	for (st = 0; st < 2000 && sh->ops == before; st++)
		nap_us(1000);
	CHECK(sh->ops != before);
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* ---- the test ----------------------------------------------------------- */

/* What the threads of a hung round are doing (from /proc, if any). */
static void show_threads(pid_t pid)
{
	char path[64], buf[256], *p;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char f[600];

		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof f, "%s/%s/stat", path, de->d_name);
		if (t_read_file(f, buf, sizeof buf) <= 0)
			continue;
		p = strrchr(buf, ')');
		t_printf("  note:   thread %s state %c", de->d_name,
			 p ? p[2] : '?');
		snprintf(f, sizeof f, "%s/%s/syscall", path, de->d_name);
		if (t_read_file(f, buf, sizeof buf) > 0)
			t_printf(" syscall %s", buf);
		else
			t_printf("\n");
	}
	closedir(d);
}

/* Kills and reaps whatever a round left behind; returns how many there
 * were alive (each a failure: nothing may outlive its round). */
static int clean_round(void)
{
	int i, alive = 0, st;

	for (i = 0; i < sh->npids && i < MAX_PIDS; i++) {
		pid_t pid = sh->pids[i];

		/* Only our own children (adopted orphans) are touched. */
		if (pid > 0 && waitpid(pid, &st, WNOHANG | __WALL) == 0) {
			/* PDEATHSIG may still be on its way: give it time. A
			 * child stopped by the signaller (maybe before it ran
			 * at all) needs a SIGCONT to see it is orphaned: its
			 * group is not orphaned (we, its new parent, are in
			 * another group of the session), so no one else sends
			 * one. */
			long tries;

			kill(pid, SIGCONT);

			for (tries = 0; tries < 2000; tries++) {
				if (waitpid(pid, &st, WNOHANG | __WALL) != 0)
					break;
				nap_us(1000);
			}
			if (tries == 2000) {
				alive++;
				t_printf("  note: pid %d outlived its round\n",
					 (int)pid);
				show_threads(pid);
				kill(pid, SIGKILL);
				waitpid(pid, &st, __WALL);
			}
		}
	}
	while (waitpid(-1, &st, WNOHANG | __WALL) > 0)
		;
	return alive;
}

/* t_wait_bounded, showing the threads of a round before killing it. */
static int wait_round(pid_t pid, int secs)
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
	show_threads(pid);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -2;
}

static int expected_ok(enum ending e, int st)
{
	switch (e) {
	case END_NORMAL:
	case END_MAIN_EXIT:
		return WIFEXITED(st) && WEXITSTATUS(st) == 0;
	case END_EXIT_BLOCKED:
		return WIFEXITED(st) && WEXITSTATUS(st) == 42;
	case END_EXIT_WORKER:
		return WIFEXITED(st) && WEXITSTATUS(st) == 43;
	case END_THREAD_EXEC:
		return WIFEXITED(st) && WEXITSTATUS(st) == 44;
	case END_KILLED:
		return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	default:
		return 0;
	}
}

int main(int argc, char **argv)
{
	const char *env;
	int rounds = DEFAULT_ROUNDS, round, mounted, only = -1;
	long long t0 = mono_ms();
	long total_ops = 0;

	if (argc == 2 && !strcmp(argv[1], "--exec-child")) {
		/* After execve from a worker: one thread, tid == pid. */
		long long threads = t_proc_kv("/proc/self/status", "Threads:");

		if (t_gettid() != getpid())
			return 45;
		if (threads != -1 && threads != 1)
			return 46;
		return 44;
	}
	if ((env = getenv("STRESS_SEED")) != NULL)
		seed = strtoull(env, NULL, 0);
	if ((env = getenv("STRESS_ROUNDS")) != NULL && atoi(env) > 0)
		rounds = atoi(env);
	if ((env = getenv("STRESS_ONLY")) != NULL)
		only = atoi(env);
	if ((env = getenv("STRESS_OPS")) != NULL)
		op_mask = (unsigned)strtoul(env, NULL, 0);
	t_self_path(argv[0], self_path, sizeof self_path);
	mounted = t_tmpfs_scratch("stress_threads_signals", scratch,
				  sizeof scratch);
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	if (sh == MAP_FAILED)
		DONE();
	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

	check_group_stop();

	for (round = 0; round < rounds; round++) {
		struct rng r = { seed ^ (0x9E3779B97F4A7C15ULL * (unsigned)(round + 1)) };
		enum ending e;
		pid_t pid;
		int st, left;

		rnd(&r);
		e = (enum ending)(rnd(&r) % END_COUNT);
		if (only >= 0 && round != only)
			continue;
		memset((void *)sh, 0, sizeof *sh);
		pid = fork();
		if (pid == 0)
			_exit(round_main(round));
		CHECK(pid > 0);
		if (pid < 0)
			break;
		if (e == END_KILLED) {
			nap_us(ROUND_MS * 1000L / 2);
			kill(pid, SIGKILL);
		}
		st = wait_round(pid, ROUND_LIMIT_S);
		if (st == -2) {
			t_failures++;
			t_printf("  check failed: round %d (%s) hung: killed "
				 "after %d s\n", round, ending_name[e],
				 ROUND_LIMIT_S);
		} else if (!expected_ok(e, st)) {
			t_failures++;
			t_printf("  check failed: round %d (%s): wait status "
				 "%#x\n", round, ending_name[e], st);
		}
		total_ops += sh->ops;
		left = clean_round();
		if (left) {
			t_failures++;
			t_printf("  check failed: round %d (%s): %d processes "
				 "outlived it\n", round, ending_name[e], left);
		}
	}

	/* Nothing is left: no child, adopted or not. */
	CHECK_ERR(waitpid(-1, NULL, WNOHANG | __WALL), ECHILD);
	t_note("seed %#llx: %d rounds, %ld operations, %lld ms", seed, rounds,
	       total_ops, mono_ms() - t0);
	if (mounted == 1)
		t_umount(scratch);
	t_rmtree(scratch);
	DONE();
}
