/* execveat(2) and fexecve(3): a path relative to a directory descriptor,
 * AT_EMPTY_PATH (the file open on the descriptor, O_PATH too),
 * AT_SYMLINK_NOFOLLOW, AT_EXECVE_CHECK, the errors (EINVAL, EBADF,
 * ENOTDIR, ENOENT, EACCES, ELOOP, EFAULT), what the new program sees
 * (argv, AT_EXECFN "/dev/fd/N[/path]", /proc/self/exe, its name), and
 * scripts started through a descriptor ("/dev/fd/N" as the script path;
 * ENOENT through a close-on-exec one).
 *
 * The test runs itself as the new program: "--report FD" writes what it
 * sees to FD; "--script" is its mode as a script interpreter. */
#include "next.h"
#include <sys/auxv.h>
#include <sys/prctl.h>

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef AT_EXECVE_CHECK
#define AT_EXECVE_CHECK 0x10000
#endif
#ifndef SYS_execveat
#define SYS_execveat 322
#endif

static char self[PATH_MAX];
static char *no_env[] = { NULL };

static long xat(int dirfd, const char *path, char *const argv[], int flags)
{
	return syscall(SYS_execveat, dirfd, path, argv, no_env, flags);
}

/* The new program's side: argv[1] says what to do. */
static int child_main(int argc, char **argv)
{
	char buf[1024], exe[PATH_MAX], comm[32] = { 0 };
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	ssize_t n;
	int fd;

	if (argc >= 3 && !strcmp(argv[1], "--report")) {
		fd = atoi(argv[2]);
		n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n < 0 ? 0 : n] = 0;
		prctl(PR_GET_NAME, comm);
		n = snprintf(buf, sizeof buf, "argc=%d argv0=%s exe=%s execfn=%s comm=%s",
			     argc, argv[0], exe, execfn ? execfn : "(none)", comm);
		if (write(fd, buf, (size_t)n) != n)
			return 2;
		return 0;
	}
	/* "#!SELF --script" run as "SELF --script SCRIPT FD": report the
	 * script path we were given and whether it can be opened. */
	if (argc >= 4 && !strcmp(argv[1], "--script")) {
		char head[3] = { 0 };
		int sfd = open(argv[2], O_RDONLY);

		fd = atoi(argv[3]);
		if (sfd >= 0 && read(sfd, head, 2) != 2)
			head[0] = 0;
		n = snprintf(buf, sizeof buf, "script=%s opened=%d head=%s", argv[2],
			     sfd >= 0, head);
		if (write(fd, buf, (size_t)n) != n)
			return 2;
		return 0;
	}
	/* Any other exec of this program is one that should have failed. */
	t_printf("  check failed: exec succeeded unexpectedly (argv[1]=%s)\n",
		 argc > 1 ? argv[1] : "(none)");
	return 3;
}

/* Forks; the child runs do_exec(arg) with a pipe whose write end number
 * it gets; returns what the new program reported (empty on failure). */
static void run(void (*do_exec)(int wfd, void *arg), void *arg, char *out, size_t n)
{
	int p[2];
	pid_t pid;
	ssize_t got, total = 0;

	out[0] = 0;
	if (pipe(p) != 0) {
		CHECK(0);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		do_exec(p[1], arg);
		t_printf("  check failed: exec: %s\n", strerror(errno));
		_exit(1);
	}
	close(p[1]);
	while ((got = read(p[0], out + total, n - 1 - (size_t)total)) > 0)
		total += got;
	out[total] = 0;
	close(p[0]);
	t_wait_ok(pid);
}

struct at_arg {
	int dirfd;
	const char *path;
	int flags;
};

static void exec_at(int wfd, void *varg)
{
	struct at_arg *a = varg;
	char fdstr[16];
	char *argv[] = { "argzero", "--report", fdstr, NULL };

	snprintf(fdstr, sizeof fdstr, "%d", wfd);
	xat(a->dirfd, a->path, argv, a->flags);
}

static void exec_fexecve(int wfd, void *varg)
{
	int fd = *(int *)varg;
	char fdstr[16];
	char *argv[] = { "argzero", "--report", fdstr, NULL };

	snprintf(fdstr, sizeof fdstr, "%d", wfd);
	fexecve(fd, argv, no_env);
}

struct script_arg {
	int dirfd;
	const char *path;
	int flags;
};

static void exec_script(int wfd, void *varg)
{
	struct script_arg *a = varg;
	char fdstr[16];
	char *argv[] = { "scriptzero", fdstr, NULL };

	snprintf(fdstr, sizeof fdstr, "%d", wfd);
	xat(a->dirfd, a->path, argv, a->flags);
}

static int has(const char *report, const char *want)
{
	if (strstr(report, want))
		return 1;
	t_printf("  note: \"%s\" lacks \"%s\"\n", report, want);
	return 0;
}

/* Every call here must fail; they run in a child so that one that
 * wrongly succeeds cannot replace the test. */
static void errors(const char *dir, int dirfd)
{
	char *argv[] = { "argzero", "--must-not-run", NULL };
	char path[PATH_MAX], sub[PATH_MAX];
	int filefd, linkfd, plain;
	pid_t pid;

	t_join(path, sizeof path, dir, "prog");
	filefd = open(path, O_RDONLY);
	t_join(path, sizeof path, dir, "link");
	linkfd = open(path, O_PATH | O_NOFOLLOW);
	t_join(path, sizeof path, dir, "plain");
	plain = open(path, O_RDONLY);
	t_join(sub, sizeof sub, dir, "sub");
	CHECK(filefd >= 0 && linkfd >= 0 && plain >= 0);

	pid = fork();
	if (pid == 0) {
		/* Flags. */
		CHECK_ERR(xat(dirfd, "prog", argv, 0x4), EINVAL);
		CHECK_ERR(xat(dirfd, "prog", argv, 0x200), EINVAL);
		CHECK_ERR(xat(dirfd, "prog", argv, -1), EINVAL);
		/* Descriptors. */
		CHECK_ERR(xat(999, "prog", argv, 0), EBADF);
		CHECK_ERR(xat(-1, "prog", argv, 0), EBADF);
		CHECK_ERR(xat(999, "", argv, AT_EMPTY_PATH), EBADF);
		CHECK_ERR(xat(filefd, "prog", argv, 0), ENOTDIR);
		/* Empty paths: ENOENT unless AT_EMPTY_PATH; a directory is
		 * not executable. */
		CHECK_ERR(xat(filefd, "", argv, 0), ENOENT);
		CHECK_ERR(xat(dirfd, "", argv, AT_EMPTY_PATH), EACCES);
		CHECK_ERR(xat(AT_FDCWD, "", argv, AT_EMPTY_PATH), EACCES);
		/* Names. */
		CHECK_ERR(xat(dirfd, "nonexistent", argv, 0), ENOENT);
		CHECK_ERR(xat(dirfd, "plain", argv, 0), EACCES);
		CHECK_ERR(xat(plain, "", argv, AT_EMPTY_PATH), EACCES);
		CHECK_ERR(xat(dirfd, "sub", argv, 0), EACCES);
		CHECK_ERR(xat(dirfd, "prog/", argv, 0), ENOTDIR);
		CHECK_ERR(xat(dirfd, "..", argv, 0), EACCES);
		/* Symlinks: AT_SYMLINK_NOFOLLOW refuses a final one, and one
		 * open with O_PATH is never followed. */
		CHECK_ERR(xat(dirfd, "link", argv, AT_SYMLINK_NOFOLLOW), ELOOP);
		CHECK_ERR(xat(linkfd, "", argv, AT_EMPTY_PATH), ELOOP);
		CHECK_ERR(xat(linkfd, "", argv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW),
			  ELOOP);
		/* Bad pointers. */
		CHECK_ERR(syscall(SYS_execveat, dirfd, BAD_PTR, argv, no_env, 0),
			  EFAULT);
		CHECK_ERR(syscall(SYS_execveat, dirfd, "prog", BAD_PTR, no_env, 0),
			  EFAULT);
		CHECK_ERR(syscall(SYS_execveat, dirfd, "prog", argv, BAD_PTR, 0),
			  EFAULT);
		/* The file is looked up before argv is read. */
		CHECK_ERR(syscall(SYS_execveat, dirfd, "nonexistent", BAD_PTR,
				  no_env, 0),
			  ENOENT);
		/* fexecve(3) of a bad or a directory descriptor. */
		CHECK_ERR(fexecve(999, argv, no_env), EBADF);
		CHECK_ERR(fexecve(dirfd, argv, no_env), EACCES);
		/* AT_EXECVE_CHECK: the checks only. */
		CHECK_EQ(xat(dirfd, "prog", argv, AT_EXECVE_CHECK), 0);
		CHECK_EQ(xat(filefd, "", argv, AT_EMPTY_PATH | AT_EXECVE_CHECK), 0);
		CHECK_ERR(xat(dirfd, "plain", argv, AT_EXECVE_CHECK), EACCES);
		CHECK_ERR(xat(dirfd, "nonexistent", argv, AT_EXECVE_CHECK), ENOENT);
		CHECK_ERR(syscall(SYS_execveat, dirfd, "prog", BAD_PTR, no_env,
				  AT_EXECVE_CHECK),
			  EFAULT);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	close(filefd);
	close(linkfd);
	close(plain);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX], report[2048], want[PATH_MAX + 64];
	char script[PATH_MAX + 64];
	struct at_arg at;
	struct script_arg sa;
	int dirfd, pathdirfd, fd, pfd, cfd, sfd, scfd, cdirfd;
	ssize_t n;

	if (argc > 1)
		return child_main(argc, argv);

	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		SKIP("no /proc/self/exe");
	self[n] = 0;
	if (t_mktmp("exec_execveat", dir, sizeof dir) != 0)
		DONE();
	/* The scratch directory: a copy of this program, a link to it, a
	 * file without x bits, a subdirectory, a script run by us. */
	{
		static char data[4 << 20];
		int in = open(self, O_RDONLY), out;
		ssize_t got;

		t_join(path, sizeof path, dir, "prog");
		out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		CHECK(in >= 0 && out >= 0);
		while (in >= 0 && out >= 0 && (got = read(in, data, sizeof data)) > 0)
			CHECK_EQ(write(out, data, (size_t)got), got);
		close(in);
		close(out);
	}
	t_join(path, sizeof path, dir, "link");
	CHECK_EQ(symlink("prog", path), 0);
	t_join(path, sizeof path, dir, "plain");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	t_join(path, sizeof path, dir, "sub");
	CHECK_EQ(mkdir(path, 0755), 0);
	t_join(path, sizeof path, dir, "prog");
	snprintf(script, sizeof script, "#!%s --script\n", path);
	t_join(path, sizeof path, dir, "s.sh");
	CHECK_EQ(t_write_file(path, script, strlen(script), 0755), 0);

	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	pathdirfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK(dirfd >= 0 && pathdirfd >= 0);

	/* A name relative to the descriptor. */
	at = (struct at_arg){ dirfd, "prog", 0 };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "execfn=/dev/fd/%d/prog ", dirfd);
	CHECK(has(report, "argc=3 argv0=argzero "));
	CHECK(has(report, want));
	snprintf(want, sizeof want, "exe=%s/prog ", dir);
	CHECK(has(report, want));
	CHECK(has(report, "comm=prog"));
	/* An O_PATH directory descriptor does as well. */
	at = (struct at_arg){ pathdirfd, "prog", 0 };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "execfn=/dev/fd/%d/prog ", pathdirfd);
	CHECK(has(report, want));
	/* A final symlink is followed: exe is the program, the name the
	 * link's. */
	at = (struct at_arg){ dirfd, "link", 0 };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "exe=%s/prog ", dir);
	CHECK(has(report, want));
	CHECK(has(report, "comm=link"));
	/* Absolute paths ignore the descriptor, even a bad one. */
	t_join(path, sizeof path, dir, "prog");
	at = (struct at_arg){ 999, path, 0 };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "execfn=%s ", path);
	CHECK(has(report, want));
	at = (struct at_arg){ AT_FDCWD, path, AT_SYMLINK_NOFOLLOW };
	run(exec_at, &at, report, sizeof report);
	CHECK(has(report, want));

	/* AT_EMPTY_PATH: the file open on the descriptor, O_PATH and
	 * close-on-exec ones included. */
	fd = open(path, O_RDONLY);
	pfd = open(path, O_PATH);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && pfd >= 0 && cfd >= 0);
	at = (struct at_arg){ fd, "", AT_EMPTY_PATH };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "execfn=/dev/fd/%d ", fd);
	CHECK(has(report, want));
	snprintf(want, sizeof want, "exe=%s ", path);
	CHECK(has(report, want));
	CHECK(has(report, "comm=prog"));
	at = (struct at_arg){ pfd, "", AT_EMPTY_PATH };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "execfn=/dev/fd/%d ", pfd);
	CHECK(has(report, want));
	at = (struct at_arg){ cfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW };
	run(exec_at, &at, report, sizeof report);
	snprintf(want, sizeof want, "execfn=/dev/fd/%d ", cfd);
	CHECK(has(report, want));
	/* fexecve(3) from the C library. */
	run(exec_fexecve, &fd, report, sizeof report);
	CHECK(has(report, "argc=3 argv0=argzero "));
	snprintf(want, sizeof want, "exe=%s ", path);
	CHECK(has(report, want));
	run(exec_fexecve, &pfd, report, sizeof report);
	CHECK(has(report, want));

	/* Scripts: the interpreter gets the /dev/fd name, which it can
	 * open while the descriptor stays open across the exec. */
	sa = (struct script_arg){ dirfd, "s.sh", 0 };
	run(exec_script, &sa, report, sizeof report);
	snprintf(want, sizeof want, "script=/dev/fd/%d/s.sh opened=1 head=#!", dirfd);
	CHECK(has(report, want));
	t_join(path, sizeof path, dir, "s.sh");
	sfd = open(path, O_RDONLY);
	scfd = open(path, O_RDONLY | O_CLOEXEC);
	cdirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(sfd >= 0 && scfd >= 0 && cdirfd >= 0);
	sa = (struct script_arg){ sfd, "", AT_EMPTY_PATH };
	run(exec_script, &sa, report, sizeof report);
	snprintf(want, sizeof want, "script=/dev/fd/%d opened=1 head=#!", sfd);
	CHECK(has(report, want));
	sa = (struct script_arg){ AT_FDCWD, path, 0 };
	run(exec_script, &sa, report, sizeof report);
	snprintf(want, sizeof want, "script=%s opened=1", path);
	CHECK(has(report, want));
	/* Through a close-on-exec descriptor the script would be gone. */
	{
		char *sargv[] = { "scriptzero", "1", NULL };
		pid_t pid = fork();

		if (pid == 0) {
			CHECK_ERR(xat(scfd, "", sargv, AT_EMPTY_PATH), ENOENT);
			CHECK_ERR(xat(cdirfd, "s.sh", sargv, 0), ENOENT);
			CHILD_DONE();
		}
		t_wait_ok(pid);
	}

	errors(dir, dirfd);

	close(fd);
	close(pfd);
	close(cfd);
	close(sfd);
	close(scfd);
	close(cdirfd);
	close(dirfd);
	close(pathdirfd);
	t_rmtree(dir);
	DONE();
}
