/* siginfo contents for kill (SI_USER), tgkill/tkill (SI_TKILL), sigqueue
 * (SI_QUEUE with a value), signals from another process, and
 * rt_sigqueueinfo permission rules. */
#include "next.h"

static volatile siginfo_t last;
static volatile int count;
static volatile int ctx_nonnull;

static void on_sig(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	last = *si;
	ctx_nonnull = ctx != NULL;
	count++;
}

int main(void)
{
	union sigval v;
	siginfo_t si;
	pid_t pid;

	CHECK_EQ(t_siginfo_action(SIGUSR1, on_sig, 0), 0);

	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(count, 1);
	CHECK_EQ(last.si_signo, SIGUSR1);
	CHECK_EQ(last.si_code, SI_USER);
	CHECK_EQ(last.si_pid, getpid());
	CHECK_EQ(last.si_uid, getuid());
	CHECK_EQ(last.si_errno, 0);
	CHECK(ctx_nonnull);

	CHECK_EQ(t_tgkill(getpid(), t_gettid(), SIGUSR1), 0);
	CHECK_EQ(count, 2);
	CHECK_EQ(last.si_code, SI_TKILL);
	CHECK_EQ(last.si_pid, getpid());
	CHECK_EQ(last.si_uid, getuid());

	CHECK_EQ(syscall(SYS_tkill, t_gettid(), SIGUSR1), 0);
	CHECK_EQ(last.si_code, SI_TKILL);

	v.sival_int = 4242;
	CHECK_EQ(sigqueue(getpid(), SIGUSR1, v), 0);
	CHECK_EQ(last.si_code, SI_QUEUE);
	CHECK_EQ(last.si_value.sival_int, 4242);
	CHECK_EQ(last.si_pid, getpid());

	/* From a child: its pid. */
	count = 0;
	CHECK_EQ(t_block(SIGUSR1, SIG_BLOCK), 0);
	pid = fork();
	if (pid == 0) {
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	CHECK(t_wait_ok(pid));
	CHECK_EQ(t_block(SIGUSR1, SIG_UNBLOCK), 0);
	CHECK_EQ(count, 1);
	CHECK_EQ(last.si_pid, pid);
	CHECK_EQ(last.si_code, SI_USER);

	/* rt_sigqueueinfo: to ourselves any code goes; to another process a
	 * non-negative code or SI_TKILL is EPERM. */
	memset(&si, 0, sizeof si);
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = 7;
	CHECK_EQ(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si), 0);
	CHECK_EQ(last.si_code, SI_QUEUE);
	CHECK_EQ(last.si_value.sival_int, 7);
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	si.si_code = SI_USER;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), EPERM);
	si.si_code = SI_TKILL;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), EPERM);
	si.si_code = SI_QUEUE;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, 0x41, &si), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, 0x3ffffff0, SIGUSR1, &si), ESRCH);
	kill(pid, SIGKILL);
	t_wait(pid);
	DONE();
}
