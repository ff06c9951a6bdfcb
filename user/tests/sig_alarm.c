/* alarm(2): returns the seconds left of the previous alarm, alarm(0)
 * cancels, SIGALRM arrives no earlier than asked, the default action
 * terminates, and a fork child does not inherit it. */
#include "next.h"

static volatile int rang;

static void on_alrm(int s)
{
	(void)s;
	rang++;
}

int main(void)
{
	long long t0;
	unsigned left;
	pid_t pid;
	int st;

	CHECK_EQ(alarm(0), 0);
	CHECK_EQ(alarm(100), 0);
	left = alarm(50);
	CHECK(left >= 99 && left <= 100);
	left = alarm(0);
	CHECK(left >= 49 && left <= 50);
	CHECK_EQ(alarm(0), 0);

	/* Not inherited by fork. */
	alarm(100);
	pid = fork();
	if (pid == 0)
		_exit(alarm(0) == 0 ? 0 : 1);
	CHECK(t_wait_ok(pid));
	alarm(0);

	/* It rings. */
	CHECK_EQ(t_sigaction(SIGALRM, on_alrm, 0), 0);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	alarm(1);
	while (!rang)
		pause();
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 990000000LL);
	CHECK_EQ(rang, 1);
	CHECK_EQ(alarm(0), 0);

	/* Default action: terminate. */
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(1);
		for (;;)
			pause();
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM);
	DONE();
}
