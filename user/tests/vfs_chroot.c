/* chroot: "/" becomes the new root for path lookups, ".." cannot climb
 * out of it, getcwd, children inherit it, ENOTDIR/ENOENT, EPERM for
 * non-root. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	pid_t pid;

	if (!t_is_root())
		SKIP("chroot needs root");
	if (t_mktmp("vfs_chroot", dir, sizeof dir) != 0)
		DONE();
	t_join(path, sizeof path, dir, "marker");
	CHECK_EQ(t_write_file(path, "m", 1, 0644), 0);
	t_join(path, sizeof path, dir, "sub");
	CHECK_EQ(mkdir(path, 0755), 0);

	pid = fork();
	if (pid == 0) {
		struct stat st, root;
		char cwd[PATH_MAX];

		CHECK_EQ(chroot(dir), 0);
		CHECK_EQ(chdir("/"), 0);
		CHECK_EQ(stat("/marker", &st), 0);
		CHECK_EQ(stat("/", &root), 0);
		CHECK_EQ(stat("/..", &st), 0);
		CHECK_EQ(st.st_ino, root.st_ino);
		CHECK_EQ(stat("/sub/../../../..", &st), 0);
		CHECK_EQ(st.st_ino, root.st_ino);
		CHECK_ERR(stat("/proc/self", &st), ENOENT);
		CHECK_EQ(chdir("/sub"), 0);
		CHECK(getcwd(cwd, sizeof cwd) != NULL);
		CHECK(strcmp(cwd, "/sub") == 0);
		/* Absolute symlinks resolve inside the new root. */
		CHECK_EQ(symlink("/marker", "/sub/abs"), 0);
		CHECK_EQ(stat("/sub/abs", &st), 0);
		CHECK(S_ISREG(st.st_mode));
		/* Children inherit the root. */
		{
			pid_t g = fork();

			if (g == 0)
				_exit(access("/marker", F_OK) == 0 ? 0 : 1);
			CHECK(t_wait_ok(g));
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Errors. */
	CHECK_ERR(chroot("/nonexistent"), ENOENT);
	t_join(path, sizeof path, dir, "marker");
	CHECK_ERR(chroot(path), ENOTDIR);
	CHECK_ERR(chroot((const char *)BAD_PTR2), EFAULT);
	pid = fork();
	if (pid == 0) {
		if (setresuid(65534, 65534, 65534))
			_exit(10);
		CHECK_ERR(chroot("/"), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	t_rmtree(dir);
	DONE();
}
