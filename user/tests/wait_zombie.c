/* Zombies: an exited child stays until reaped (kill(pid, 0) works, /proc
 * shows state Z and its ppid), WNOWAIT peeks, reaping removes it. */
#include "next.h"

int main(void)
{
	pid_t pid, kids[5];
	siginfo_t si;
	char path[64];
	int st, i, seen[5] = { 0 };

	pid = fork();
	if (pid == 0)
		_exit(17);
	CHECK(pid > 0);
	/* Until reaped, the pid exists. */
	if (t_wait_proc_state(pid, "Z")) {
		char buf[512], *p;

		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		CHECK(t_read_file(path, buf, sizeof buf) > 0);
		p = strrchr(buf, ')');
		CHECK(p != NULL);
		if (p)
			CHECK_EQ(atoi(p + 4), getpid()); /* ppid field */
	} else {
		t_note("no /proc/<pid>/stat: zombie state not checked");
		t_msleep(50);
	}
	CHECK_EQ(kill(pid, 0), 0);

	/* WNOWAIT: report without reaping, twice. */
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 17);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_ALL, 0, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(kill(pid, 0), 0);

	/* Reap; then it is gone. */
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 17);
	CHECK_ERR(kill(pid, 0), ESRCH);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	CHECK(access(path, F_OK) != 0);

	/* Several zombies reaped with -1, each exactly once. */
	for (i = 0; i < 5; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(i + 1);
	}
	for (i = 0; i < 5; i++) {
		pid_t r = wait4(-1, &st, 0, NULL);
		int j;

		for (j = 0; j < 5; j++)
			if (r == kids[j]) {
				CHECK_EQ(WEXITSTATUS(st), j + 1);
				seen[j]++;
			}
	}
	for (i = 0; i < 5; i++)
		CHECK_EQ(seen[i], 1);
	CHECK_ERR(wait4(-1, &st, WNOHANG, NULL), ECHILD);
	DONE();
}
