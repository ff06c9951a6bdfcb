/* rt_sigreturn with an unreadable or garbage frame kills the caller with
 * SIGSEGV (and nothing else). A handler's edits of the frame are checked
 * like Linux does: a code selector other than the 64-bit user one, a bad
 * SS with UC_STRICT_RESTORE_SS, a misaligned FPU image or one with reserved
 * MXCSR bits give SIGSEGV; a bad SS without the flag is replaced, a NULL
 * fpstate resets the FPU, privileged RFLAGS bits are dropped, and the
 * restored RAX is never taken for a syscall restart request. */
#include "next.h"
#include <stdint.h>
#include <ucontext.h>

static volatile int mode;

static void edit_frame(int s, siginfo_t *si, void *vctx)
{
	ucontext_t *uc = vctx;
	uint16_t *sel = (uint16_t *)&uc->uc_mcontext.gregs[REG_CSGSFS];

	(void)s;
	(void)si;
	switch (mode) {
	case 1: /* CS = the user data selector */
		sel[0] = 0x2b;
		break;
	case 2: /* strict SS restore of the null selector */
		uc->uc_flags |= 4; /* UC_STRICT_RESTORE_SS */
		sel[3] = 0;
		break;
	case 3: /* the same without the strict flag: SS gets fixed */
		uc->uc_flags &= ~4UL;
		sel[3] = 0;
		break;
	case 4: /* no FPU image: the FPU starts afresh */
		uc->uc_mcontext.fpregs = NULL;
		break;
	case 5: /* misaligned FPU image */
		uc->uc_mcontext.fpregs =
			(void *)((char *)uc->uc_mcontext.fpregs + 8);
		break;
	case 6: /* reserved MXCSR bit */
		uc->uc_mcontext.fpregs->mxcsr |= 1u << 20;
		break;
	case 7: /* IOPL 3, NT, IF clear */
		uc->uc_mcontext.gregs[REG_EFL] |= 0x3000 | 0x4000;
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x200L;
		break;
	case 8: /* CS with RPL 0: forced to 3 */
		sel[0] = 0x30;
		break;
	case 9: /* RAX that looks like -ERESTARTSYS */
		uc->uc_mcontext.gregs[REG_RAX] = -512;
		break;
	}
}

/* In a child: sets a non-default MXCSR, signals itself with the frame
 * edit `m`, and checks the state after sigreturn. Exit 0 if all is as
 * expected, else a code naming what was wrong. */
static int edited_return(int m)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		unsigned mx = 0x1f80 | 0x6000, mx_after;
		unsigned long fl;
		unsigned short ss;
		long ret;

		mode = m;
		t_siginfo_action(SIGUSR1, edit_frame, 0);
		__asm__ volatile("ldmxcsr %0" : : "m"(mx));
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "a"((long)SYS_tgkill), "D"((long)getpid()),
				   "S"(t_gettid()), "d"((long)SIGUSR1)
				 : "rcx", "r11", "memory");
		__asm__ volatile("pushf; pop %0" : "=r"(fl));
		__asm__ volatile("stmxcsr %0" : "=m"(mx_after));
		__asm__ volatile("mov %%ss, %0" : "=r"(ss));
		if (ret != (m == 9 ? -512 : 0))
			_exit(10);
		if (ss != 0x2b)
			_exit(11);
		if ((fl & 0x7200) != 0x200)
			_exit(12);
		if (mx_after != (m == 4 ? 0x1f80u : mx))
			_exit(13);
		_exit(0);
	}
	st = t_wait(pid);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 100 + WTERMSIG(st) : -1;
}

int main(void)
{
	pid_t pid;
	int st;

	/* Stack pointer at an unmapped address. */
	pid = fork();
	if (pid == 0) {
		__asm__ volatile("mov $0xdead0000, %%rsp\n\t"
				 "mov %0, %%eax\n\t"
				 "syscall\n\t"
				 "ud2\n\t"
				 :
				 : "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	/* A zero-filled frame: RIP 0 after "returning". */
	pid = fork();
	if (pid == 0) {
		static char zeros[8192] __attribute__((aligned(16)));

		__asm__ volatile("mov %0, %%rsp\n\t"
				 "mov %1, %%eax\n\t"
				 "syscall\n\t"
				 "ud2\n\t"
				 :
				 : "r"(zeros + 4096), "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	/* A frame of 0xff bytes (non-canonical everything). */
	pid = fork();
	if (pid == 0) {
		static char ff[8192] __attribute__((aligned(16)));

		memset(ff, 0xff, sizeof ff);
		__asm__ volatile("mov %0, %%rsp\n\t"
				 "mov %1, %%eax\n\t"
				 "syscall\n\t"
				 "ud2\n\t"
				 :
				 : "r"(ff + 4096), "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st));
	CHECK(WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGBUS);

	/* Frames edited by the handler. */
	CHECK_EQ(edited_return(1), 100 + SIGSEGV);
	CHECK_EQ(edited_return(2), 100 + SIGSEGV);
	CHECK_EQ(edited_return(3), 0);
	CHECK_EQ(edited_return(4), 0);
	CHECK_EQ(edited_return(5), 100 + SIGSEGV);
	CHECK_EQ(edited_return(6), 100 + SIGSEGV);
	CHECK_EQ(edited_return(7), 0);
	CHECK_EQ(edited_return(8), 0);
	CHECK_EQ(edited_return(9), 0);
	DONE();
}
