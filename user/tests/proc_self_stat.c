/*
 * /proc/self and /proc/<pid>: the link names the caller; stat has the 52
 * fields of proc(5) with the caller's ids; status, statm, comm, cmdline,
 * exe, cwd and root agree with what the process knows about itself; a
 * zombie child shows state Z and its directory goes when it is reaped.
 */
#include "t.h"
#include <sys/resource.h>

/* Splits /proc/<pid>/stat after the "(comm)" field into fields[]. */
static int stat_fields(const char *path, char *comm, size_t commsz,
		       char fields[][32], int max)
{
	char buf[2048], *open_paren, *close_paren, *p;
	int n = 0;

	if (t_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -1;
	snprintf(comm, commsz, "%.*s", (int)(close_paren - open_paren - 1),
		 open_paren + 1);
	/* Field 1 is the pid before the parenthesis. */
	snprintf(fields[n++], 32, "%.*s", (int)(open_paren - buf - 1), buf);
	snprintf(fields[n++], 32, "(comm)");
	p = strtok(close_paren + 1, " \n");
	while (p && n < max) {
		snprintf(fields[n++], 32, "%s", p);
		p = strtok(NULL, " \n");
	}
	return n;
}

static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return *end == 0 ? v : -999999;
}

int main(int argc, char **argv)
{
	char path[128], link[256], comm[64], buf[4096], fields[64][32];
	const char *base;
	struct stat st, st2;
	pid_t pid = getpid(), child;
	int n;

	(void)argc;
	/* /proc/self is a symlink to the caller's pid. */
	n = readlink("/proc/self", link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK_EQ(num(link), pid);
	}
	CHECK_EQ(lstat("/proc/self", &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(stat("/proc/self", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_uid, geteuid());
	n = readlink("/proc/thread-self", link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		char want[64];
		link[n] = 0;
		snprintf(want, sizeof want, "%d/task/%d", pid, pid);
		CHECK(strcmp(link, want) == 0);
	}

	/* stat: 52 fields in proc(5)'s order. */
	n = stat_fields("/proc/self/stat", comm, sizeof comm, fields, 64);
	CHECK_EQ(n, 52);
	if (n >= 52) {
		CHECK_EQ(num(fields[0]), pid);
		CHECK(strchr("RSDTZ", fields[2][0]) != NULL);
		CHECK_EQ(fields[2][0], 'R'); /* reading it, we run */
		CHECK_EQ(num(fields[3]), getppid());
		CHECK_EQ(num(fields[4]), getpgrp());
		CHECK_EQ(num(fields[5]), getsid(0));
		/* nice and priority (20 + nice): the suite may run under nice(1). */
		errno = 0;
		{
			int nv = getpriority(PRIO_PROCESS, 0);

			CHECK_EQ(errno, 0);
			CHECK_EQ(num(fields[18]), nv);
			CHECK_EQ(num(fields[17]), 20 + nv);
		}
		CHECK_EQ(num(fields[19]), 1);            /* num_threads */
		CHECK(num(fields[21]) >= 0);             /* starttime */
		CHECK(strtoull(fields[22], NULL, 10) > 0); /* vsize */
		/* rss: Linux's split counters may still read 0 here. */
		CHECK(num(fields[23]) >= 0);
		CHECK_EQ(num(fields[37]), SIGCHLD);      /* exit_signal */
	}
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	CHECK(strncmp(comm, base, 15) == 0);

	/* comm, status, statm. */
	CHECK(t_read_file("/proc/self/comm", buf, sizeof buf) > 0);
	{
		size_t len = strlen(base) < 15 ? strlen(base) : 15;
		CHECK(strncmp(buf, base, len) == 0 && buf[len] == '\n');
	}
	CHECK(t_read_file("/proc/self/status", buf, sizeof buf) > 0);
	snprintf(path, sizeof path, "\nPid:\t%d\n", pid);
	CHECK(strstr(buf, path) != NULL);
	snprintf(path, sizeof path, "\nPPid:\t%d\n", getppid());
	CHECK(strstr(buf, path) != NULL);
	snprintf(path, sizeof path, "\nUid:\t%d\t%d\t", getuid(), geteuid());
	CHECK(strstr(buf, path) != NULL);
	CHECK(strstr(buf, "\nVmRSS:") != NULL);
	CHECK(strstr(buf, "\nThreads:\t1\n") != NULL);
	CHECK(strncmp(buf, "Name:\t", 6) == 0);
	{
		unsigned long v[7];
		CHECK(t_read_file("/proc/self/statm", buf, sizeof buf) > 0);
		CHECK_EQ(sscanf(buf, "%lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1],
				&v[2], &v[3], &v[4], &v[5], &v[6]), 7);
		CHECK(v[0] >= v[1]);
	}

	/* cmdline: argv, each NUL-terminated. */
	n = t_read_file("/proc/self/cmdline", buf, sizeof buf);
	CHECK_EQ(n, (long)strlen(argv[0]) + 1);
	CHECK(strcmp(buf, argv[0]) == 0);

	/* exe names this program; cwd and root follow chdir. */
	CHECK_EQ(stat("/proc/self/exe", &st), 0);
	CHECK_EQ(stat(t_self_path(argv[0], path, sizeof path), &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(st.st_dev, st2.st_dev);
	CHECK_EQ(chdir("/tmp"), 0);
	n = readlink("/proc/self/cwd", link, sizeof link - 1);
	CHECK_EQ(n, 4);
	CHECK(n == 4 && memcmp(link, "/tmp", 4) == 0);
	n = readlink("/proc/self/root", link, sizeof link - 1);
	CHECK(n == 1 && link[0] == '/');
	CHECK_EQ(chdir("/"), 0);

	/* A child's directory: its own pid, then Z once it has exited, then
	 * gone once reaped. */
	child = fork();
	if (child == 0) {
		n = stat_fields("/proc/self/stat", comm, sizeof comm, fields, 64);
		CHECK_EQ(n, 52);
		CHECK_EQ(num(fields[0]), getpid());
		CHECK_EQ(num(fields[3]), getppid());
		CHILD_DONE();
	}
	CHECK(child > 0);
	snprintf(path, sizeof path, "/proc/%d/stat", child);
	{
		siginfo_t si;
		/* Wait for the exit without reaping. */
		CHECK_EQ(waitid(P_PID, child, &si, WEXITED | WNOWAIT), 0);
	}
	n = stat_fields(path, comm, sizeof comm, fields, 64);
	CHECK(n >= 3 && fields[2][0] == 'Z');
	CHECK(t_wait_ok(child));
	CHECK_ERR(open(path, O_RDONLY), ENOENT);
	snprintf(path, sizeof path, "/proc/%d", child);
	CHECK_ERR(stat(path, &st), ENOENT);

	/* Writing comm renames the caller (cut to 15 bytes); another
	 * process's comm cannot be written. */
	{
		int fd = open("/proc/self/comm", O_WRONLY);
		CHECK(fd >= 0);
		CHECK_EQ(write(fd, "renamed-process-long\n", 21), 21);
		close(fd);
		CHECK(t_read_file("/proc/self/comm", buf, sizeof buf) > 0);
		CHECK(strcmp(buf, "renamed-process\n") == 0);
		n = stat_fields("/proc/self/stat", comm, sizeof comm, fields, 64);
		CHECK(strcmp(comm, "renamed-process") == 0);
		snprintf(path, sizeof path, "/proc/%d/comm", getppid());
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			CHECK_ERR(write(fd, "x", 1), EINVAL);
			close(fd);
		}
	}

	/* Names that are not pids. */
	CHECK_ERR(stat("/proc/0", &st), ENOENT);
	CHECK_ERR(stat("/proc/999999999", &st), ENOENT);
	CHECK_ERR(stat("/proc/self/nonexistent", &st), ENOENT);
	DONE();
}
