/* SIGSEGV from faults: si_code SEGV_MAPERR for unmapped addresses (also
 * kernel ones, and executing an unmapped page), SEGV_ACCERR for protection
 * violations (write to read-only, PROT_NONE, execute of a non-executable
 * page), exact si_addr; a non-canonical address is a #GP (SI_KERNEL, no
 * address); a blocked or ignored SIGSEGV from a fault still kills. */
#include "next.h"

static sigjmp_buf env;
static volatile void *addr;
static volatile int code, signo;

static void on_segv(int s, siginfo_t *si, void *c)
{
	(void)c;
	signo = s;
	addr = si->si_addr;
	code = si->si_code;
	siglongjmp(env, 1);
}

static int probe_read(volatile char *p)
{
	signo = 0;
	if (sigsetjmp(env, 1) == 0) {
		(void)*p;
		return 0;
	}
	return 1;
}

static int probe_write(volatile char *p)
{
	signo = 0;
	if (sigsetjmp(env, 1) == 0) {
		*p = 1;
		return 0;
	}
	return 1;
}

int main(void)
{
	char *ro, *rw;
	pid_t pid;
	int st;

	CHECK_EQ(t_siginfo_action(SIGSEGV, on_segv, 0), 0);

	/* NULL + 16. */
	CHECK_EQ(probe_read((volatile char *)16), 1);
	CHECK_EQ(signo, SIGSEGV);
	CHECK_EQ(code, SEGV_MAPERR);
	CHECK(addr == (void *)16);

	/* An unmapped page. */
	CHECK_EQ(probe_write((volatile char *)0xdead0123UL), 1);
	CHECK_EQ(code, SEGV_MAPERR);
	CHECK(addr == (void *)0xdead0123UL);

	/* Read-only page: read works, write is SEGV_ACCERR. */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED);
	CHECK_EQ(probe_read(ro + 8), 0);
	CHECK_EQ(probe_write(ro + 100), 1);
	CHECK_EQ(code, SEGV_ACCERR);
	CHECK(addr == ro + 100);

	/* PROT_NONE: even reads fault. */
	CHECK_EQ(mprotect(ro, 4096, PROT_NONE), 0);
	CHECK_EQ(probe_read(ro + 5), 1);
	CHECK_EQ(code, SEGV_ACCERR);
	CHECK(addr == ro + 5);

	/* PROT_NONE write: also a protection violation. */
	CHECK_EQ(probe_write(ro + 6), 1);
	CHECK_EQ(code, SEGV_ACCERR);
	CHECK(addr == ro + 6);

	/* A kernel address: no mapping the program can use. */
	CHECK_EQ(probe_read((volatile char *)0xffffffff81000000UL), 1);
	CHECK_EQ(code, SEGV_MAPERR);
	CHECK(addr == (void *)0xffffffff81000000UL);

	/* A non-canonical address is a general-protection fault. */
	CHECK_EQ(probe_read((volatile char *)0x8000000000000000UL), 1);
	CHECK_EQ(signo, SIGSEGV);
	CHECK_EQ(code, SI_KERNEL);
	CHECK(addr == NULL);

	/* Executing a non-executable page. */
	rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(rw != MAP_FAILED);
	rw[0] = (char)0xc3; /* ret */
	signo = 0;
	if (sigsetjmp(env, 1) == 0)
		((void (*)(void))rw)();
	CHECK_EQ(signo, SIGSEGV);
	CHECK_EQ(code, SEGV_ACCERR);
	CHECK(addr == rw);
	/* Executing an unmapped page. */
	{
		char *gone = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(gone != MAP_FAILED);
		CHECK_EQ(munmap(gone, 4096), 0);
		signo = 0;
		if (sigsetjmp(env, 1) == 0)
			((void (*)(void))gone)();
		CHECK_EQ(signo, SIGSEGV);
		CHECK_EQ(code, SEGV_MAPERR);
		CHECK(addr == gone);
	}
	/* Once executable, it runs. */
	CHECK_EQ(mprotect(rw, 4096, PROT_READ | PROT_EXEC), 0);
	signo = 0;
	if (sigsetjmp(env, 1) == 0)
		((void (*)(void))rw)();
	CHECK_EQ(signo, 0);

	/* The handler's mask was restored by siglongjmp: still catching. */
	CHECK_EQ(probe_read((volatile char *)24), 1);

	/* Blocked SIGSEGV from a fault: killed anyway. */
	pid = fork();
	if (pid == 0) {
		t_block(SIGSEGV, SIG_BLOCK);
		(void)*(volatile char *)0xdead0000UL;
		_exit(0);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	/* Ignored SIGSEGV from a fault: killed anyway. */
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_IGN);
		(void)*(volatile char *)0xdead0000UL;
		_exit(0);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	DONE();
}
