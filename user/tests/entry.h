/*
 * entry.h - helpers for the entry-hygiene tests (entry_*.c): user programs
 * that set RFLAGS bits or load segment registers and then enter the kernel,
 * to show that nothing a user program does to its CPU state reaches ring 0
 * (issue 12, item 3), and that what comes back is what Linux gives back.
 *
 * While NT, AC, DF or TF is set only the assembly below runs: with AC set
 * Linux raises SIGBUS for any unaligned access (it sets CR0.AM), with DF set
 * compiled string operations would run backwards, and with TF set every
 * instruction traps.  The sequences are whole functions in top-level
 * assembly, so they never write below the stack pointer into a caller's
 * red zone (which pushfq in an inline asm statement would).
 */
#ifndef TRELLIS_ENTRY_H
#define TRELLIS_ENTRY_H

#include "next.h"

#include <grp.h>
#include <ucontext.h>

/* RFLAGS bits (Intel SDM vol. 1, 3.4.3). */
#define X86_CF 0x1UL
#define X86_TF 0x100UL
#define X86_IF 0x200UL
#define X86_DF 0x400UL
#define X86_IOPL 0x3000UL
#define X86_NT 0x4000UL
#define X86_RF 0x10000UL
#define X86_AC 0x40000UL

/* Linux's flat user data selector (GDT entry 5, RPL 3); Trellis uses the
 * same one. */
#define X86_USER_DS 0x2b

#define X_ARCH_SET_GS 0x1001
#define X_ARCH_SET_FS 0x1002
#define X_ARCH_GET_FS 0x1003
#define X_ARCH_GET_GS 0x1004

/*
 * unsigned long t_rflags(void)
 *     The current RFLAGS.
 *
 * long t_flagged_syscall(long nr, long a1, long a2, long a3,
 *                        unsigned long set, unsigned long *after)
 *     ORs `set` into RFLAGS, executes `syscall` (nr, a1..a3), stores RFLAGS
 *     as seen right after the syscall into *after (an aligned store, so it
 *     is fine with AC set), then clears the `set` bits again.  Returns rax.
 *
 * unsigned long t_flagged_spin(unsigned long set, unsigned long iters)
 *     ORs `set` into RFLAGS, runs a register-only loop of `iters` rounds
 *     (timer interrupts may arrive meanwhile), returns RFLAGS as seen at the
 *     end of the loop and clears the `set` bits.
 *
 * unsigned long t_flagged_touch(unsigned long set, unsigned long *p,
 *                               unsigned long npages)
 *     ORs `set` into RFLAGS, stores the page index into the first word of
 *     each of `npages` pages from p (fresh pages: a page fault each), and
 *     returns RFLAGS as seen after the last store; clears the `set` bits.
 *
 * unsigned long t_popf_get(unsigned long set)
 *     popfq with `set` ORed in, returns what pushfq then shows.  The bits
 *     are cleared again only if they stuck.
 */
__asm__(".text\n"
	".globl t_rflags\n"
	".type t_rflags, @function\n"
	"t_rflags:\n\t"
	"pushfq\n\t"
	"pop %rax\n\t"
	"ret\n"
	".size t_rflags, .-t_rflags\n"

	".globl t_flagged_syscall\n"
	".type t_flagged_syscall, @function\n"
	"t_flagged_syscall:\n\t"
	"mov %rdi, %rax\n\t"
	"mov %rsi, %rdi\n\t"
	"mov %rdx, %rsi\n\t"
	"mov %rcx, %rdx\n\t"
	"pushfq\n\t"
	"or %r8, (%rsp)\n\t"
	"popfq\n\t"
	"syscall\n\t"
	"pushfq\n\t"
	"pop %r10\n\t"
	"mov %r10, (%r9)\n\t"
	"not %r8\n\t"
	"pushfq\n\t"
	"and %r8, (%rsp)\n\t"
	"popfq\n\t"
	"ret\n"
	".size t_flagged_syscall, .-t_flagged_syscall\n"

	".globl t_flagged_spin\n"
	".type t_flagged_spin, @function\n"
	"t_flagged_spin:\n\t"
	"pushfq\n\t"
	"or %rdi, (%rsp)\n\t"
	"popfq\n"
	"1:\n\t"
	"dec %rsi\n\t"
	"jnz 1b\n\t"
	"pushfq\n\t"
	"pop %rax\n\t"
	"not %rdi\n\t"
	"pushfq\n\t"
	"and %rdi, (%rsp)\n\t"
	"popfq\n\t"
	"ret\n"
	".size t_flagged_spin, .-t_flagged_spin\n"

	".globl t_flagged_touch\n"
	".type t_flagged_touch, @function\n"
	"t_flagged_touch:\n\t"
	"xor %ecx, %ecx\n\t"
	"pushfq\n\t"
	"or %rdi, (%rsp)\n\t"
	"popfq\n"
	"1:\n\t"
	"mov %rcx, (%rsi)\n\t"
	"add $4096, %rsi\n\t"
	"inc %rcx\n\t"
	"cmp %rdx, %rcx\n\t"
	"jb 1b\n\t"
	"pushfq\n\t"
	"pop %rax\n\t"
	"not %rdi\n\t"
	"pushfq\n\t"
	"and %rdi, (%rsp)\n\t"
	"popfq\n\t"
	"ret\n"
	".size t_flagged_touch, .-t_flagged_touch\n"

	".globl t_popf_get\n"
	".type t_popf_get, @function\n"
	"t_popf_get:\n\t"
	"pushfq\n\t"
	"or %rdi, (%rsp)\n\t"
	"popfq\n\t"
	"pushfq\n\t"
	"pop %rax\n\t"
	"not %rdi\n\t"
	"pushfq\n\t"
	"and %rdi, (%rsp)\n\t"
	"popfq\n\t"
	"ret\n"
	".size t_popf_get, .-t_popf_get\n");

unsigned long t_rflags(void);
long t_flagged_syscall(long nr, long a1, long a2, long a3, unsigned long set,
		       unsigned long *after);
unsigned long t_flagged_spin(unsigned long set, unsigned long iters);
unsigned long t_flagged_touch(unsigned long set, unsigned long *p,
			      unsigned long npages);
unsigned long t_popf_get(unsigned long set);

/*
 * Page faults with `set` in RFLAGS: touches `n` fresh anonymous pages with
 * t_flagged_touch and checks that each holds its index.  Returns the flags
 * seen after the last fault, or 0 if the mapping failed or the data is
 * wrong (after printing why).
 */
static inline unsigned long t_faults_with(unsigned long set, unsigned long n)
{
	unsigned long *m = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long fl, i;

	if (m == MAP_FAILED) {
		t_printf("  check failed: mmap for the page faults (errno=%d)\n",
			 errno);
		t_failures++;
		return 0;
	}
	fl = t_flagged_touch(set, m, n);
	for (i = 0; i < n; i++) {
		if (m[i * (PAGE / sizeof *m)] != i) {
			t_printf("  check failed: page %lu after a fault with "
				 "flags %#lx holds %lu\n",
				 i, set, m[i * (PAGE / sizeof *m)]);
			t_failures++;
			fl = 0;
			break;
		}
	}
	munmap(m, n * PAGE);
	return fl;
}

/* A raw syscall with no flag games (no errno, no TLS). */
static inline long t_sc3(long n, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * The issue requires these programs to run as an unprivileged user: when
 * started as root, become uid/gid 65534 with no supplementary groups.
 * Returns 0 on success (or when not root).
 */
static inline int t_drop_root(void)
{
	if (geteuid() != 0)
		return 0;
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
	    setuid(65534) != 0)
		return -1;
	return geteuid() == 65534 && getuid() == 65534 && getegid() == 65534
		       ? 0
		       : -1;
}

/* Start of every entry_* main(): drop root or fail loudly. */
#define T_DROP_ROOT_OR_FAIL()                                              \
	do {                                                               \
		if (t_drop_root() != 0) {                                  \
			t_printf("  check failed: cannot drop root to uid "  \
				 "65534 (errno=%d %s)\n",                  \
				 errno, strerror(errno));                  \
			return 1;                                          \
		}                                                          \
	} while (0)

/*
 * Rounds of t_flagged_spin(set, ...) until at least `ns` of wall time has
 * passed (between spins, with the bits clear) or `max_spins` spins ran:
 * long enough to take several 100 Hz timer interrupts, bounded either way.
 * Returns the AND of the flags every spin saw at its end (so a bit that
 * was lost even once reads as clear), or 0 if no spin ran.
 */
static inline unsigned long t_spin_with(unsigned long set, long long ns,
					int max_spins)
{
	long long t0 = t_now_ns(CLOCK_MONOTONIC);
	unsigned long all = ~0UL;
	int i;

	if (max_spins <= 0)
		return 0;
	for (i = 0; i < max_spins; i++) {
		all &= t_flagged_spin(set, 200000);
		if (t_now_ns(CLOCK_MONOTONIC) - t0 >= ns)
			break;
	}
	return all;
}

#endif /* TRELLIS_ENTRY_H */
