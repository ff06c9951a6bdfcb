/* execve from a secondary thread: the other threads are killed, the new
 * image runs with the old pid (the thread group id) as its only thread,
 * and keeps the exec'ing thread's signal mask; this works also after the
 * main thread has already exited. */
#include "next.h"

static char self[PATH_MAX];
static char pidarg[32];

static void *do_exec(void *arg)
{
	char *argv[] = { self, "after-exec", pidarg, NULL };

	(void)arg;
	snprintf(pidarg, sizeof pidarg, "%d", (int)getpid());
	execv(self, argv);
	_exit(50);
}

/* Blocks SIGUSR1 in this thread only, then execs (mask check after). */
static void *do_exec_masked(void *arg)
{
	char *argv[] = { self, "after-exec", pidarg, "masked", NULL };

	(void)arg;
	snprintf(pidarg, sizeof pidarg, "%d", (int)getpid());
	t_block(SIGUSR1, SIG_BLOCK);
	t_msleep(20); /* let the main thread finish exiting */
	execv(self, argv);
	_exit(50);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		t_msleep(100);
	return NULL;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "after-exec")) {
		char buf[4096];
		long long threads;

		/* Same pid; we are the only thread, so tid == pid. */
		if (getpid() != atoi(argv[2]))
			return 20;
		if (t_gettid() != getpid())
			return 21;
		threads = t_proc_kv("/proc/self/status", "Threads:");
		if (threads != -1 && threads != 1)
			return 22;
		if (argc == 4) {
			sigset_t cur;

			sigprocmask(SIG_SETMASK, NULL, &cur);
			if (!sigismember(&cur, SIGUSR1) ||
			    sigismember(&cur, SIGUSR2))
				return 23;
		}
		(void)buf;
		return 0;
	}

	t_self_path(argv[0], self, sizeof self);
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		pthread_create(&t, NULL, sleeper, NULL);
		pthread_create(&t, NULL, sleeper, NULL);
		pthread_create(&t, NULL, do_exec, NULL);
		for (;;)
			t_msleep(100);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);

	/* The main thread exits first; a survivor execs. */
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		pthread_create(&t, NULL, sleeper, NULL);
		pthread_create(&t, NULL, do_exec_masked, NULL);
		pthread_exit(NULL);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	DONE();
}
