/* Scheduling calls on another user's process: an unprivileged caller
 * gets EPERM from sched_setaffinity, sched_setscheduler, sched_setparam
 * and setpriority (invalid arguments are still EINVAL first); reading the
 * settings of any process is allowed; its own processes and root may
 * change them. */
#include "next.h"
#include <sched.h>
#include <sys/resource.h>

#define NOBODY 65534

static long setaff(pid_t pid, const unsigned long *mask)
{
	return syscall(SYS_sched_setaffinity, pid, 16 * sizeof(long), mask);
}

static long setsched(pid_t pid, int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return syscall(SYS_sched_setscheduler, pid, policy, &sp);
}

static long setparam(pid_t pid, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return syscall(SYS_sched_setparam, pid, &sp);
}

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	t_wait(pid);
}

int main(void)
{
	unsigned long mask[16];
	pid_t victim, child;
	/* Nice values from the one we start with (the runner may be niced). */
	int base = getpriority(PRIO_PROCESS, 0);

	if (base > 15)
		SKIP("started with nice %d", base);

	if (!t_is_root())
		SKIP("needs root to run as another user");
	memset(mask, 0, sizeof mask);
	CHECK(syscall(SYS_sched_getaffinity, 0, sizeof mask, mask) > 0);

	victim = sleeper();
	CHECK(victim > 0);
	child = fork();
	if (child == 0) {
		struct sched_param sp;
		unsigned long got[16];
		pid_t own;

		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		CHECK_ERR(setaff(victim, mask), EPERM);
		CHECK_ERR(setsched(victim, SCHED_OTHER, 0), EPERM);
		CHECK_ERR(setsched(victim, SCHED_BATCH, 0), EPERM);
		CHECK_ERR(setparam(victim, 0), EPERM);
		CHECK_ERR(setpriority(PRIO_PROCESS, victim, base + 2), EPERM);
		/* Bad arguments are found before the permission check. */
		CHECK_ERR(setsched(victim, SCHED_OTHER, 5), EINVAL);
		CHECK_ERR(setparam(victim, 7), EINVAL);
		CHECK_ERR(setsched(victim, 12345, 0), EINVAL);
		/* A real-time policy needs privilege in any case. */
		CHECK_ERR(setsched(0, SCHED_FIFO, 10), EPERM);

		/* Reading another user's settings is allowed. */
		CHECK(syscall(SYS_sched_getaffinity, victim, sizeof got, got) > 0);
		CHECK_EQ(syscall(SYS_sched_getscheduler, victim), SCHED_OTHER);
		CHECK_EQ(syscall(SYS_sched_getparam, victim, &sp), 0);
		errno = 0;
		getpriority(PRIO_PROCESS, victim);
		CHECK_EQ(errno, 0);

		/* Our own process, and a child of ours: allowed. */
		CHECK_EQ(setaff(0, mask), 0);
		CHECK_EQ(setsched(0, SCHED_OTHER, 0), 0);
		CHECK_EQ(setparam(getpid(), 0), 0);
		CHECK_EQ(setpriority(PRIO_PROCESS, 0, base + 1), 0);
		own = sleeper();
		CHECK(own > 0);
		CHECK_EQ(setaff(own, mask), 0);
		CHECK_EQ(setsched(own, SCHED_OTHER, 0), 0);
		CHECK_EQ(setparam(own, 0), 0);
		CHECK_EQ(setpriority(PRIO_PROCESS, own, base + 3), 0);
		errno = 0;
		CHECK_EQ(getpriority(PRIO_PROCESS, own), base + 3);
		/* Lowering the nice value again needs privilege. */
		CHECK_ERR(setpriority(PRIO_PROCESS, own, base + 2), EACCES);
		reap(own);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(child));

	/* Root may change anyone's. */
	CHECK_EQ(setaff(victim, mask), 0);
	CHECK_EQ(setsched(victim, SCHED_OTHER, 0), 0);
	CHECK_EQ(setparam(victim, 0), 0);
	CHECK_EQ(setpriority(PRIO_PROCESS, victim, base + 2), 0);
	errno = 0;
	CHECK_EQ(getpriority(PRIO_PROCESS, victim), base + 2);
	reap(victim);
	DONE();
}
