/* fork from a secondary thread: the child has one thread, whose tid is the
 * new pid; it can use libc and exit normally. */
#include "next.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *forker(void *arg)
{
	pid_t pid;
	int st;

	(void)arg;
	pid = fork();
	if (pid == 0) {
		long long threads = t_proc_kv("/proc/self/status", "Threads:");

		if (t_gettid() != getpid())
			_exit(2);
		if (threads != -1 && threads != 1)
			_exit(3);
		if (pthread_mutex_lock(&m) != 0)
			_exit(4);
		pthread_mutex_unlock(&m);
		_exit(9);
	}
	if (pid < 0)
		return (void *)-1L;
	st = t_wait(pid);
	return (void *)(long)st;
}

static void *idle(void *arg)
{
	while (!*(volatile int *)arg)
		t_msleep(1);
	return NULL;
}

int main(void)
{
	pthread_t t, i;
	void *ret;
	int stop = 0;

	CHECK_EQ(pthread_create(&i, NULL, idle, &stop), 0);
	CHECK_EQ(pthread_create(&t, NULL, forker, NULL), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK(WIFEXITED((int)(long)ret));
	CHECK_EQ(WEXITSTATUS((int)(long)ret), 9);
	stop = 1;
	CHECK_EQ(pthread_join(i, NULL), 0);

	/* The parent of a child forked by a thread is the process. */
	{
		pid_t pid = fork();

		if (pid == 0)
			_exit(getppid() > 0 ? 0 : 1);
		CHECK(t_wait_ok(pid));
	}
	DONE();
}
