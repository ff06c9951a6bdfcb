/* A full queue of real-time signals (sigqueue(3), setrlimit(2)
 * RLIMIT_SIGPENDING): sigqueue and tgkill of a real-time signal get
 * EAGAIN at the target's RLIMIT_SIGPENDING, kill(2) of one succeeds and
 * the signal is lost; the signals that were queued all arrive, in order;
 * standard signals do not queue and are never refused. */
#include "next.h"

#define LIMIT 40

int main(void)
{
	struct rlimit rl = { LIMIT, LIMIT };
	union sigval v;
	siginfo_t si;
	sigset_t set;
	int n = 0, i, got = 0;
	struct timespec zero = { 0, 0 };

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	CHECK_EQ(setrlimit(RLIMIT_SIGPENDING, &rl), 0);

	for (i = 0; i < 10 * LIMIT; i++) {
		v.sival_int = i;
		if (sigqueue(getpid(), SIGRTMIN, v) != 0)
			break;
		n++;
	}
	/* Linux counts per user, so signals pending elsewhere for the same
	 * user lower the count; Trellis counts per process. */
	CHECK(n > 0 && n <= LIMIT);
	if (t_is_trellis())
		CHECK_EQ(n, LIMIT);
	CHECK_ERR(sigqueue(getpid(), SIGRTMIN, v), EAGAIN);
	CHECK_ERR(t_tgkill(getpid(), gettid(), SIGRTMIN), EAGAIN);
	CHECK_EQ(kill(getpid(), SIGRTMIN), 0);
	/* A standard signal is pending once, whatever the queue. */
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);

	/* Everything queued arrives, in order, and nothing else. */
	sigdelset(&set, SIGUSR1);
	for (i = 0; i < n; i++) {
		if (sigtimedwait(&set, &si, &zero) != SIGRTMIN)
			break;
		if (si.si_code != SI_QUEUE || si.si_value.sival_int != i)
			break;
		got++;
	}
	CHECK_EQ(got, n);
	CHECK_ERR(sigtimedwait(&set, &si, &zero), EAGAIN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(sigtimedwait(&set, &si, &zero), SIGUSR1);
	CHECK_ERR(sigtimedwait(&set, &si, &zero), EAGAIN);

	/* Room again. */
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN, v), 0);
	DONE();
}
