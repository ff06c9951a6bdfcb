/*
 * Listing /proc: the fixed entries and one numeric directory per process,
 * each owned by its process's effective user; a child appears while it
 * exists; a process's directory lists its files.
 */
#include "t.h"

static int listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, name) == 0)
			found = 1;
	closedir(d);
	return found;
}

int main(void)
{
	char me[32], path[128];
	struct stat st;
	pid_t child;
	DIR *d;
	struct dirent *de;
	int pids = 0, dots = 0;
	static const char *const fixed[] = { "self", "meminfo", "cpuinfo",
		"uptime", "loadavg", "mounts", "filesystems", "stat", "version",
		"cmdline", "sys", "thread-self" };
	static const char *const per_pid[] = { "stat", "status", "cmdline",
		"environ", "maps", "fd", "exe", "cwd", "root", "comm", "statm",
		"task" };
	size_t i;

	snprintf(me, sizeof me, "%d", getpid());
	for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		CHECK_EQ(listed("/proc", fixed[i]), 1);
	for (i = 0; i < sizeof per_pid / sizeof per_pid[0]; i++)
		CHECK_EQ(listed("/proc/self", per_pid[i]), 1);
	CHECK_EQ(listed("/proc", me), 1);
	CHECK_EQ(listed("/proc", "1"), 1);

	/* Every numeric entry is a directory whose owner is its process's. */
	d = opendir("/proc");
	CHECK(d != NULL);
	while (d && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			dots++;
			continue;
		}
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pids++;
		CHECK(de->d_type == DT_DIR);
	}
	if (d)
		closedir(d);
	CHECK_EQ(dots, 2);
	CHECK(pids >= 2);
	snprintf(path, sizeof path, "/proc/%s", me);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(st.st_gid, getegid());

	/* task/ has one directory per thread: here just ours. */
	snprintf(path, sizeof path, "/proc/%s/task", me);
	CHECK_EQ(listed(path, me), 1);
	snprintf(path, sizeof path, "/proc/%s/task/%s/stat", me, me);
	CHECK_EQ(access(path, R_OK), 0);

	/* A child is listed while it lives and unlisted once reaped. */
	child = fork();
	if (child == 0) {
		t_sleep_ns(200000000L);
		_exit(0);
	}
	CHECK(child > 0);
	snprintf(me, sizeof me, "%d", child);
	CHECK_EQ(listed("/proc", me), 1);
	CHECK(t_wait_ok(child));
	CHECK_EQ(listed("/proc", me), 0);

	/* ".." of a process directory is /proc. */
	{
		struct stat a, b;
		CHECK_EQ(stat("/proc/self/..", &a), 0);
		CHECK_EQ(stat("/proc", &b), 0);
		CHECK_EQ(a.st_ino, b.st_ino);
		CHECK_EQ(a.st_dev, b.st_dev);
	}
	/* getcwd inside /proc. */
	{
		char cwd[256], want[64];
		CHECK_EQ(chdir("/proc/self/fd"), 0);
		CHECK(getcwd(cwd, sizeof cwd) != NULL);
		snprintf(want, sizeof want, "/proc/%d/fd", getpid());
		CHECK(strcmp(cwd, want) == 0);
		CHECK_EQ(chdir("/"), 0);
	}
	DONE();
}
