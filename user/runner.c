/*
 * runner - run every test program in a directory and report the results.
 *
 * usage: runner [DIR [TIMEOUT]]   (DIR defaults to /tests)
 *
 * Regular files in DIR (except the runner itself) are run in name order,
 * one at a time: fork, execve(path, {path, NULL}, environ), wait4 (any
 * child, so orphans adopted by the runner as init are reaped too).
 * One line per test goes to stdout:
 *     TEST <name> PASS
 *     TEST <name> SKIP: exit status 77 (the reason is in its output)
 *     TEST <name> FAIL: exit status N
 *     TEST <name> FAIL: killed by signal N
 *     TEST <name> FAIL: timed out after N s
 * followed by a summary line "runner: N passed, N failed, N skipped".
 * The exit status is 0 iff no test failed.
 *
 * Without TIMEOUT the runner deliberately avoids pipes, signal handlers,
 * threads and timeouts: the kernel this runs on may not support them yet.
 * With TIMEOUT (seconds, > 0) a hung test must not stop the whole run:
 * each test runs in its own process group (given the terminal's
 * foreground if the runner had it), the runner polls wait4(WNOHANG) with
 * short naps, and after TIMEOUT seconds kills the test's process group
 * with SIGKILL.  That needs only setpgid, kill, wait4, nanosleep and
 * clock_gettime (plus tcsetpgrp with SIGTTOU ignored on a terminal).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/*
 * Wait for pid with a time limit (seconds); reaps adopted orphans on the
 * way.  Returns pid, -1 on error, or 0 if the test was killed after
 * timing out (its process group got SIGKILL and it has been reaped).
 */
static pid_t wait_limited(pid_t pid, int *status, long timeout)
{
	long long deadline = now_ms() + timeout * 1000LL;
	long nap = 1;
	pid_t r;

	for (;;) {
		r = wait4(-1, status, WNOHANG, NULL);
		if (r == pid)
			return pid;
		if (r > 0)
			continue; /* an orphan */
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_ms() >= deadline)
			break;
		nap_ms(nap);
		if (nap < 50)
			nap *= 2;
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	do {
		r = wait4(pid, status, 0, NULL);
	} while (r < 0 && errno == EINTR);
	return r == pid ? 0 : -1;
}

/* Default dispositions for every signal and an empty mask (for a test,
 * after fork). Signals the libc reserves refuse the change; that is fine. */
static void reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tests";
	const char *self_name = argc > 0 ? base_name(argv[0]) : "runner";
	long timeout = 0;
	int own_tty = 0;
	struct stat self_st, st;
	int have_self;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t count = 0, cap = 0, i;
	int passed = 0, failed = 0, skipped = 0;

	if (argc > 3 || (argc == 3 && (timeout = atol(argv[2])) <= 0)) {
		fprintf(stderr, "usage: runner [DIR [TIMEOUT_SECONDS]]\n");
		return 2;
	}
	have_self = argc > 0 && stat(argv[0], &self_st) == 0;

	/*
	 * Started directly as init (pid 1) the runner is in process group 0;
	 * give the tests a real process group, as a shell or init would.
	 */
	if (getpgid(0) == 0)
		setpgid(0, 0);

	/* With a timeout, tests get their own process groups; if we own the
	 * terminal's foreground, we hand it to each test in turn. */
	if (timeout > 0 && isatty(0) && tcgetpgrp(0) == getpgrp()) {
		signal(SIGTTOU, SIG_IGN);
		own_tty = 1;
	}

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "runner: cannot open %s: %s\n", dir,
			strerror(errno));
		return 2;
	}
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof *names);
			if (!names) {
				fprintf(stderr, "runner: out of memory\n");
				return 2;
			}
		}
		names[count] = strdup(de->d_name);
		if (!names[count]) {
			fprintf(stderr, "runner: out of memory\n");
			return 2;
		}
		count++;
	}
	closedir(d);
	if (count > 0)
		qsort(names, count, sizeof *names, cmp_names);

	for (i = 0; i < count; i++) {
		char path[PATH_MAX];
		pid_t pid, r;
		int status = 0;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (have_self) {
			if (st.st_dev == self_st.st_dev &&
			    st.st_ino == self_st.st_ino)
				continue;
		} else if (!strcmp(names[i], self_name)) {
			continue;
		}

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			printf("TEST %s FAIL: fork failed: %s\n", names[i],
			       strerror(errno));
			fflush(stdout);
			failed++;
			continue;
		}
		if (pid == 0) {
			char *cargv[2];
			char msg[PATH_MAX + 64];
			int n;

			if (timeout > 0) {
				setpgid(0, 0);
				if (own_tty)
					tcsetpgrp(0, getpid());
				signal(SIGTTOU, SIG_DFL);
			}
			/*
			 * Each test starts with every disposition at its
			 * default and nothing blocked, whatever the runner
			 * inherited: under nohup (SIGHUP ignored) a test that
			 * expects SIGHUP to kill, as sig_orphan_pgrp does,
			 * would fail on the host reference layer.
			 */
			reset_signals();
			cargv[0] = path;
			cargv[1] = NULL;
			execve(path, cargv, environ);
			n = snprintf(msg, sizeof msg, "runner: execve %s: %s\n",
				     path, strerror(errno));
			if (n > 0)
				(void)!write(2, msg, (size_t)n);
			_exit(127);
		}
		/*
		 * Wait for any child, not just this test: run as init, the
		 * runner also adopts the orphans tests leave behind, and
		 * reaping them keeps zombies from piling up.
		 */
		if (timeout > 0) {
			setpgid(pid, pid);
			if (own_tty)
				tcsetpgrp(0, pid);
			r = wait_limited(pid, &status, timeout);
			if (own_tty)
				tcsetpgrp(0, getpgrp());
		} else {
			do {
				r = wait4(-1, &status, 0, NULL);
			} while ((r < 0 && errno == EINTR) ||
				 (r > 0 && r != pid));
		}

		if (r == 0) {
			printf("TEST %s FAIL: timed out after %ld s\n", names[i],
			       timeout);
			failed++;
		} else if (r != pid) {
			printf("TEST %s FAIL: wait4 failed: %s\n", names[i],
			       strerror(errno));
			failed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("TEST %s PASS\n", names[i]);
			passed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
			printf("TEST %s SKIP: exit status 77 (the reason is in "
			       "its output)\n", names[i]);
			skipped++;
		} else if (WIFEXITED(status)) {
			printf("TEST %s FAIL: exit status %d\n", names[i],
			       WEXITSTATUS(status));
			failed++;
		} else if (WIFSIGNALED(status)) {
			printf("TEST %s FAIL: killed by signal %d\n", names[i],
			       WTERMSIG(status));
			failed++;
		} else {
			printf("TEST %s FAIL: wait status 0x%x\n", names[i],
			       status);
			failed++;
		}
		fflush(stdout);
	}

	printf("runner: %d passed, %d failed, %d skipped\n", passed, failed,
	       skipped);
	fflush(stdout);
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return failed == 0 ? 0 : 1;
}
