/* Detached threads; pthread_exit from main keeps the process alive until
 * the last thread ends, then the exit status is 0 (glibc: the last thread
 * returns; musl: it calls _exit(0) while the leader is already a zombie). */
#include "next.h"

static int pfd[2];

static void *late_writer(void *arg)
{
	(void)arg;
	t_msleep(50);
	(void)!write(pfd[1], "ok", 2);
#ifndef __GLIBC__
	/* musl hangs in exit() when the last thread returns after main
	 * called pthread_exit (a libc matter, not the kernel's), so end the
	 * process explicitly from this thread. */
	_exit(0);
#endif
	return NULL;
}

static void *detached(void *arg)
{
	__atomic_store_n((int *)arg, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, arg, FUTEX_WAKE, 1, NULL, NULL, 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_attr_t a;
	int flag = 0, st, ds;
	char buf[4];
	pid_t pid;

	/* A detached thread runs to completion on its own. */
	pthread_attr_init(&a);
	CHECK_EQ(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
	CHECK_EQ(pthread_attr_getdetachstate(&a, &ds), 0);
	CHECK_EQ(ds, PTHREAD_CREATE_DETACHED);
	CHECK_EQ(pthread_create(&t, &a, detached, &flag), 0);
	while (!__atomic_load_n(&flag, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &flag, FUTEX_WAIT, 0, NULL, NULL, 0);
	CHECK_EQ(flag, 1);

	/* pthread_detach on a joinable thread. */
	flag = 0;
	CHECK_EQ(pthread_create(&t, NULL, detached, &flag), 0);
	CHECK_EQ(pthread_detach(t), 0);
	while (!__atomic_load_n(&flag, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &flag, FUTEX_WAIT, 0, NULL, NULL, 0);

	/* Main calls pthread_exit: the other thread still runs and writes. */
	CHECK_EQ(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (pthread_create(&t, NULL, late_writer, NULL) != 0)
			_exit(3);
		pthread_exit(NULL);
	}
	CHECK(pid > 0);
	close(pfd[1]);
	CHECK_EQ(read(pfd[0], buf, sizeof buf), 2);
	CHECK_EQ(read(pfd[0], buf, sizeof buf), 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(pfd[0]);
	DONE();
}
