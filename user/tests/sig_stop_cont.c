/* Stop/continue interplay: SIGCONT resumes and runs its handler; a new
 * stop signal discards a pending SIGCONT and SIGCONT discards pending stop
 * signals; a stopped process keeps signals pending until continued
 * (except SIGKILL). A stop and continue without handlers does not
 * interrupt pause() or nanosleep() (which sleeps its full time); a stop
 * halts every thread; a stop not yet collected
 * by wait is no longer reported once continued, and a continue not yet
 * collected is no longer reported once stopped again. */
#include "next.h"
#include <sys/mman.h>

static void on_usr1(int s)
{
	(void)s;
}

static void *spin(void *arg)
{
	volatile long *counter = arg;

	for (;;)
		(*counter)++;
	return NULL;
}

/* Waits (bounded) until *counter moves past `than`. */
static int counter_moves(volatile long *counter, long than)
{
	int i;

	for (i = 0; i < 5000; i++) {
		if (*counter > than)
			return 1;
		t_msleep(1);
	}
	return 0;
}

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

	/* pause() sleeps on through a stop and continue (no handler ran),
	 * and returns for a caught signal. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		t_sigaction(SIGUSR1, on_usr1, 0);
		(void)!write(p[1], "R", 1);
		pause();
		(void)!write(p[1], "P", 1);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1);
	t_wait_proc_state(pid, "S");
	kill(pid, SIGSTOP);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	kill(pid, SIGCONT);
	CHECK_EQ(wait4(pid, &st, WCONTINUED, NULL), pid);
	CHECK(WIFCONTINUED(st));
	{
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		CHECK_EQ(poll(&pfd, 1, 100), 0);
	}
	kill(pid, SIGUSR1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'P');
	CHECK(t_wait_ok(pid));
	close(p[0]);

	/* nanosleep goes on to its full time across a stop and continue. */
	pid = fork();
	if (pid == 0) {
		struct timespec req = { 0, 300 * 1000000L }, rem = { 9, 9 };
		struct timespec t0, t1;
		long ms;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = nanosleep(&req, &rem);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		     (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (r != 0)
			_exit(1);
		if (ms < 290)
			_exit(2);
		_exit(0);
	}
	t_wait_proc_state(pid, "S");
	kill(pid, SIGSTOP);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	kill(pid, SIGCONT);
	CHECK(t_wait_ok(pid));

	/* Every thread stops: a spinning second thread makes no progress
	 * while the process is stopped, and runs again once continued. */
	{
		volatile long *counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		long c1, c2;

		CHECK(counter != MAP_FAILED);
		pid = fork();
		if (pid == 0) {
			pthread_t t;

			pthread_create(&t, NULL, spin, (void *)counter);
			for (;;)
				pause();
		}
		CHECK(counter_moves(counter, 0));
		kill(pid, SIGSTOP);
		CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
		CHECK(WIFSTOPPED(st));
		c1 = *counter;
		t_msleep(50);
		c2 = *counter;
		CHECK_EQ(c1, c2);
		kill(pid, SIGCONT);
		CHECK(counter_moves(counter, c2));
		kill(pid, SIGKILL);
		t_wait(pid);
		munmap((void *)counter, 4096);
	}

	/* Uncollected state changes are replaced by the next one. */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	kill(pid, SIGSTOP);
	t_wait_proc_state(pid, "T");
	kill(pid, SIGCONT);
	t_msleep(20);
	/* The stop was never collected: gone once continued. */
	CHECK_EQ(wait4(pid, &st, WUNTRACED | WNOHANG, NULL), 0);
	kill(pid, SIGSTOP);
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	CHECK(WIFSTOPPED(st));
	/* The continue was never collected either: gone once stopped. */
	CHECK_EQ(wait4(pid, &st, WCONTINUED | WNOHANG, NULL), 0);
	kill(pid, SIGCONT);
	CHECK_EQ(wait4(pid, &st, WCONTINUED, NULL), pid);
	CHECK(WIFCONTINUED(st));
	kill(pid, SIGKILL);
	t_wait(pid);
	DONE();
}

void on_cont_write(int s)
{
	(void)s;
	(void)!write(100, "C", 1);
}
