/* exit_group from any thread ends every thread; SYS_exit ends only the
 * calling thread. */
#include "next.h"

static int never;
static int pfd[2];

static void *blocker(void *arg)
{
	(void)arg;
	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT, 0, NULL, NULL, 0);
	return NULL;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	for (;;)
		(void)!read(pfd[0], &c, 1);
	return NULL;
}

static void *spinner(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;)
		x++;
	return NULL;
}

static void *exiter(void *arg)
{
	t_msleep(20);
	exit((int)(long)arg);
}

static void start_busy_threads(void)
{
	pthread_t t;

	if (pipe(pfd) != 0)
		_exit(100);
	if (pthread_create(&t, NULL, blocker, NULL) ||
	    pthread_create(&t, NULL, reader, NULL) ||
	    pthread_create(&t, NULL, spinner, NULL) ||
	    pthread_create(&t, NULL, blocker, NULL))
		_exit(101);
}

static int raw_exit_thread(void *arg)
{
	__atomic_store_n((int *)arg, 1, __ATOMIC_SEQ_CST);
	return 0; /* t_clone's trampoline calls SYS_exit */
}

int main(void)
{
	pid_t pid;
	int st;

	/* A secondary thread calls exit(): status is its code, and the main
	 * thread blocked in pthread_join is gone too. */
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		start_busy_threads();
		pthread_create(&t, NULL, exiter, (void *)7L);
		pthread_join(t, NULL);
		_exit(99); /* not reached */
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 7);

	/* The main thread calls _exit() while others block and spin. */
	pid = fork();
	if (pid == 0) {
		start_busy_threads();
		t_msleep(20);
		_exit(3);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 3);

	/* A fatal signal to one thread kills the whole group. */
	pid = fork();
	if (pid == 0) {
		start_busy_threads();
		t_msleep(10);
		t_tgkill(getpid(), t_gettid(), SIGKILL);
		_exit(98);
	}
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	/* SYS_exit in a raw thread ends only that thread. */
	pid = fork();
	if (pid == 0) {
		static int done;
		void *stk = t_stack(65536);
		int ctid = 1;
		long tid;

		tid = t_clone(CLONE_VM | CLONE_FS | CLONE_FILES |
				      CLONE_SIGHAND | CLONE_THREAD |
				      CLONE_SYSVSEM | CLONE_CHILD_CLEARTID,
			      stk, NULL, &ctid, 0, raw_exit_thread, &done);
		if (tid <= 0)
			_exit(10);
		while (__atomic_load_n(&ctid, __ATOMIC_SEQ_CST) != 0)
			syscall(SYS_futex, &ctid, FUTEX_WAIT, (int)tid, NULL,
				NULL, 0);
		_exit(done == 1 ? 42 : 11);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 42);
	DONE();
}
