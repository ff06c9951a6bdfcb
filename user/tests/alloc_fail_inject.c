/*
 * Kernel allocation failure (issue 11, item 3): with fault injection on
 * for this process only (Trellis: /proc/self/make-it-fail and
 * /proc/sys/debug/failslab/{probability,interval,times}, Linux's failslab
 * knobs), the N-th fallible allocation of a call fails, for N = 1, 2, ...
 * until the call gets through. Each failure must be the errno the call's
 * man page gives for it (ENOMEM, EAGAIN, ENFILE), the kernel must stay
 * alive, the same call must work once injection is off, and the kernel heap
 * (/proc/slabinfo) must come back to where it was.
 *
 * The calls: pipe, dup2/F_DUPFD growing the descriptor table, fork,
 * pthread_create, readv/writev with large buffers, poll of many
 * descriptors, open of a long path, epoll_ctl, msgsnd, select, getdents64,
 * semop with SEM_UNDO (in a fresh child: its undo array is made once per
 * process).
 *
 * On Linux the calls are checked without injection (failslab needs
 * debugfs and CONFIG_FAULT_INJECTION, and would fail other processes'
 * allocations): plain behaviour only, the injection part is skipped.
 */
#include "next.h"

#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define BIG (256 * 1024)
#define MAX_NTH 200

static int fd_mif = -1, fd_prob = -1, fd_interval = -1, fd_times = -1;
static char *bigbuf;
static int epfd = -1, msqid = -1, watched = -1, semid = -1;

/* Writes `v` to a knob; an injected failure of the write itself (the last
 * one left) is retried. */
static int knob(int fd, const char *v)
{
	for (int i = 0; i < 4; i++) {
		if (pwrite(fd, v, strlen(v), 0) == (ssize_t)strlen(v))
			return 0;
		if (errno != ENOMEM)
			return -1;
	}
	return -1;
}

static void inject_nth(int nth)
{
	char n[16];

	snprintf(n, sizeof n, "%d", nth);
	CHECK_EQ(knob(fd_prob, "100"), 0);
	CHECK_EQ(knob(fd_interval, n), 0);
	CHECK_EQ(knob(fd_times, "1"), 0);
	CHECK_EQ(knob(fd_mif, "1"), 0); /* last: restarts the count */
}

static void inject_off(void)
{
	CHECK_EQ(knob(fd_times, "0"), 0);
	CHECK_EQ(knob(fd_mif, "0"), 0);
}

/* ---- the calls: each returns 0, or -1 with errno, and undoes itself ---- */

static int call_pipe(void)
{
	int p[2];

	if (pipe(p) != 0)
		return -1;
	close(p[0]);
	close(p[1]);
	return 0;
}

static int call_dup2_grow(void)
{
	if (dup2(0, 1000) != 1000)
		return -1;
	close(1000);
	return 0;
}

static int call_dupfd_grow(void)
{
	int fd = fcntl(0, F_DUPFD, 900);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int call_fork(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(0);
	/* Reaped after injection is off (see main). */
	return 0;
}

static void *thread_fn(void *arg)
{
	return arg;
}

static int call_thread(void)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, thread_fn, NULL);

	if (e != 0) {
		errno = e;
		return -1;
	}
	pthread_join(t, NULL);
	return 0;
}

static int call_readv_big(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	struct iovec iov[2] = { { bigbuf, BIG / 2 }, { bigbuf + BIG / 2, BIG / 2 } };
	ssize_t n;

	if (fd < 0)
		return -1;
	n = readv(fd, iov, 2);
	if (n < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return n > 0 ? 0 : (errno = EIO, -1);
}

static int call_writev_big(void)
{
	int fd = open("/dev/null", O_WRONLY);
	struct iovec iov[2] = { { bigbuf, BIG / 2 }, { bigbuf + BIG / 2, BIG / 2 } };
	ssize_t n;

	if (fd < 0)
		return -1;
	n = writev(fd, iov, 2);
	if (n < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static int call_poll_many(void)
{
	static struct pollfd pf[1000];

	for (int i = 0; i < 1000; i++) {
		pf[i].fd = i % 3;
		pf[i].events = POLLOUT;
	}
	return poll(pf, 1000, 0) < 0 ? -1 : 0;
}

/* A path longer than the 256 bytes Trellis reads on its stack, so that
 * reading it allocates. */
static char long_path[400];

static int call_open(void)
{
	int fd;

	if (!long_path[0]) {
		strcpy(long_path, "/proc/self");
		while (strlen(long_path) < 300)
			strcat(long_path, "/.");
		strcat(long_path, "/status");
	}
	fd = open(long_path, O_RDONLY);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int call_epoll_ctl(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, watched, &ev) != 0)
		return -1;
	return 0; /* removed after injection is off */
}

static int call_msgsnd(void)
{
	struct {
		long type;
		char text[1000];
	} m = { 1, "x" };

	return msgsnd(msqid, &m, sizeof m.text, IPC_NOWAIT);
}

static int call_select(void)
{
	fd_set w;

	FD_ZERO(&w);
	FD_SET(1, &w);
	FD_SET(watched, &w);
	return select(watched + 1, NULL, &w, NULL, &(struct timeval){ 0, 0 }) < 0 ? -1 : 0;
}

static int call_getdents(void)
{
	char buf[4096];
	int fd = open("/proc", O_RDONLY | O_DIRECTORY);
	long n;

	if (fd < 0)
		return -1;
	n = syscall(SYS_getdents64, fd, buf, sizeof buf);
	if (n < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static int call_semop_undo(void)
{
	struct sembuf up = { 0, 1, SEM_UNDO }, down = { 0, -1, SEM_UNDO };

	if (semop(semid, &up, 1) != 0)
		return -1;
	return semop(semid, &down, 1);
}

struct call {
	const char *name;
	int (*fn)(void);
	int errs[3]; /* allowed errnos (0-terminated) */
	void (*after_ok)(void); /* undo a success, injection off */
	int fresh; /* each attempt in a new child (tables that only grow) */
};

static void reap_all(void)
{
	while (waitpid(-1, NULL, 0) > 0)
		;
}

static void epoll_del(void)
{
	CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_DEL, watched, NULL), 0);
}

static void msg_drain(void)
{
	struct {
		long type;
		char text[1000];
	} m;

	CHECK_EQ(msgrcv(msqid, &m, sizeof m.text, 0, IPC_NOWAIT), (long)sizeof m.text);
}

static const struct call calls[] = {
	{ "pipe", call_pipe, { ENFILE, ENOMEM }, NULL },
	{ "dup2 grow", call_dup2_grow, { ENOMEM }, NULL, 1 },
	{ "F_DUPFD grow", call_dupfd_grow, { ENOMEM }, NULL, 1 },
	{ "fork", call_fork, { ENOMEM, EAGAIN }, reap_all },
	{ "pthread_create", call_thread, { EAGAIN, ENOMEM }, NULL, 1 },
	{ "readv 256K", call_readv_big, { ENOMEM }, NULL },
	{ "writev 256K", call_writev_big, { ENOMEM }, NULL },
	{ "poll 1000", call_poll_many, { ENOMEM }, NULL },
	{ "open", call_open, { ENOMEM }, NULL },
	{ "epoll_ctl", call_epoll_ctl, { ENOMEM }, epoll_del },
	{ "msgsnd", call_msgsnd, { ENOMEM, EAGAIN }, msg_drain },
	{ "select", call_select, { ENOMEM }, NULL },
	{ "getdents64", call_getdents, { ENOMEM }, NULL },
	{ "semop SEM_UNDO", call_semop_undo, { ENOMEM }, NULL, 1 },
};
#define NCALLS (sizeof calls / sizeof calls[0])

/* Each call once, without injection: it must work (Linux and Trellis). */
static void plain_round(void)
{
	for (size_t i = 0; i < NCALLS; i++) {
		int r = calls[i].fn();

		if (r != 0)
			t_printf("  %s without injection: %s\n", calls[i].name,
				 strerror(errno));
		CHECK_EQ(r, 0);
		if (r == 0 && calls[i].after_ok)
			calls[i].after_ok();
	}
}

/* Live heap bytes from /proc/slabinfo (-1 if unreadable). */
static long long heap_bytes(void)
{
	long long bytes, pages;

	return t_heap_usage(&bytes, &pages, NULL, 0) ? bytes : -1;
}

/* One attempt with the nth allocation failing: 0 if the call got
 * through, else its errno; *retry is the result of the same call with
 * injection off. */
static int attempt(const struct call *c, int nth, int *retry)
{
	int r, e;

	inject_nth(nth);
	r = c->fn();
	e = errno;
	inject_off();
	if (r == 0) {
		if (c->after_ok)
			c->after_ok();
		return 0;
	}
	*retry = c->fn();
	if (*retry != 0)
		t_printf("  %s after allocation %d failed: %s\n", c->name, nth,
			 strerror(errno));
	if (*retry == 0 && c->after_ok)
		c->after_ok();
	return e ? e : -1;
}

/* attempt() in a new child, whose tables are copies sized to fit. */
static int attempt_fresh(const struct call *c, int nth, int *retry)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int e, again = 0;

		close(fd_mif);
		fd_mif = open("/proc/self/make-it-fail", O_WRONLY);
		if (fd_mif < 0)
			_exit(126);
		e = attempt(c, nth, &again);
		_exit(again != 0 ? 125 : e > 0 && e < 125 ? e : e == 0 ? 0 : 124);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	*retry = WEXITSTATUS(status) == 125 ? -1 : 0;
	return WEXITSTATUS(status) == 125 ? ENOMEM : WEXITSTATUS(status);
}

int main(void)
{
	long long before, after;

	bigbuf = malloc(BIG);
	CHECK(bigbuf != NULL);
	memset(bigbuf, 'a', BIG);
	epfd = epoll_create1(0);
	CHECK(epfd >= 0);
	{
		int p[2];

		CHECK_EQ(pipe(p), 0);
		watched = p[0];
	}
	msqid = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	CHECK(msqid >= 0);
	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	CHECK(semid >= 0);

	/* Plain behaviour, on both kernels; twice, so that caches settle. */
	plain_round();
	plain_round();
	if (!t_is_trellis()) {
		msgctl(msqid, IPC_RMID, NULL);
		semctl(semid, 0, IPC_RMID);
		SKIP("fault injection is Trellis's /proc/sys/debug/failslab; "
		     "Linux's failslab needs debugfs and "
		     "CONFIG_FAULT_INJECTION (the calls were checked without it)");
	}
	if (geteuid() != 0) {
		msgctl(msqid, IPC_RMID, NULL);
		semctl(semid, 0, IPC_RMID);
		SKIP("the fault-injection knobs are root's");
	}
	fd_mif = open("/proc/self/make-it-fail", O_WRONLY);
	fd_prob = open("/proc/sys/debug/failslab/probability", O_WRONLY);
	fd_interval = open("/proc/sys/debug/failslab/interval", O_WRONLY);
	fd_times = open("/proc/sys/debug/failslab/times", O_WRONLY);
	CHECK(fd_mif >= 0 && fd_prob >= 0 && fd_interval >= 0 && fd_times >= 0);
	if (t_failures)
		DONE();
	/* make-it-fail takes 0 or 1 only. */
	CHECK_ERR(pwrite(fd_mif, "2", 1, 0), EINVAL);
	before = heap_bytes();

	for (size_t i = 0; i < NCALLS; i++) {
		const struct call *c = &calls[i];
		int nth, failures = 0;

		for (nth = 1; nth <= MAX_NTH; nth++) {
			int e, retry = 0;

			e = c->fresh ? attempt_fresh(c, nth, &retry)
				     : attempt(c, nth, &retry);
			if (e == 0)
				break;
			failures++;
			if (e != c->errs[0] && e != c->errs[1] && e != c->errs[2]) {
				t_printf("  %s, allocation %d failed: %s\n",
					 c->name, nth, strerror(e));
				CHECK(!"unexpected errno");
			}
			/* The same call works once injection is off. */
			CHECK_EQ(retry, 0);
		}
		CHECK(nth <= MAX_NTH);
		t_printf("  %s: %d injected failure(s)\n", c->name, failures);
		/* Injection must reach each call's fallible paths. */
		CHECK(failures >= 1);
	}

	plain_round();
	after = heap_bytes();
	t_printf("  heap: %lld -> %lld bytes of live objects\n", before, after);
	if (before >= 0 && after >= 0)
		CHECK(after <= before + 64 * 1024);

	CHECK_EQ(msgctl(msqid, IPC_RMID, NULL), 0);
	CHECK_EQ(semctl(semid, 0, IPC_RMID), 0);
	DONE();
}
