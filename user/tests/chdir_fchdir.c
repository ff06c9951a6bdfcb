/* chdir/fchdir: relative resolution follows the cwd; errors. */
#include "t.h"

int main(void)
{
	char dir[128], sub[256], file[256], buf[PATH_MAX];
	struct stat st;
	int dfd, subfd, ffd;

	if (t_mktmp("chdir_fchdir", dir, sizeof dir))
		DONE();
	t_join(sub, sizeof sub, dir, "sub");
	t_join(file, sizeof file, dir, "file");
	CHECK_EQ(mkdir(sub, 0755), 0);
	CHECK_EQ(t_write_file(file, "x", 1, 0644), 0);

	/* chdir absolute; relative names resolve against it. */
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(stat("file", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(t_write_file("sub/inner", "y", 1, 0644), 0);
	CHECK_EQ(access("sub/inner", F_OK), 0);

	/* chdir relative and back up. */
	CHECK_EQ(chdir("sub"), 0);
	CHECK_EQ(access("inner", F_OK), 0);
	CHECK_EQ(chdir(".."), 0);
	CHECK_EQ(access("file", F_OK), 0);
	CHECK_EQ(chdir("."), 0);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf, dir) == 0);

	/* ".." at the root stays at the root. */
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(chdir(".."), 0);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf, "/") == 0);

	/* fchdir to a directory fd. */
	subfd = open(sub, O_RDONLY | O_DIRECTORY);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(subfd >= 0 && dfd >= 0);
	CHECK_EQ(fchdir(subfd), 0);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf, sub) == 0);
	CHECK_EQ(access("inner", F_OK), 0);
	CHECK_EQ(syscall(SYS_fchdir, dfd), 0);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf, dir) == 0);

	/* ENOENT / ENOTDIR leave the cwd unchanged. */
	CHECK_ERR(chdir("missing"), ENOENT);
	CHECK_ERR(chdir(""), ENOENT);
	CHECK_ERR(chdir("file"), ENOTDIR);
	CHECK_ERR(chdir("file/x"), ENOTDIR);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf, dir) == 0);

	/* EFAULT. */
	CHECK_ERR(chdir(BAD_PTR), EFAULT);

	/* fchdir errors: EBADF, ENOTDIR on a regular file. */
	CHECK_ERR(fchdir(-1), EBADF);
	CHECK_ERR(fchdir(999), EBADF);
	CHECK_ERR(syscall(SYS_fchdir, 999), EBADF);
	ffd = open(file, O_RDONLY);
	CHECK(ffd >= 0);
	CHECK_ERR(fchdir(ffd), ENOTDIR);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf, dir) == 0);

	CHECK_EQ(close(ffd), 0);
	CHECK_EQ(close(subfd), 0);
	CHECK_EQ(close(dfd), 0);
	CHECK_EQ(chdir("/"), 0);
	t_rmtree(dir);
	DONE();
}
