/*
 * runner - run every test program in a directory and report the results.
 *
 * usage: runner [DIR]        (DIR defaults to /tests)
 *
 * Regular files in DIR (except the runner itself) are run in name order,
 * one at a time: fork, execve(path, {path, NULL}, environ), wait4 (any
 * child, so orphans adopted by the runner as init are reaped too).
 * One line per test goes to stdout:
 *     TEST <name> PASS
 *     TEST <name> FAIL: exit status N
 *     TEST <name> FAIL: killed by signal N
 * followed by a summary line "runner: N passed, N failed".
 * The exit status is 0 iff every test passed.
 *
 * Deliberately avoids pipes, signal handlers, threads and timeouts: the
 * kernel this runs on may not support them yet.
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

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tests";
	const char *self_name = argc > 0 ? base_name(argv[0]) : "runner";
	struct stat self_st, st;
	int have_self;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t count = 0, cap = 0, i;
	int passed = 0, failed = 0;

	if (argc > 2) {
		fprintf(stderr, "usage: runner [DIR]\n");
		return 2;
	}
	have_self = argc > 0 && stat(argv[0], &self_st) == 0;

	/*
	 * Started directly as init (pid 1) the runner is in process group 0;
	 * give the tests a real process group, as a shell or init would.
	 */
	if (getpgid(0) == 0)
		setpgid(0, 0);

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
		do {
			r = wait4(-1, &status, 0, NULL);
		} while ((r < 0 && errno == EINTR) || (r > 0 && r != pid));

		if (r != pid) {
			printf("TEST %s FAIL: wait4 failed: %s\n", names[i],
			       strerror(errno));
			failed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("TEST %s PASS\n", names[i]);
			passed++;
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

	printf("runner: %d passed, %d failed\n", passed, failed);
	fflush(stdout);
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return failed == 0 ? 0 : 1;
}
