/* Stress: 1000 sequential fork/exit/wait cycles, each child exiting with
 * its own status, and no child left behind. */
#include "next.h"

int main(void)
{
	int i, bad = 0;

	for (i = 0; i < 1000; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0)
			_exit(i & 0xff);
		if (pid < 0) {
			CHECK(pid > 0);
			break;
		}
		st = t_wait(pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != (i & 0xff))
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_ERR(wait4(-1, NULL, WNOHANG, NULL), ECHILD);
	DONE();
}
