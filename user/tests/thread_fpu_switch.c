/* Each thread and each process keeps its own FPU/SSE registers while
 * others run on the same CPU: threads and a forked child load their own
 * values into xmm0-15 and MXCSR, then keep them there across many
 * sched_yield() system calls (switches to the others) or through a long
 * loop with no system call (preempted by the timer), and check at the end
 * that every register still holds its own value. */
#include "next.h"
#include "xmm.h"

#define THREADS 4
#define YIELDS 3000
#define SPIN 30000000L

struct regs {
	uint32_t xmm[16][4];
	uint32_t mxcsr;
};

static void fill(struct regs *r, unsigned seed)
{
	int i, j;

	for (i = 0; i < 16; i++)
		for (j = 0; j < 4; j++)
			r->xmm[i][j] = seed * 0x01010101u + (unsigned)(i * 4 + j);
	/* A rounding mode of its own (bits 13-14), all exceptions masked. */
	r->mxcsr = 0x1f80 | ((seed & 3u) << 13);
}

/* Loads `in` into the registers, then either makes `yields` sched_yield
 * calls or spins `spin` times without a system call, then stores the
 * registers into `out`. */
static void hold(const struct regs *in, struct regs *out, long yields, long spin)
{
	__asm__ volatile(
		"ldmxcsr 256(%[in])\n\t"
		XMM_LOAD(in)
		"mov %[yields], %%r8\n\t"
		"1: test %%r8, %%r8\n\t"
		"jz 2f\n\t"
		"mov %[nr], %%eax\n\t"
		"syscall\n\t"
		"dec %%r8\n\t"
		"jmp 1b\n\t"
		"2: mov %[spin], %%r8\n\t"
		"3: test %%r8, %%r8\n\t"
		"jz 4f\n\t"
		"dec %%r8\n\t"
		"jmp 3b\n\t"
		"4: "
		XMM_STORE(out)
		"stmxcsr 256(%[out])\n\t"
		"ldmxcsr %[def]\n\t"
		:
		: [in] "r"(in), [out] "r"(out), [yields] "r"(yields),
		  [spin] "r"(spin), [nr] "i"(SYS_sched_yield),
		  [def] "m"((unsigned){ 0x1f80 })
		: "rax", "rcx", "r8", "r11", "memory", "cc", XMM_CLOBBERS);
}

/* 0 when the registers came back as loaded, else the first wrong one + 1
 * (17: MXCSR). */
static int run(unsigned seed, long yields, long spin)
{
	struct regs in, out;
	int i;

	fill(&in, seed);
	memset(&out, 0, sizeof out);
	hold(&in, &out, yields, spin);
	for (i = 0; i < 16; i++)
		if (memcmp(in.xmm[i], out.xmm[i], 16) != 0)
			return i + 1;
	return out.mxcsr == in.mxcsr ? 0 : 17;
}

static volatile int go;
static int result[THREADS];

static void *worker(void *arg)
{
	long id = (long)arg;

	while (!go)
		sched_yield();
	/* Odd threads switch through system calls, even ones are preempted. */
	result[id] = run(0x10u + (unsigned)id, id & 1 ? YIELDS : 0,
			 id & 1 ? 0 : SPIN);
	return NULL;
}

static int child(void *arg)
{
	(void)arg;
	return run(0x77u, YIELDS, SPIN / 2);
}

int main(void)
{
	pthread_t th[THREADS];
	pid_t pid;
	int i, st;

	/* A process of its own beside the threads, and the main thread too. */
	pid = t_fork_fn(child, NULL);
	CHECK(pid > 0);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, (void *)(long)i), 0);
	go = 1;
	CHECK_EQ(run(0x5au, YIELDS, 0), 0);
	for (i = 0; i < THREADS; i++) {
		CHECK_EQ(pthread_join(th[i], NULL), 0);
		if (result[i])
			t_note("thread %d: register %d changed", i, result[i] - 1);
		CHECK_EQ(result[i], 0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	DONE();
}
