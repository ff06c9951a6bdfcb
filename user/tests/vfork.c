/* vfork: parent is suspended until the child _exits or execs. */
#include "t.h"

static volatile int shared_marker;

int main(int argc, char **argv, char **envp)
{
	char self[PATH_MAX];
	pid_t pid, parent = getpid();
	int st;

	if (argc > 1 && !strcmp(argv[1], "vfork-helper"))
		_exit(getppid() > 0 ? 33 : 1);

	t_self_path(argv[0], self, sizeof self);

	/* Child _exits; parent resumes with the child's pid and status. */
	shared_marker = 0;
	pid = vfork();
	if (pid == 0) {
		/* vfork children share memory with the parent on Linux. */
		shared_marker = 1234;
		_exit(getppid() == parent ? 17 : 18);
	}
	CHECK(pid > 0);
	/* The child ran to completion before we resumed. */
	CHECK_EQ(shared_marker, 1234);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 17);

	/* A vfork child that execs. */
	pid = vfork();
	if (pid == 0) {
		char *cargv[] = { self, "vfork-helper", NULL };
		execve(self, cargv, envp);
		_exit(127);
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 33);

	/* A vfork child that fails to exec still only _exits. */
	pid = vfork();
	if (pid == 0) {
		char *cargv[] = { "/nonexistent/prog", NULL };
		execve(cargv[0], cargv, envp);
		_exit(errno == ENOENT ? 44 : 45);
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 44);

	/* Raw vfork syscall is not portable to call from C safely; the libc
	 * vfork above is the vfork syscall on x86_64. */
	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);
	DONE();
}
