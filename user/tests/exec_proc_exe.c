/* /proc/self/exe names the file a process runs, with links resolved:
 * after execve through a symbolic link or through /proc/self/exe itself it
 * is the real path, while the command name (comm) is the last component of
 * the name given to execve. */
#include "next.h"

static int child(const char *want_exe, const char *want_comm)
{
	char exe[PATH_MAX], comm[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n <= 0)
		return 10;
	exe[n] = 0;
	if (strcmp(exe, want_exe))
		return 11;
	n = t_read_file("/proc/self/comm", comm, sizeof comm);
	if (n <= 0)
		return 12;
	comm[strcspn(comm, "\n")] = 0;
	return strcmp(comm, want_comm) ? 13 : 0;
}

static int run(const char *path, const char *exe, const char *comm)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { "x", "child", (char *)exe, (char *)comm, NULL };

		execv(path, argv);
		_exit(99);
	}
	return t_wait(pid);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX], link[PATH_MAX + 8];
	ssize_t n;

	if (argc == 4 && !strcmp(argv[1], "child"))
		return child(argv[2], argv[3]);
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	CHECK(self[0] == '/');
	CHECK_EQ(run("/proc/self/exe", self, "exe"), 0);
	CHECK_EQ(t_mktmp("exec_proc_exe", dir, sizeof dir), 0);
	snprintf(link, sizeof link, "%s/alias", dir);
	CHECK_EQ(symlink(self, link), 0);
	CHECK_EQ(run(link, self, "alias"), 0);
	unlink(link);
	rmdir(dir);
	DONE();
}
