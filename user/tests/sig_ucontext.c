/* The general-register part of the signal frame: RIP/RSP/RFLAGS of the
 * interrupted code, uc_sigmask, and sigreturn applying edits to registers
 * and to the mask; a SIGSEGV handler that skips the faulting instruction
 * (with trapno/err/cr2 filled in); trapno/err/cr2 of an instruction fetch
 * from a non-executable page and of a kernel address; int3's SIGTRAP. */
#include "next.h"
#include <ucontext.h>

static volatile greg_t seen_rip, seen_r12, seen_rsp, seen_efl;
static volatile int mask_had_usr2, mask_had_usr1;
static volatile int edit;

static void on_usr1(int s, siginfo_t *si, void *vctx)
{
	ucontext_t *uc = vctx;

	(void)s;
	(void)si;
	seen_rip = uc->uc_mcontext.gregs[REG_RIP];
	seen_r12 = uc->uc_mcontext.gregs[REG_R12];
	seen_rsp = uc->uc_mcontext.gregs[REG_RSP];
	seen_efl = uc->uc_mcontext.gregs[REG_EFL];
	mask_had_usr2 = sigismember(&uc->uc_sigmask, SIGUSR2);
	mask_had_usr1 = sigismember(&uc->uc_sigmask, SIGUSR1);
	if (edit) {
		uc->uc_mcontext.gregs[REG_RBX] = 0x1234abcd;
		uc->uc_mcontext.gregs[REG_R13] = 0x5555;
		sigaddset(&uc->uc_sigmask, SIGHUP);
	}
}

static volatile void *fault_addr;
static volatile greg_t fault_trapno, fault_err, fault_cr2;
static volatile int fault_code;

static void on_segv(int s, siginfo_t *si, void *vctx)
{
	ucontext_t *uc = vctx;

	(void)s;
	fault_addr = si->si_addr;
	fault_code = si->si_code;
	fault_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	fault_err = uc->uc_mcontext.gregs[REG_ERR];
	fault_cr2 = uc->uc_mcontext.gregs[REG_CR2];
	/* Skip the 2-byte "mov (%rax), %ecx" / "mov %ecx, (%rax)". */
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static sigjmp_buf env;

static void on_segv_jump(int s, siginfo_t *si, void *vctx)
{
	on_segv(s, si, vctx);
	siglongjmp(env, 1);
}

static volatile int trap_code;
static volatile void *trap_addr;
static volatile greg_t trap_trapno;

static void on_trap(int s, siginfo_t *si, void *vctx)
{
	ucontext_t *uc = vctx;

	(void)s;
	trap_code = si->si_code;
	trap_addr = si->si_addr;
	trap_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
}

int main(void)
{
	long pid = getpid(), tid = t_gettid(), ret;
	unsigned long label, rbx_after, r13_after, rsp_before;
	sigset_t cur;

	CHECK_EQ(t_siginfo_action(SIGUSR1, on_usr1, 0), 0);
	CHECK_EQ(t_block(SIGUSR2, SIG_BLOCK), 0);

	edit = 1;
	__asm__ volatile("lea 1f(%%rip), %%r12\n\t"
			 "mov %%rsp, %[sp]\n\t"
			 "xor %%ebx, %%ebx\n\t"
			 "xor %%r13d, %%r13d\n\t"
			 "syscall\n"
			 "1:\n\t"
			 "mov %%r12, %[label]\n\t"
			 "mov %%rbx, %[rbx]\n\t"
			 "mov %%r13, %[r13]\n\t"
			 : "=a"(ret), [label] "=m"(label), [rbx] "=m"(rbx_after),
			   [r13] "=m"(r13_after), [sp] "=m"(rsp_before)
			 : "a"((long)SYS_tgkill), "D"(pid), "S"(tid),
			   "d"((long)SIGUSR1)
			 : "rcx", "r11", "r12", "r13", "rbx", "memory");
	CHECK_EQ(ret, 0);
	CHECK_EQ((unsigned long)seen_rip, label);
	CHECK_EQ((unsigned long)seen_r12, label);
	CHECK_EQ((unsigned long)seen_rsp, rsp_before);
	/* The saved RFLAGS show IF and the always-one bit 1. */
	CHECK_EQ(seen_efl & 0x202, 0x202);
	CHECK(mask_had_usr2);
	CHECK(!mask_had_usr1);
	CHECK_EQ(rbx_after, 0x1234abcd);
	CHECK_EQ(r13_after, 0x5555);
	/* uc_sigmask became our mask. */
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(sigismember(&cur, SIGHUP));
	CHECK(sigismember(&cur, SIGUSR2));
	CHECK(!sigismember(&cur, SIGUSR1));

	/* Skip a faulting read and a faulting write. */
	CHECK_EQ(t_siginfo_action(SIGSEGV, on_segv, 0), 0);
	{
		unsigned long bad = 0xdead0000UL;
		unsigned val = 77;

		__asm__ volatile("mov (%%rax), %%ecx\n\t"
				 : "+c"(val)
				 : "a"(bad)
				 : "memory");
		CHECK_EQ(val, 77);
		CHECK(fault_addr == (void *)bad);
		CHECK_EQ(fault_code, SEGV_MAPERR);
		CHECK_EQ(fault_trapno, 14);
		CHECK_EQ(fault_cr2, (greg_t)bad);
		CHECK_EQ(fault_err & 6, 4); /* user-mode read */

		fault_addr = NULL;
		__asm__ volatile("mov %%ecx, (%%rax)\n\t"
				 :
				 : "a"(bad + 8), "c"(val)
				 : "memory");
		CHECK(fault_addr == (void *)(bad + 8));
		CHECK_EQ(fault_err & 6, 6); /* user-mode write */
	}

	/* Instruction fetch from a present, non-executable page: err has
	 * present|user|fetch, cr2 the page. */
	CHECK_EQ(t_siginfo_action(SIGSEGV, on_segv_jump, 0), 0);
	{
		char *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(rw != MAP_FAILED);
		rw[0] = (char)0xc3; /* ret */
		fault_addr = NULL;
		if (sigsetjmp(env, 1) == 0)
			((void (*)(void))rw)();
		CHECK(fault_addr == rw);
		CHECK_EQ(fault_code, SEGV_ACCERR);
		CHECK_EQ(fault_trapno, 14);
		CHECK_EQ(fault_err & 0x17, 0x15);
		CHECK_EQ(fault_cr2, (greg_t)rw);
	}
	/* A kernel address: reported as a protection fault (bit 0) with the
	 * address in cr2. */
	fault_addr = NULL;
	if (sigsetjmp(env, 1) == 0)
		(void)*(volatile char *)0xffffffff81000000UL;
	CHECK(fault_addr == (void *)0xffffffff81000000UL);
	CHECK_EQ(fault_trapno, 14);
	CHECK_EQ(fault_err & 7, 5);
	CHECK_EQ(fault_cr2, (greg_t)0xffffffff81000000UL);

	/* int3: a kernel-generated SIGTRAP (SI_KERNEL, no address), trap 3. */
	CHECK_EQ(t_siginfo_action(SIGTRAP, on_trap, 0), 0);
	trap_code = 0;
	__asm__ volatile("int3" ::: "memory");
	CHECK_EQ(trap_code, SI_KERNEL);
	CHECK(trap_addr == NULL);
	CHECK_EQ(trap_trapno, 3);
	DONE();
}
