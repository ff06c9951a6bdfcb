/* /proc/<pid>/stat in the layout busybox ps/top parse: "pid (comm) S ppid
 * pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
 * stime cutime cstime priority nice num_threads itrealvalue starttime
 * vsize rss ..." with at least 44 fields; comm with spaces and parens;
 * states R/S/T/Z; utime grows with CPU use. */
#include "next.h"
#include <sys/prctl.h>

struct pstat {
	int pid, ppid, pgrp, session, tty, tpgid;
	char comm[64], state;
	unsigned long utime, stime;
	long nice, threads;
	unsigned long long start;
	unsigned long vsize;
	long rss;
	int fields;
};

static int parse(pid_t pid, struct pstat *ps)
{
	char path[64], buf[2048], *open_, *close_, *p, *tok;
	int i;

	memset(ps, 0, sizeof *ps);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (t_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	ps->pid = atoi(buf);
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_ < open_)
		return -1;
	snprintf(ps->comm, sizeof ps->comm, "%.*s", (int)(close_ - open_ - 1),
		 open_ + 1);
	p = close_ + 2;
	ps->fields = 2;
	for (i = 3; (tok = strsep(&p, " \n")) != NULL; i++) {
		if (!*tok)
			break;
		ps->fields = i;
		switch (i) {
		case 3: ps->state = tok[0]; break;
		case 4: ps->ppid = atoi(tok); break;
		case 5: ps->pgrp = atoi(tok); break;
		case 6: ps->session = atoi(tok); break;
		case 7: ps->tty = atoi(tok); break;
		case 8: ps->tpgid = atoi(tok); break;
		case 14: ps->utime = strtoul(tok, NULL, 10); break;
		case 15: ps->stime = strtoul(tok, NULL, 10); break;
		case 19: ps->nice = atol(tok); break;
		case 20: ps->threads = atol(tok); break;
		case 22: ps->start = strtoull(tok, NULL, 10); break;
		case 23: ps->vsize = strtoul(tok, NULL, 10); break;
		case 24: ps->rss = atol(tok); break;
		}
	}
	return 0;
}

int main(void)
{
	struct pstat ps;
	pid_t pid;
	int p[2];

	CHECK_EQ(parse(getpid(), &ps), 0);
	CHECK_EQ(ps.pid, getpid());
	CHECK_EQ(ps.ppid, getppid());
	CHECK_EQ(ps.pgrp, getpgrp());
	CHECK_EQ(ps.session, getsid(0));
	CHECK_EQ(ps.state, 'R');
	CHECK(ps.fields >= 44);
	CHECK_EQ(ps.threads, 1);
	CHECK_EQ(ps.nice, getpriority(PRIO_PROCESS, 0));
	CHECK(ps.vsize > 0);
	/* Linux reads RSS here from approximate per-CPU counters, so a
	 * small process may show 0; Trellis must show the real value. */
	CHECK(ps.rss >= 0);
	if (t_is_trellis())
		CHECK(ps.rss > 0);
	CHECK(strcmp(ps.comm, "procfs_pid_stat") == 0);

	/* utime (clock ticks) grows with CPU use. */
	{
		unsigned long before = ps.utime + ps.stime;

		t_burn_cpu(300000000LL);
		CHECK_EQ(parse(getpid(), &ps), 0);
		CHECK(ps.utime + ps.stime >= before + 20);
	}

	/* A comm with spaces and a parenthesis. */
	CHECK_EQ(prctl(PR_SET_NAME, "a b) c", 0, 0, 0), 0);
	CHECK_EQ(parse(getpid(), &ps), 0);
	CHECK(strcmp(ps.comm, "a b) c") == 0);
	CHECK_EQ(ps.ppid, getppid());

	/* Sleeping, stopped and zombie children. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		t_await(p[0]);
		_exit(0);
	}
	close(p[0]);
	CHECK(t_wait_proc_state(pid, "S"));
	CHECK_EQ(parse(pid, &ps), 0);
	CHECK_EQ(ps.ppid, getpid());
	CHECK(ps.start >= 1);
	kill(pid, SIGSTOP);
	CHECK_EQ(waitpid(pid, NULL, WUNTRACED), pid);
	CHECK_EQ(parse(pid, &ps), 0);
	CHECK_EQ(ps.state, 'T');
	kill(pid, SIGCONT);
	close(p[1]);
	CHECK(t_wait_proc_state(pid, "Z"));
	CHECK_EQ(parse(pid, &ps), 0);
	CHECK_EQ(ps.state, 'Z');
	CHECK(t_wait_ok(pid));
	CHECK_EQ(parse(pid, &ps), -1);

	/* Threads are counted. */
	{
		pthread_t t;
		int stop = 0;
		extern void *procfs_idle(void *);

		pthread_create(&t, NULL, procfs_idle, &stop);
		CHECK_EQ(parse(getpid(), &ps), 0);
		CHECK_EQ(ps.threads, 2);
		stop = 1;
		pthread_join(t, NULL);
	}
	DONE();
}

void *procfs_idle(void *arg)
{
	while (!*(volatile int *)arg)
		t_msleep(1);
	return NULL;
}
