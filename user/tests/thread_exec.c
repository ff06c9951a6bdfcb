/* execve from a secondary thread: the other threads are killed, the new
 * image runs with the old pid (the thread group id) as its only thread. */
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

	if (argc == 3 && !strcmp(argv[1], "after-exec")) {
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
	DONE();
}
