/*
 * The kernel-wide /proc files have the formats proc(5) gives: meminfo,
 * uptime, loadavg, stat, version, cpuinfo, filesystems, mounts, and
 * /proc/sys/kernel. Values differ between machines, so only structure and
 * consistency are checked.
 */
#include "t.h"
#include <sys/utsname.h>

/* The value of "Name:" in /proc/meminfo (kB), or -1. */
static long meminfo(const char *buf, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof key, "\n%s:", name);
	p = strstr(buf, key);
	if (!p && strncmp(buf, key + 1, strlen(key + 1)) == 0)
		p = buf - 1;
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ')
		p++;
	if (strncmp(strchr(p, ' ') ? strchr(p, ' ') : "", " kB\n", 4) != 0)
		return -1;
	return strtol(p, NULL, 10);
}

int main(void)
{
	char buf[16384];
	struct utsname u;
	long total, freekb, avail;
	double up, idle, l1, l5, l15;
	int running, threads, last;

	/* meminfo: "Name:   value kB" lines; free <= total. */
	CHECK(t_read_file("/proc/meminfo", buf, sizeof buf) > 0);
	CHECK(strncmp(buf, "MemTotal:", 9) == 0);
	total = meminfo(buf, "MemTotal");
	freekb = meminfo(buf, "MemFree");
	avail = meminfo(buf, "MemAvailable");
	CHECK(total > 0);
	CHECK(freekb > 0 && freekb <= total);
	CHECK(avail >= 0 && avail <= total);
	CHECK(meminfo(buf, "Cached") >= 0);
	CHECK(meminfo(buf, "SwapTotal") >= 0);
	CHECK(meminfo(buf, "Shmem") >= 0);

	/* uptime: two decimals; idle never exceeds uptime by much on 1 CPU
	 * (it is summed over CPUs on Linux, so only check it parses). */
	CHECK(t_read_file("/proc/uptime", buf, sizeof buf) > 0);
	CHECK_EQ(sscanf(buf, "%lf %lf", &up, &idle), 2);
	CHECK(up > 0);
	CHECK(idle >= 0);

	/* loadavg: three averages, running/total threads, last pid. */
	CHECK(t_read_file("/proc/loadavg", buf, sizeof buf) > 0);
	CHECK_EQ(sscanf(buf, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running,
			&threads, &last), 6);
	CHECK(running >= 1 && running <= threads);
	CHECK(last >= getpid() || last > 0);

	/* stat: the cpu line with at least user, nice, system, idle. */
	CHECK(t_read_file("/proc/stat", buf, sizeof buf) > 0);
	{
		unsigned long long user, nice, sys, idl;
		CHECK_EQ(sscanf(buf, "cpu %llu %llu %llu %llu", &user, &nice, &sys,
				&idl), 4);
		CHECK(strstr(buf, "\ncpu0 ") != NULL);
		CHECK(strstr(buf, "\nbtime ") != NULL);
		CHECK(strstr(buf, "\nprocesses ") != NULL);
		CHECK(strstr(buf, "\nprocs_running ") != NULL);
	}

	/* version names the release uname reports. */
	CHECK_EQ(uname(&u), 0);
	CHECK(t_read_file("/proc/version", buf, sizeof buf) > 0);
	CHECK(strncmp(buf, "Linux version ", 14) == 0);
	CHECK(strstr(buf, u.release) != NULL);
	CHECK(t_read_file("/proc/sys/kernel/osrelease", buf, sizeof buf) > 0);
	CHECK(strncmp(buf, u.release, strlen(u.release)) == 0 &&
	      buf[strlen(u.release)] == '\n');
	CHECK(t_read_file("/proc/sys/kernel/ostype", buf, sizeof buf) > 0);
	CHECK(strcmp(buf, "Linux\n") == 0);
	CHECK(t_read_file("/proc/sys/kernel/pid_max", buf, sizeof buf) > 0);
	CHECK(atol(buf) > 0);

	/* cpuinfo: a "processor : 0" block with flags. */
	CHECK(t_read_file("/proc/cpuinfo", buf, sizeof buf) > 0);
	CHECK(strncmp(buf, "processor\t: 0\n", 14) == 0);
	CHECK(strstr(buf, "\nflags\t\t: ") != NULL);
	CHECK(strstr(buf, "\nmodel name\t: ") != NULL);

	/* filesystems: "nodev\t<type>" lines for the virtual ones. */
	CHECK(t_read_file("/proc/filesystems", buf, sizeof buf) > 0);
	CHECK(strstr(buf, "nodev\tproc\n") != NULL);
	CHECK(strstr(buf, "nodev\tsysfs\n") != NULL);
	CHECK(strstr(buf, "nodev\ttmpfs\n") != NULL);
	CHECK(strstr(buf, "nodev\tdevtmpfs\n") != NULL);

	/* mounts (a link to self/mounts): proc on /proc, sysfs on /sys. */
	{
		char link[64];
		ssize_t n = readlink("/proc/mounts", link, sizeof link);
		CHECK(n == 11 && memcmp(link, "self/mounts", 11) == 0);
	}
	CHECK(t_read_file("/proc/mounts", buf, sizeof buf) > 0);
	CHECK(strstr(buf, " /proc proc ") != NULL);
	CHECK(strstr(buf, " /sys sysfs ") != NULL);
	CHECK(strstr(buf, " /dev devtmpfs ") != NULL);
	CHECK(t_read_file("/proc/self/mountinfo", buf, sizeof buf) > 0);
	CHECK(strstr(buf, " / /proc ") != NULL);
	CHECK(strstr(buf, " - proc ") != NULL);

	/* Generated files cannot be written or mapped, and report size 0. */
	{
		struct stat st;
		int fd;
		CHECK_EQ(stat("/proc/meminfo", &st), 0);
		CHECK(S_ISREG(st.st_mode));
		CHECK_EQ(st.st_size, 0);
		CHECK_ERR(open("/proc/newfile", O_WRONLY | O_CREAT, 0644), ENOENT);
		CHECK_ERR(mkdir("/proc/newdir", 0755), ENOENT);
		fd = open("/proc/meminfo", O_RDONLY);
		CHECK(fd >= 0);
		/* Reading in small pieces gives the same text as one read. */
		{
			char small[8], whole[8192];
			size_t got = 0;
			ssize_t r;
			while ((r = read(fd, small, sizeof small)) > 0 &&
			       got + (size_t)r < sizeof whole) {
				memcpy(whole + got, small, (size_t)r);
				got += (size_t)r;
			}
			CHECK(got > 100);
			whole[got] = 0;
			CHECK(strncmp(whole, "MemTotal:", 9) == 0);
			CHECK(whole[got - 1] == '\n');
		}
		close(fd);
	}
	DONE();
}
