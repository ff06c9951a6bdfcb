/* /proc/meminfo in the format busybox free/top read: "Key:   N kB"
 * lines for MemTotal, MemFree, MemAvailable, Buffers, Cached, SwapTotal,
 * SwapFree, with sane relations and agreement with sysinfo(2); MemFree
 * drops when a lot of memory is touched and comes back when it is freed. */
#include "next.h"
#include <sys/sysinfo.h>

int main(void)
{
	static char buf[16384];
	static const char *keys[] = { "MemTotal:", "MemFree:", "MemAvailable:",
				      "Buffers:", "Cached:", "SwapTotal:",
				      "SwapFree:", "Shmem:", "Slab:" };
	long long total, free_, avail, v;
	struct sysinfo si;
	unsigned i;

	CHECK(t_read_file("/proc/meminfo", buf, sizeof buf) > 0);
	/* The first line is MemTotal. */
	CHECK(strncmp(buf, "MemTotal:", 9) == 0);
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *line = t_find_line(buf, keys[i]);
		char unit[8] = "";

		CHECK(line != NULL);
		if (!line)
			continue;
		CHECK(sscanf(line, " %lld %7s", &v, unit) == 2);
		CHECK(strcmp(unit, "kB") == 0);
		CHECK(v >= 0);
	}
	total = t_proc_kv("/proc/meminfo", "MemTotal:");
	free_ = t_proc_kv("/proc/meminfo", "MemFree:");
	avail = t_proc_kv("/proc/meminfo", "MemAvailable:");
	CHECK(total > 0);
	CHECK(free_ > 0 && free_ <= total);
	CHECK(avail >= 0 && avail <= total);
	/* sysinfo agrees with MemTotal (to within rounding). */
	CHECK_EQ(sysinfo(&si), 0);
	{
		long long si_total = (long long)si.totalram * si.mem_unit / 1024;

		CHECK(si_total >= total - 1024 && si_total <= total + 1024);
	}

	/* Touch 32 MiB: MemFree goes down by a good part of it. */
	if (free_ > 200 * 1024) {
		size_t sz = 32 << 20, k;
		char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long long during, after;

		CHECK(m != MAP_FAILED);
		for (k = 0; k < sz; k += 4096)
			m[k] = 1;
		during = t_proc_kv("/proc/meminfo", "MemFree:");
		munmap(m, sz);
		after = t_proc_kv("/proc/meminfo", "MemFree:");
		if (t_is_trellis()) {
			CHECK(during <= free_ - 16 * 1024);
			CHECK(after >= during + 16 * 1024);
		} else if (!(during < after)) {
			t_note("host MemFree is noisy: %lld -> %lld -> %lld kB",
			       free_, during, after);
		}
	}
	DONE();
}
