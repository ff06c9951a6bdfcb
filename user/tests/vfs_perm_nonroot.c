/* Permission checks for an unprivileged user (after setresuid/setresgid):
 * read/write/execute bits, search permission on directories, creating and
 * deleting in unwritable directories, chmod/chown/utimes of other users'
 * files (EPERM), truncate, mkdir, access() vs faccessat(AT_EACCESS). */
#include "next.h"

static char dir[PATH_MAX];

static int as_nobody(int (*fn)(void))
{
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fn());
	}
	return t_wait(pid);
}

static int checks(void)
{
	char p[PATH_MAX + 32];
	struct stat st;
	int fd;

	CHECK_EQ(getuid(), 65534);
	CHECK_EQ(geteuid(), 65534);
	if (chdir(dir) != 0)
		return 99;

	/* root-owned 0600 file: no read, no write. */
	CHECK_ERR(open("secret", O_RDONLY), EACCES);
	CHECK_ERR(open("secret", O_WRONLY), EACCES);
	CHECK_ERR(truncate("secret", 0), EACCES);
	CHECK_ERR(access("secret", R_OK), EACCES);
	CHECK_EQ(access("secret", F_OK), 0);
	CHECK_EQ(stat("secret", &st), 0); /* stat needs only search */
	/* 0644: read yes, write no. */
	fd = open("public", O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(open("public", O_RDWR), EACCES);
	CHECK_ERR(open("public", O_WRONLY | O_APPEND), EACCES);
	/* 0666: write yes. */
	fd = open("world", O_WRONLY);
	CHECK(fd >= 0);
	close(fd);
	/* Execute bit. */
	CHECK_ERR(access("public", X_OK), EACCES);
	{
		char *av[] = { "public", NULL };

		CHECK_ERR(execv("public", av), EACCES);
	}
	/* The directory is root's 0755: no creating, deleting or renaming. */
	CHECK_ERR(open("new", O_CREAT | O_WRONLY, 0644), EACCES);
	CHECK_ERR(mkdir("newdir", 0755), EACCES);
	CHECK_ERR(unlink("world"), EACCES);
	CHECK_ERR(rename("world", "w2"), EACCES);
	CHECK_ERR(symlink("x", "sl"), EACCES);
	CHECK_ERR(mkfifo("ff", 0644), EACCES);
	/* No search permission (0700 dir of root): ENOENT is not leaked,
	 * EACCES is reported. */
	CHECK_ERR(stat("private/inside", &st), EACCES);
	CHECK_ERR(chdir("private"), EACCES);
	CHECK_ERR(open("private", O_RDONLY), EACCES);
	/* Search-only directory (0711): known names work, listing not. */
	CHECK_EQ(stat("searchonly/known", &st), 0);
	CHECK_ERR(open("searchonly", O_RDONLY | O_DIRECTORY), EACCES);
	/* Writable directory of our own: everything works. */
	snprintf(p, sizeof p, "%s/mine/f", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(stat(p, &st), 0);
	CHECK_EQ(st.st_uid, 65534);
	CHECK_EQ(st.st_gid, 65534);
	CHECK_EQ(chmod(p, 0640), 0);
	CHECK_EQ(unlink(p), 0);
	/* Metadata of files we do not own. */
	CHECK_ERR(chmod("public", 0777), EPERM);
	CHECK_ERR(chown("public", 65534, 65534), EPERM);
	CHECK_ERR(chown("world", 0, 65534), EPERM);
	{
		struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };

		CHECK_ERR(utimensat(AT_FDCWD, "public", ts, 0), EPERM);
		/* Setting "now" needs only write permission. */
		CHECK_EQ(utimensat(AT_FDCWD, "world", NULL, 0), 0);
		CHECK_ERR(utimensat(AT_FDCWD, "public", NULL, 0), EACCES);
	}
	/* Privileged operations. */
	CHECK_ERR(mknod("mine/dev", S_IFCHR | 0600, makedev(1, 3)), EPERM);
	CHECK_ERR(chroot("."), EPERM);
	CHECK_ERR(setuid(0), EPERM);
	CHECK_ERR(setresuid(0, 0, 0), EPERM);
	return t_failures ? 1 : 0;
}

/* access() checks the real uid, faccessat(AT_EACCESS) the effective. */
static int real_vs_effective(void)
{
	if (chdir(dir) != 0)
		return 99;
	CHECK_ERR(access("secret", R_OK), EACCES);
	return t_failures ? 1 : 0;
}

int main(void)
{
	char p[PATH_MAX + 32];
	pid_t pid;
	int st;

	if (!t_is_root())
		SKIP("needs root to create files for another user");
	if (t_mktmp("vfs_perm_nonroot", dir, sizeof dir) != 0)
		DONE();
	chmod(dir, 0755);
	snprintf(p, sizeof p, "%s/secret", dir);
	CHECK_EQ(t_write_file(p, "s", 1, 0600), 0);
	snprintf(p, sizeof p, "%s/public", dir);
	CHECK_EQ(t_write_file(p, "#!/bin/sh\n", 10, 0644), 0);
	chmod(p, 0644);
	snprintf(p, sizeof p, "%s/world", dir);
	CHECK_EQ(t_write_file(p, "w", 1, 0666), 0);
	chmod(p, 0666);
	snprintf(p, sizeof p, "%s/private", dir);
	CHECK_EQ(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/private/inside", dir);
	CHECK_EQ(t_write_file(p, "i", 1, 0644), 0);
	snprintf(p, sizeof p, "%s/searchonly", dir);
	CHECK_EQ(mkdir(p, 0711), 0);
	chmod(p, 0711);
	snprintf(p, sizeof p, "%s/searchonly/known", dir);
	CHECK_EQ(t_write_file(p, "k", 1, 0644), 0);
	snprintf(p, sizeof p, "%s/mine", dir);
	CHECK_EQ(mkdir(p, 0755), 0);
	CHECK_EQ(chown(p, 65534, 65534), 0);

	st = as_nobody(checks);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Real uid nobody, effective root. */
	pid = fork();
	if (pid == 0) {
		if (setresuid(65534, 0, 0))
			_exit(100);
		if (chdir(dir) != 0)
			_exit(99);
		CHECK_ERR(access("secret", R_OK), EACCES);
		CHECK_EQ(faccessat(AT_FDCWD, "secret", R_OK, AT_EACCESS), 0);
		/* Opening uses the effective uid. */
		{
			int fd = open("secret", O_RDONLY);

			CHECK(fd >= 0);
			close(fd);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	(void)real_vs_effective;
	t_rmtree(dir);
	DONE();
}
