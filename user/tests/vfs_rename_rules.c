/* rename(2) rules: replacing files atomically, directories over empty
 * directories, ENOTEMPTY, EISDIR, ENOTDIR, EINVAL for moving a directory
 * into itself, same-file no-op, symlinks renamed not followed, and
 * renameat2 RENAME_NOREPLACE / RENAME_EXCHANGE. */
#include "next.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2
#endif

static long renat2(const char *a, const char *b, unsigned f)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, f);
}

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[16];
	struct stat st, st2;

	if (t_mktmp("vfs_rename_rules", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(t_write_file("a", "A", 1, 0644), 0);
	CHECK_EQ(t_write_file("b", "B", 1, 0644), 0);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_EQ(mkdir("e", 0755), 0);
	CHECK_EQ(mkdir("full", 0755), 0);
	CHECK_EQ(t_write_file("full/x", "x", 1, 0644), 0);

	/* Replace a file. */
	CHECK_EQ(stat("a", &st), 0);
	CHECK_EQ(rename("a", "b"), 0);
	CHECK_EQ(stat("b", &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_ERR(access("a", F_OK), ENOENT);
	CHECK_EQ(t_read_file("b", buf, sizeof buf), 1);
	CHECK_EQ(buf[0], 'A');

	/* Directory over an empty directory; not over a full one. */
	CHECK_EQ(rename("d", "e"), 0);
	CHECK_ERR(access("d", F_OK), ENOENT);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_ERR(rename("d", "full"), ENOTEMPTY);
	CHECK_ERR(rename("d", "b"), ENOTDIR);
	CHECK_ERR(rename("b", "d"), EISDIR);
	CHECK_ERR(rename("d", "d/sub"), EINVAL);
	CHECK_ERR(rename("full", "full/x/y"), ENOTDIR);
	CHECK_ERR(rename("nope", "z"), ENOENT);
	CHECK_ERR(rename("b", "nope/z"), ENOENT);
	CHECK_ERR(rename(".", "z"), EBUSY);

	/* Same file: no-op, success. */
	CHECK_EQ(rename("b", "b"), 0);
	CHECK_EQ(link("b", "b2"), 0);
	CHECK_EQ(rename("b", "b2"), 0);
	CHECK_EQ(access("b", F_OK), 0); /* both names stay */

	/* Symlinks are renamed, not followed. */
	CHECK_EQ(symlink("b", "sl"), 0);
	CHECK_EQ(rename("sl", "sl2"), 0);
	CHECK_EQ(lstat("sl2", &st), 0);
	CHECK(S_ISLNK(st.st_mode));

	/* renameat2. */
	CHECK_EQ(t_write_file("c", "C", 1, 0644), 0);
	CHECK_ERR(renat2("c", "b", RENAME_NOREPLACE), EEXIST);
	CHECK_EQ(renat2("c", "c2", RENAME_NOREPLACE), 0);
	CHECK_EQ(renat2("c2", "full", RENAME_EXCHANGE), 0);
	CHECK_EQ(stat("c2", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(stat("full", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_ERR(renat2("c2", "missing", RENAME_EXCHANGE), ENOENT);
	CHECK_ERR(renat2("c2", "full", RENAME_EXCHANGE | RENAME_NOREPLACE), EINVAL);
	CHECK_ERR(renat2("c2", "zz", 0x80), EINVAL);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
