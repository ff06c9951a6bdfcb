/* Exit statuses through wait4: WIFEXITED/WEXITSTATUS for several codes. */
#include "t.h"
#include <sys/resource.h>

static int status_of(int code, int how)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (how == 0)
			_exit(code);
		else if (how == 1)
			syscall(SYS_exit_group, code);
		else
			exit(code);
		_exit(99); /* not reached */
	}
	if (pid < 0)
		return -1;
	return t_wait(pid);
}

int main(void)
{
	static const int codes[] = { 0, 1, 2, 42, 127, 128, 200, 255 };
	struct rusage ru;
	unsigned i;
	int how, st;
	pid_t pid;

	for (how = 0; how < 3; how++) {
		for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
			st = status_of(codes[i], how);
			CHECK(st != -1);
			CHECK(WIFEXITED(st));
			CHECK(!WIFSIGNALED(st));
			CHECK(!WIFSTOPPED(st));
			CHECK_EQ(WEXITSTATUS(st), codes[i]);
		}
	}

	/* Only the low 8 bits of the status survive. */
	st = status_of(256, 0);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	st = status_of(0x1234, 1);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0x34);
	st = status_of(-1, 0);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 255);

	/* The raw status encoding: exit code in bits 8..15, low 7 bits zero. */
	st = status_of(42, 0);
	CHECK_EQ(st, 42 << 8);

	/* wait4 with an rusage pointer. */
	pid = fork();
	if (pid == 0)
		_exit(7);
	CHECK(pid > 0);
	memset(&ru, 0xff, sizeof ru);
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	CHECK(ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec >= 0 &&
	      ru.ru_utime.tv_usec < 1000000);
	CHECK(ru.ru_stime.tv_sec >= 0 && ru.ru_stime.tv_usec >= 0 &&
	      ru.ru_stime.tv_usec < 1000000);

	/* NULL status pointer is allowed. */
	pid = fork();
	if (pid == 0)
		_exit(9);
	CHECK(pid > 0);
	CHECK_EQ(wait4(pid, NULL, 0, NULL), pid);

	DONE();
}
