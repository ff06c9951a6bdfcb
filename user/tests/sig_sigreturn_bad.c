/* rt_sigreturn with an unreadable or garbage frame kills the caller with
 * SIGSEGV (and nothing else). */
#include "next.h"

int main(void)
{
	pid_t pid;
	int st;

	/* Stack pointer at an unmapped address. */
	pid = fork();
	if (pid == 0) {
		__asm__ volatile("mov $0xdead0000, %%rsp\n\t"
				 "mov %0, %%eax\n\t"
				 "syscall\n\t"
				 "ud2\n\t"
				 :
				 : "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	/* A zero-filled frame: RIP 0 after "returning". */
	pid = fork();
	if (pid == 0) {
		static char zeros[8192] __attribute__((aligned(16)));

		__asm__ volatile("mov %0, %%rsp\n\t"
				 "mov %1, %%eax\n\t"
				 "syscall\n\t"
				 "ud2\n\t"
				 :
				 : "r"(zeros + 4096), "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	/* A frame of 0xff bytes (non-canonical everything). */
	pid = fork();
	if (pid == 0) {
		static char ff[8192] __attribute__((aligned(16)));

		memset(ff, 0xff, sizeof ff);
		__asm__ volatile("mov %0, %%rsp\n\t"
				 "mov %1, %%eax\n\t"
				 "syscall\n\t"
				 "ud2\n\t"
				 :
				 : "r"(ff + 4096), "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(1);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st));
	CHECK(WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGBUS);
	DONE();
}
