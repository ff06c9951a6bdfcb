/* exit vs exit_group (single-threaded: both end the process), atexit. */
#include "t.h"

static char flag_path[256];

static void at_exit_handler(void)
{
	t_touch(flag_path);
}

static int run(int how, int code)
{
	pid_t pid = fork();

	if (pid == 0) {
		atexit(at_exit_handler);
		switch (how) {
		case 0:
			syscall(SYS_exit, code);
			break;
		case 1:
			syscall(SYS_exit_group, code);
			break;
		case 2:
			_exit(code);
			break;
		case 3:
			exit(code);
			break;
		}
		_exit(99);
	}
	if (pid < 0)
		return -1;
	return t_wait(pid);
}

int main(void)
{
	char dir[128];
	int st;

	if (t_mktmp("exit_group", dir, sizeof dir))
		DONE();
	t_join(flag_path, sizeof flag_path, dir, "atexit-ran");

	/* Raw exit in a single-threaded process ends the process. */
	st = run(0, 5);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 5);
	/* No atexit handlers for raw syscalls. */
	CHECK_ERR(access(flag_path, F_OK), ENOENT);

	/* Raw exit_group. */
	st = run(1, 6);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 6);
	CHECK_ERR(access(flag_path, F_OK), ENOENT);

	/* _exit skips atexit handlers. */
	st = run(2, 7);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 7);
	CHECK_ERR(access(flag_path, F_OK), ENOENT);

	/* exit() runs them, then ends the process with the code. */
	st = run(3, 8);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 8);
	CHECK_EQ(access(flag_path, F_OK), 0);
	unlink(flag_path);

	/* Only the low byte of the code is reported, for both syscalls. */
	st = run(0, 0x101);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 1);
	st = run(1, 0x2ff);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0xff);

	t_rmtree(dir);
	DONE();
}
