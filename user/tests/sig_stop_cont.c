/* Stop/continue interplay: SIGCONT resumes and runs its handler; a new
 * stop signal discards a pending SIGCONT and SIGCONT discards pending stop
 * signals; a stopped process keeps signals pending until continued
 * (except SIGKILL). */
#include "next.h"

int main(void)
{
	int p[2], st;
	pid_t pid;
	char c;

	/* A signal sent to a stopped process waits until it is continued. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	kill(pid, SIGSTOP);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	/* While stopped, SIGTERM stays pending (it does not kill yet). */
	kill(pid, SIGTERM);
	t_msleep(20);
	CHECK_EQ(wait4(pid, &st, WNOHANG, NULL), 0);
	kill(pid, SIGCONT);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	close(p[1]);

	/* Pending-set interplay in one process. */
	pid = fork();
	if (pid == 0) {
		sigset_t set, pend;

		setpgid(0, 0);
		sigemptyset(&set);
		sigaddset(&set, SIGTSTP);
		sigaddset(&set, SIGCONT);
		sigprocmask(SIG_BLOCK, &set, NULL);
		/* A stop signal, then SIGCONT: the stop is discarded. */
		t_raise(SIGTSTP);
		sigpending(&pend);
		if (!sigismember(&pend, SIGTSTP))
			_exit(2);
		t_raise(SIGCONT);
		sigpending(&pend);
		if (sigismember(&pend, SIGTSTP))
			_exit(3);
		if (!sigismember(&pend, SIGCONT))
			_exit(4);
		/* A stop signal discards the pending SIGCONT. */
		t_raise(SIGTSTP);
		sigpending(&pend);
		if (sigismember(&pend, SIGCONT))
			_exit(5);
		_exit(0);
	}
	CHECK(t_wait_ok(pid));

	/* A SIGCONT handler runs after continuing. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		static int fd;

		fd = p[1];
		close(p[0]);
		setpgid(0, 0);
		{
			struct sigaction sa;
			extern void on_cont_write(int);

			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_cont_write;
			sigaction(SIGCONT, &sa, NULL);
		}
		dup2(fd, 100);
		(void)!write(100, "R", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	setpgid(pid, pid);
	/* Wait until the handler is installed. */
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'R');
	kill(pid, SIGSTOP);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	kill(pid, SIGCONT);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'C');
	kill(pid, SIGKILL);
	t_wait(pid);
	close(p[0]);
	DONE();
}

void on_cont_write(int s)
{
	(void)s;
	(void)!write(100, "C", 1);
}
