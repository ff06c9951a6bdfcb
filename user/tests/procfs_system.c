/* System-wide /proc files in their Linux formats: uptime, loadavg,
 * version, filesystems, mounts (and /proc/self/mounts), stat (cpu lines,
 * btime, processes, procs_running, ctxt). */
#include "next.h"
#include <sys/sysinfo.h>

int main(void)
{
	static char buf[65536];
	double up, idle, l1, l5, l15;
	int run, tot, last;
	char *line, *save = NULL;
	int root_seen = 0, proc_seen = 0, lines = 0;

	/* uptime: two non-negative decimals; agrees with sysinfo. */
	CHECK(t_read_file("/proc/uptime", buf, sizeof buf) > 0);
	CHECK(sscanf(buf, "%lf %lf", &up, &idle) == 2);
	CHECK(up > 0 && idle >= 0);
	CHECK(strchr(buf, '.') != NULL);
	{
		struct sysinfo si;

		/* Read after it: not earlier (Linux rounds differently, hence
		 * the slack of 2 s), and not much later, with room for a
		 * loaded host that stops the guest for a while between the
		 * two calls. */
		CHECK(sysinfo(&si) == 0);
		CHECK(si.uptime >= (long)up - 2 && si.uptime <= (long)up + 60);
	}

	/* loadavg: "a b c running/total last_pid". */
	CHECK(t_read_file("/proc/loadavg", buf, sizeof buf) > 0);
	CHECK(sscanf(buf, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &run, &tot,
		     &last) == 6);
	CHECK(run >= 1 && tot >= run);
	CHECK(l1 >= 0 && l5 >= 0 && l15 >= 0);

	/* version. */
	CHECK(t_read_file("/proc/version", buf, sizeof buf) > 0);
	CHECK(strncmp(buf, "Linux version ", 14) == 0);

	/* filesystems: "nodev\tproc", "\ttmpfs" style. */
	CHECK(t_read_file("/proc/filesystems", buf, sizeof buf) > 0);
	CHECK(strstr(buf, "nodev\tproc\n") != NULL);
	CHECK(strstr(buf, "nodev\ttmpfs\n") != NULL);
	CHECK(strstr(buf, "nodev\tsysfs\n") != NULL);
	CHECK(strstr(buf, "nodev\tdevtmpfs\n") != NULL);

	/* mounts: six fields per line, "/" and /proc present. */
	CHECK(t_read_file("/proc/mounts", buf, sizeof buf) > 0);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char dev[256], mnt[256], type[64], opts[512];
		int a, b;

		lines++;
		CHECK(sscanf(line, "%255s %255s %63s %511s %d %d", dev, mnt,
			     type, opts, &a, &b) == 6);
		if (!strcmp(mnt, "/"))
			root_seen = 1;
		if (!strcmp(mnt, "/proc") && !strcmp(type, "proc"))
			proc_seen = 1;
		CHECK(!strncmp(opts, "rw", 2) || !strncmp(opts, "ro", 2));
	}
	CHECK(lines >= 2);
	CHECK(root_seen);
	CHECK(proc_seen);
	/* /proc/self/mounts is the same list. */
	{
		static char again[65536];

		CHECK(t_read_file("/proc/self/mounts", again, sizeof again) > 0);
		CHECK(strstr(again, " /proc proc ") != NULL);
	}

	/* stat. */
	CHECK(t_read_file("/proc/stat", buf, sizeof buf) > 0);
	{
		unsigned long long u, n, s, i;
		const char *v;

		CHECK(strncmp(buf, "cpu ", 4) == 0);
		CHECK(sscanf(buf + 4, "%llu %llu %llu %llu", &u, &n, &s, &i) == 4);
		CHECK(t_find_line(buf, "cpu0 ") != NULL);
		v = t_find_line(buf, "btime ");
		CHECK(v && atol(v) > 0);
		if (v)
			CHECK(atol(v) <= time(NULL));
		v = t_find_line(buf, "processes ");
		CHECK(v && atol(v) > 0);
		v = t_find_line(buf, "procs_running ");
		CHECK(v && atol(v) >= 1);
		v = t_find_line(buf, "ctxt ");
		CHECK(v != NULL);
		v = t_find_line(buf, "intr ");
		CHECK(v != NULL);
	}
	DONE();
}
