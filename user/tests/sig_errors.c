/* Signal syscall error cases that matter for delivery: SIGKILL/SIGSTOP
 * cannot be caught or ignored, bad signal numbers, set sizes, how values
 * and pointers. */
#include "next.h"

static void h(int s) { (void)s; }

int main(void)
{
	struct sigaction sa, old;
	unsigned long set = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(SIGSTOP, &sa, NULL), EINVAL);
	sa.sa_handler = SIG_IGN;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(SIGSTOP, &sa, NULL), EINVAL);
	/* Setting SIG_DFL on them is allowed? No: any new action is EINVAL. */
	sa.sa_handler = SIG_DFL;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	/* Querying them is fine. */
	CHECK_EQ(sigaction(SIGKILL, NULL, &old), 0);
	CHECK(old.sa_handler == SIG_DFL);

	/* Raw rt_sigaction. */
	CHECK_ERR(syscall(SYS_rt_sigaction, 0, NULL, &old, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, 65, NULL, &old, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, BAD_PTR2, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, BAD_PTR2, 8), EFAULT);

	/* rt_sigprocmask. */
	CHECK_ERR(syscall(SYS_rt_sigprocmask, 3, &set, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 16), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, BAD_PTR2, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, BAD_PTR2, 8), EFAULT);
	/* how is ignored when set is NULL. */
	CHECK_EQ(syscall(SYS_rt_sigprocmask, 77, NULL, &set, 8), 0);

	/* Sending. */
	CHECK_ERR(kill(getpid(), 65), EINVAL);
	CHECK_ERR(t_tgkill(getpid(), t_gettid(), 65), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, t_gettid(), -3), EINVAL);
	DONE();
}
