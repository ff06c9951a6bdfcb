/*
 * exhaust_fork.h - the flat fork bomb both exhaust_fork_* tests run: one
 * process forks children that only wait to be killed, until fork fails;
 * then it kills and reaps them all, checks that nothing is left, and that
 * fork works again.  Include after next.h and exhaust.h.
 */
#ifndef TRELLIS_EXHAUST_FORK_H
#define TRELLIS_EXHAUST_FORK_H

#define X_MAX_CHILDREN (1 << 16)

struct x_bomb {
	long children; /* forks that succeeded */
	int err;       /* errno of the fork that failed */
	int reaped;    /* children reaped after SIGKILL */
	int killed;    /* of them, killed by SIGKILL */
	int after;     /* fork works again after the reaping */
	int leftover;  /* wait4(-1) found no child left (ECHILD) */
	pid_t min_pid, max_pid; /* of the children */
};

static pid_t x_pids[X_MAX_CHILDREN];

/* Forks until fork fails (or X_MAX_CHILDREN); returns the figures. */
static inline struct x_bomb x_fork_bomb(void)
{
	struct x_bomb r;
	long i;

	memset(&r, 0, sizeof r);
	for (;;) {
		pid_t pid;

		if (r.children == X_MAX_CHILDREN) {
			r.err = 0;
			break;
		}
		pid = fork();
		if (pid < 0) {
			r.err = errno;
			break;
		}
		if (pid == 0) {
			for (;;)
				pause();
		}
		x_pids[r.children++] = pid;
		if (r.children == 1 || pid < r.min_pid)
			r.min_pid = pid;
		if (pid > r.max_pid)
			r.max_pid = pid;
	}
	for (i = 0; i < r.children; i++)
		kill(x_pids[i], SIGKILL);
	for (i = 0; i < r.children; i++) {
		int st = t_wait(x_pids[i]);

		if (st != -1)
			r.reaped++;
		if (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			r.killed++;
	}
	r.leftover = waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
	{
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		r.after = pid > 0 && t_wait(pid) == 0;
	}
	return r;
}

/* Runs `bomb` in a child (which may change its credentials and limits
 * first) and returns its figures through a pipe; children = -1 if the
 * child did not report. */
static inline struct x_bomb x_run_bomber(void (*setup)(void))
{
	struct x_bomb r;
	int p[2];
	pid_t pid;

	memset(&r, 0, sizeof r);
	r.children = -1;
	if (pipe(p) != 0)
		return r;
	pid = fork();
	if (pid == 0) {
		struct x_bomb b;

		close(p[0]);
		if (setup)
			setup();
		b = x_fork_bomb();
		_exit(write(p[1], &b, sizeof b) == sizeof b ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof r) != sizeof r)
		r.children = -1;
	close(p[0]);
	if (pid > 0)
		CHECK(t_wait_ok(pid));
	return r;
}

#endif
