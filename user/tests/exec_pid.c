/* execve keeps the pid, parent, process group, session, cwd, umask,
 * rlimits and credentials; the parent reaps the new image's status. */
#include "next.h"

int main(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX];
	pid_t pid;
	int st;

	if (argc == 8 && !strcmp(argv[1], "after")) {
		char cwd[PATH_MAX];
		struct rlimit rl;
		mode_t m;

		CHECK_EQ(getpid(), atoi(argv[2]));
		CHECK_EQ(getppid(), atoi(argv[3]));
		CHECK_EQ(getpgid(0), atoi(argv[4]));
		CHECK_EQ(getsid(0), atoi(argv[5]));
		CHECK(getcwd(cwd, sizeof cwd) != NULL);
		CHECK(strcmp(cwd, argv[6]) == 0);
		m = umask(0);
		CHECK_EQ(m, 0027);
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
		CHECK_EQ(rl.rlim_cur, 77);
		CHECK_EQ(t_gettid(), getpid());
		CHECK_EQ((long)getuid(), atol(argv[7]));
		return t_failures ? 1 : 9;
	}

	t_self_path(argv[0], self, sizeof self);
	if (t_mktmp("exec_pid", dir, sizeof dir) != 0)
		DONE();
	pid = fork();
	if (pid == 0) {
		char a[5][24];
		char *av[] = { self, "after", a[0], a[1], a[2], a[3], dir,
			       a[4], NULL };
		struct rlimit rl;

		setpgid(0, 0);
		if (chdir(dir) != 0)
			_exit(120);
		umask(0027);
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = 77;
		setrlimit(RLIMIT_NOFILE, &rl);
		snprintf(a[0], 24, "%d", (int)getpid());
		snprintf(a[1], 24, "%d", (int)getppid());
		snprintf(a[2], 24, "%d", (int)getpgid(0));
		snprintf(a[3], 24, "%d", (int)getsid(0));
		snprintf(a[4], 24, "%ld", (long)getuid());
		execv(self, av);
		_exit(127);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 9);
	t_rmtree(dir);
	DONE();
}
