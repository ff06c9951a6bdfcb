/* execve failures: ENOENT, ENOTDIR, ENOEXEC, EACCES, EFAULT. */
#include "t.h"

int main(int argc, char **argv, char **envp)
{
	char dir[128], text[256], empty[256], noexec[256], bad[300];
	char self[PATH_MAX];
	pid_t pid;
	int st;

	if (argc > 1)
		return 77; /* reached only if an exec wrongly succeeded */
	t_self_path(argv[0], self, sizeof self);
	if (t_mktmp("execve_errors", dir, sizeof dir))
		DONE();
	umask(022);
	t_join(text, sizeof text, dir, "text");
	t_join(empty, sizeof empty, dir, "empty");
	t_join(noexec, sizeof noexec, dir, "noexec");
	/* A mode-0755 text file without "#!". */
	CHECK_EQ(t_write_file(text, "hello, this is not a program\n", 29, 0755), 0);
	CHECK_EQ(t_write_file(empty, "", 0, 0755), 0);
	/* A real program image without execute permission. */
	{
		static char img[1 << 16];
		int fd = open(self, O_RDONLY), out;
		ssize_t n;

		CHECK(fd >= 0);
		out = open(noexec, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(out >= 0);
		while ((n = read(fd, img, sizeof img)) > 0)
			CHECK_EQ(write(out, img, (size_t)n), n);
		close(fd);
		close(out);
	}

	/* Run the failing execs in a child so a wrong success cannot replace
	 * this process; the child reports its check record. */
	pid = fork();
	if (pid == 0) {
		char *a[] = { "x", "child", NULL };

		/* ENOENT: missing file, missing directory component. */
		t_join(bad, sizeof bad, dir, "missing");
		CHECK_ERR(execve(bad, a, envp), ENOENT);
		t_join(bad, sizeof bad, dir, "nodir/prog");
		CHECK_ERR(execve(bad, a, envp), ENOENT);
		CHECK_ERR(execve("", a, envp), ENOENT);

		/* ENOTDIR: a file used as a directory. */
		t_join(bad, sizeof bad, dir, "text/prog");
		CHECK_ERR(execve(bad, a, envp), ENOTDIR);

		/* ENOEXEC: executable permission but not a recognised format. */
		CHECK_ERR(execve(text, a, envp), ENOEXEC);
		CHECK_ERR(syscall(SYS_execve, text, a, envp), ENOEXEC);
		CHECK_ERR(execve(empty, a, envp), ENOEXEC);

		/* EACCES: a directory; a file without any execute bit. */
		CHECK_ERR(execve(dir, a, envp), EACCES);
		CHECK_ERR(execve("/", a, envp), EACCES);
		CHECK_ERR(execve(noexec, a, envp), EACCES);

		/* EFAULT: bad pathname, bad argv, bad envp. */
		CHECK_ERR(syscall(SYS_execve, BAD_PTR, a, envp), EFAULT);
		CHECK_ERR(execve(self, BAD_PTR2, envp), EFAULT);
		CHECK_ERR(execve(self, a, BAD_PTR2), EFAULT);
		{
			char *ba[] = { "x", BAD_PTR2, NULL };
			CHECK_ERR(execve(self, ba, envp), EFAULT);
		}
		CHILD_DONE();
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);

	/* The process is still fine after failed execs in this process too. */
	{
		char *a[] = { "x", NULL };
		CHECK_ERR(execve(text, a, envp), ENOEXEC);
		CHECK(getpid() > 0);
	}

	t_rmtree(dir);
	DONE();
}
