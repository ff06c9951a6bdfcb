/* Path resolution across mount points: ".." from a mount's root leads to
 * the parent file system, st_dev differs, getcwd inside a mount, and
 * rename/link across mounts fail with EXDEV. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], mnt[PATH_MAX], a[PATH_MAX + 64], b[PATH_MAX],
		cwd[PATH_MAX], orig[PATH_MAX];
	struct stat sd, sm, sdot;

	if (!t_is_root())
		SKIP("mount needs root");
	if (t_mktmp("vfs_mount_cross", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	t_join(mnt, sizeof mnt, dir, "m");
	CHECK_EQ(mkdir(mnt, 0755), 0);
	CHECK_EQ(mount("none", mnt, "tmpfs", 0, NULL), 0);

	CHECK_EQ(stat(dir, &sd), 0);
	CHECK_EQ(stat(mnt, &sm), 0);
	CHECK(sd.st_dev != sm.st_dev);
	/* mnt/.. is dir. */
	snprintf(a, sizeof a, "%s/..", mnt);
	CHECK_EQ(stat(a, &sdot), 0);
	CHECK_EQ(sdot.st_dev, sd.st_dev);
	CHECK_EQ(sdot.st_ino, sd.st_ino);
	/* Same via chdir. */
	CHECK_EQ(chdir(mnt), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, mnt) == 0);
	CHECK_EQ(chdir(".."), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, dir) == 0);
	/* A deeper ../.. path crossing back. */
	CHECK_EQ(mkdir("m/sub", 0755), 0);
	CHECK_EQ(stat("m/sub/../../m/sub/..", &sdot), 0);
	CHECK_EQ(sdot.st_ino, sm.st_ino);
	CHECK_EQ(sdot.st_dev, sm.st_dev);

	/* EXDEV for rename and link across. */
	t_join(a, sizeof a, dir, "file");
	t_join(b, sizeof b, mnt, "file");
	CHECK_EQ(t_write_file(a, "x", 1, 0644), 0);
	CHECK_ERR(rename(a, b), EXDEV);
	CHECK_ERR(link(a, b), EXDEV);
	CHECK_ERR(rename("m", "m2"), EBUSY);
	/* A mount point cannot be removed. */
	CHECK_ERR(rmdir(mnt), EBUSY);

	CHECK_EQ(chdir(orig), 0);
	CHECK_EQ(umount(mnt), 0);
	t_rmtree(dir);
	DONE();
}
