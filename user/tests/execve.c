/* execve: argv/envp pass-through, pid preserved, exit status of new image. */
#include "t.h"

static int helper(int argc, char **argv, char **envp)
{
	/* Mode "args": expect exactly these arguments and environment. */
	if (!strcmp(argv[1], "args")) {
		int bad = 0, n = 0;

		if (argc != 5)
			bad |= 1;
		else if (strcmp(argv[2], "second arg") || strcmp(argv[3], "") ||
			 strcmp(argv[4], "x=y z"))
			bad |= 2;
		if (argv[argc] != NULL)
			bad |= 4;
		while (envp[n])
			n++;
		if (n != 3)
			bad |= 8;
		else if (strcmp(envp[0], "TRELLIS_A=1") ||
			 strcmp(envp[1], "TRELLIS_B=two words") ||
			 strcmp(envp[2], "EMPTY="))
			bad |= 16;
		if (!getenv("TRELLIS_B") || strcmp(getenv("TRELLIS_B"), "two words"))
			bad |= 32;
		return bad ? 100 + bad : 0;
	}
	/* Mode "pid": argv[2] is the expected pid, argv[3] the expected ppid. */
	if (!strcmp(argv[1], "pid") && argc == 4) {
		if (getpid() != (pid_t)atol(argv[2]))
			return 2;
		if (getppid() != (pid_t)atol(argv[3]))
			return 3;
		return 0;
	}
	/* Mode "empty": no environment at all. */
	if (!strcmp(argv[1], "empty"))
		return (argc == 2 && envp[0] == NULL) ? 0 : 4;
	/* Mode "code": exit with the number in argv[2]. */
	if (!strcmp(argv[1], "code") && argc == 3)
		return atoi(argv[2]);
	return 99;
}

int main(int argc, char **argv, char **envp)
{
	char self[PATH_MAX], pidbuf[32], ppidbuf[32];
	pid_t pid;
	int st;

	if (argc > 1)
		return helper(argc, argv, envp);
	t_self_path(argv[0], self, sizeof self);

	/* argv and envp arrive intact. */
	pid = fork();
	if (pid == 0) {
		char *a[] = { self, "args", "second arg", "", "x=y z", NULL };
		char *e[] = { "TRELLIS_A=1", "TRELLIS_B=two words", "EMPTY=", NULL };
		execve(self, a, e);
		_exit(127);
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* The pid and parent pid survive exec. */
	pid = fork();
	if (pid == 0) {
		char *e[] = { NULL };
		char *a[] = { self, "pid", pidbuf, ppidbuf, NULL };
		snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());
		snprintf(ppidbuf, sizeof ppidbuf, "%d", (int)getppid());
		execve(self, a, e);
		_exit(127);
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* An empty environment. */
	pid = fork();
	if (pid == 0) {
		char *a[] = { self, "empty", NULL };
		char *e[] = { NULL };
		syscall(SYS_execve, self, a, e);
		_exit(127);
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* The new image's exit status is what wait4 reports. */
	pid = fork();
	if (pid == 0) {
		char *a[] = { self, "code", "42", NULL };
		execve(self, a, envp);
		_exit(127);
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 42);

	/* argv[0] need not match the path. */
	pid = fork();
	if (pid == 0) {
		char *a[] = { "some-other-name", "code", "7", NULL };
		execve(self, a, envp);
		_exit(127);
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 7);

	DONE();
}
