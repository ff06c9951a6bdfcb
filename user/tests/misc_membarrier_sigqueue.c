/* membarrier(2) (QUERY, barriers, registration per address space) and
 * rt_tgsigqueueinfo(2) (thread-directed queued signals, the EPERM rule
 * for si_code >= 0, errors). */
#include "next.h"

#define MB_QUERY 0
#define MB_GLOBAL (1 << 0)
#define MB_GLOBAL_EXPEDITED (1 << 1)
#define MB_REGISTER_GLOBAL_EXPEDITED (1 << 2)
#define MB_PRIVATE_EXPEDITED (1 << 3)
#define MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#define MB_PRIVATE_EXPEDITED_SYNC_CORE (1 << 5)
#define MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE (1 << 6)
#define MB_GET_REGISTRATIONS (1 << 9)

static long mb(int cmd, unsigned flags)
{
	return syscall(SYS_membarrier, cmd, flags, 0);
}

static void *thread_regs(void *arg)
{
	(void)arg;
	return (void *)mb(MB_GET_REGISTRATIONS, 0);
}

static void test_membarrier(const char *self)
{
	long q = mb(MB_QUERY, 0);
	pthread_t th;
	void *ret;

	CHECK(q > 0);
	CHECK((q & (MB_PRIVATE_EXPEDITED | MB_REGISTER_PRIVATE_EXPEDITED |
		    MB_PRIVATE_EXPEDITED_SYNC_CORE | MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
		    MB_GLOBAL_EXPEDITED | MB_REGISTER_GLOBAL_EXPEDITED | MB_GET_REGISTRATIONS)) ==
	      (MB_PRIVATE_EXPEDITED | MB_REGISTER_PRIVATE_EXPEDITED |
	       MB_PRIVATE_EXPEDITED_SYNC_CORE | MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
	       MB_GLOBAL_EXPEDITED | MB_REGISTER_GLOBAL_EXPEDITED | MB_GET_REGISTRATIONS));
	CHECK_ERR(mb(MB_QUERY, 1), EINVAL);
	/* Nothing registered yet: the private commands are EPERM. */
	CHECK_EQ(mb(MB_GET_REGISTRATIONS, 0), 0);
	CHECK_ERR(mb(MB_PRIVATE_EXPEDITED, 0), EPERM);
	CHECK_ERR(mb(MB_PRIVATE_EXPEDITED_SYNC_CORE, 0), EPERM);
	if (q & MB_GLOBAL)
		CHECK_EQ(mb(MB_GLOBAL, 0), 0);
	CHECK_EQ(mb(MB_GLOBAL_EXPEDITED, 0), 0);
	/* Registering. */
	CHECK_EQ(mb(MB_REGISTER_PRIVATE_EXPEDITED, 0), 0);
	CHECK_EQ(mb(MB_PRIVATE_EXPEDITED, 0), 0);
	CHECK_EQ(mb(MB_GET_REGISTRATIONS, 0), MB_REGISTER_PRIVATE_EXPEDITED);
	CHECK_ERR(mb(MB_PRIVATE_EXPEDITED_SYNC_CORE, 0), EPERM);
	CHECK_EQ(mb(MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0), 0);
	CHECK_EQ(mb(MB_PRIVATE_EXPEDITED_SYNC_CORE, 0), 0);
	CHECK_EQ(mb(MB_REGISTER_GLOBAL_EXPEDITED, 0), 0);
	CHECK_EQ(mb(MB_REGISTER_PRIVATE_EXPEDITED, 0), 0);
	CHECK_EQ(mb(MB_GET_REGISTRATIONS, 0),
		 MB_REGISTER_PRIVATE_EXPEDITED | MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
		 MB_REGISTER_GLOBAL_EXPEDITED);
	/* Errors: flags, unknown or combined commands. */
	CHECK_ERR(mb(MB_PRIVATE_EXPEDITED, 1), EINVAL);
	CHECK_ERR(mb(MB_REGISTER_PRIVATE_EXPEDITED, 1), EINVAL);
	CHECK_ERR(mb(3, 0), EINVAL);
	CHECK_ERR(mb(1 << 10, 0), EINVAL);
	CHECK_ERR(mb(-1, 0), EINVAL);
	/* Registrations belong to the address space: threads see them, a
	 * fork child keeps them, execve drops them. */
	CHECK_EQ(pthread_create(&th, NULL, thread_regs, NULL), 0);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((long)ret, MB_REGISTER_PRIVATE_EXPEDITED | MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
		 MB_REGISTER_GLOBAL_EXPEDITED);
	{
		pid_t pid = fork();
		if (pid == 0)
			_exit(mb(MB_PRIVATE_EXPEDITED, 0) == 0 ? 0 : 1);
		t_wait_ok(pid);
		pid = fork();
		if (pid == 0) {
			execl(self, self, "fresh", (char *)NULL);
			_exit(9);
		}
		t_wait_ok(pid);
	}
}

/* ---- rt_tgsigqueueinfo ---------------------------------------------- */

static long tgsq(pid_t tgid, pid_t tid, int sig, siginfo_t *si)
{
	return syscall(SYS_rt_tgsigqueueinfo, tgid, tid, sig, si);
}

static siginfo_t make_info(int sig, int code, int value)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	si.si_signo = sig;
	si.si_code = code;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = value;
	return si;
}

static volatile pid_t worker_tid;
static volatile int worker_go;
static siginfo_t worker_got;
static volatile int worker_sig;

static void *worker(void *arg)
{
	sigset_t set;
	struct timespec ts = { 5, 0 };

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	worker_tid = (pid_t)syscall(SYS_gettid);
	while (!worker_go)
		sched_yield();
	worker_sig = sigtimedwait(&set, &worker_got, &ts);
	return NULL;
}

static void test_tgsigqueueinfo(void)
{
	sigset_t set, pending;
	siginfo_t si, got;
	struct timespec ts = { 0, 0 };
	pid_t me = getpid(), tid = (pid_t)syscall(SYS_gettid);
	pthread_t th;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);

	/* To the calling thread, with its own data; any si_code is fine
	 * for oneself. */
	si = make_info(SIGRTMIN, SI_QUEUE, 42);
	CHECK_EQ(tgsq(me, tid, SIGRTMIN, &si), 0);
	si = make_info(SIGUSR1, SI_USER, 7);
	CHECK_EQ(tgsq(me, tid, SIGUSR1, &si), 0);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(sigismember(&pending, SIGRTMIN) && sigismember(&pending, SIGUSR1));
	memset(&got, 0, sizeof got);
	CHECK_EQ(sigtimedwait(&set, &got, &ts), SIGUSR1);
	CHECK_EQ(got.si_code, SI_USER);
	CHECK_EQ(sigtimedwait(&set, &got, &ts), SIGRTMIN);
	CHECK_EQ(got.si_code, SI_QUEUE);
	CHECK_EQ(got.si_value.sival_int, 42);
	CHECK_EQ(got.si_pid, me);

	/* To another thread of the process: only that thread gets it; a
	 * non-negative si_code (as from the kernel) is EPERM. */
	worker_go = 0;
	CHECK_EQ(pthread_create(&th, NULL, worker, NULL), 0);
	while (!worker_tid)
		sched_yield();
	si = make_info(SIGRTMIN + 1, SI_USER, 0);
	CHECK_ERR(tgsq(me, worker_tid, SIGRTMIN + 1, &si), EPERM);
	si = make_info(SIGRTMIN + 1, SI_TKILL, 0);
	CHECK_ERR(tgsq(me, worker_tid, SIGRTMIN + 1, &si), EPERM);
	si = make_info(SIGRTMIN + 1, SI_QUEUE, 99);
	CHECK_EQ(tgsq(me, worker_tid, SIGRTMIN + 1, &si), 0);
	CHECK_EQ(sigpending(&pending), 0);
	/* sigpending shows the thread's own and the process's signals: the
	 * worker's signal is not the main thread's. */
	CHECK(!sigismember(&pending, SIGRTMIN + 1));
	worker_go = 1;
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(worker_sig, SIGRTMIN + 1);
	CHECK_EQ(worker_got.si_code, SI_QUEUE);
	CHECK_EQ(worker_got.si_value.sival_int, 99);
	/* Signal 0 checks only. */
	si = make_info(0, SI_QUEUE, 0);
	CHECK_EQ(tgsq(me, tid, 0, &si), 0);

	/* Errors. */
	si = make_info(SIGUSR1, SI_QUEUE, 0);
	CHECK_ERR(tgsq(0, tid, SIGUSR1, &si), EINVAL);
	CHECK_ERR(tgsq(me, 0, SIGUSR1, &si), EINVAL);
	CHECK_ERR(tgsq(-1, tid, SIGUSR1, &si), EINVAL);
	CHECK_ERR(tgsq(me, -5, SIGUSR1, &si), EINVAL);
	CHECK_ERR(tgsq(me, tid, 65, &si), EINVAL);
	CHECK_ERR(tgsq(me, tid, SIGUSR1, BAD_PTR2), EFAULT);
	CHECK_ERR(tgsq(me, 0x3fffffff, SIGUSR1, &si), ESRCH);
	/* The thread is not in that thread group. */
	{
		pid_t child = fork();
		if (child == 0) {
			pause();
			_exit(0);
		}
		CHECK_ERR(tgsq(me, child, SIGUSR1, &si), ESRCH);
		CHECK_ERR(tgsq(child, tid, SIGUSR1, &si), ESRCH);
		/* Another process: SI_QUEUE is allowed, si_code >= 0 is not. */
		si = make_info(SIGTERM, SI_QUEUE, 0);
		CHECK_EQ(tgsq(child, child, 0, &si), 0);
		si = make_info(SIGTERM, SI_USER, 0);
		CHECK_ERR(tgsq(child, child, SIGTERM, &si), EPERM);
		si = make_info(SIGTERM, SI_QUEUE, 0);
		CHECK_EQ(tgsq(child, child, SIGTERM, &si), 0);
		CHECK_EQ(t_wait(child) & 0x7f, SIGTERM);
	}
	/* kill(2)'s permission rule. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			siginfo_t s2 = make_info(SIGUSR1, SI_QUEUE, 0);
			CHECK_EQ(setuid(65534), 0);
			CHECK_ERR(tgsq(getppid(), getppid(), SIGUSR1, &s2), EPERM);
			CHILD_DONE();
		}
		t_wait_ok(pid);
	}
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];

	if (argc > 1 && !strcmp(argv[1], "fresh"))
		return mb(MB_GET_REGISTRATIONS, 0) == 0 && mb(MB_PRIVATE_EXPEDITED, 0) == -1 ? 0 : 1;
	t_self_path(argv[0], self, sizeof self);
	test_membarrier(self);
	test_tgsigqueueinfo();
	DONE();
}
