/* The FPU/SSE state across a signal handler: the handler starts with a
 * clean state (MXCSR 0x1f80, x87 control word 0x37f), the ucontext holds
 * the interrupted values, whatever the handler does to the registers is
 * undone by sigreturn, and edits to the saved state in the ucontext are
 * applied.  With AVX, the upper YMM halves are preserved too. */
#include "next.h"
#include "xmm.h"
#include <cpuid.h>
#include <ucontext.h>

static uint32_t in[16][4], out[16][4];
static volatile unsigned h_mxcsr, h_fcw;
static volatile int h_ctx_ok, h_mode;

static void on_sig(int s, siginfo_t *si, void *vctx)
{
	ucontext_t *uc = vctx;
	uint32_t junk[4] = { 0xdeadbeef, 0xdeadbeef, 0xdeadbeef, 0xdeadbeef };
	unsigned short cw;
	int i, ok = 1;

	(void)s;
	(void)si;
	{
		unsigned m;

		__asm__ volatile("stmxcsr %0" : "=m"(m));
		h_mxcsr = m;
	}
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	h_fcw = cw;
	/* The saved state is the interrupted one. */
	if (!uc->uc_mcontext.fpregs)
		ok = 0;
	else {
		for (i = 0; i < 16; i++)
			if (memcmp(uc->uc_mcontext.fpregs->_xmm[i].element, in[i],
				   16))
				ok = 0;
		if (uc->uc_mcontext.fpregs->mxcsr != 0x5f80)
			ok = 0;
		if (uc->uc_mcontext.fpregs->cwd != 0x27f)
			ok = 0;
	}
	h_ctx_ok = ok;
	/* Trash every register. */
	__asm__ volatile("movdqu %0, %%xmm0\n\tmovdqa %%xmm0, %%xmm1\n\t"
			 "movdqa %%xmm0, %%xmm2\n\tmovdqa %%xmm0, %%xmm3\n\t"
			 "movdqa %%xmm0, %%xmm4\n\tmovdqa %%xmm0, %%xmm5\n\t"
			 "movdqa %%xmm0, %%xmm6\n\tmovdqa %%xmm0, %%xmm7\n\t"
			 "movdqa %%xmm0, %%xmm8\n\tmovdqa %%xmm0, %%xmm9\n\t"
			 "movdqa %%xmm0, %%xmm10\n\tmovdqa %%xmm0, %%xmm11\n\t"
			 "movdqa %%xmm0, %%xmm12\n\tmovdqa %%xmm0, %%xmm13\n\t"
			 "movdqa %%xmm0, %%xmm14\n\tmovdqa %%xmm0, %%xmm15\n\t"
			 :
			 : "m"(junk)
			 : XMM_CLOBBERS);
	{
		unsigned m = 0x7f80;
		unsigned short c = 0x7f;

		__asm__ volatile("ldmxcsr %0" : : "m"(m));
		__asm__ volatile("fldcw %0" : : "m"(c));
	}
	/* Mode 1: edit the saved xmm3 and MXCSR in the ucontext. */
	if (h_mode == 1 && uc->uc_mcontext.fpregs) {
		for (i = 0; i < 4; i++)
			uc->uc_mcontext.fpregs->_xmm[3].element[i] = 0x33330000u + (unsigned)i;
		uc->uc_mcontext.fpregs->mxcsr = 0x3f80;
	}
}

/* Load in[] into xmm0-15, MXCSR 0x5f80 and FCW 0x27f, signal ourselves
 * with an inline syscall, then store xmm0-15 into out[] and MXCSR/FCW. */
static void run(unsigned *mxcsr_after, unsigned *fcw_after)
{
	unsigned m = 0x5f80, ma = 0, def = 0x1f80;
	unsigned short c = 0x27f, ca = 0, cdef = 0x37f;
	long pid = getpid(), tid = t_gettid(), ret;

	__asm__ volatile(
		"ldmxcsr %[m]\n\t"
		"fldcw %[c]\n\t"
		XMM_LOAD(in)
		"syscall\n\t"
		XMM_STORE(out)
		"stmxcsr %[ma]\n\t"
		"fnstcw %[ca]\n\t"
		"ldmxcsr %[def]\n\t"
		"fldcw %[cdef]\n\t"
		: "=a"(ret), [ma] "=m"(ma), [ca] "=m"(ca)
		: "a"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"((long)SIGUSR1),
		  [in] "r"(in), [out] "r"(out), [m] "m"(m), [c] "m"(c),
		  [def] "m"(def), [cdef] "m"(cdef)
		: "rcx", "r11", "memory", XMM_CLOBBERS);
	(void)ret;
	*mxcsr_after = ma;
	*fcw_after = ca;
}

static int have_avx(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	if (!(c & (1u << 27)) || !(c & (1u << 28))) /* OSXSAVE, AVX */
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6) == 6;
}

static uint32_t yin[8], yout[8];
static volatile int y_trashed;

static void on_sig_avx(int s)
{
	uint32_t junk[8];

	(void)s;
	memset(junk, 0x77, sizeof junk);
	__asm__ volatile("vmovdqu %0, %%ymm5" : : "m"(junk) : "xmm5");
	y_trashed = 1;
}

int main(void)
{
	unsigned mx, fcw;
	int i, j;

	for (i = 0; i < 16; i++)
		for (j = 0; j < 4; j++)
			in[i][j] = 0x01000000u * (unsigned)(i + 1) + (unsigned)j * 0x11u;
	CHECK_EQ(t_siginfo_action(SIGUSR1, on_sig, 0), 0);

	h_mode = 0;
	run(&mx, &fcw);
	CHECK(h_ctx_ok);
	CHECK_EQ(h_mxcsr, 0x1f80);
	CHECK_EQ(h_fcw, 0x37f);
	for (i = 0; i < 16; i++)
		CHECK(memcmp(in[i], out[i], 16) == 0);
	CHECK_EQ(mx, 0x5f80);
	CHECK_EQ(fcw, 0x27f);

	/* Edits to the saved state take effect on sigreturn. */
	h_mode = 1;
	run(&mx, &fcw);
	for (i = 0; i < 16; i++) {
		if (i == 3) {
			for (j = 0; j < 4; j++)
				CHECK_EQ(out[3][j], 0x33330000u + (unsigned)j);
		} else {
			CHECK(memcmp(in[i], out[i], 16) == 0);
		}
	}
	CHECK_EQ(mx, 0x3f80);

	/* Floating-point arithmetic after the handler is still right. */
	{
		volatile double a = 1.5, b = 2.25;

		t_raise(SIGUSR1);
		CHECK(a * b == 3.375);
	}

	if (have_avx()) {
		long pid = getpid(), tid = t_gettid(), ret;

		for (i = 0; i < 8; i++)
			yin[i] = 0xa0000000u + (unsigned)i;
		CHECK_EQ(t_sigaction(SIGUSR2, on_sig_avx, 0), 0);
		__asm__ volatile("vmovdqu %[yin], %%ymm5\n\t"
				 "syscall\n\t"
				 "vmovdqu %%ymm5, %[yout]\n\t"
				 "vzeroupper\n\t"
				 : "=a"(ret), [yout] "=m"(yout)
				 : "a"((long)SYS_tgkill), "D"(pid), "S"(tid),
				   "d"((long)SIGUSR2), [yin] "m"(yin)
				 : "rcx", "r11", "memory", "xmm5");
		(void)ret;
		CHECK(y_trashed);
		for (i = 0; i < 8; i++)
			CHECK_EQ(yout[i], yin[i]);
	} else {
		t_note("no AVX: YMM upper halves not checked");
	}
	DONE();
}
