/* Which blocking calls a handled signal interrupts (EINTR) and which
 * SA_RESTART restarts: read on a pipe and wait4 restart; nanosleep, pause,
 * poll, select and sigsuspend-like calls always fail with EINTR.  Signals
 * that are ignored (explicitly or by default) and stop/continue never
 * interrupt. */
#include "next.h"
#include <sys/select.h>

static volatile int *hits; /* shared with the poker process */

static void on_usr1(int s)
{
	(void)s;
	(*hits)++;
}

/*
 * Poker process: `times` rounds of "wait until the parent sleeps, send
 * SIGUSR1, wait for its handler to run"; then write one byte to fd (if
 * >= 0) to release the parent.  Where the parent expects EINTR the byte
 * is a safety net: on a kernel that wrongly restarts the call, the call
 * returns the byte (and the check fails) instead of hanging.
 */
static pid_t poker(int times, int fd)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		int i, k, base = *hits;

		for (i = 0; i < times; i++) {
			if (!t_wait_proc_state(parent, "S"))
				t_msleep(30);
			kill(parent, SIGUSR1);
			for (k = 0; k < 30000 && *hits <= base + i; k++)
				t_msleep(1);
		}
		if (fd >= 0) {
			if (!t_wait_proc_state(parent, "S"))
				t_msleep(30);
			(void)!write(fd, "r", 1);
		}
		_exit(0);
	}
	return pid;
}

int main(void)
{
	int p[2], st;
	char c;
	pid_t pk, kid;
	struct timespec req, rem;

	hits = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(hits != MAP_FAILED);
	if (hits == MAP_FAILED)
		DONE();
	CHECK_EQ(pipe(p), 0);

	/* read: EINTR without SA_RESTART... */
	CHECK_EQ(t_sigaction(SIGUSR1, on_usr1, 0), 0);
	pk = poker(1, p[1]);
	CHECK_ERR(read(p[0], &c, 1), EINTR);
	CHECK(t_wait_ok(pk));
	t_drain(p[0]);

	/* ...restarted with it (three interruptions, then data). */
	CHECK_EQ(t_sigaction(SIGUSR1, on_usr1, SA_RESTART), 0);
	*hits = 0;
	pk = poker(3, p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'r');
	CHECK_EQ(*hits, 3);
	CHECK(t_wait_ok(pk));

	/* wait4: restarted under SA_RESTART, EINTR without. */
	kid = fork();
	if (kid == 0) {
		t_await(p[0]);
		_exit(4);
	}
	pk = poker(2, p[1]);
	CHECK_EQ(wait4(kid, &st, 0, NULL), kid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 4);
	CHECK(t_wait_ok(pk));
	CHECK_EQ(t_sigaction(SIGUSR1, on_usr1, 0), 0);
	kid = fork();
	if (kid == 0) {
		t_await(p[0]);
		_exit(5);
	}
	pk = poker(1, p[1]); /* its byte then releases the kid */
	CHECK_ERR(wait4(kid, &st, 0, NULL), EINTR);
	CHECK(t_wait_ok(pk));
	CHECK_EQ(wait4(kid, &st, 0, NULL), kid);

	/* nanosleep: EINTR even with SA_RESTART, with the time left. */
	CHECK_EQ(t_sigaction(SIGUSR1, on_usr1, SA_RESTART), 0);
	pk = poker(1, -1);
	req.tv_sec = 20;
	req.tv_nsec = 0;
	rem.tv_sec = rem.tv_nsec = -1;
	CHECK_ERR(syscall(SYS_nanosleep, &req, &rem), EINTR);
	CHECK(rem.tv_sec >= 0 && rem.tv_sec <= 20);
	CHECK(rem.tv_nsec >= 0 && rem.tv_nsec < 1000000000);
	CHECK(t_wait_ok(pk));

	/* pause: always EINTR. */
	pk = poker(1, -1);
	CHECK_ERR(pause(), EINTR);
	CHECK(t_wait_ok(pk));

	/* poll and select: EINTR even with SA_RESTART. */
	{
		struct pollfd pf = { p[0], POLLIN, 0 };
		fd_set rs;

		pk = poker(1, p[1]);
		CHECK_ERR(poll(&pf, 1, -1), EINTR);
		CHECK(t_wait_ok(pk));
		t_drain(p[0]);
		FD_ZERO(&rs);
		FD_SET(p[0], &rs);
		pk = poker(1, p[1]);
		CHECK_ERR(select(p[0] + 1, &rs, NULL, NULL, NULL), EINTR);
		CHECK(t_wait_ok(pk));
		t_drain(p[0]);
	}

	/* Ignored signals do not interrupt: a child blocked in read gets its
	 * data in the end although SIGUSR1 (SIG_IGN) and SIGCHLD/SIGWINCH
	 * (default ignore) arrive, and a stop/continue cycle too. */
	{
		int q[2];

		CHECK_EQ(pipe(q), 0);
		kid = fork();
		if (kid == 0) {
			ssize_t r;

			signal(SIGUSR1, SIG_IGN);
			close(q[1]);
			r = read(q[0], &c, 1);
			_exit(r == 1 ? 0 : 10 + errno);
		}
		close(q[0]);
		t_wait_proc_state(kid, "S");
		kill(kid, SIGUSR1);
		kill(kid, SIGWINCH);
		kill(kid, SIGCHLD);
		kill(kid, SIGSTOP);
		CHECK_EQ(wait4(kid, &st, WUNTRACED, NULL), kid);
		CHECK(WIFSTOPPED(st));
		kill(kid, SIGCONT);
		t_wait_proc_state(kid, "S");
		t_msleep(10);
		CHECK_EQ(write(q[1], "y", 1), 1);
		CHECK(t_wait_ok(kid));
		close(q[1]);
	}
	DONE();
}
