/*
 * Single-stepping into `syscall`: TF set by popfq right before the syscall
 * instruction.  Entry must clear TF (SFMASK) so that the kernel does not
 * single-step itself (a #DB in ring 0 on the first kernel instruction).
 * Linux then returns with the user's TF still set, so stepping goes on in
 * user mode: the syscall itself reports no trap, and each following user
 * instruction gives one SIGTRAP with si_code TRAP_TRACE and RIP (and
 * si_addr) at the next instruction, until a popfq clears TF (that popfq
 * still traps: TF was set when it began).  The handler runs with TF clear
 * and sees TF in its saved context; sigreturn restores it.  Checked with
 * getpid, sched_yield, a sleeping nanosleep, a read that blocks until
 * another process writes, and a write that fails (EFAULT); afterwards the
 * program runs normally and takes no further traps.
 */
#include "entry.h"

/*
 * long t_tf_seq(long nr, long a1, long a2, long a3)
 *   popfq sets TF; syscall nr(a1, a2, a3), whose result is kept in r8 and
 *   returned; getpid with TF still set; a nop; pushfq/andq/popfq clear TF.
 *   The labels name the instruction boundaries.
 */
__asm__(".text\n"
	".globl t_tf_seq\n"
	".type t_tf_seq, @function\n"
	"t_tf_seq:\n\t"
	"mov %rdi, %rax\n\t"
	"mov %rsi, %rdi\n\t"
	"mov %rdx, %rsi\n\t"
	"mov %rcx, %rdx\n\t"
	"pushfq\n\t"
	"orq $0x100, (%rsp)\n\t"
	"popfq\n"
	".globl t_tf_sys1\n"
	"t_tf_sys1:\n\t"
	"syscall\n"
	".globl t_tf_after1\n"
	"t_tf_after1:\n\t"
	"mov %rax, %r8\n"
	".globl t_tf_mov\n"
	"t_tf_mov:\n\t"
	"mov $39, %eax\n"
	".globl t_tf_sys2\n"
	"t_tf_sys2:\n\t"
	"syscall\n"
	".globl t_tf_nop\n"
	"t_tf_nop:\n\t"
	"nop\n"
	".globl t_tf_pushf\n"
	"t_tf_pushf:\n\t"
	"pushfq\n"
	".globl t_tf_and\n"
	"t_tf_and:\n\t"
	"andq $~0x100, (%rsp)\n"
	".globl t_tf_popf\n"
	"t_tf_popf:\n\t"
	"popfq\n"
	".globl t_tf_end\n"
	"t_tf_end:\n\t"
	"mov %r8, %rax\n\t"
	"ret\n"
	".size t_tf_seq, .-t_tf_seq\n");
long t_tf_seq(long nr, long a1, long a2, long a3);
extern const char t_tf_sys1[], t_tf_after1[], t_tf_mov[], t_tf_sys2[],
	t_tf_nop[], t_tf_pushf[], t_tf_and[], t_tf_popf[], t_tf_end[];

#define MAX_TRAPS 32

static volatile int ntraps, bad_handler_flags;
static volatile unsigned long trap_rip[MAX_TRAPS], trap_addr[MAX_TRAPS];
static volatile int trap_code[MAX_TRAPS], trap_ctx_tf[MAX_TRAPS];

static void on_trap(int s, siginfo_t *si, void *c)
{
	ucontext_t *uc = c;
	unsigned long fl = t_rflags();
	int n = ntraps++;

	(void)s;
	if (n < MAX_TRAPS) {
		trap_rip[n] = uc->uc_mcontext.gregs[REG_RIP];
		trap_addr[n] = (unsigned long)si->si_addr;
		trap_code[n] = si->si_code;
	}
	/* The handler itself is not single-stepped ... */
	if (fl & X86_TF)
		bad_handler_flags++;
	/* ... and the context it returns to has TF as the stepped code had
	 * it (set, except after the popfq that cleared it). */
	if (n < MAX_TRAPS)
		trap_ctx_tf[n] = !!(uc->uc_mcontext.gregs[REG_EFL] & X86_TF);
	/* Never step forever, whatever the kernel does. */
	if (n >= MAX_TRAPS)
		uc->uc_mcontext.gregs[REG_EFL] &= ~X86_TF;
}

/* The traps Linux reports for one t_tf_seq, by the RIP after the stepped
 * instruction: none for popfq (TF was clear when it began) or for either
 * syscall, one for every other instruction up to the popfq that clears
 * TF. */
static const char *const *expected(int *n)
{
	static const char *want[6];

	want[0] = t_tf_mov;   /* after mov %rax,%r8 */
	want[1] = t_tf_sys2;  /* after mov $39,%eax */
	want[2] = t_tf_pushf; /* after nop */
	want[3] = t_tf_and;   /* after pushfq */
	want[4] = t_tf_popf;  /* after andq */
	want[5] = t_tf_end;   /* after popfq */
	*n = 6;
	return want;
}

static void run_seq(const char *what, long nr, long a1, long a2, long a3,
		    long want_ret)
{
	const char *const *want;
	int nwant, i, n;
	long r;

	ntraps = bad_handler_flags = 0;
	r = t_tf_seq(nr, a1, a2, a3);
	n = ntraps;
	want = expected(&nwant);
	if (r != want_ret) {
		t_printf("  check failed: %s with TF: returned %ld, expected "
			 "%ld\n", what, r, want_ret);
		t_failures++;
	}
	if (n != nwant) {
		t_printf("  check failed: %s with TF: %d SIGTRAPs, Linux gives "
			 "%d (one per user instruction after the syscall)\n",
			 what, n, nwant);
		for (i = 0; i < n && i < MAX_TRAPS; i++)
			t_printf("    trap %d at %+ld from the syscall, code %d\n",
				 i, (long)(trap_rip[i] - (unsigned long)t_tf_sys1),
				 trap_code[i]);
		t_failures++;
		return;
	}
	for (i = 0; i < n; i++) {
		if (trap_rip[i] != (unsigned long)want[i] ||
		    trap_addr[i] != (unsigned long)want[i] ||
		    trap_code[i] != TRAP_TRACE) {
			t_printf("  check failed: %s with TF: trap %d: rip %+ld "
				 "si_addr %+ld code %d, expected rip = si_addr "
				 "= %+ld code TRAP_TRACE\n",
				 what, i,
				 (long)(trap_rip[i] - (unsigned long)t_tf_sys1),
				 (long)(trap_addr[i] - (unsigned long)t_tf_sys1),
				 trap_code[i],
				 (long)(want[i] - t_tf_sys1));
			t_failures++;
		}
		if (trap_ctx_tf[i] != (i < n - 1)) {
			t_printf("  check failed: %s: trap %d: TF %s in the "
				 "signal context\n", what, i,
				 trap_ctx_tf[i] ? "set" : "clear");
			t_failures++;
		}
	}
	if (bad_handler_flags) {
		t_printf("  check failed: %s: SIGTRAP handler ran with TF set\n",
			 what);
		t_failures++;
	}
}

int main(void)
{
	struct timespec ms = { 0, 1000000 };
	char buf[8];
	int p[2];
	pid_t child;
	long pid;

	T_DROP_ROOT_OR_FAIL();
	pid = getpid();
	CHECK_EQ(t_siginfo_action(SIGTRAP, on_trap, 0), 0);
	CHECK_EQ(pipe(p), 0);

	run_seq("getpid", SYS_getpid, 0, 0, 0, pid);
	run_seq("sched_yield", SYS_sched_yield, 0, 0, 0, 0);
	run_seq("nanosleep", SYS_nanosleep, (long)&ms, 0, 0, 0);
	run_seq("write (EFAULT)", SYS_write, p[1], (long)BAD_PTR2, 1, -EFAULT);
	CHECK_EQ(write(p[1], "ab", 2), 2);
	run_seq("read", SYS_read, p[0], (long)buf, 2, 2);
	CHECK(memcmp(buf, "ab", 2) == 0);

	/* A read that sleeps until another process writes. */
	child = fork();
	if (child == 0) {
		t_msleep(20);
		_exit(write(p[1], "c", 1) == 1 ? 0 : 1);
	}
	CHECK(child > 0);
	run_seq("blocking read", SYS_read, p[0], (long)buf, 1, 1);
	CHECK_EQ(buf[0], 'c');
	t_wait_ok(child);

	/* TF is off: normal code and syscalls, no more traps. */
	ntraps = 0;
	CHECK(!(t_rflags() & X86_TF));
	CHECK_EQ(getpid(), pid);
	CHECK_EQ(write(p[1], "d", 1), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(t_sc3(SYS_sched_yield, 0, 0, 0), 0);
	CHECK_EQ(ntraps, 0);
	DONE();
}
