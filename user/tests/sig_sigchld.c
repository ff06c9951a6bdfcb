/* SIGCHLD on child state changes with siginfo (CLD_EXITED, CLD_KILLED,
 * CLD_STOPPED, CLD_CONTINUED); SA_NOCLDSTOP; SIG_IGN and SA_NOCLDWAIT make
 * children reap themselves (wait then fails with ECHILD). */
#include "next.h"

static volatile int n;
static volatile int codes[16], statuses[16], pids[16];

static void on_chld(int s, siginfo_t *si, void *c)
{
	(void)s;
	(void)c;
	if (n < 16) {
		codes[n] = si->si_code;
		statuses[n] = si->si_status;
		pids[n] = si->si_pid;
		n++;
	}
}

/* Wait (sigsuspend) until n reaches want. SIGCHLD is blocked outside. */
static void wait_n(int want)
{
	sigset_t empty;

	sigemptyset(&empty);
	while (n < want)
		sigsuspend(&empty);
}

int main(void)
{
	pid_t pid;
	int st;

	t_block(SIGCHLD, SIG_BLOCK);
	CHECK_EQ(t_siginfo_action(SIGCHLD, on_chld, SA_RESTART), 0);

	pid = fork();
	if (pid == 0)
		_exit(5);
	wait_n(1);
	CHECK_EQ(codes[0], CLD_EXITED);
	CHECK_EQ(statuses[0], 5);
	CHECK_EQ(pids[0], pid);
	/* Still a zombie until waited for. */
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);

	/* Killed, stopped, continued. */
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	n = 0;
	kill(pid, SIGSTOP);
	wait_n(1);
	CHECK_EQ(codes[0], CLD_STOPPED);
	CHECK_EQ(statuses[0], SIGSTOP);
	CHECK_EQ(pids[0], pid);
	kill(pid, SIGCONT);
	wait_n(2);
	CHECK_EQ(codes[1], CLD_CONTINUED);
	CHECK_EQ(statuses[1], SIGCONT);
	kill(pid, SIGKILL);
	wait_n(3);
	CHECK_EQ(codes[2], CLD_KILLED);
	CHECK_EQ(statuses[2], SIGKILL);
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);

	/* SA_NOCLDSTOP: only the exit is signalled. */
	CHECK_EQ(t_siginfo_action(SIGCHLD, on_chld, SA_NOCLDSTOP), 0);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	n = 0;
	kill(pid, SIGSTOP);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	kill(pid, SIGCONT);
	CHECK_EQ(wait4(pid, &st, WCONTINUED, NULL), pid);
	kill(pid, SIGTERM);
	wait_n(1);
	CHECK_EQ(n, 1);
	CHECK_EQ(codes[0], CLD_KILLED);
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	t_block(SIGCHLD, SIG_UNBLOCK);

	/* SIG_IGN: no zombies; wait blocks until the children are gone and
	 * then fails with ECHILD. */
	signal(SIGCHLD, SIG_IGN);
	pid = fork();
	if (pid == 0)
		_exit(1);
	CHECK_ERR(wait4(pid, &st, 0, NULL), ECHILD);
	CHECK_ERR(kill(pid, 0), ESRCH);

	/* SA_NOCLDWAIT with a handler: no zombies, but (on Linux) the
	 * handler still runs. */
	n = 0;
	t_block(SIGCHLD, SIG_BLOCK);
	CHECK_EQ(t_siginfo_action(SIGCHLD, on_chld, SA_NOCLDWAIT), 0);
	pid = fork();
	if (pid == 0)
		_exit(2);
	wait_n(1);
	CHECK_EQ(codes[0], CLD_EXITED);
	t_block(SIGCHLD, SIG_UNBLOCK);
	CHECK_ERR(wait4(pid, &st, 0, NULL), ECHILD);
	signal(SIGCHLD, SIG_DFL);

	/* Default disposition: children are zombies and waitable. */
	pid = fork();
	if (pid == 0)
		_exit(3);
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	CHECK_EQ(WEXITSTATUS(st), 3);
	DONE();
}
