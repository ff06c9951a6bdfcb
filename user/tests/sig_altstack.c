/* sigaltstack and SA_ONSTACK: handlers run on the alternate stack only when
 * asked, SS_ONSTACK is reported inside, it cannot be changed while in use,
 * a stack overflow can be caught there, and the error cases. The frame's
 * uc_stack holds the alternate stack and rt_sigreturn installs what it
 * holds then; SS_AUTODISARM disarms the stack while a handler runs; a
 * fork child keeps the alternate stack. */
#include "next.h"
#include <ucontext.h>

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif

#define ALT_SIZE 65536

static char *alt;
static volatile uintptr_t handler_sp;
static volatile int onstack_flag, change_errno;

static void on_sig(int s)
{
	volatile char here;
	stack_t cur, ns;

	(void)s;
	handler_sp = (uintptr_t)&here;
	sigaltstack(NULL, &cur);
	onstack_flag = (cur.ss_flags & SS_ONSTACK) != 0;
	ns.ss_sp = alt;
	ns.ss_size = ALT_SIZE;
	ns.ss_flags = 0;
	change_errno = sigaltstack(&ns, NULL) == 0 ? 0 : errno;
}

static int in_alt(uintptr_t p)
{
	return p >= (uintptr_t)alt && p < (uintptr_t)alt + ALT_SIZE;
}

static void on_segv(int s)
{
	volatile char here;

	(void)s;
	_exit(in_alt((uintptr_t)&here) ? 42 : 43);
}

static char *alt2;
static volatile int uc_mode;
static volatile void *uc_sp;
static volatile size_t uc_size;
static volatile int inner_flags, inner_on_alt;

/* Records the frame's uc_stack and what sigaltstack says inside, then
 * edits uc_stack as uc_mode asks. */
static void on_uc(int s, siginfo_t *si, void *vctx)
{
	ucontext_t *uc = vctx;
	volatile char here;
	stack_t cur;

	(void)s;
	(void)si;
	uc_sp = uc->uc_stack.ss_sp;
	uc_size = uc->uc_stack.ss_size;
	sigaltstack(NULL, &cur);
	inner_flags = cur.ss_flags;
	inner_on_alt = in_alt((uintptr_t)&here);
	if (uc_mode == 1) {
		uc->uc_stack.ss_sp = alt2;
		uc->uc_stack.ss_size = ALT_SIZE;
		uc->uc_stack.ss_flags = 0;
	} else if (uc_mode == 2) {
		uc->uc_stack.ss_flags = SS_DISABLE;
	}
}

static volatile int stop_depth = -1; /* never reached */

static int recurse(int n)
{
	volatile char pad[1024];

	pad[0] = (char)n;
	if (n == stop_depth)
		return 0;
	return recurse(n + 1) + pad[0];
}

int main(void)
{
	stack_t ss, old;
	pid_t pid;
	int st;

	alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(alt != MAP_FAILED);

	/* Initially disabled. */
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_flags & SS_DISABLE);

	/* Errors. */
	ss.ss_sp = alt;
	ss.ss_size = 1024; /* below MINSIGSTKSZ */
	ss.ss_flags = 0;
	CHECK_ERR(sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0x1234;
	CHECK_ERR(sigaltstack(&ss, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_sigaltstack, BAD_PTR2, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_sigaltstack, NULL, BAD_PTR2), EFAULT);

	ss.ss_flags = 0;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_sp == alt);
	CHECK_EQ(old.ss_size, ALT_SIZE);
	CHECK_EQ(old.ss_flags, 0);

	/* Without SA_ONSTACK: the normal stack. */
	CHECK_EQ(t_sigaction(SIGUSR1, on_sig, 0), 0);
	t_raise(SIGUSR1);
	CHECK(!in_alt(handler_sp));
	CHECK_EQ(onstack_flag, 0);
	CHECK_EQ(change_errno, 0);

	/* With SA_ONSTACK: the alternate stack, SS_ONSTACK inside, and it
	 * cannot be changed there (EPERM). */
	CHECK_EQ(t_sigaction(SIGUSR1, on_sig, SA_ONSTACK), 0);
	t_raise(SIGUSR1);
	CHECK(in_alt(handler_sp));
	CHECK_EQ(onstack_flag, 1);
	CHECK_EQ(change_errno, EPERM);
	/* Not on it any more. */
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(!(old.ss_flags & SS_ONSTACK));

	/* Disabled again: SA_ONSTACK falls back to the normal stack. */
	ss.ss_flags = SS_DISABLE;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_flags & SS_DISABLE);
	t_raise(SIGUSR1);
	CHECK(!in_alt(handler_sp));

	/* The frame's uc_stack is the alternate stack, and sigreturn installs
	 * what the handler leaves there. */
	alt2 = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(alt2 != MAP_FAILED);
	ss.ss_sp = alt;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(t_siginfo_action(SIGUSR2, on_uc, 0), 0);
	uc_mode = 0;
	t_raise(SIGUSR2);
	CHECK(uc_sp == alt);
	CHECK_EQ(uc_size, ALT_SIZE);
	uc_mode = 1;
	t_raise(SIGUSR2);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_sp == alt2);
	CHECK_EQ(old.ss_flags, 0);
	uc_mode = 2;
	t_raise(SIGUSR2);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_flags & SS_DISABLE);

	/* SS_AUTODISARM: disarmed inside the handler (which still runs on
	 * the alternate stack), armed again after it. */
	ss.ss_flags = SS_AUTODISARM;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_sp == alt);
	CHECK_EQ((unsigned)old.ss_flags, SS_AUTODISARM);
	CHECK_EQ(t_siginfo_action(SIGUSR2, on_uc, SA_ONSTACK), 0);
	uc_mode = 0;
	t_raise(SIGUSR2);
	CHECK(inner_on_alt);
	CHECK(inner_flags & SS_DISABLE);
	CHECK(uc_sp == alt);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_sp == alt);
	CHECK_EQ((unsigned)old.ss_flags, SS_AUTODISARM);

	/* A fork child keeps the alternate stack. */
	ss.ss_flags = 0;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	pid = fork();
	if (pid == 0) {
		stack_t c;

		if (sigaltstack(NULL, &c) != 0 || c.ss_sp != alt ||
		    c.ss_size != ALT_SIZE || c.ss_flags != 0)
			_exit(1);
		_exit(0);
	}
	CHECK(t_wait_ok(pid));
	ss.ss_flags = SS_DISABLE;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);

	/* Stack overflow caught on the alternate stack. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1 << 20, 1 << 20 };

		setrlimit(RLIMIT_STACK, &rl);
		ss.ss_sp = alt;
		ss.ss_size = ALT_SIZE;
		ss.ss_flags = 0;
		sigaltstack(&ss, NULL);
		t_sigaction(SIGSEGV, on_segv, SA_ONSTACK);
		recurse(0);
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42);

	/* Without an alternate stack the overflow kills with SIGSEGV. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 1 << 20, 1 << 20 };

		setrlimit(RLIMIT_STACK, &rl);
		t_sigaction(SIGSEGV, on_segv, SA_ONSTACK);
		recurse(0);
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	DONE();
}
