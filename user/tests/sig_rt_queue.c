/* Real-time signals queue: every instance is delivered, in order, with its
 * value; lower-numbered signals first; standard signals before RT ones.
 * (The handlers block all signals so that they run one at a time; see
 * sig_nested_delivery for what happens otherwise.) */
#include "next.h"

#define RT_A 40
#define RT_B 41

static volatile int seq_sig[32], seq_val[32];
static volatile int nseq;

static void on_rt(int s, siginfo_t *si, void *c)
{
	(void)c;
	if (nseq < 32) {
		seq_sig[nseq] = s;
		seq_val[nseq] = si->si_value.sival_int;
		nseq++;
	}
}

static int queue(pid_t pid, int sig, int val)
{
	union sigval v;

	v.sival_int = val;
	return sigqueue(pid, sig, v);
}

int main(void)
{
	sigset_t set;
	pid_t pid;
	int i;

	{
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_rt;
		sa.sa_flags = SA_SIGINFO;
		sigfillset(&sa.sa_mask);
		sigaction(RT_A, &sa, NULL);
		sigaction(RT_B, &sa, NULL);
		sigaction(SIGUSR1, &sa, NULL);
	}
	sigemptyset(&set);
	sigaddset(&set, RT_A);
	sigaddset(&set, RT_B);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);

	CHECK_EQ(queue(getpid(), RT_B, 100), 0);
	for (i = 1; i <= 5; i++)
		CHECK_EQ(queue(getpid(), RT_A, i), 0);
	CHECK_EQ(queue(getpid(), RT_B, 101), 0);
	CHECK_EQ(queue(getpid(), SIGUSR1, 7), 0);
	CHECK_EQ(queue(getpid(), SIGUSR1, 8), 0); /* not queued twice */
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);

	/* SIGUSR1 once, then RT_A x5 in order, then RT_B x2 in order. */
	CHECK_EQ(nseq, 8);
	CHECK_EQ(seq_sig[0], SIGUSR1);
	CHECK_EQ(seq_val[0], 7);
	for (i = 1; i <= 5; i++) {
		CHECK_EQ(seq_sig[i], RT_A);
		CHECK_EQ(seq_val[i], i);
	}
	CHECK_EQ(seq_sig[6], RT_B);
	CHECK_EQ(seq_val[6], 100);
	CHECK_EQ(seq_sig[7], RT_B);
	CHECK_EQ(seq_val[7], 101);

	/* Queued to another process, which collects them in order. */
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	pid = fork();
	if (pid == 0) {
		siginfo_t si;
		int k, bad = 0;

		for (k = 0; k < 10; k++) {
			if (sigwaitinfo(&set, &si) != RT_A || si.si_value.sival_int != k ||
			    si.si_code != SI_QUEUE || si.si_pid != getppid())
				bad = 1;
		}
		_exit(bad);
	}
	for (i = 0; i < 10; i++)
		CHECK_EQ(queue(pid, RT_A, i), 0);
	if (t_failures)
		kill(pid, SIGKILL); /* it would wait for ever */
	CHECK(t_wait_ok(pid));
	DONE();
}
