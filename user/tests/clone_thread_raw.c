/* Raw clone with the thread flag set glibc and musl use: shared memory,
 * same pid, new tid, PARENT_SETTID, CHILD_CLEARTID + futex wake, SETTLS;
 * threads are not waitable children. */
#include "next.h"

#define THREAD_FLAGS                                                        \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | \
	 CLONE_SYSVSEM)

struct shared {
	long tid, pid, ppid;
	unsigned long fs0, fs8, fsbase;
	int ran;
};

static int thread_fn(void *arg)
{
	struct shared *s = arg;

	s->tid = syscall(SYS_gettid);
	s->pid = syscall(SYS_getpid);
	s->ppid = syscall(SYS_getppid);
	__atomic_store_n(&s->ran, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int tls_fn(void *arg)
{
	struct shared *s = arg;
	unsigned long v0, v8, base = 0;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(v0));
	__asm__ volatile("mov %%fs:8, %0" : "=r"(v8));
	/* ARCH_GET_FS with an inline syscall (no errno). */
	{
		long r;
		__asm__ volatile("syscall"
				 : "=a"(r)
				 : "a"((long)SYS_arch_prctl), "D"(0x1003L),
				   "S"(&base)
				 : "rcx", "r11", "memory");
	}
	s->fs0 = v0;
	s->fs8 = v8;
	s->fsbase = base;
	return 0;
}

static void wait_cleared(volatile int *ctid)
{
	int v;

	while ((v = __atomic_load_n(ctid, __ATOMIC_SEQ_CST)) != 0)
		syscall(SYS_futex, ctid, FUTEX_WAIT, v, NULL, NULL, 0);
}

int main(void)
{
	static struct shared s;
	static unsigned long tls_block[8];
	int ptid = 0, ctid = -1, st;
	long tid;

	tid = t_clone(THREAD_FLAGS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
		      t_stack(65536), &ptid, &ctid, 0, thread_fn, &s);
	CHECK(tid > 0);
	/* PARENT_SETTID wrote the tid before clone returned. */
	CHECK_EQ(ptid, tid);
	wait_cleared(&ctid);
	CHECK_EQ(ctid, 0);
	CHECK_EQ(s.ran, 1);
	CHECK_EQ(s.tid, tid);
	CHECK_EQ(s.pid, getpid());
	CHECK_EQ(s.ppid, getppid());
	CHECK(tid != getpid());

	/* Threads cannot be waited for. */
	CHECK_ERR(wait4((pid_t)tid, &st, WNOHANG | __WALL, NULL), ECHILD);
	CHECK_ERR(wait4(-1, &st, WNOHANG, NULL), ECHILD);

	/* SETTLS: the thread's %fs points at our block (whose first word,
	 * by the x86-64 ABI, points to itself). */
	tls_block[0] = (unsigned long)tls_block;
	tls_block[1] = 0x1122334455667788UL;
	ctid = -1;
	tid = t_clone(THREAD_FLAGS | CLONE_SETTLS | CLONE_CHILD_CLEARTID,
		      t_stack(65536), NULL, &ctid, (unsigned long)tls_block,
		      tls_fn, &s);
	CHECK(tid > 0);
	wait_cleared(&ctid);
	CHECK_EQ(s.fs0, (unsigned long)tls_block);
	CHECK_EQ(s.fs8, 0x1122334455667788UL);
	CHECK_EQ(s.fsbase, (unsigned long)tls_block);

	/* Our own TLS is untouched. */
	{
		unsigned long mine;

		__asm__ volatile("mov %%fs:0, %0" : "=r"(mine));
		CHECK(mine != (unsigned long)tls_block);
		errno = 0;
		CHECK_EQ(errno, 0);
	}
	DONE();
}
