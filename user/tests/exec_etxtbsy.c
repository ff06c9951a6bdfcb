/* Writing and running a file exclude each other: execve of a file open
 * for writing (or of a script open for writing) fails with ETXTBSY, and
 * while a program runs - also in a fork of it after its parent exited -
 * its file cannot be opened for writing, opened with O_TRUNC or
 * truncated (ETXTBSY); reading, unlinking and renaming it are fine. */
#include "next.h"
#include <sys/prctl.h>

static char prog[PATH_MAX], script[PATH_MAX];

static int copy_self(const char *to)
{
	static char buf[1 << 16];
	int in = open("/proc/self/exe", O_RDONLY);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out);
}

/* errno of a failed execve of `path` in a child, or 0 if it ran and
 * exited with 7. */
static int try_exec(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char *argv[] = { (char *)path, "--exit7", NULL };

		execv(path, argv);
		_exit(100 + errno);
	}
	st = t_wait(pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 7)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) >= 100 ? WEXITSTATUS(st) - 100 : -1;
}

/* The file of a running program refuses writers. */
static void check_busy(const char *path)
{
	int fd;

	CHECK_ERR(open(path, O_WRONLY), ETXTBSY);
	CHECK_ERR(open(path, O_RDWR), ETXTBSY);
	CHECK_ERR(open(path, O_RDONLY | O_TRUNC), ETXTBSY);
	CHECK_ERR(truncate(path, 0), ETXTBSY);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], moved[PATH_MAX], text[PATH_MAX + 32];
	int fd, p[2];
	pid_t pid, held;

	if (argc > 1 && !strcmp(argv[1], "--exit7"))
		return 7;
	if (argc > 2 && !strcmp(argv[1], "--hold")) {
		/* Report, then wait (fd argv[2] is the report pipe). */
		int out = atoi(argv[2]);

		if (argc > 3) {
			/* Fork a holder, report its pid and leave it running. */
			held = fork();
			if (held == 0) {
				close(out);
				for (;;)
					pause();
			}
			write(out, &held, sizeof held);
			return 0;
		}
		held = getpid();
		write(out, &held, sizeof held);
		for (;;)
			pause();
	}

	if (t_mktmp("exec_etxtbsy", dir, sizeof dir))
		DONE();
	t_join(prog, sizeof prog, dir, "prog");
	t_join(script, sizeof script, dir, "script");
	CHECK_EQ(copy_self(prog), 0);
	snprintf(text, sizeof text, "#!%s --exit7\n", prog);
	CHECK_EQ(t_write_file(script, text, strlen(text), 0755), 0);
	CHECK_EQ(try_exec(prog), 0);
	CHECK_EQ(try_exec(script), 0);

	/* Open for writing: not executable. */
	fd = open(prog, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ(try_exec(prog), ETXTBSY);
	/* ... also as a script's interpreter. */
	CHECK_EQ(try_exec(script), ETXTBSY);
	close(fd);
	fd = open(script, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(try_exec(script), ETXTBSY);
	close(fd);
	CHECK_EQ(try_exec(prog), 0);
	CHECK_EQ(try_exec(script), 0);

	/* A running program's file. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		char out[16];
		char *av[] = { prog, "--hold", out, NULL };

		close(p[0]);
		snprintf(out, sizeof out, "%d", p[1]);
		execv(prog, av);
		_exit(99);
	}
	CHECK_EQ(read(p[0], &held, sizeof held), sizeof held);
	CHECK_EQ(held, pid);
	check_busy(prog);
	kill(pid, SIGKILL);
	t_wait(pid);
	fd = open(prog, O_WRONLY);
	CHECK(fd >= 0);
	close(fd);

	/* A fork of it holds it too, after its parent has gone. */
	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	pid = fork();
	if (pid == 0) {
		char out[16];
		char *av[] = { prog, "--hold", out, "fork", NULL };

		close(p[0]);
		snprintf(out, sizeof out, "%d", p[1]);
		execv(prog, av);
		_exit(99);
	}
	CHECK_EQ(read(p[0], &held, sizeof held), sizeof held);
	CHECK(t_wait_ok(pid));
	check_busy(prog);
	/* The name may go; the file stays busy. */
	t_join(moved, sizeof moved, dir, "moved");
	CHECK_EQ(rename(prog, moved), 0);
	check_busy(moved);
	CHECK_EQ(unlink(moved), 0);
	kill(held, SIGKILL);
	t_wait(held);
	close(p[0]);
	close(p[1]);
	t_rmtree(dir);
	DONE();
}
