/* wait4/waitid rusage and getrusage(RUSAGE_CHILDREN): a child's CPU time
 * is reported to the reaper, and only after reaping. */
#include "next.h"

static long long tv_ns(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000000LL + tv->tv_usec * 1000LL;
}

int main(void)
{
	struct rusage ru, before, after;
	pid_t pid;
	int st;

	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &before), 0);

	/* A child that burns 200 ms of CPU. */
	pid = fork();
	if (pid == 0)
		_exit(t_burn_cpu(200000000LL) ? 0 : 1);
	CHECK(t_wait_proc_state(pid, "Z") || 1);
	/* Not yet reaped: not in RUSAGE_CHILDREN. */
	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &after), 0);
	CHECK(tv_ns(&after.ru_utime) + tv_ns(&after.ru_stime) <
	      tv_ns(&before.ru_utime) + tv_ns(&before.ru_stime) + 100000000LL);

	memset(&ru, 0, sizeof ru);
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime) >= 150000000LL);
	CHECK(tv_ns(&ru.ru_utime) >= 100000000LL);
	CHECK(ru.ru_utime.tv_usec >= 0 && ru.ru_utime.tv_usec < 1000000);

	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &after), 0);
	CHECK(tv_ns(&after.ru_utime) + tv_ns(&after.ru_stime) -
		      tv_ns(&before.ru_utime) - tv_ns(&before.ru_stime) >=
	      150000000LL);

	/* Raw waitid with a rusage pointer (the fifth argument). */
	pid = fork();
	if (pid == 0)
		_exit(t_burn_cpu(100000000LL) ? 0 : 1);
	{
		siginfo_t si;

		memset(&ru, 0, sizeof ru);
		memset(&si, 0, sizeof si);
		CHECK_EQ(syscall(SYS_waitid, P_PID, pid, &si, WEXITED, &ru), 0);
		CHECK_EQ(si.si_pid, pid);
		CHECK(tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime) >= 80000000LL);
	}

	/* Grandchildren count once their parent has reaped them. */
	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &before), 0);
	pid = fork();
	if (pid == 0) {
		pid_t g = fork();

		if (g == 0)
			_exit(t_burn_cpu(100000000LL) ? 0 : 1);
		_exit(t_wait(g) == 0 ? 0 : 1);
	}
	memset(&ru, 0, sizeof ru);
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime) >= 80000000LL);

	/* Our own peak RSS (KiB).  Linux derives it from approximate
	 * per-CPU counters, so a small process may see 0 there; Trellis
	 * must report it. */
	CHECK_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	CHECK(ru.ru_maxrss >= 0);
	if (t_is_trellis())
		CHECK(ru.ru_maxrss > 0);

	/* Errors. */
	CHECK_ERR(getrusage(5, &ru), EINVAL);
	CHECK_ERR(syscall(SYS_getrusage, RUSAGE_SELF, BAD_PTR2), EFAULT);
	pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK_ERR(syscall(SYS_wait4, pid, &st, 0, BAD_PTR2), EFAULT);
	DONE();
}
