/*
 * xmm.h - inline-assembly pieces the FPU tests share: load xmm0-15 from
 * 256 bytes at an input operand, store them to an output operand, and
 * the clobber list naming them.
 *
 *   __asm__ volatile(XMM_LOAD(in) "syscall\n\t" XMM_STORE(out)
 *                    : ... : [in] "r"(in), [out] "r"(out) : XMM_CLOBBERS);
 */
#ifndef TRELLIS_XMM_H
#define TRELLIS_XMM_H

#define XMM_LOAD(b)                                                         \
	"movdqu 0(%[" #b "]), %%xmm0\n\tmovdqu 16(%[" #b "]), %%xmm1\n\t"   \
	"movdqu 32(%[" #b "]), %%xmm2\n\tmovdqu 48(%[" #b "]), %%xmm3\n\t"  \
	"movdqu 64(%[" #b "]), %%xmm4\n\tmovdqu 80(%[" #b "]), %%xmm5\n\t"  \
	"movdqu 96(%[" #b "]), %%xmm6\n\tmovdqu 112(%[" #b "]), %%xmm7\n\t" \
	"movdqu 128(%[" #b "]), %%xmm8\n\tmovdqu 144(%[" #b "]), %%xmm9\n\t" \
	"movdqu 160(%[" #b "]), %%xmm10\n\tmovdqu 176(%[" #b "]), %%xmm11\n\t" \
	"movdqu 192(%[" #b "]), %%xmm12\n\tmovdqu 208(%[" #b "]), %%xmm13\n\t" \
	"movdqu 224(%[" #b "]), %%xmm14\n\tmovdqu 240(%[" #b "]), %%xmm15\n\t"

#define XMM_STORE(b)                                                        \
	"movdqu %%xmm0, 0(%[" #b "])\n\tmovdqu %%xmm1, 16(%[" #b "])\n\t"   \
	"movdqu %%xmm2, 32(%[" #b "])\n\tmovdqu %%xmm3, 48(%[" #b "])\n\t"  \
	"movdqu %%xmm4, 64(%[" #b "])\n\tmovdqu %%xmm5, 80(%[" #b "])\n\t"  \
	"movdqu %%xmm6, 96(%[" #b "])\n\tmovdqu %%xmm7, 112(%[" #b "])\n\t" \
	"movdqu %%xmm8, 128(%[" #b "])\n\tmovdqu %%xmm9, 144(%[" #b "])\n\t" \
	"movdqu %%xmm10, 160(%[" #b "])\n\tmovdqu %%xmm11, 176(%[" #b "])\n\t" \
	"movdqu %%xmm12, 192(%[" #b "])\n\tmovdqu %%xmm13, 208(%[" #b "])\n\t" \
	"movdqu %%xmm14, 224(%[" #b "])\n\tmovdqu %%xmm15, 240(%[" #b "])\n\t"

#define XMM_CLOBBERS                                                        \
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

#endif
