/* Stop and continue: WUNTRACED/WSTOPPED and WCONTINUED reports, exact
 * status words (0x137f-style and 0xffff), each reported once, waitid codes,
 * killing a stopped child, and that a stopped child really does not run. */
#include "next.h"

int main(void)
{
	volatile unsigned long *ctr = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	siginfo_t si;
	pid_t pid;
	int st;

	CHECK(ctr != MAP_FAILED);
	if (ctr == MAP_FAILED)
		DONE();
	pid = fork();
	if (pid == 0) {
		/* Own group: SIGTSTP & co. are not discarded as they would be
		 * in an orphaned group. */
		setpgid(0, 0);
		for (;;) {
			(*ctr)++;
			t_msleep(1);
		}
	}
	setpgid(pid, pid);

	/* Not stopped yet: WNOHANG|WUNTRACED reports nothing. */
	CHECK_EQ(wait4(pid, &st, WNOHANG | WUNTRACED, NULL), 0);

	CHECK_EQ(kill(pid, SIGSTOP), 0);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_EQ(WSTOPSIG(st), SIGSTOP);
	CHECK_EQ(st, 0x137f);
	CHECK(!WIFEXITED(st) && !WIFSIGNALED(st));
	/* Reported once only. */
	CHECK_EQ(wait4(pid, &st, WNOHANG | WUNTRACED, NULL), 0);
	/* Without WUNTRACED a stop is not reported. */
	CHECK_EQ(wait4(pid, &st, WNOHANG, NULL), 0);
	/* It does not run while stopped. */
	{
		unsigned long c1 = *ctr, c2;

		t_msleep(50);
		c2 = *ctr;
		CHECK_EQ(c2, c1);
	}

	CHECK_EQ(kill(pid, SIGCONT), 0);
	CHECK_EQ(wait4(pid, &st, WCONTINUED, NULL), pid);
	CHECK(WIFCONTINUED(st));
	CHECK_EQ(st, 0xffff);
	CHECK_EQ(wait4(pid, &st, WNOHANG | WCONTINUED, NULL), 0);
	/* It runs again. */
	{
		unsigned long c1 = *ctr;
		int i;

		for (i = 0; i < 10000 && *ctr == c1; i++)
			t_msleep(1);
		CHECK(*ctr != c1);
	}

	/* SIGTSTP, SIGTTIN, SIGTTOU stop by default too; waitid codes. */
	{
		static const int sigs[] = { SIGTSTP, SIGTTIN, SIGTTOU };
		int i;

		for (i = 0; i < 3; i++) {
			CHECK_EQ(kill(pid, sigs[i]), 0);
			memset(&si, 0, sizeof si);
			CHECK_EQ(waitid(P_PID, pid, &si, WSTOPPED), 0);
			CHECK_EQ(si.si_code, CLD_STOPPED);
			CHECK_EQ(si.si_status, sigs[i]);
			CHECK_EQ(si.si_pid, pid);
			CHECK_EQ(kill(pid, SIGCONT), 0);
			memset(&si, 0, sizeof si);
			CHECK_EQ(waitid(P_PID, pid, &si, WCONTINUED), 0);
			CHECK_EQ(si.si_code, CLD_CONTINUED);
			CHECK_EQ(si.si_status, SIGCONT);
		}
	}

	/* WNOWAIT on a stop keeps it reportable. */
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PID, pid, &si, WSTOPPED | WNOWAIT), 0);
	CHECK_EQ(si.si_code, CLD_STOPPED);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);

	/* A second SIGSTOP to a stopped child reports nothing new. */
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	t_msleep(10);
	CHECK_EQ(wait4(pid, &st, WNOHANG | WUNTRACED, NULL), 0);

	/* SIGKILL ends a stopped child. */
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	DONE();
}
