/* /proc/<pid>/stat and /proc/<pid>/status of a multi-threaded process
 * report the main thread's state: S while it sleeps, even though another
 * thread keeps running (that one shows R in /proc/<pid>/task/<tid>). */
#include "next.h"
#include <pthread.h>

static volatile int stop;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	while (!stop)
		x++;
	return NULL;
}

static char task_state(pid_t pid, long tid)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)pid, tid);
	if (t_read_file(path, buf, sizeof buf) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

int main(void)
{
	int go[2], back[2];
	pid_t pid;
	long tid = 0;
	char path[64], buf[4096];
	const char *st;

	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(back), 0);
	pid = fork();
	if (pid == 0) {
		pthread_t th;
		char c;

		close(go[1]);
		close(back[0]);
		if (pthread_create(&th, NULL, spin, NULL))
			_exit(2);
		/* Tell the parent the thread's tid via /proc. */
		t_post(back[1]);
		/* The main thread sleeps here until told to finish. */
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		stop = 1;
		pthread_join(th, NULL);
		_exit(0);
	}
	close(go[0]);
	close(back[1]);
	CHECK_EQ(t_await(back[0]), 0);
	{
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		d = opendir(path);
		CHECK(d != NULL);
		while (d && (de = readdir(d)) != NULL)
			if (atol(de->d_name) > 0 && atol(de->d_name) != pid)
				tid = atol(de->d_name);
		if (d)
			closedir(d);
	}
	CHECK(tid > 0);
	CHECK(t_wait_proc_state(pid, "S"));
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	CHECK(t_read_file(path, buf, sizeof buf) > 0);
	st = t_find_line(buf, "State:");
	CHECK(st && strstr(st, "S (sleeping)"));
	CHECK_EQ(task_state(pid, pid), 'S');
	CHECK_EQ(task_state(pid, tid), 'R');
	CHECK_EQ(t_post(go[1]), 0);
	CHECK(t_wait_ok(pid));
	DONE();
}
