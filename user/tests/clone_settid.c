/* CLONE_PARENT_SETTID, CLONE_CHILD_SETTID and CLONE_CHILD_CLEARTID, for
 * fork-like and thread-like children; set_tid_address clearing on exit. */
#include "next.h"

static int child_tid_word = -7;

static int report_settid(void *arg)
{
	(void)arg;
	/* CHILD_SETTID wrote our tid into our (copied) memory. */
	return child_tid_word == syscall(SYS_gettid) ? 0 : 1;
}

static int sleep_then_exit(void *arg)
{
	(void)arg;
	t_msleep(20);
	return 0;
}

static int set_addr_and_exit(void *arg)
{
	long r;

	/* Inline syscall: this raw thread has no TLS of its own. */
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"((long)SYS_set_tid_address), "D"(arg)
			 : "rcx", "r11", "memory");
	t_msleep(10);
	return r > 0 ? 0 : 1;
}

int main(void)
{
	int ptid = 0, st;
	long pid;
	static volatile int cleartid;

	/* Fork-like child with PARENT_SETTID | CHILD_SETTID. */
	child_tid_word = -7;
	pid = t_clone(CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | SIGCHLD,
		      t_stack(65536), &ptid, &child_tid_word, 0, report_settid,
		      NULL);
	CHECK(pid > 0);
	CHECK_EQ(ptid, pid);
	/* Our copy was not written (the child's memory is private). */
	CHECK_EQ(child_tid_word, -7);
	st = t_wait((pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Thread-like child with CHILD_CLEARTID: the word is zeroed and
	 * waiters are woken when it exits. */
	cleartid = 12345;
	pid = t_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			      CLONE_THREAD | CLONE_CHILD_SETTID |
			      CLONE_CHILD_CLEARTID,
		      t_stack(65536), NULL, (int *)&cleartid, 0,
		      sleep_then_exit, NULL);
	CHECK(pid > 0);
	for (;;) {
		int v = cleartid;

		if (v == 0)
			break;
		/* Still our value (the child has not run yet: CHILD_SETTID
		 * is written as it starts), or its tid. */
		if (v == 12345) {
			t_msleep(1);
			continue;
		}
		if (v != pid) {
			CHECK_EQ(v, pid);
			break;
		}
		syscall(SYS_futex, &cleartid, FUTEX_WAIT, v, NULL, NULL, 0);
	}
	CHECK_EQ(cleartid, 0);

	/* set_tid_address inside a thread replaces the CLEARTID word: the
	 * kernel clears (and wakes) the new one at exit, not the old one. */
	{
		static volatile int word = 99, old = 77;

		pid = t_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				      CLONE_THREAD | CLONE_CHILD_CLEARTID,
			      t_stack(65536), NULL, (int *)&old, 0,
			      set_addr_and_exit, (void *)&word);
		CHECK(pid > 0);
		while (word != 0)
			syscall(SYS_futex, &word, FUTEX_WAIT, 99, NULL, NULL, 0);
		CHECK_EQ(word, 0);
		CHECK_EQ(old, 77);
	}
	DONE();
}
