/* Listing /proc the way ps and pidof do: numeric directories for every
 * process (including a new child, and ourselves), owned by the process's
 * uid; a reaped child's directory disappears; non-numeric entries such as
 * "self" and "meminfo" are listed too. */
#include "next.h"

static int listed(pid_t want, int *saw_self, int *saw_meminfo)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (atoi(de->d_name) == want && de->d_name[0] >= '1' &&
		    de->d_name[0] <= '9')
			found = 1;
		if (saw_self && !strcmp(de->d_name, "self"))
			*saw_self = 1;
		if (saw_meminfo && !strcmp(de->d_name, "meminfo"))
			*saw_meminfo = 1;
	}
	closedir(d);
	return found;
}

int main(void)
{
	int saw_self = 0, saw_meminfo = 0, p[2];
	char path[64], comm[64];
	struct stat st;
	pid_t pid;

	CHECK_EQ(listed(getpid(), &saw_self, &saw_meminfo), 1);
	CHECK(saw_self);
	CHECK(saw_meminfo);
	CHECK_EQ(listed(1, NULL, NULL), 1);

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (setresuid(65534, 65534, 65534) != 0 && t_is_root())
			_exit(1);
		t_await(p[0]);
		_exit(0);
	}
	close(p[0]);
	t_wait_proc_state(pid, "S");
	CHECK_EQ(listed(pid, NULL, NULL), 1);
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	if (t_is_root())
		CHECK_EQ(st.st_uid, 65534);
	/* comm, as pidof reads it. */
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	CHECK(t_read_file(path, comm, sizeof comm) > 0);
	CHECK(strcmp(comm, "procfs_listing\n") == 0);
	close(p[1]);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(listed(pid, NULL, NULL), 0);
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	CHECK_ERR(stat(path, &st), ENOENT);
	DONE();
}
