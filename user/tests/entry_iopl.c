/*
 * IOPL and port I/O for an unprivileged program.  popfq at CPL 3 cannot
 * change IOPL (the CPU ignores those bits), so pushfq still shows IOPL 0;
 * nor can the kernel hand IOPL 3 back: not after a syscall entered with
 * the bits requested, not through sigreturn of a context whose EFL has
 * IOPL 3 (Linux's FIX_EFLAGS has no IOPL), not through iopl(3) or
 * ioperm(), which fail for a user without CAP_SYS_RAWIO: EPERM, or ENOSYS
 * on a Linux built without CONFIG_X86_IOPL_IOPERM (the host this was
 * written on) -- either is accepted; success is not.  After every attempt
 * inb/outb on port 0x80 and cli still raise SIGSEGV (si_code SI_KERNEL,
 * si_addr 0: a #GP), and the handler sees IOPL 0 in its context.
 */
#include "entry.h"

static volatile int segv_count, segv_code;
static volatile unsigned long segv_addr, segv_rip, segv_ctx_flags;
static volatile unsigned long resume_at;

static void on_segv(int s, siginfo_t *si, void *c)
{
	ucontext_t *uc = c;

	(void)s;
	segv_count++;
	segv_code = si->si_code;
	segv_addr = (unsigned long)si->si_addr;
	segv_rip = uc->uc_mcontext.gregs[REG_RIP];
	segv_ctx_flags = uc->uc_mcontext.gregs[REG_EFL];
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)resume_at;
}

static volatile int usr1_count;
static volatile unsigned long usr1_ctx_flags;

/* Asks sigreturn for IOPL 3 (and keeps the other bits). */
static void on_usr1(int s, siginfo_t *si, void *c)
{
	ucontext_t *uc = c;

	(void)s;
	(void)si;
	usr1_count++;
	usr1_ctx_flags = uc->uc_mcontext.gregs[REG_EFL];
	uc->uc_mcontext.gregs[REG_EFL] |= X86_IOPL;
}

/* Privileged instructions, each followed by a label to resume at. */
__asm__(".text\n"
	".globl t_do_inb\n"
	".type t_do_inb, @function\n"
	"t_do_inb:\n\t"
	".globl t_at_inb\n"
	"t_at_inb:\n\t"
	"inb $0x80, %al\n\t"
	".globl t_after_inb\n"
	"t_after_inb:\n\t"
	"ret\n"
	".globl t_do_outb\n"
	".type t_do_outb, @function\n"
	"t_do_outb:\n\t"
	"xor %eax, %eax\n\t"
	"mov $0x80, %edx\n\t"
	".globl t_at_outb\n"
	"t_at_outb:\n\t"
	"outb %al, %dx\n\t"
	".globl t_after_outb\n"
	"t_after_outb:\n\t"
	"ret\n"
	".globl t_do_cli\n"
	".type t_do_cli, @function\n"
	"t_do_cli:\n\t"
	".globl t_at_cli\n"
	"t_at_cli:\n\t"
	"cli\n\t"
	".globl t_after_cli\n"
	"t_after_cli:\n\t"
	"ret\n");
void t_do_inb(void), t_do_outb(void), t_do_cli(void);
extern const char t_at_inb[], t_after_inb[], t_at_outb[], t_after_outb[],
	t_at_cli[], t_after_cli[];

/* Runs one privileged instruction; it must give a #GP SIGSEGV. */
static void check_gp(const char *stage, const char *what, void (*fn)(void),
		     const char *at, const char *after)
{
	segv_count = 0;
	segv_code = 0;
	resume_at = (unsigned long)after;
	fn();
	if (segv_count != 1 || segv_rip != (unsigned long)at ||
	    segv_code != SI_KERNEL || segv_addr != 0) {
		t_printf("  check failed: %s: %s in user mode: %d SIGSEGV "
			 "(code %d, addr %#lx, rip %+ld), expected one with "
			 "SI_KERNEL and addr 0 at the instruction -- port "
			 "access or cli allowed?\n",
			 stage, what, segv_count, segv_code, segv_addr,
			 (long)(segv_rip - (unsigned long)at));
		t_failures++;
	}
	if (segv_count && (segv_ctx_flags & X86_IOPL)) {
		t_printf("  check failed: %s: %s: IOPL %lu in the signal "
			 "context\n", stage, what,
			 (segv_ctx_flags & X86_IOPL) >> 12);
		t_failures++;
	}
}

static void check_no_io(const char *stage)
{
	unsigned long fl = t_rflags();

	if (fl & X86_IOPL) {
		t_printf("  check failed: %s: IOPL is %lu\n", stage,
			 (fl & X86_IOPL) >> 12);
		t_failures++;
	}
	check_gp(stage, "inb $0x80", t_do_inb, t_at_inb, t_after_inb);
	check_gp(stage, "outb to 0x80", t_do_outb, t_at_outb, t_after_outb);
	check_gp(stage, "cli", t_do_cli, t_at_cli, t_after_cli);
}

/* iopl/ioperm must fail: EPERM, or ENOSYS without IOPL support. */
static void check_refused(const char *what, long r, int e)
{
	if (r == -1 && (e == EPERM || e == ENOSYS)) {
		if (e == ENOSYS)
			t_note("%s: ENOSYS (no iopl/ioperm support; Linux "
			       "with CONFIG_X86_IOPL_IOPERM says EPERM)", what);
		return;
	}
	t_printf("  check failed: %s as uid %d: returned %ld errno %d (%s), "
		 "expected EPERM (or ENOSYS)\n",
		 what, (int)getuid(), r, e, strerror(e));
	t_failures++;
}

int main(void)
{
	unsigned long after = 0;
	long r, pid, tid;

	T_DROP_ROOT_OR_FAIL();
	pid = getpid();
	tid = t_gettid();
	CHECK_EQ(t_siginfo_action(SIGSEGV, on_segv, 0), 0);
	CHECK_EQ(t_siginfo_action(SIGUSR1, on_usr1, 0), 0);

	check_no_io("at start");

	/* popfq at CPL 3 leaves IOPL alone. */
	CHECK_EQ(t_popf_get(X86_IOPL) & X86_IOPL, 0);
	check_no_io("after popfq with IOPL 3");

	/* A syscall entered with IOPL 3 requested. */
	r = t_flagged_syscall(SYS_getpid, 0, 0, 0, X86_IOPL, &after);
	CHECK_EQ(r, pid);
	CHECK_EQ(after & X86_IOPL, 0);
	check_no_io("after a syscall");

	/* sigreturn of a context that asks for IOPL 3. */
	r = t_flagged_syscall(SYS_tgkill, pid, tid, SIGUSR1, X86_IOPL, &after);
	CHECK_EQ(r, 0);
	CHECK_EQ(usr1_count, 1);
	CHECK_EQ(usr1_ctx_flags & X86_IOPL, 0);
	CHECK_EQ(after & X86_IOPL, 0);
	check_no_io("after sigreturn with IOPL 3 in the context");

	/* iopl(3) and ioperm are refused. */
	errno = 0;
	r = syscall(SYS_iopl, 3);
	check_refused("iopl(3)", r, errno);
	check_no_io("after iopl(3)");
	errno = 0;
	r = syscall(SYS_ioperm, 0x80, 1, 1);
	check_refused("ioperm(0x80, 1, 1)", r, errno);
	errno = 0;
	r = syscall(SYS_ioperm, 0, 65536, 1);
	check_refused("ioperm(0, 65536, 1)", r, errno);
	check_no_io("after ioperm");

	/* And in a forked child (fresh kernel entry state). */
	{
		pid_t child = fork();

		if (child == 0) {
			check_no_io("in a forked child");
			CHILD_DONE();
		}
		CHECK(child > 0);
		t_wait_ok(child);
	}
	DONE();
}
