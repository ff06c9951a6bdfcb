/*
 * lmb - the Trellis micro-benchmarks (LMbench-style; see bench.h).
 *
 *   lmb [-s] NAME     run one benchmark (-s: smoke mode, one iteration)
 *   lmb -p NAME       run it with profiling marks (bench.h) and print
 *                     `BENCH-PROF NAME ITERS`, the iterations measured
 *   lmb -l            list the benchmark names, one per line
 *
 * Each benchmark prints one `BENCH` line.  The fs_* rows (fs.h) use an
 * ext2 file system on /dev/vda.  Helpers that talk to a second
 * process keep one child for the whole measurement and stop it by closing
 * its input (no signals needed), so they also run on kernels without
 * signal delivery.
 */
#include "bench.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PAGE 4096L
#define CHUNK (64 * 1024)
#define SELF "/bench/lmb"
#define HELLO "/bench/hello"

static char chunk[CHUNK];

#include "fs.h"

/* ---- system calls and files ------------------------------------------- */

static int body_null(long n, void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}

/* clock_gettime through the C library: the vDSO where the kernel maps
 * one (both do), else the system call. */
static int body_clock(long n, void *arg)
{
	struct timespec ts;
	(void)arg;
	for (long i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return 0;
}

static int body_read(long n, void *arg)
{
	int fd = *(int *)arg;
	char c;
	for (long i = 0; i < n; i++)
		if (read(fd, &c, 1) != 1)
			return b_sysfail("read");
	return 0;
}

static int body_write(long n, void *arg)
{
	int fd = *(int *)arg;
	char c = 0;
	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1)
			return b_sysfail("write");
	return 0;
}

static int body_stat(long n, void *arg)
{
	(void)arg;
	struct stat st;
	for (long i = 0; i < n; i++)
		if (stat(SELF, &st) < 0)
			return b_sysfail("stat");
	return 0;
}

static int body_fstat(long n, void *arg)
{
	int fd = *(int *)arg;
	struct stat st;
	for (long i = 0; i < n; i++)
		if (fstat(fd, &st) < 0)
			return b_sysfail("fstat");
	return 0;
}

static int body_open_close(long n, void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++) {
		int fd = open(SELF, O_RDONLY);
		if (fd < 0)
			return b_sysfail("open");
		close(fd);
	}
	return 0;
}

/* ---- processes --------------------------------------------------------- */

static int reap(pid_t pid, const char *what)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return b_sysfail("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return b_fail(0, "%s: child status %#x", what, status);
	return 0;
}

static int body_fork_exit(long n, void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return b_sysfail("fork");
		if (pid == 0)
			_exit(0);
		if (reap(pid, "fork") < 0)
			return -1;
	}
	return 0;
}

static int fork_exec_n(long n, char *const argv[])
{
	static char *const envp[] = { "PATH=/bin:/sbin", NULL };
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return b_sysfail("fork");
		if (pid == 0) {
			execve(argv[0], argv, envp);
			_exit(127);
		}
		if (reap(pid, argv[0]) < 0)
			return -1;
	}
	return 0;
}

static int body_fork_exec(long n, void *arg)
{
	(void)arg;
	static char *const argv[] = { HELLO, NULL };
	return fork_exec_n(n, argv);
}

static int body_fork_sh(long n, void *arg)
{
	(void)arg;
	static char *const argv[] = { "/bin/sh", "-c", "exit", NULL };
	return fork_exec_n(n, argv);
}

/* Dynamically linked programs from the host (glibc, its loader and
 * libraries; xtask puts them in the image): the cost of ld.so, relocation
 * and the program's own start-up on top of fork+exec. */
static char *const dyn_true[] = { "/usr/bin/true", NULL };
static char *const dyn_bash[] = { "/usr/bin/bash", "-c", "true", NULL };
static char *const dyn_python[] = { "/usr/bin/python3.11", "-c", "pass", NULL };

static int body_dyn(long n, void *arg)
{
	return fork_exec_n(n, (char *const *)arg);
}

static int run_dyn(char *const argv[], int smoke, long max_n, double *ns)
{
	if (access(argv[0], X_OK) != 0)
		return b_fail(1, "%s is not in the image", argv[0]);
	*ns = b_measure(body_dyn, (void *)argv, smoke, max_n);
	return *ns < 0 ? -1 : 0;
}

static int run_dyn_true(int smoke, double *ns)
{
	return run_dyn(dyn_true, smoke, 0, ns);
}

static int run_dyn_bash(int smoke, double *ns)
{
	return run_dyn(dyn_bash, smoke, 64, ns);
}

static int run_dyn_python(int smoke, double *ns)
{
	return run_dyn(dyn_python, smoke, 16, ns);
}

/* ---- memory ------------------------------------------------------------ */

/* `n` pages of a fresh anonymous mapping, each touched once. */
static int body_page_fault(long n, void *arg)
{
	(void)arg;
	volatile char *p = mmap(NULL, (size_t)(n * PAGE), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return b_sysfail("mmap");
	for (long i = 0; i < n; i++)
		p[i * PAGE] = 1;
	if (munmap((void *)p, (size_t)(n * PAGE)) < 0)
		return b_sysfail("munmap");
	return 0;
}

static int body_mmap_4m(long n, void *arg)
{
	(void)arg;
	const long len = 4L << 20;
	for (long i = 0; i < n; i++) {
		volatile char *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return b_sysfail("mmap");
		for (long off = 0; off < len; off += PAGE)
			p[off] = 1;
		if (munmap((void *)p, (size_t)len) < 0)
			return b_sysfail("munmap");
	}
	return 0;
}

/* ---- two processes over pipes or sockets ------------------------------- */

/*
 * A peer process at the other end of a pair of byte streams: `to` carries
 * requests to it, `from` its answers.
 */
struct peer {
	pid_t pid;
	int to, from;
};

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t r = read(fd, p, len);
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Child: echo each byte back until end of input. */
static void echo_loop(int in, int out)
{
	char c;
	while (read(in, &c, 1) == 1)
		if (write(out, &c, 1) != 1)
			break;
	_exit(0);
}

/*
 * Child: for each request (a count `k` as a long), read k chunks, then
 * answer one byte.
 */
static void sink_loop(int in, int out)
{
	static char buf[CHUNK];
	long k;
	while (read_full(in, &k, sizeof k) == 0) {
		for (long i = 0; i < k; i++)
			if (read_full(in, buf, CHUNK) < 0)
				_exit(1);
		if (write(out, "", 1) != 1)
			break;
	}
	_exit(0);
}

static int peer_stop(struct peer *p)
{
	close(p->to);
	if (p->from != p->to)
		close(p->from);
	return reap(p->pid, "peer");
}

/* A peer connected by two pipes, running `loop`. */
static int pipe_peer(struct peer *p, void (*loop)(int, int))
{
	int req[2], ans[2];
	if (pipe(req) < 0 || pipe(ans) < 0)
		return b_sysfail("pipe");
	p->pid = fork();
	if (p->pid < 0)
		return b_sysfail("fork");
	if (p->pid == 0) {
		close(req[1]);
		close(ans[0]);
		loop(req[0], ans[1]);
	}
	close(req[0]);
	close(ans[1]);
	p->to = req[1];
	p->from = ans[0];
	return 0;
}

static int body_round_trip(long n, void *arg)
{
	struct peer *p = arg;
	char c = 'x';
	for (long i = 0; i < n; i++)
		if (write(p->to, &c, 1) != 1 || read(p->from, &c, 1) != 1)
			return b_sysfail("round trip");
	return 0;
}

static int body_stream(long n, void *arg)
{
	struct peer *p = arg;
	char c;
	if (write_full(p->to, &n, sizeof n) < 0)
		return b_sysfail("write");
	for (long i = 0; i < n; i++)
		if (write_full(p->to, chunk, CHUNK) < 0)
			return b_sysfail("write");
	if (read(p->from, &c, 1) != 1)
		return b_sysfail("read ack");
	return 0;
}

/* One write and one read of a byte on a pipe, in one process. */
static int body_pipe_self(long n, void *arg)
{
	int *fds = arg;
	char c = 'x';
	for (long i = 0; i < n; i++)
		if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1)
			return b_sysfail("pipe");
	return 0;
}

/* A peer at the other end of a connected stream socket pair. */
static int socket_peer(struct peer *p, int family, void (*loop)(int, int))
{
	int sv[2];
	if (family == AF_UNIX) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			return b_sysfail("socketpair(AF_UNIX)");
	} else {
		int ls = socket(AF_INET, SOCK_STREAM, 0);
		if (ls < 0)
			return b_sysfail("socket(AF_INET)");
		struct sockaddr_in a = { .sin_family = AF_INET };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		socklen_t alen = sizeof a;
		if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0)
			return b_sysfail("bind 127.0.0.1");
		if (listen(ls, 1) < 0)
			return b_sysfail("listen");
		if (getsockname(ls, (struct sockaddr *)&a, &alen) < 0)
			return b_sysfail("getsockname");
		sv[1] = socket(AF_INET, SOCK_STREAM, 0);
		if (sv[1] < 0)
			return b_sysfail("socket(AF_INET)");
		if (connect(sv[1], (struct sockaddr *)&a, sizeof a) < 0)
			return b_sysfail("connect 127.0.0.1");
		sv[0] = accept(ls, NULL, NULL);
		if (sv[0] < 0)
			return b_sysfail("accept");
		close(ls);
		int one = 1;
		setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	}
	p->pid = fork();
	if (p->pid < 0)
		return b_sysfail("fork");
	if (p->pid == 0) {
		close(sv[0]);
		loop(sv[1], sv[1]);
	}
	close(sv[1]);
	p->to = p->from = sv[0];
	return 0;
}

/* ---- signals ------------------------------------------------------------ */

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	(void)sig;
	caught++;
}

static void on_signal2(int sig)
{
	(void)sig;
}

static int body_sig_install(long n, void *arg)
{
	(void)arg;
	struct sigaction sa = { 0 };
	sigemptyset(&sa.sa_mask);
	for (long i = 0; i < n; i++) {
		sa.sa_handler = (i & 1) ? on_signal2 : on_signal;
		if (sigaction(SIGUSR1, &sa, NULL) < 0)
			return b_sysfail("sigaction");
	}
	return 0;
}

static int body_sig_deliver(long n, void *arg)
{
	(void)arg;
	pid_t self = getpid();
	for (long i = 0; i < n; i++) {
		sig_atomic_t before = caught;
		if (kill(self, SIGUSR1) < 0)
			return b_sysfail("kill");
		if (caught == before)
			return b_fail(1, "signal to self was not delivered");
	}
	return 0;
}

/* ---- timers ------------------------------------------------------------- */

#define SLEEP_NS 1000000L
#define SLEEPS 100

/*
 * sleep_1ms: nanosleep(1 ms) SLEEPS times; the result is the mean
 * overshoot (time slept minus 1 ms), the delay a timer adds to a wake-up.
 * A kernel that expires timers on a periodic tick overshoots by up to a
 * tick period; one that programs the timer for each deadline by its
 * interrupt and wake-up latency.
 */
static int run_sleep_1ms(int smoke, double *ns)
{
	int n = smoke ? 1 : SLEEPS;
	double over = 0;
	if (!smoke)
		b_inner_on();
	for (int i = 0; i < n; i++) {
		struct timespec req = { 0, SLEEP_NS };
		double t0 = b_now_ns();
		if (nanosleep(&req, NULL) < 0)
			return b_sysfail("nanosleep");
		double slept = b_now_ns() - t0;
		if (slept < SLEEP_NS)
			return b_fail(0, "nanosleep(1 ms) returned after %.0f ns", slept);
		over += slept - SLEEP_NS;
	}
	if (!smoke)
		b_inner_off(n);
	*ns = over / n;
	if (*ns <= 0)
		*ns = 0.5; /* the protocol wants a positive value */
	return 0;
}

/* ---- the table ----------------------------------------------------------- */


enum kind { LATENCY, BANDWIDTH };

struct bench {
	const char *name;
	int (*run)(int smoke, double *ns);
	enum kind kind;
	double bytes; /* per iteration, for bandwidth */
};

static int simple(b_body body, void *arg, int smoke, long max_n, double *ns)
{
	*ns = b_measure(body, arg, smoke, max_n);
	return *ns < 0 ? -1 : 0;
}

static int run_null(int smoke, double *ns)
{
	return simple(body_null, NULL, smoke, 0, ns);
}

static int run_clock(int smoke, double *ns)
{
	return simple(body_clock, NULL, smoke, 0, ns);
}

static int with_fd(const char *path, int flags, b_body body, int smoke, double *ns)
{
	int fd = open(path, flags);
	if (fd < 0)
		return b_openfail(path);
	int r = simple(body, &fd, smoke, 0, ns);
	close(fd);
	return r;
}

static int run_read_zero(int smoke, double *ns)
{
	return with_fd("/dev/zero", O_RDONLY, body_read, smoke, ns);
}

static int run_write_null(int smoke, double *ns)
{
	return with_fd("/dev/null", O_WRONLY, body_write, smoke, ns);
}

static int run_stat(int smoke, double *ns)
{
	return simple(body_stat, NULL, smoke, 0, ns);
}

static int run_fstat(int smoke, double *ns)
{
	return with_fd(SELF, O_RDONLY, body_fstat, smoke, ns);
}

static int run_open_close(int smoke, double *ns)
{
	return simple(body_open_close, NULL, smoke, 0, ns);
}

static int run_fork_exit(int smoke, double *ns)
{
	return simple(body_fork_exit, NULL, smoke, 0, ns);
}

static int run_fork_exec(int smoke, double *ns)
{
	return simple(body_fork_exec, NULL, smoke, 0, ns);
}

static int run_fork_sh(int smoke, double *ns)
{
	return simple(body_fork_sh, NULL, smoke, 0, ns);
}

static int run_page_fault(int smoke, double *ns)
{
	return simple(body_page_fault, NULL, smoke, 16384, ns);
}

static int run_mmap_4m(int smoke, double *ns)
{
	return simple(body_mmap_4m, NULL, smoke, 0, ns);
}

static int with_peer(int r, struct peer *p, b_body body, int smoke, double *ns)
{
	if (r < 0)
		return -1;
	r = simple(body, p, smoke, 0, ns);
	if (peer_stop(p) < 0)
		return -1;
	return r;
}

static int run_pipe_lat(int smoke, double *ns)
{
	struct peer p;
	return with_peer(pipe_peer(&p, echo_loop), &p, body_round_trip, smoke, ns);
}

static int run_pipe_bw(int smoke, double *ns)
{
	struct peer p;
	return with_peer(pipe_peer(&p, sink_loop), &p, body_stream, smoke, ns);
}

/*
 * Context switch (lat_ctx with two processes and no working set): half a
 * pipe round trip between two processes, less one write+read pair in a
 * single process.
 */
static int run_ctx_switch(int smoke, double *ns)
{
	int fds[2];
	double self, rt;
	if (pipe(fds) < 0)
		return b_sysfail("pipe");
	int r = simple(body_pipe_self, fds, smoke, 0, &self);
	close(fds[0]);
	close(fds[1]);
	if (r < 0 || run_pipe_lat(smoke, &rt) < 0)
		return -1;
	*ns = rt / 2 - self;
	if (*ns < 1)
		*ns = 1;
	return 0;
}

static int run_sig_install(int smoke, double *ns)
{
	return simple(body_sig_install, NULL, smoke, 0, ns);
}

static int run_sig_deliver(int smoke, double *ns)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return b_sysfail("sigaction");
	return simple(body_sig_deliver, NULL, smoke, 0, ns);
}

static int run_unix_lat(int smoke, double *ns)
{
	struct peer p;
	return with_peer(socket_peer(&p, AF_UNIX, echo_loop), &p, body_round_trip, smoke, ns);
}

static int run_unix_bw(int smoke, double *ns)
{
	struct peer p;
	return with_peer(socket_peer(&p, AF_UNIX, sink_loop), &p, body_stream, smoke, ns);
}

static int run_tcp_lat(int smoke, double *ns)
{
	struct peer p;
	return with_peer(socket_peer(&p, AF_INET, echo_loop), &p, body_round_trip, smoke, ns);
}

static int run_tcp_bw(int smoke, double *ns)
{
	struct peer p;
	return with_peer(socket_peer(&p, AF_INET, sink_loop), &p, body_stream, smoke, ns);
}

/* Two UDP sockets on 127.0.0.1 connected to each other; the child echoes
 * each datagram until an empty one comes. */
static int udp_peer(struct peer *p)
{
	int sv[2];
	struct sockaddr_in a[2];
	for (int i = 0; i < 2; i++) {
		socklen_t alen = sizeof a[i];
		memset(&a[i], 0, sizeof a[i]);
		a[i].sin_family = AF_INET;
		a[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sv[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (sv[i] < 0)
			return b_sysfail("socket(AF_INET, SOCK_DGRAM)");
		if (bind(sv[i], (struct sockaddr *)&a[i], sizeof a[i]) < 0 ||
		    getsockname(sv[i], (struct sockaddr *)&a[i], &alen) < 0)
			return b_sysfail("bind 127.0.0.1");
	}
	if (connect(sv[0], (struct sockaddr *)&a[1], sizeof a[1]) < 0 ||
	    connect(sv[1], (struct sockaddr *)&a[0], sizeof a[0]) < 0)
		return b_sysfail("connect (UDP)");
	p->pid = fork();
	if (p->pid < 0)
		return b_sysfail("fork");
	if (p->pid == 0) {
		close(sv[0]);
		echo_loop(sv[1], sv[1]);
	}
	close(sv[1]);
	p->to = p->from = sv[0];
	return 0;
}

static int run_udp_lat(int smoke, double *ns)
{
	struct peer p = { 0 };
	if (udp_peer(&p) < 0)
		return -1;
	int r = simple(body_round_trip, &p, smoke, 0, ns);
	/* The empty datagram ends the child's echo loop. */
	if (send(p.to, "", 0, 0) < 0)
		return b_sysfail("send (stop)");
	if (peer_stop(&p) < 0)
		return -1;
	return r;
}

struct conn_arg {
	struct sockaddr_in a;
	int ls;
};

/* One TCP connection over loopback: socket, connect, accept, both closed. */
static int body_tcp_connect(long n, void *arg)
{
	struct conn_arg *ca = arg;
	struct sockaddr_in *a = &ca->a;
	int ls = ca->ls;
	for (long i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0)
			return b_sysfail("socket");
		if (connect(c, (struct sockaddr *)a, sizeof *a) < 0)
			return b_sysfail("connect 127.0.0.1");
		int s = accept(ls, NULL, NULL);
		if (s < 0)
			return b_sysfail("accept");
		close(c);
		close(s);
	}
	return 0;
}

static int run_tcp_connect(int smoke, double *ns)
{
	struct conn_arg arg;
	socklen_t alen = sizeof arg.a;
	memset(&arg, 0, sizeof arg);
	arg.a.sin_family = AF_INET;
	arg.a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	arg.ls = socket(AF_INET, SOCK_STREAM, 0);
	if (arg.ls < 0)
		return b_sysfail("socket(AF_INET)");
	if (bind(arg.ls, (struct sockaddr *)&arg.a, sizeof arg.a) < 0 ||
	    listen(arg.ls, 16) < 0 ||
	    getsockname(arg.ls, (struct sockaddr *)&arg.a, &alen) < 0)
		return b_sysfail("listen 127.0.0.1");
	int r = simple(body_tcp_connect, &arg, smoke, 0, ns);
	close(arg.ls);
	return r;
}


/* ---- LMbench-style rows (lat_ctx, lat_pagefault, lat_mmap, lat_sem,
 * lat_select) ------------------------------------------------------------ */

/*
 * ctx_ring2, ctx_ring18 (lat_ctx -s 0 with 2 and 18 processes): a token
 * (one int) goes round a ring of processes joined by pipes; process i
 * reads it from pipe i and writes it to pipe i+1.  One iteration is one
 * lap, i.e. `procs` context switches.  The figure is per switch, less the
 * cost of one pipe write+read pair in a single process (what each switch
 * also does), as lat_ctx subtracts its overhead.
 */
#define RING_MAX 18

struct ring {
	int procs;
	int fds[RING_MAX][2];
	pid_t pids[RING_MAX];
};

static void ring_member(int in, int out)
{
	int tok;
	while (read(in, &tok, sizeof tok) == sizeof tok)
		if (write(out, &tok, sizeof tok) != sizeof tok)
			break;
	_exit(0);
}

static int ring_start(struct ring *r, int procs)
{
	r->procs = procs;
	for (int i = 0; i < procs; i++)
		if (pipe(r->fds[i]) < 0)
			return b_sysfail("pipe");
	/* Process 0 is this one; member i reads pipe i, writes pipe i+1. */
	for (int i = 1; i < procs; i++) {
		r->pids[i] = fork();
		if (r->pids[i] < 0)
			return b_sysfail("fork");
		if (r->pids[i] == 0) {
			int in = r->fds[i][0], out = r->fds[(i + 1) % procs][1];
			for (int k = 0; k < procs; k++) {
				if (r->fds[k][0] != in)
					close(r->fds[k][0]);
				if (r->fds[k][1] != out)
					close(r->fds[k][1]);
			}
			ring_member(in, out);
		}
	}
	return 0;
}

static int ring_stop(struct ring *r)
{
	int rc = 0;
	for (int i = 0; i < r->procs; i++) {
		close(r->fds[i][0]);
		close(r->fds[i][1]);
	}
	for (int i = 1; i < r->procs; i++)
		if (reap(r->pids[i], "ring member") < 0)
			rc = -1;
	return rc;
}

static int body_ring(long n, void *arg)
{
	struct ring *r = arg;
	int tok = 1;
	for (long i = 0; i < n; i++) {
		if (write(r->fds[1 % r->procs][1], &tok, sizeof tok) != sizeof tok)
			return b_sysfail("ring write");
		if (read(r->fds[0][0], &tok, sizeof tok) != sizeof tok)
			return b_sysfail("ring read");
	}
	return 0;
}

static int body_token_self(long n, void *arg)
{
	int *fds = arg;
	int tok = 1;
	for (long i = 0; i < n; i++)
		if (write(fds[1], &tok, sizeof tok) != sizeof tok ||
		    read(fds[0], &tok, sizeof tok) != sizeof tok)
			return b_sysfail("pipe");
	return 0;
}

static int run_ring(int procs, int smoke, double *ns)
{
	int fds[2];
	double self, lap;
	if (pipe(fds) < 0)
		return b_sysfail("pipe");
	int r = simple(body_token_self, fds, smoke, 0, &self);
	close(fds[0]);
	close(fds[1]);
	if (r < 0)
		return -1;
	struct ring ring;
	if (ring_start(&ring, procs) < 0)
		return -1;
	r = simple(body_ring, &ring, smoke, 0, &lap);
	if (ring_stop(&ring) < 0 || r < 0)
		return -1;
	*ns = lap / procs - self;
	if (*ns < 1)
		*ns = 1;
	return 0;
}

static int run_ctx_ring2(int smoke, double *ns)
{
	return run_ring(2, smoke, ns);
}

static int run_ctx_ring18(int smoke, double *ns)
{
	return run_ring(18, smoke, ns);
}

/*
 * A 4 MiB file on the ext2 disk, written and synced once (untimed), for
 * the mapping rows.
 */
#define MAP_PATH FS_DIR "/map4m"
#define MAP_LEN (4L << 20)
#define MAP_PAGES (MAP_LEN / PAGE)

static int map_file(void)
{
	if (fs_ready() < 0)
		return -1;
	struct stat st;
	int fd = open(MAP_PATH, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return b_sysfail("open " MAP_PATH);
	if (fstat(fd, &st) == 0 && st.st_size == MAP_LEN)
		return fd;
	if (ftruncate(fd, 0) < 0 || fs_write_all(fd, MAP_LEN) < 0 || fsync(fd) < 0) {
		close(fd);
		return b_fail(0, "cannot write " MAP_PATH);
	}
	return fd;
}

/*
 * file_page_fault (lat_pagefault): read faults on a MAP_SHARED mapping of
 * the cached 4 MiB file, one access per page, pages in a fixed shuffled
 * order (as lat_pagefault, so that fault-around helps only as much as it
 * does there).  Only the accesses are timed, not mmap and munmap; the
 * figure is per page.
 */
struct pf_arg {
	int fd;
	long order[MAP_PAGES];
};

static int body_file_fault(long n, void *arg)
{
	struct pf_arg *a = arg;
	double timed = 0;
	long done = 0;
	while (done < n) {
		long k = n - done < MAP_PAGES ? n - done : MAP_PAGES;
		volatile char *p = mmap(NULL, (size_t)MAP_LEN, PROT_READ, MAP_SHARED, a->fd, 0);
		if (p == MAP_FAILED)
			return b_sysfail("mmap");
		double t0 = b_now_ns();
		for (long i = 0; i < k; i++)
			(void)p[a->order[i] * PAGE];
		timed += b_now_ns() - t0;
		if (munmap((void *)p, (size_t)MAP_LEN) < 0)
			return b_sysfail("munmap");
		done += k;
	}
	b_self_ns = timed;
	return 0;
}

static int run_file_page_fault(int smoke, double *ns)
{
	static struct pf_arg a;
	a.fd = map_file();
	if (a.fd < 0)
		return -1;
	for (long i = 0; i < MAP_PAGES; i++)
		a.order[i] = i;
	uint32_t x = 0x9E3779B9u;
	for (long i = MAP_PAGES - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		long j = (long)(x % (uint32_t)(i + 1));
		long t = a.order[i];
		a.order[i] = a.order[j];
		a.order[j] = t;
	}
	int r = simple(body_file_fault, &a, smoke, 0, ns);
	close(a.fd);
	return r;
}

/*
 * file_mmap_4m (lat_mmap 4m): mmap the 4 MiB file MAP_SHARED read-write,
 * touch one byte every 160 KiB (lat_mmap's stride), munmap.  Per mapping.
 */
#define MMAP_STRIDE (160L << 10)

static int body_file_mmap(long n, void *arg)
{
	int fd = *(int *)arg;
	for (long i = 0; i < n; i++) {
		volatile char *p = mmap(NULL, (size_t)MAP_LEN, PROT_READ | PROT_WRITE,
					MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return b_sysfail("mmap");
		for (long off = 0; off < MAP_LEN; off += MMAP_STRIDE)
			p[off] = 1;
		if (munmap((void *)p, (size_t)MAP_LEN) < 0)
			return b_sysfail("munmap");
	}
	return 0;
}

static int run_file_mmap_4m(int smoke, double *ns)
{
	int fd = map_file();
	if (fd < 0)
		return -1;
	int r = simple(body_file_mmap, &fd, smoke, 0, ns);
	close(fd);
	return r;
}

/*
 * sem_lat (lat_sem): a SysV semaphore set of two; the parent raises
 * semaphore 0 and waits on semaphore 1, the child does the opposite.  Per
 * round trip.  Removing the set (IPC_RMID) makes the child's semop fail
 * with EIDRM, which ends it.
 */
static int sem_op(int id, unsigned short num, short op)
{
	struct sembuf b = { .sem_num = num, .sem_op = op, .sem_flg = 0 };
	int r;
	while ((r = semop(id, &b, 1)) < 0 && errno == EINTR)
		;
	return r;
}

static int body_sem(long n, void *arg)
{
	int id = *(int *)arg;
	for (long i = 0; i < n; i++)
		if (sem_op(id, 0, 1) < 0 || sem_op(id, 1, -1) < 0)
			return b_sysfail("semop");
	return 0;
}

static int run_sem_lat(int smoke, double *ns)
{
	int id = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
	if (id < 0)
		return b_sysfail("semget");
	pid_t pid = fork();
	if (pid < 0)
		return b_sysfail("fork");
	if (pid == 0) {
		while (sem_op(id, 0, -1) == 0 && sem_op(id, 1, 1) == 0)
			;
		_exit(errno == EIDRM || errno == EINVAL ? 0 : 1);
	}
	int r = simple(body_sem, &id, smoke, 0, ns);
	if (semctl(id, 0, IPC_RMID) < 0)
		r = b_sysfail("semctl IPC_RMID");
	if (reap(pid, "sem peer") < 0)
		r = -1;
	return r;
}

/*
 * select_100_file (lat_select -n 100 file): select(2) with a zero timeout
 * on 100 descriptors of a regular file, all ready for reading.
 * select_100_pipe: the same on the read ends of 100 empty pipes, none
 * ready.  Per call.
 */
#define SEL_FDS 100

struct sel_arg {
	int fds[SEL_FDS];
	int nfds, expect;
};

static int body_select(long n, void *arg)
{
	struct sel_arg *a = arg;
	for (long i = 0; i < n; i++) {
		fd_set rd;
		FD_ZERO(&rd);
		for (int k = 0; k < SEL_FDS; k++)
			FD_SET(a->fds[k], &rd);
		struct timeval tv = { 0, 0 };
		int r = select(a->nfds, &rd, NULL, NULL, &tv);
		if (r != a->expect)
			return r < 0 ? b_sysfail("select")
				     : b_fail(0, "select gave %d, not %d", r, a->expect);
	}
	return 0;
}

/* Records `fd` as the k-th descriptor to poll. */
static int sel_add(struct sel_arg *a, int k, int fd)
{
	if (fd < 0 || fd >= FD_SETSIZE)
		return fd < 0 ? b_sysfail("open") : b_fail(0, "descriptor %d too high", fd);
	a->fds[k] = fd;
	if (fd + 1 > a->nfds)
		a->nfds = fd + 1;
	return 0;
}

static int run_select_file(int smoke, double *ns)
{
	static struct sel_arg a;
	a.nfds = 0;
	a.expect = SEL_FDS;
	for (int i = 0; i < SEL_FDS; i++)
		if (sel_add(&a, i, open(SELF, O_RDONLY)) < 0)
			return -1;
	int r = simple(body_select, &a, smoke, 0, ns);
	for (int i = 0; i < SEL_FDS; i++)
		close(a.fds[i]);
	return r;
}

static int run_select_pipe(int smoke, double *ns)
{
	static struct sel_arg a;
	static int wr[SEL_FDS];
	a.nfds = 0;
	a.expect = 0;
	for (int i = 0; i < SEL_FDS; i++) {
		int p[2];
		if (pipe(p) < 0)
			return b_sysfail("pipe");
		wr[i] = p[1];
		if (sel_add(&a, i, p[0]) < 0)
			return -1;
	}
	int r = simple(body_select, &a, smoke, 0, ns);
	for (int i = 0; i < SEL_FDS; i++) {
		close(a.fds[i]);
		close(wr[i]);
	}
	return r;
}

/* ---- cross-domain calls (Trellis only) --------------------------------- */

/*
 * Each iteration writes "MODE 1000" to the bench domain's debug file: the
 * kernel makes 1000 calls (docs/domains.md, "What a call costs").  The
 * figure is per call; the write itself adds about a thousandth of a
 * system call to each, the same in every mode, so the difference between
 * a mode and `direct` is what crossing into the domain costs.  Linux has
 * no such file: the rows are missing there.
 */
#define DOMAIN_RUN "/sys/kernel/debug/domains/bench/run"
#define DOMAIN_CALLS 1000

struct domain_arg {
	int fd;
	char cmd[32];
	size_t len;
};

static int body_domain(long n, void *arg)
{
	struct domain_arg *a = arg;
	for (long i = 0; i < n; i++)
		if (write(a->fd, a->cmd, a->len) != (ssize_t)a->len)
			return b_sysfail("write " DOMAIN_RUN);
	return 0;
}

static int run_domain(const char *mode, int smoke, double *ns)
{
	static struct domain_arg a;
	a.fd = open(DOMAIN_RUN, O_WRONLY);
	if (a.fd < 0)
		return b_openfail(DOMAIN_RUN);
	a.len = (size_t)snprintf(a.cmd, sizeof a.cmd, "%s %d\n", mode, DOMAIN_CALLS);
	int r = simple(body_domain, &a, smoke, 0, ns);
	close(a.fd);
	*ns /= DOMAIN_CALLS;
	return r;
}

static int run_domain_direct(int smoke, double *ns)
{
	return run_domain("direct", smoke, ns);
}

static int run_domain_null(int smoke, double *ns)
{
	return run_domain("null", smoke, ns);
}

static int run_domain_rref(int smoke, double *ns)
{
	return run_domain("rref", smoke, ns);
}

static int run_domain_move(int smoke, double *ns)
{
	return run_domain("move", smoke, ns);
}

static const struct bench benches[] = {
	{ "null_syscall", run_null, LATENCY, 0 },
	{ "clock_gettime", run_clock, LATENCY, 0 },
	{ "read_dev_zero", run_read_zero, LATENCY, 0 },
	{ "write_dev_null", run_write_null, LATENCY, 0 },
	{ "stat", run_stat, LATENCY, 0 },
	{ "fstat", run_fstat, LATENCY, 0 },
	{ "open_close", run_open_close, LATENCY, 0 },
	{ "fork_exit", run_fork_exit, LATENCY, 0 },
	{ "fork_exec", run_fork_exec, LATENCY, 0 },
	{ "fork_exec_sh", run_fork_sh, LATENCY, 0 },
	{ "fork_exec_dyn_true", run_dyn_true, LATENCY, 0 },
	{ "bash_c_true", run_dyn_bash, LATENCY, 0 },
	{ "python3_pass", run_dyn_python, LATENCY, 0 },
	{ "page_fault", run_page_fault, LATENCY, 0 },
	{ "mmap_touch_4m", run_mmap_4m, LATENCY, 0 },
	{ "pipe_lat", run_pipe_lat, LATENCY, 0 },
	{ "pipe_bw", run_pipe_bw, BANDWIDTH, CHUNK },
	{ "ctx_switch", run_ctx_switch, LATENCY, 0 },
	{ "sig_install", run_sig_install, LATENCY, 0 },
	{ "sig_deliver", run_sig_deliver, LATENCY, 0 },
	{ "unix_lat", run_unix_lat, LATENCY, 0 },
	{ "unix_bw", run_unix_bw, BANDWIDTH, CHUNK },
	{ "tcp_lat", run_tcp_lat, LATENCY, 0 },
	{ "tcp_bw", run_tcp_bw, BANDWIDTH, CHUNK },
	{ "udp_lat", run_udp_lat, LATENCY, 0 },
	{ "tcp_connect", run_tcp_connect, LATENCY, 0 },
	{ "fs_seq_write_cold", run_fs_seq_write_cold, BANDWIDTH, FS_BIG_SIZE },
	{ "fs_seq_write_warm", run_fs_seq_write_warm, BANDWIDTH, FS_BIG_SIZE },
	{ "fs_seq_read_cold", run_fs_seq_read_cold, BANDWIDTH, FS_BIG_SIZE },
	{ "fs_seq_read_warm", run_fs_seq_read_warm, BANDWIDTH, FS_BIG_SIZE },
	{ "fs_rand_read_4k", run_fs_rand_read_4k, LATENCY, 0 },
	{ "fs_create_0k", run_fs_create_0k, LATENCY, 0 },
	{ "fs_delete_0k", run_fs_delete_0k, LATENCY, 0 },
	{ "fs_create_4k", run_fs_create_4k, LATENCY, 0 },
	{ "fs_delete_4k", run_fs_delete_4k, LATENCY, 0 },
	{ "fs_fsync", run_fs_fsync, LATENCY, 0 },
	{ "sleep_1ms", run_sleep_1ms, LATENCY, 0 },
	{ "ctx_ring2", run_ctx_ring2, LATENCY, 0 },
	{ "ctx_ring18", run_ctx_ring18, LATENCY, 0 },
	{ "file_page_fault", run_file_page_fault, LATENCY, 0 },
	{ "file_mmap_4m", run_file_mmap_4m, LATENCY, 0 },
	{ "sem_lat", run_sem_lat, LATENCY, 0 },
	{ "select_100_file", run_select_file, LATENCY, 0 },
	{ "select_100_pipe", run_select_pipe, LATENCY, 0 },
	{ "fs_create_1k", run_fs_create_1k, LATENCY, 0 },
	{ "fs_delete_1k", run_fs_delete_1k, LATENCY, 0 },
	{ "fs_create_10k", run_fs_create_10k, LATENCY, 0 },
	{ "fs_delete_10k", run_fs_delete_10k, LATENCY, 0 },
	{ "tmpfs_create_0k", run_tmpfs_create_0k, LATENCY, 0 },
	{ "tmpfs_delete_0k", run_tmpfs_delete_0k, LATENCY, 0 },
	{ "tmpfs_create_1k", run_tmpfs_create_1k, LATENCY, 0 },
	{ "tmpfs_delete_1k", run_tmpfs_delete_1k, LATENCY, 0 },
	{ "tmpfs_create_4k", run_tmpfs_create_4k, LATENCY, 0 },
	{ "tmpfs_delete_4k", run_tmpfs_delete_4k, LATENCY, 0 },
	{ "tmpfs_create_10k", run_tmpfs_create_10k, LATENCY, 0 },
	{ "tmpfs_delete_10k", run_tmpfs_delete_10k, LATENCY, 0 },
	{ "fs_seq_read_crash", run_fs_seq_read_crash, BANDWIDTH, FS_BIG_SIZE },
	{ "fs_seq_write_crash", run_fs_seq_write_crash, BANDWIDTH, FS_BIG_SIZE },
	{ "blk_recovery", run_blk_recovery, LATENCY, 0 },
	{ "domain_call_direct", run_domain_direct, LATENCY, 0 },
	{ "domain_call_null", run_domain_null, LATENCY, 0 },
	{ "domain_call_rref", run_domain_rref, LATENCY, 0 },
	{ "domain_call_move", run_domain_move, LATENCY, 0 },
};

#define NBENCH (sizeof benches / sizeof benches[0])

int main(int argc, char **argv)
{
	int smoke = 0, i = 1;
	if (argc == 2 && strcmp(argv[1], "-l") == 0) {
		for (size_t k = 0; k < NBENCH; k++)
			b_printf("%s\n", benches[k].name);
		return 0;
	}
	if (i < argc && strcmp(argv[i], "-s") == 0) {
		smoke = 1;
		i++;
	} else if (i < argc && strcmp(argv[i], "-p") == 0) {
		b_profile = 1;
		i++;
	}
	if (i + 1 != argc) {
		b_printf("usage: lmb [-s|-p] NAME | lmb -l\n");
		return 2;
	}
	for (size_t k = 0; k < NBENCH; k++) {
		const struct bench *b = &benches[k];
		if (strcmp(b->name, argv[i]) != 0)
			continue;
		double ns;
		if (b_profile)
			B_MARK(B_MARK_OUTER_ON);
		int failed = b->run(smoke, &ns) < 0;
		if (b_profile) {
			B_MARK(B_MARK_OUTER_OFF);
			b_printf("BENCH-PROF %s %ld\n", b->name, b_prof_iters);
		}
		if (failed) {
			b_printf("BENCH %s %s %s\n", b->name,
				 b_status.missing ? "missing" : "error",
				 b_status.failed ? b_status.why : "unknown failure");
			return b_status.missing ? 0 : 1;
		}
		if (b->kind == BANDWIDTH)
			b_printf("BENCH %s %.2f MB/s\n", b->name, b->bytes / ns * 1e3);
		else
			b_printf("BENCH %s %.1f ns\n", b->name, ns);
		return 0;
	}
	b_printf("lmb: unknown benchmark %s\n", argv[i]);
	return 2;
}
