/* clone3(2): fork through struct clone_args (exit signal, pidfd and
 * parent tid at once, a child stack given as base and size, CLONE_VM),
 * CLONE_CLEAR_SIGHAND, and the argument checks: sizes (EINVAL below
 * version 0, E2BIG above a page or with non-zero unknown fields), the
 * exit-signal byte in flags, CLONE_DETACHED, exit signals above 64 or with
 * CLONE_THREAD/CLONE_PARENT, a stack without its size, and bad pointers. */
#include "next.h"

#include <sys/wait.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

struct cargs {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
		cgroup;
};

#define CL_PIDFD 0x1000UL
#define CL_PARENT_SETTID 0x100000UL
#define CL_CLEAR_SIGHAND 0x100000000ULL
#define CL_DETACHED 0x400000UL

static long clone3(struct cargs *a, size_t size)
{
	return syscall(SYS_clone3, a, size);
}

static volatile int got_usr1;
static void on_usr1(int s)
{
	(void)s;
	got_usr1 = 1;
}

static void test_fork_like(void)
{
	struct cargs a = { 0 };
	int pidfd = -1;
	pid_t ptid = 0;
	a.flags = CL_PIDFD | CL_PARENT_SETTID;
	a.pidfd = (uintptr_t)&pidfd;
	a.parent_tid = (uintptr_t)&ptid;
	a.exit_signal = SIGCHLD;
	long pid = clone3(&a, sizeof a);
	if (pid == 0)
		_exit(42);
	CHECK(pid > 0);
	CHECK(pidfd >= 0);
	CHECK_EQ(ptid, pid);
	CHECK_EQ(fcntl(pidfd, F_GETFD), FD_CLOEXEC);
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	CHECK_EQ(poll(&pfd, 1, -1), 1);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42);
	close(pidfd);

	/* Version-0 size (64 bytes) works; an exit signal of 0 means the
	 * parent is not signalled and must wait with __WALL. */
	memset(&a, 0, sizeof a);
	pid = clone3(&a, 64);
	if (pid == 0)
		_exit(7);
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

static char child_stack[64 * 1024] __attribute__((aligned(16)));
static volatile int shared_word;

/* The child's code on its own stack: records whether its locals are on
 * that stack. */
static int on_stack(void *arg)
{
	int local;
	uintptr_t p = (uintptr_t)&local;
	(void)arg;
	shared_word = (p > (uintptr_t)child_stack && p < (uintptr_t)child_stack + sizeof child_stack) ? 1 : 2;
	return 0;
}

/* clone3 with a.stack = child_stack and the size chosen so that the
 * stack pointer lands right below fn and arg, which the child pops and
 * calls (as t_clone does for clone(2)). */
static long clone3_run(struct cargs *a, int (*fn)(void *), void *arg)
{
	void **sp = (void **)((uintptr_t)(child_stack + sizeof child_stack) & ~15UL);
	long ret;
	*--sp = arg;
	*--sp = (void *)fn;
	a->stack = (uintptr_t)child_stack;
	a->stack_size = (uintptr_t)sp - (uintptr_t)child_stack;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "pop %%rax\n\t"
			 "pop %%rdi\n\t"
			 "call *%%rax\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov $60, %%eax\n\t"
			 "syscall\n\t"
			 "ud2\n\t"
			 "1:\n\t"
			 : "=a"(ret)
			 : "a"((long)SYS_clone3), "D"(a), "S"(sizeof *a)
			 : "rcx", "r11", "memory");
	return ret;
}

static void test_stack_vm(void)
{
	/* CLONE_VM|CLONE_VFORK with a stack given as base + size: the child
	 * runs on it and writes our memory before we go on. */
	struct cargs a = { 0 };
	a.flags = CLONE_VM | CLONE_VFORK;
	a.exit_signal = SIGCHLD;
	long pid = clone3_run(&a, on_stack, NULL);
	CHECK(pid > 0);
	CHECK_EQ(shared_word, 1);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_clear_sighand(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGUSR2, SIG_IGN);
	struct cargs a = { 0 };
	a.flags = CL_CLEAR_SIGHAND;
	a.exit_signal = SIGCHLD;
	long pid = clone3(&a, sizeof a);
	if (pid == 0) {
		struct sigaction cur;
		sigaction(SIGUSR1, NULL, &cur);
		int ok = cur.sa_handler == SIG_DFL;
		sigaction(SIGUSR2, NULL, &cur);
		ok = ok && cur.sa_handler == SIG_IGN;
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_EQ(t_wait(pid), 0);
	/* The parent keeps its handler. */
	struct sigaction cur;
	sigaction(SIGUSR1, NULL, &cur);
	CHECK(cur.sa_handler == on_usr1);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

static void test_errors(void)
{
	struct cargs a = { 0 };
	a.exit_signal = SIGCHLD;
	CHECK_ERR(clone3(&a, 63), EINVAL);
	CHECK_ERR(clone3(&a, 0), EINVAL);
	CHECK_ERR(clone3(&a, 4097), E2BIG);
	CHECK_ERR(clone3(BAD_PTR2, sizeof a), EFAULT);
	/* Unknown trailing bytes must be zero. */
	static unsigned char big[128];
	memcpy(big, &a, sizeof a);
	big[100] = 1;
	CHECK_ERR(clone3((struct cargs *)big, sizeof big), E2BIG);
	a.flags = SIGCHLD;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.flags = CL_DETACHED;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.flags = 0;
	a.exit_signal = 65;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.exit_signal = SIGCHLD;
	a.flags = CLONE_PARENT;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.flags = CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.flags = 0;
	a.stack = (uintptr_t)child_stack;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.stack = 0;
	a.stack_size = 4096;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.stack_size = 0;
	a.flags = CLONE_SIGHAND | CLONE_VM | CL_CLEAR_SIGHAND;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.flags = 0;
	a.set_tid_size = 1;
	CHECK_ERR(clone3(&a, sizeof a), EINVAL);
	a.set_tid_size = 0;
	/* clone(2)'s CLONE_PIDFD + CLONE_PARENT_SETTID conflict does not
	 * exist here, but a bad pidfd pointer undoes the clone. */
	a.flags = CL_PIDFD;
	a.pidfd = (uintptr_t)BAD_PTR2;
	CHECK_ERR(clone3(&a, sizeof a), EFAULT);
	CHECK_ERR(waitpid(-1, NULL, WNOHANG), ECHILD);
}

int main(void)
{
	long r = clone3(NULL, 0);
	if (r < 0 && errno == ENOSYS)
		SKIP("no clone3");
	test_fork_like();
	test_stack_vm();
	test_clear_sighand();
	test_errors();
	DONE();
}
