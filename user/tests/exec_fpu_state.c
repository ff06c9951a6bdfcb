/* The FPU/SSE state across fork and execve: the child of a fork starts
 * with the parent's registers (xmm0-15, MXCSR, the x87 control word) as
 * they were at the system call, and changes in either leave the other's
 * alone; a program started by execve gets the initial state (MXCSR
 * 0x1f80, x87 control word 0x37f) whatever the caller had. */
#include "next.h"
#include "xmm.h"

static uint32_t in[16][4], out[16][4];

/* Loads in[] into xmm0-15, MXCSR 0x3f80 (round down) and the x87 control
 * word 0x27f (53-bit precision), makes a raw fork, stores xmm0-15 into
 * out[] and the control registers into *mx / *cw, and puts the defaults
 * back. Returns fork's result. */
static long fork_holding(unsigned *mx, unsigned short *cw)
{
	unsigned m = 0x3f80, def = 0x1f80, ma = 0;
	unsigned short c = 0x27f, cdef = 0x37f, ca = 0;
	long ret;

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
		: "a"((long)SYS_fork), [in] "r"(in), [out] "r"(out),
		  [m] "m"(m), [c] "m"(c), [def] "m"(def), [cdef] "m"(cdef)
		: "rcx", "r11", "memory", XMM_CLOBBERS);
	*mx = ma;
	*cw = ca;
	return ret;
}

static int same_xmm(void)
{
	return memcmp(in, out, sizeof in) == 0;
}

int main(int argc, char **argv)
{
	unsigned mx;
	unsigned short cw;
	long pid;
	int i, j, st;

	if (argc == 2 && strcmp(argv[1], "exec-child") == 0) {
		/* Nothing before main() changes MXCSR or the x87 control word. */
		__asm__ volatile("stmxcsr %0" : "=m"(mx));
		__asm__ volatile("fnstcw %0" : "=m"(cw));
		if (mx != 0x1f80)
			return 2;
		if (cw != 0x37f)
			return 3;
		return 0;
	}

	for (i = 0; i < 16; i++)
		for (j = 0; j < 4; j++)
			in[i][j] = 0xc0000000u + (unsigned)(i << 8) + (unsigned)j;
	pid = fork_holding(&mx, &cw);
	if (pid == 0) {
		/* The child's registers are the parent's at the fork. */
		if (!same_xmm())
			_exit(10);
		if (mx != 0x3f80)
			_exit(11);
		if (cw != 0x27f)
			_exit(12);
		/* execve with a non-default state: the new program starts
		 * from the initial one. */
		{
			unsigned m = 0x7f80;
			unsigned short c = 0x7f;
			char *args[] = { argv[0], "exec-child", NULL };

			__asm__ volatile("ldmxcsr %0" : : "m"(m));
			__asm__ volatile("fldcw %0" : : "m"(c));
			execv("/proc/self/exe", args);
			_exit(13);
		}
	}
	CHECK(pid > 0);
	CHECK(same_xmm());
	CHECK_EQ(mx, 0x3f80);
	CHECK_EQ(cw, 0x27f);
	CHECK_EQ(waitpid((pid_t)pid, &st, 0), (pid_t)pid);
	CHECK(WIFEXITED(st));
	if (WIFEXITED(st) && WEXITSTATUS(st))
		t_note("child exit status %d", WEXITSTATUS(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	/* The child's changes (its own MXCSR, the exec) left ours alone. */
	__asm__ volatile("stmxcsr %0" : "=m"(mx));
	CHECK_EQ(mx, 0x1f80);
	DONE();
}
