/*
 * FS/GS bases after a segment load done in user mode.  `mov %eax, %fs`
 * with a nonzero selector makes the CPU load the FS base from the GDT
 * descriptor (0 for the flat user data segment), behind the kernel's back.
 * A kernel that skips rewriting the FS base MSR when the next task's
 * fs_base equals the value it last wrote would then run another task that
 * has the same fs_base -- a forked parent -- with FS base 0, and its first
 * TLS access (errno, __thread variables, the thread pointer at %fs:0)
 * faults.  Same for GS after arch_prctl(ARCH_SET_GS).
 *
 * A child loads 0x2b into FS (then, in a second child, into GS) in each of
 * many rounds and hands the CPU back to the parent through a pipe; the
 * parent checks its thread pointer, a __thread counter and errno (or the
 * word at %gs:0) every round.  As on Linux, the child itself then sees
 * base 0 from ARCH_GET_FS / ARCH_GET_GS, keeps selector 0x2b, and keeps
 * both across the switches.  The child uses no TLS after the load: only
 * raw syscalls, results reported through its exit status.
 *
 * Only noted, not checked: Linux keeps segment selectors per task, so the
 * parent's %fs and %gs still read 0; a kernel that does not switch
 * selectors shows the child's 0x2b in the parent.
 */
#include "entry.h"

#define ROUNDS 100

static __thread volatile long tls_counter = 1000;
static unsigned long gs_block[8] __attribute__((aligned(64))) = {
	0x6a5b4c3d2e1f0a9bUL, 0x1122334455667788UL,
};

static inline unsigned long read_fs0(void)
{
	unsigned long v;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	return v;
}

static inline unsigned long read_gs0(void)
{
	unsigned long v;

	__asm__ volatile("mov %%gs:0, %0" : "=r"(v));
	return v;
}

static inline unsigned sel_fs(void)
{
	unsigned v;

	__asm__ volatile("mov %%fs, %0" : "=r"(v));
	return v & 0xffff;
}

static inline unsigned sel_gs(void)
{
	unsigned v;

	__asm__ volatile("mov %%gs, %0" : "=r"(v));
	return v & 0xffff;
}

/* Child exit codes. */
enum {
	C_OK = 0,
	C_PIPE = 2,      /* the pipe ping-pong failed */
	C_BASE_NOW = 3,  /* ARCH_GET_* != 0 right after the load */
	C_BASE_LATER = 4,/* ARCH_GET_* != 0 after the switches */
	C_SEL = 5,       /* the selector did not stay 0x2b */
	C_SEGV = 6,      /* the child faulted (see its message) */
};

/* What the parent is doing, for the SIGSEGV report (no TLS in there). */
static const char *volatile stage = "setup";
static volatile int in_child;

static void say(const char *s)
{
	t_sc3(SYS_write, 1, (long)s, (long)strlen(s));
}

/* A fault in the parent: most likely its FS or GS base is wrong.  The
 * report uses raw syscalls only, since TLS may be what is broken. */
static void on_segv(int s, siginfo_t *si, void *c)
{
	(void)s;
	(void)si;
	(void)c;
	if (in_child) {
		say("  check failed: the child got SIGSEGV after loading a "
		    "segment register\n");
		t_sc3(SYS_exit_group, C_SEGV, 0, 0);
	}
	say("  check failed: parent got SIGSEGV while ");
	say(stage);
	say(" after the child loaded a segment register (its base was not "
	    "restored when the parent was switched back in)\n");
	t_sc3(SYS_exit_group, 1, 0, 0);
}


static const char *child_reason(int code)
{
	switch (code) {
	case C_PIPE:
		return "the pipe ping-pong failed";
	case C_BASE_NOW:
		return "arch_prctl GET right after the load is not 0 (Linux "
		       "reports the base the CPU loaded: 0)";
	case C_BASE_LATER:
		return "arch_prctl GET after being switched out and back is "
		       "not 0 (Linux keeps the loaded base 0)";
	case C_SEL:
		return "the child's selector did not stay 0x2b";
	case C_SEGV:
		return "the child faulted";
	default:
		return "unexpected status";
	}
}

/*
 * The child: `rounds` times wait for the parent's token, load 0x2b into
 * FS (gs == 0) or GS (gs == 1), yield, pass the token back.  No TLS.
 */
static int child_loop(int rd, int wr, int gs)
{
	static unsigned long base;
	char tok;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		if (t_sc3(SYS_read, rd, (long)&tok, 1) != 1)
			return C_PIPE;
		if (gs)
			__asm__ volatile("mov %0, %%gs" : : "r"(X86_USER_DS));
		else
			__asm__ volatile("mov %0, %%fs" : : "r"(X86_USER_DS));
		if (i == 0) {
			base = 1;
			t_sc3(SYS_arch_prctl,
			      gs ? X_ARCH_GET_GS : X_ARCH_GET_FS, (long)&base,
			      0);
			if (base != 0)
				return C_BASE_NOW;
		}
		t_sc3(SYS_sched_yield, 0, 0, 0);
		if (t_sc3(SYS_write, wr, (long)&tok, 1) != 1)
			return C_PIPE;
	}
	/* Switched out and in again many times since the load. */
	base = 1;
	t_sc3(SYS_arch_prctl, gs ? X_ARCH_GET_GS : X_ARCH_GET_FS, (long)&base,
	      0);
	if (base != 0)
		return C_BASE_LATER;
	if ((gs ? sel_gs() : sel_fs()) != X86_USER_DS)
		return C_SEL;
	return C_OK;
}

static void run(int gs, unsigned long orig_fs)
{
	int to_child[2], to_parent[2], i, st, bad = 0;
	long start = tls_counter;
	unsigned fs_sel0 = sel_fs(), gs_sel0 = sel_gs();
	char tok = 't';
	pid_t child;

	CHECK_EQ(pipe(to_child), 0);
	CHECK_EQ(pipe(to_parent), 0);
	child = fork();
	if (child == 0) {
		in_child = 1;
		t_sc3(SYS_exit_group,
		      child_loop(to_child[0], to_parent[1], gs), 0, 0);
	}
	CHECK(child > 0);
	/* Only the child holds these ends: its exit ends the ping-pong. */
	close(to_child[0]);
	close(to_parent[1]);
	if (child < 0) {
		close(to_child[1]);
		close(to_parent[0]);
		return;
	}
	for (i = 0; i < ROUNDS; i++) {
		stage = "handing the CPU to the child";
		if (write(to_child[1], &tok, 1) != 1 ||
		    read(to_parent[0], &tok, 1) != 1) {
			t_printf("  check failed: round %d: pipe to the child "
				 "broke (errno %d)\n", i, errno);
			t_failures++;
			break;
		}
		if (gs) {
			stage = "reading %gs:0";
			bad += read_gs0() != gs_block[0];
		}
		stage = "reading the thread pointer at %fs:0";
		bad += read_fs0() != orig_fs;
		stage = "using a __thread variable";
		bad += tls_counter != start + i;
		tls_counter++;
		stage = "using errno";
		errno = 0;
		bad += close(-1) != -1 || errno != EBADF;
	}
	stage = "waiting for the child";
	if (bad) {
		t_printf("  check failed: %s: %d wrong TLS reads in the parent "
			 "after the child loaded %s\n",
			 gs ? "GS" : "FS", bad, gs ? "%gs" : "%fs");
		t_failures++;
	}
	st = t_wait(child);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		if (WIFEXITED(st))
			t_printf("  check failed: %s child: %s\n",
				 gs ? "GS" : "FS",
				 child_reason(WEXITSTATUS(st)));
		else
			t_printf("  check failed: %s child: status %#x\n",
				 gs ? "GS" : "FS", st);
		t_failures++;
	}
	if (sel_fs() != fs_sel0 || sel_gs() != gs_sel0)
		t_note("%s: the parent's selectors changed from fs %#x gs %#x "
		       "to fs %#x gs %#x (Linux keeps them per process)",
		       gs ? "GS" : "FS", fs_sel0, gs_sel0, sel_fs(), sel_gs());
	close(to_child[1]);
	close(to_parent[0]);
}

int main(void)
{
	unsigned long orig_fs = 0, gs_base = 0;

	T_DROP_ROOT_OR_FAIL();
	CHECK_EQ(t_siginfo_action(SIGSEGV, on_segv, 0), 0);
	CHECK_EQ(t_sc3(SYS_arch_prctl, X_ARCH_GET_FS, (long)&orig_fs, 0), 0);
	CHECK(orig_fs != 0);
	CHECK_EQ(read_fs0(), orig_fs);

	run(0, orig_fs);

	CHECK_EQ(t_sc3(SYS_arch_prctl, X_ARCH_SET_GS, (long)gs_block, 0), 0);
	CHECK_EQ(t_sc3(SYS_arch_prctl, X_ARCH_GET_GS, (long)&gs_base, 0), 0);
	CHECK_EQ(gs_base, (unsigned long)gs_block);
	CHECK_EQ(read_gs0(), gs_block[0]);
	run(1, orig_fs);

	stage = "finishing";
	CHECK_EQ(tls_counter, 1000 + 2 * ROUNDS);
	CHECK_EQ(read_fs0(), orig_fs);
	DONE();
}
