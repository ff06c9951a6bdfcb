/* CLONE_FILES shares the fd table, CLONE_FS shares cwd and umask; without
 * them the child gets copies. */
#include "next.h"

struct arg {
	int fd;
	char dir[PATH_MAX];
	int closed_ok;
};

static int child_open(void *p)
{
	struct arg *a = p;

	a->fd = open("/dev/null", O_RDONLY);
	return 0;
}

static int child_close(void *p)
{
	struct arg *a = p;

	a->closed_ok = close(a->fd) == 0;
	return 0;
}

static int child_cd_umask(void *p)
{
	struct arg *a = p;

	if (chdir(a->dir) != 0)
		return 1;
	umask(0077);
	return 0;
}

static long run(unsigned long flags, int (*fn)(void *), void *arg)
{
	long pid = t_clone(flags | SIGCHLD, t_stack(65536), NULL, NULL, 0, fn,
			   arg);
	int st;

	if (pid <= 0)
		return -1;
	st = t_wait((pid_t)pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}

int main(void)
{
	static struct arg a;
	char dir[PATH_MAX], cwd[PATH_MAX], orig[PATH_MAX];
	mode_t old;

	if (t_mktmp("clone_files_fs", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);

	/* Shared fd table: the child's open is visible to us. */
	a.fd = -1;
	CHECK_EQ(run(CLONE_VM | CLONE_FILES, child_open, &a), 0);
	CHECK(a.fd >= 0);
	CHECK(fcntl(a.fd, F_GETFD) >= 0);
	/* ... and its close too. */
	CHECK_EQ(run(CLONE_VM | CLONE_FILES, child_close, &a), 0);
	CHECK(a.closed_ok);
	CHECK_ERR(fcntl(a.fd, F_GETFD), EBADF);

	/* Private fd table: the child's fd does not exist here. */
	a.fd = -1;
	CHECK_EQ(run(CLONE_VM, child_open, &a), 0);
	CHECK(a.fd >= 0);
	CHECK_ERR(fcntl(a.fd, F_GETFD), EBADF);

	/* Shared fs: cwd and umask change for us too. */
	strcpy(a.dir, dir);
	old = umask(022);
	CHECK_EQ(run(CLONE_VM | CLONE_FS, child_cd_umask, &a), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, dir) == 0);
	CHECK_EQ(umask(022), 0077);

	/* Private fs: no change. */
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(run(CLONE_VM, child_cd_umask, &a), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, "/") == 0);
	CHECK_EQ(umask(old), 022);

	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
