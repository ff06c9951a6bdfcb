/*
 * Bind mounts (MS_BIND): a directory shows another's contents; ".." from
 * inside leads to the mount point's parent; getcwd names the mount
 * point; a directory bound onto itself (a common trick) changes nothing
 * and unmounts cleanly.
 */
#include "t.h"
#include <sys/mount.h>

int main(void)
{
	char dir[128], src[256], dst[256], path[512], cwd[512];
	struct stat st, st2;

	if (t_mktmp("mount_bind", dir, sizeof dir))
		DONE();
	t_join(src, sizeof src, dir, "src");
	t_join(dst, sizeof dst, dir, "dst");
	CHECK_EQ(mkdir(src, 0755), 0);
	CHECK_EQ(mkdir(dst, 0755), 0);
	t_join(path, sizeof path, src, "file");
	CHECK_EQ(t_write_file(path, "bound", 5, 0644), 0);

	CHECK_EQ(mount(src, dst, NULL, MS_BIND, NULL), 0);
	t_join(path, sizeof path, dst, "file");
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 5);
	/* The same file through both names. */
	t_join(path, sizeof path, src, "file");
	CHECK_EQ(stat(path, &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	/* ".." inside the bind is the mount point's parent. */
	t_join(path, sizeof path, dst, "..");
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(stat(dir, &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(chdir(dst), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, dst) == 0);
	CHECK_EQ(chdir("/"), 0);
	/* It is in the mount table. */
	{
		static char buf[16384];
		CHECK(t_read_file("/proc/self/mounts", buf, sizeof buf) > 0);
		snprintf(path, sizeof path, " %s ", dst);
		CHECK(strstr(buf, path) != NULL);
	}
	CHECK_EQ(umount(dst), 0);
	t_join(path, sizeof path, dst, "file");
	CHECK_ERR(stat(path, &st), ENOENT);

	/* A directory bound onto itself. */
	CHECK_EQ(mount(src, src, NULL, MS_BIND, NULL), 0);
	t_join(path, sizeof path, src, "file");
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(chdir(src), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, src) == 0);
	CHECK_EQ(stat("..", &st), 0);
	CHECK_EQ(stat(dir, &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(umount(src), 0);
	CHECK_EQ(stat(path, &st), 0);

	/* A missing source. */
	t_join(path, sizeof path, dir, "missing");
	CHECK_ERR(mount(path, dst, NULL, MS_BIND, NULL), ENOENT);
	t_rmtree(dir);
	DONE();
}
