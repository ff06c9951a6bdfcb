/* nice changes the scheduling share: two CPU-bound children pinned to the
 * same CPU, one at nice 0 and one at nice 19; by the time the nice-0 one
 * has used 300 ms of CPU, the nice-19 one has used clearly less (Linux
 * weights are 1024 vs 15).  Only "less" is checked, no ratio. */
#include "next.h"

static pid_t spin(int niceval, int cpu)
{
	pid_t pid = fork();

	if (pid == 0) {
		cpu_set_t one;
		volatile unsigned long x = 0;

		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof one, &one);
		setpriority(PRIO_PROCESS, 0, niceval);
		for (;;)
			x++;
	}
	return pid;
}

static long long cpu_ns(pid_t pid)
{
	clockid_t c;
	struct timespec ts;

	if (clock_getcpuclockid(pid, &c) != 0 || clock_gettime(c, &ts) != 0)
		return -1;
	return t_ts_ns(&ts);
}

int main(void)
{
	cpu_set_t set;
	pid_t hi, lo;
	long long h = 0, l = 0, w0;
	int cpu = 0, i;

	sched_getaffinity(0, sizeof set, &set);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			cpu = i;
			break;
		}
	hi = spin(0, cpu);
	lo = spin(19, cpu);
	w0 = t_now_ns(CLOCK_MONOTONIC);
	for (;;) {
		t_msleep(20);
		h = cpu_ns(hi);
		l = cpu_ns(lo);
		if (h < 0 || l < 0 || h >= 300000000LL)
			break;
		if (t_now_ns(CLOCK_MONOTONIC) - w0 > 120000000000LL)
			break; /* a broken CPU clock must not hang us */
	}
	kill(hi, SIGKILL);
	kill(lo, SIGKILL);
	t_wait(hi);
	t_wait(lo);
	CHECK(h >= 300000000LL);
	CHECK(l >= 0);
	CHECK(l < h);
	if (!(l * 4 < h))
		t_note("nice 19 got %lld ns against %lld ns", l, h);
	DONE();
}
