/* mkdir: creation, mode, parent link count, and the path errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], file[256], bad[256];
	struct stat st;
	nlink_t before;

	if (t_mktmp("mkdir", dir, sizeof dir))
		DONE();
	umask(022);
	t_join(file, sizeof file, dir, "file");
	CHECK_EQ(t_write_file(file, "x", 1, 0644), 0);
	CHECK_EQ(stat(dir, &st), 0);
	before = st.st_nlink;

	/* Create a directory; it is empty and has the requested mode. */
	t_join(path, sizeof path, dir, "new");
	CHECK_EQ(mkdir(path, 0750), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0750);
	CHECK_EQ(st.st_nlink, 2);
	CHECK_EQ(st.st_uid, geteuid());

	/* The parent gains a link (the child's ".."). */
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(st.st_nlink, before + 1);

	/* Nested creation inside the new directory. */
	t_join(path, sizeof path, dir, "new/inner");
	CHECK_EQ(mkdir(path, 0755), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));

	/* A trailing slash is accepted. */
	t_join(path, sizeof path, dir, "slash/");
	CHECK_EQ(mkdir(path, 0755), 0);

	/* Raw syscall. */
	t_join(path, sizeof path, dir, "raw");
	CHECK_EQ(syscall(SYS_mkdir, path, 0700), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0700);

	/* EEXIST: existing directory or file. */
	t_join(path, sizeof path, dir, "new");
	CHECK_ERR(mkdir(path, 0755), EEXIST);
	CHECK_ERR(mkdir(file, 0755), EEXIST);
	CHECK_ERR(mkdir(dir, 0755), EEXIST);
	CHECK_ERR(mkdir("/", 0755), EEXIST);

	/* ENOENT: missing parent, or empty path. */
	t_join(bad, sizeof bad, dir, "missing/child");
	CHECK_ERR(mkdir(bad, 0755), ENOENT);
	CHECK_ERR(mkdir("", 0755), ENOENT);

	/* ENOTDIR: a component is a regular file. */
	t_join(bad, sizeof bad, dir, "file/child");
	CHECK_ERR(mkdir(bad, 0755), ENOTDIR);

	/* EFAULT. */
	CHECK_ERR(mkdir(BAD_PTR, 0755), EFAULT);
	CHECK_ERR(mkdir(BAD_PTR2, 0755), EFAULT);

	t_rmtree(dir);
	DONE();
}
