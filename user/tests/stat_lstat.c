/* stat/lstat: files and directories by path, and the path errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], sub[256], bad[600], longname[300];
	struct stat st, lst;

	if (t_mktmp("stat_lstat", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	t_join(sub, sizeof sub, dir, "d");
	CHECK_EQ(t_write_file(path, "hello", 5, 0600), 0);
	CHECK_EQ(mkdir(sub, 0700), 0);

	/* Regular file. */
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 5);
	CHECK_EQ(st.st_nlink, 1);

	/* lstat of a non-symlink equals stat. */
	CHECK_EQ(lstat(path, &lst), 0);
	CHECK_EQ(lst.st_ino, st.st_ino);
	CHECK_EQ(lst.st_dev, st.st_dev);
	CHECK_EQ(lst.st_mode, st.st_mode);
	CHECK_EQ(lst.st_size, st.st_size);

	/* Directory; "." and ".." resolve to the expected inodes. */
	CHECK_EQ(stat(sub, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	t_join(bad, sizeof bad, sub, ".");
	CHECK_EQ(stat(bad, &lst), 0);
	CHECK_EQ(lst.st_ino, st.st_ino);
	t_join(bad, sizeof bad, sub, "..");
	CHECK_EQ(stat(bad, &lst), 0);
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(lst.st_ino, st.st_ino);
	/* The parent now has one subdirectory: nlink 3. */
	CHECK_EQ(st.st_nlink, 3);

	/* Root directory. */
	CHECK_EQ(stat("/", &st), 0);
	CHECK(S_ISDIR(st.st_mode));

	/* Raw syscalls. */
	CHECK_EQ(syscall(SYS_stat, path, &st), 0);
	CHECK_EQ(st.st_size, 5);
	CHECK_EQ(syscall(SYS_lstat, path, &st), 0);
	CHECK_EQ(st.st_size, 5);

	/* ENOENT: missing file, missing component, empty path. */
	t_join(bad, sizeof bad, dir, "missing");
	CHECK_ERR(stat(bad, &st), ENOENT);
	CHECK_ERR(lstat(bad, &st), ENOENT);
	t_join(bad, sizeof bad, dir, "missing/x");
	CHECK_ERR(stat(bad, &st), ENOENT);
	CHECK_ERR(stat("", &st), ENOENT);
	CHECK_ERR(lstat("", &st), ENOENT);

	/* ENOTDIR: a file used as a directory. */
	t_join(bad, sizeof bad, dir, "f/x");
	CHECK_ERR(stat(bad, &st), ENOTDIR);
	CHECK_ERR(lstat(bad, &st), ENOTDIR);

	/* ENAMETOOLONG: a path component longer than NAME_MAX (255). */
	memset(longname, 'a', 299);
	longname[299] = 0;
	t_join(bad, sizeof bad, dir, longname);
	CHECK_ERR(stat(bad, &st), ENAMETOOLONG);

	/* EFAULT: bad path pointer, bad buffer pointer. */
	CHECK_ERR(stat(BAD_PTR, &st), EFAULT);
	CHECK_ERR(lstat(BAD_PTR2, &st), EFAULT);
	CHECK_ERR(syscall(SYS_stat, path, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_lstat, path, BAD_PTR2), EFAULT);

	t_rmtree(dir);
	DONE();
}
