/* sched_yield, sched_getaffinity/sched_setaffinity (sizes, EINVAL for a
 * too small or empty mask, restricting to one CPU then running there),
 * getcpu agreeing with the mask, the default scheduler policy. */
#include "next.h"

int main(void)
{
	cpu_set_t set, one, got;
	unsigned cpu = 999, node = 999;
	int i, first = -1;
	long r;

	CHECK_EQ(sched_yield(), 0);
	CHECK_EQ(syscall(SYS_sched_yield), 0);

	CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
	CHECK(CPU_COUNT(&set) >= 1);
	/* The raw call returns the size it copied (a multiple of 8). */
	r = syscall(SYS_sched_getaffinity, 0, sizeof set, &set);
	CHECK(r >= 8 && r % 8 == 0 && r <= (long)sizeof set);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 4, &set), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 0, &set), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0x3ffffff0, sizeof set, &set), ESRCH);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, sizeof set, BAD_PTR2), EFAULT);

	/* getcpu returns a CPU from the mask. */
	CHECK_EQ(syscall(SYS_getcpu, &cpu, &node, NULL), 0);
	CHECK(cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set));
	CHECK_EQ(node, 0);

	/* Pin to one CPU: we run there. */
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			first = i;
			break;
		}
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof one, &one), 0);
	CHECK_EQ(sched_getaffinity(0, sizeof got, &got), 0);
	CHECK_EQ(CPU_COUNT(&got), 1);
	CHECK(CPU_ISSET(first, &got));
	sched_yield();
	CHECK_EQ(syscall(SYS_getcpu, &cpu, NULL, NULL), 0);
	CHECK_EQ(cpu, (unsigned)first);
	/* Inherited by a child. */
	{
		pid_t pid = fork();

		if (pid == 0) {
			cpu_set_t c;

			sched_getaffinity(0, sizeof c, &c);
			_exit(CPU_COUNT(&c) == 1 && CPU_ISSET(first, &c) ? 0 : 1);
		}
		CHECK(t_wait_ok(pid));
	}
	/* An empty mask is EINVAL. */
	CPU_ZERO(&one);
	CHECK_ERR(sched_setaffinity(0, sizeof one, &one), EINVAL);
	CHECK_EQ(sched_setaffinity(0, sizeof set, &set), 0);

	/* Raw calls: musl's wrappers for these return ENOSYS. */
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);
	CHECK_EQ(sched_get_priority_max(SCHED_OTHER), 0);
	CHECK_EQ(sched_get_priority_min(SCHED_OTHER), 0);
	CHECK_EQ(sched_get_priority_max(SCHED_FIFO), 99);
	{
		struct sched_param sp;

		sp.sched_priority = -1;
		CHECK_EQ(syscall(SYS_sched_getparam, 0, &sp), 0);
		CHECK_EQ(sp.sched_priority, 0);
	}
	DONE();
}
