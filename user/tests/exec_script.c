/* #! scripts: the interpreter gets [interp, optional-arg, script-path,
 * argv[1]...]; whitespace handling; one optional argument that may contain
 * spaces; nested interpreters; ENOENT, EACCES, ENOEXEC. */
#include "next.h"

static char dir[PATH_MAX], self[PATH_MAX];

/* Run path with argv {path, "x1", "x 2"}; return the exit status. */
static int run_script(const char *path, int *err)
{
	pid_t pid;
	int p[2], e = 0, st;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char *av[] = { (char *)path, "x1", "x 2", NULL };
		int er;

		close(p[0]);
		execv(path, av);
		er = errno;
		(void)!write(p[1], &er, sizeof er);
		_exit(126);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof e) != sizeof e)
		e = 0;
	close(p[0]);
	st = t_wait(pid);
	*err = e;
	return st;
}

static int write_script(const char *name, const char *text, mode_t mode,
			char *path)
{
	t_join(path, PATH_MAX, dir, name);
	return t_write_file(path, text, strlen(text), mode);
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], path2[PATH_MAX], text[PATH_MAX + 64];
	int st, err;

	/* Interpreter modes: check the argv the kernel built. */
	if (argc >= 2 && !strcmp(argv[1], "--check-noarg")) {
		/* #!self --check-noarg  => [self, --check-noarg, script, x1, x 2] */
		return argc == 5 && !strcmp(argv[3], "x1") &&
			       !strcmp(argv[4], "x 2") && strstr(argv[2], "s1")
			       ? 10 : 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "--check-spaces  arg")) {
		return argc == 5 && strstr(argv[2], "s2") &&
			       !strcmp(argv[3], "x1") ? 11 : 2;
	}
	if (argc >= 2 && !strcmp(argv[1], "--check-nested")) {
		/* s4 -> s3 -> self: [self, --check-nested, s3, s4, x1, x 2] */
		return argc == 6 && strstr(argv[2], "s3") &&
			       strstr(argv[3], "s4") && !strcmp(argv[4], "x1")
			       ? 12 : 3;
	}
	if (argc >= 2 && !strcmp(argv[1], "--argv0")) {
		/* argv[0] is the interpreter path as written in the #! line
		 * of the script (argv[2]). */
		char line[PATH_MAX + 64], want[PATH_MAX + 64];

		if (argc < 3 || t_read_file(argv[2], line, sizeof line) <= 0)
			return 4;
		snprintf(want, sizeof want, "#!%s --argv0\n", argv[0]);
		return !strcmp(line, want) ? 13 : 5;
	}

	t_self_path(argv[0], self, sizeof self);
	if (t_mktmp("exec_script", dir, sizeof dir) != 0)
		DONE();

	/* Plain: "#!interp arg\n". */
	snprintf(text, sizeof text, "#!%s --check-noarg\necho not run\n", self);
	CHECK_EQ(write_script("s1", text, 0755, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 10);

	/* Leading blanks, inner spaces kept, trailing blanks stripped. */
	snprintf(text, sizeof text, "#! \t%s   --check-spaces  arg \t \n", self);
	CHECK_EQ(write_script("s2", text, 0755, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 11);

	/* A script whose interpreter is a script. */
	snprintf(text, sizeof text, "#!%s --check-nested\n", self);
	CHECK_EQ(write_script("s3", text, 0755, path), 0);
	snprintf(text, sizeof text, "#!%s\n", path);
	CHECK_EQ(write_script("s4", text, 0755, path2), 0);
	st = run_script(path2, &err);
	CHECK_EQ(err, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 12);

	snprintf(text, sizeof text, "#!%s --argv0\n", self);
	CHECK_EQ(write_script("s5", text, 0755, path), 0);
	st = run_script(path, &err);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 13);

	/* Missing interpreter: ENOENT. */
	CHECK_EQ(write_script("s6", "#!/nonexistent/interp\n", 0755, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, ENOENT);
	/* Script not executable: EACCES. */
	snprintf(text, sizeof text, "#!%s --check-noarg\n", self);
	CHECK_EQ(write_script("s7", text, 0644, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, EACCES);
	/* "#!" with no interpreter name: ENOEXEC. */
	CHECK_EQ(write_script("s8", "#!\n", 0755, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, ENOEXEC);
	CHECK_EQ(write_script("s9", "#!   \t\n", 0755, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, ENOEXEC);
	/* Interpreter is a directory: EACCES. */
	snprintf(text, sizeof text, "#!%s\n", dir);
	CHECK_EQ(write_script("s10", text, 0755, path), 0);
	st = run_script(path, &err);
	CHECK_EQ(err, EACCES);
	(void)st;
	t_rmtree(dir);
	DONE();
}
