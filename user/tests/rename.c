/* rename: files and directories, replacement rules, errors. */
#include "t.h"

static char dir[128];

static const char *P(char *buf, const char *name)
{
	return t_join(buf, 300, dir, name);
}

int main(void)
{
	char a[300], b[300], c[300], buf[32];
	struct stat st, st2;

	if (t_mktmp("rename", dir, sizeof dir))
		DONE();

	/* Simple file rename: content moves, old name gone, same inode. */
	CHECK_EQ(t_write_file(P(a, "a"), "AAAA", 4, 0644), 0);
	CHECK_EQ(stat(a, &st), 0);
	CHECK_EQ(rename(a, P(b, "b")), 0);
	CHECK_ERR(stat(a, &st2), ENOENT);
	CHECK_EQ(stat(b, &st2), 0);
	CHECK_EQ(st2.st_ino, st.st_ino);
	CHECK_EQ(t_read_file(b, buf, sizeof buf), 4);
	CHECK(memcmp(buf, "AAAA", 4) == 0);

	/* Renaming over an existing file replaces it atomically. */
	CHECK_EQ(t_write_file(P(c, "c"), "CC", 2, 0644), 0);
	CHECK_EQ(rename(b, c), 0);
	CHECK_ERR(stat(b, &st2), ENOENT);
	CHECK_EQ(stat(c, &st2), 0);
	CHECK_EQ(st2.st_ino, st.st_ino);
	CHECK_EQ(st2.st_size, 4);

	/* Renaming a file to itself is a successful no-op. */
	CHECK_EQ(rename(c, c), 0);
	CHECK_EQ(stat(c, &st2), 0);

	/* Raw syscall; move into a subdirectory. */
	CHECK_EQ(mkdir(P(a, "d1"), 0755), 0);
	CHECK_EQ(syscall(SYS_rename, c, P(b, "d1/moved")), 0);
	CHECK_EQ(stat(b, &st2), 0);
	CHECK_EQ(st2.st_ino, st.st_ino);

	/* Directory rename. */
	CHECK_EQ(rename(P(a, "d1"), P(b, "d2")), 0);
	CHECK_EQ(stat(P(a, "d2/moved"), &st2), 0);

	/* A directory may replace an empty directory... */
	CHECK_EQ(mkdir(P(a, "empty"), 0755), 0);
	CHECK_EQ(rename(P(a, "d2"), P(b, "empty")), 0);
	CHECK_EQ(stat(P(a, "empty/moved"), &st2), 0);

	/* ...but not a non-empty one: ENOTEMPTY. */
	CHECK_EQ(mkdir(P(a, "d3"), 0755), 0);
	CHECK_ERR(rename(P(a, "d3"), P(b, "empty")), ENOTEMPTY);

	/* EISDIR: file onto a directory. ENOTDIR: directory onto a file. */
	CHECK_EQ(t_write_file(P(a, "f"), "f", 1, 0644), 0);
	CHECK_ERR(rename(P(a, "f"), P(b, "d3")), EISDIR);
	CHECK_ERR(rename(P(a, "d3"), P(b, "f")), ENOTDIR);

	/* EINVAL: moving a directory into its own subdirectory. */
	CHECK_ERR(rename(P(a, "empty"), P(b, "empty/moved2")), EINVAL);
	CHECK_EQ(mkdir(P(a, "empty/sub"), 0755), 0);
	CHECK_ERR(rename(P(a, "empty"), P(b, "empty/sub/x")), EINVAL);

	/* ENOENT: missing source; missing destination directory; empty. */
	CHECK_ERR(rename(P(a, "nope"), P(b, "x")), ENOENT);
	CHECK_ERR(rename(P(a, "f"), P(b, "nodir/x")), ENOENT);
	CHECK_ERR(rename("", P(b, "x")), ENOENT);
	CHECK_ERR(rename(P(a, "f"), ""), ENOENT);

	/* ENOTDIR: a path component that is a file. */
	CHECK_ERR(rename(P(a, "f/x"), P(b, "y")), ENOTDIR);
	CHECK_ERR(rename(P(a, "f"), P(b, "f/y")), ENOTDIR);

	/* EFAULT. */
	CHECK_ERR(rename(BAD_PTR, P(b, "y")), EFAULT);
	CHECK_ERR(rename(P(a, "f"), BAD_PTR2), EFAULT);

	/* Source still intact after all the failures. */
	CHECK_EQ(stat(P(a, "f"), &st2), 0);

	t_rmtree(dir);
	DONE();
}
