/* #! limits as Linux 6.x has them: a chain of 5 scripts (each the
 * interpreter of the next) runs, a 6th level is ELOOP; the #! line is
 * read from the first 256 bytes: an interpreter name that does not end
 * within them is ENOEXEC (also after 300 blanks), while a long argument is
 * cut at byte 255. */
#include "next.h"

static char self[PATH_MAX], dir[PATH_MAX];

/* Exit status of running `path`, or 100 + errno if execve failed. */
static int run(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };

		execv(path, argv);
		_exit(100 + errno);
	}
	st = t_wait(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void script(const char *name, const char *text, char *path)
{
	t_join(path, PATH_MAX, dir, name);
	CHECK_EQ(t_write_file(path, text, strlen(text), 0755), 0);
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], prev[PATH_MAX], text[PATH_MAX + 400];
	int i;

	if (argc > 1 && !strcmp(argv[1], "--exit7"))
		return 7;
	if (argc > 1 && argv[1][0] == 'b') {
		/* The long argument, cut where the 256-byte buffer ends. */
		size_t want = 255 - 2 - strlen(argv[0]) - 1;

		return strlen(argv[1]) == want && strspn(argv[1], "b") == want ? 8 : 9;
	}
	t_self_path(argv[0], self, sizeof self);
	if (strlen(self) > 200)
		SKIP("path of this program too long for the #! checks");
	if (t_mktmp("exec_script_limits", dir, sizeof dir))
		DONE();

	/* s1 is run by this program; s2 by s1 ... */
	snprintf(text, sizeof text, "#!%s --exit7\n", self);
	script("s1", text, prev);
	for (i = 2; i <= 6; i++) {
		char name[8];

		snprintf(name, sizeof name, "s%d", i);
		snprintf(text, sizeof text, "#!%s\n", prev);
		script(name, text, path);
		if (i <= 5)
			CHECK_EQ(run(path), 7);
		else
			CHECK_EQ(run(path), 100 + ELOOP);
		strcpy(prev, path);
	}

	/* An interpreter name that does not fit: ENOEXEC. */
	strcpy(text, "#!/");
	memset(text + 3, 'a', 300);
	strcpy(text + 303, "\n");
	script("longname", text, path);
	CHECK_EQ(run(path), 100 + ENOEXEC);
	strcpy(text, "#!");
	memset(text + 2, ' ', 300);
	snprintf(text + 302, sizeof text - 302, "%s\n", self);
	script("blanks", text, path);
	CHECK_EQ(run(path), 100 + ENOEXEC);
	/* A long argument is cut. */
	snprintf(text, sizeof text, "#!%s ", self);
	i = strlen(text);
	memset(text + i, 'b', 300);
	strcpy(text + i + 300, "\n");
	script("longarg", text, path);
	CHECK_EQ(run(path), 8);
	t_rmtree(dir);
	DONE();
}
