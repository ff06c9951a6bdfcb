/* /proc/cpuinfo: one "processor\t: N" block per CPU numbered from 0, with
 * vendor_id, model name, flags and the like; the count matches
 * sysconf(_SC_NPROCESSORS_CONF)-style counting of online CPUs and covers
 * our affinity mask. */
#include "next.h"

int main(void)
{
	static char buf[1 << 18];
	const char *p;
	int count = 0, expect = 0, affinity;
	cpu_set_t set;

	CHECK(t_read_file("/proc/cpuinfo", buf, sizeof buf) > 0);
	for (p = buf; (p = strstr(p, "processor")) != NULL; p++) {
		int n = -1;

		if (p != buf && p[-1] != '\n')
			continue;
		CHECK(sscanf(p, "processor\t: %d", &n) == 1);
		CHECK_EQ(n, expect);
		expect++;
		count++;
	}
	CHECK(count >= 1);
	CHECK(t_find_line(buf, "vendor_id\t: ") != NULL);
	CHECK(t_find_line(buf, "model name\t: ") != NULL);
	CHECK(t_find_line(buf, "flags\t\t: ") != NULL);
	CHECK(t_find_line(buf, "cpu MHz\t\t: ") != NULL);
	CHECK(strstr(buf, " fpu") != NULL);

	CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
	affinity = CPU_COUNT(&set);
	CHECK(affinity >= 1 && affinity <= count);
	DONE();
}
