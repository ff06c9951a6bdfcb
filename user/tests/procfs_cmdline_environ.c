/* /proc/<pid>/cmdline and environ: NUL-separated argv and envp exactly as
 * passed to execve (empty strings and spaces kept), readable by the
 * parent, empty for a zombie. */
#include "next.h"

int main(int argc, char **argv)
{
	char self[PATH_MAX], path[64], buf[4096];
	int p[2];
	pid_t pid;
	ssize_t n;

	if (argc >= 2 && !strcmp(argv[1], "wait-here")) {
		char c;

		(void)!read(0, &c, 1);
		return 0;
	}
	t_self_path(argv[0], self, sizeof self);

	/* Our own cmdline: just argv[0]. */
	n = t_read_file("/proc/self/cmdline", buf, sizeof buf);
	CHECK_EQ(n, (long)strlen(argv[0]) + 1);
	CHECK(strcmp(buf, argv[0]) == 0);

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		char *av[] = { self, "wait-here", "two words", "", "last", NULL };
		char *ev[] = { "A=1", "EMPTY=", "SP=x y", NULL };

		close(p[1]);
		dup2(p[0], 0);
		execve(self, av, ev);
		_exit(127);
	}
	close(p[0]);
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	/* Wait for the exec to have happened. */
	{
		int i;

		for (i = 0; i < 10000; i++) {
			n = t_read_file(path, buf, sizeof buf);
			if (n > 0 && memmem(buf, (size_t)n, "wait-here", 9))
				break;
			t_msleep(1);
		}
	}
	{
		char want[PATH_MAX + 64];
		size_t wl = 0;

		memcpy(want, self, strlen(self) + 1);
		wl = strlen(self) + 1;
		static const char rest[] = "wait-here\0two words\0\0last";

		memcpy(want + wl, rest, sizeof rest); /* with the final NUL */
		wl += sizeof rest;
		CHECK_EQ(n, (long)wl);
		CHECK(n == (ssize_t)wl && memcmp(buf, want, wl) == 0);
	}
	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	n = t_read_file(path, buf, sizeof buf);
	{
		static const char env[] = "A=1\0EMPTY=\0SP=x y";

		CHECK_EQ(n, (long)sizeof env);
		CHECK(n == (ssize_t)sizeof env && memcmp(buf, env, sizeof env) == 0);
	}

	/* Release it; as a zombie its cmdline is empty. */
	close(p[1]);
	CHECK(t_wait_proc_state(pid, "Z"));
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	n = t_read_file(path, buf, sizeof buf);
	CHECK_EQ(n, 0);
	CHECK(t_wait_ok(pid));
	DONE();
}
