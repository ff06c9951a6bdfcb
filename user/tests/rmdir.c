/* rmdir: removes empty directories; ENOTEMPTY, ENOTDIR, ENOENT, EINVAL. */
#include "t.h"

int main(void)
{
	char dir[128], sub[256], inner[256], file[256], bad[300];
	struct stat st;
	nlink_t before;

	if (t_mktmp("rmdir", dir, sizeof dir))
		DONE();
	t_join(sub, sizeof sub, dir, "sub");
	t_join(inner, sizeof inner, dir, "sub/inner");
	t_join(file, sizeof file, dir, "file");
	CHECK_EQ(stat(dir, &st), 0);
	before = st.st_nlink;
	CHECK_EQ(mkdir(sub, 0755), 0);
	CHECK_EQ(t_write_file(file, "x", 1, 0644), 0);

	/* Removing an empty directory; the parent link count drops back. */
	CHECK_EQ(rmdir(sub), 0);
	CHECK_ERR(stat(sub, &st), ENOENT);
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(st.st_nlink, before);

	/* ENOENT: missing directory; empty path. */
	CHECK_ERR(rmdir(sub), ENOENT);
	CHECK_ERR(rmdir(""), ENOENT);

	/* ENOTEMPTY: contains a subdirectory, then a file. */
	CHECK_EQ(mkdir(sub, 0755), 0);
	CHECK_EQ(mkdir(inner, 0755), 0);
	CHECK_ERR(rmdir(sub), ENOTEMPTY);
	CHECK_EQ(rmdir(inner), 0);
	t_join(bad, sizeof bad, sub, "f");
	CHECK_EQ(t_write_file(bad, "x", 1, 0644), 0);
	CHECK_ERR(rmdir(sub), ENOTEMPTY);
	CHECK_EQ(unlink(bad), 0);

	/* ENOTDIR: the target or a component is a regular file. */
	CHECK_ERR(rmdir(file), ENOTDIR);
	t_join(bad, sizeof bad, dir, "file/x");
	CHECK_ERR(rmdir(bad), ENOTDIR);

	/* EINVAL: last component ".". */
	t_join(bad, sizeof bad, sub, ".");
	CHECK_ERR(rmdir(bad), EINVAL);
	CHECK_EQ(chdir(sub), 0);
	CHECK_ERR(rmdir("."), EINVAL);

	/* ENOTEMPTY: last component "..". */
	CHECK_ERR(rmdir(".."), ENOTEMPTY);
	t_join(bad, sizeof bad, sub, "..");
	CHECK_ERR(rmdir(bad), ENOTEMPTY);

	/* EBUSY: the root directory. */
	CHECK_ERR(rmdir("/"), EBUSY);

	/* The cwd itself can be removed by name. */
	CHECK_EQ(syscall(SYS_rmdir, sub), 0);
	CHECK_ERR(stat(sub, &st), ENOENT);
	CHECK_EQ(chdir("/"), 0);

	/* EFAULT. */
	CHECK_ERR(rmdir(BAD_PTR), EFAULT);

	t_rmtree(dir);
	DONE();
}
