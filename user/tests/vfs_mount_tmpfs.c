/* mount/umount2 of tmpfs: the new file system hides the directory's old
 * contents until unmounted, shows up in /proc/mounts and statfs, EBUSY
 * while in use, MNT_DETACH, and the error cases (EINVAL, ENOENT, ENOTDIR,
 * ENODEV, EPERM as non-root). */
#include "next.h"
#include <sys/statfs.h>

#define TMPFS_MAGIC_ 0x01021994

static int in_mounts(const char *dir)
{
	static char buf[65536];
	char needle[PATH_MAX + 2];

	if (t_read_file("/proc/mounts", buf, sizeof buf) <= 0)
		return -1;
	snprintf(needle, sizeof needle, " %s ", dir);
	return strstr(buf, needle) != NULL;
}

int main(void)
{
	char dir[PATH_MAX], mnt[PATH_MAX], path[PATH_MAX], file[PATH_MAX];
	struct statfs sf;
	struct stat st_before, st_after;
	int fd, r;
	pid_t pid;

	if (!t_is_root())
		SKIP("mount needs root");
	if (t_mktmp("vfs_mount_tmpfs", dir, sizeof dir) != 0)
		DONE();
	t_join(mnt, sizeof mnt, dir, "mnt");
	CHECK_EQ(mkdir(mnt, 0755), 0);
	t_join(path, sizeof path, mnt, "under");
	CHECK_EQ(t_write_file(path, "old", 3, 0644), 0);
	CHECK_EQ(stat(mnt, &st_before), 0);

	CHECK_EQ(mount("none", mnt, "tmpfs", 0, "size=1m,mode=0700"), 0);
	/* The old file is hidden; the root has the mode asked for. */
	CHECK_ERR(access(path, F_OK), ENOENT);
	CHECK_EQ(stat(mnt, &st_after), 0);
	CHECK(st_after.st_dev != st_before.st_dev);
	CHECK_EQ(st_after.st_mode & 07777, 0700);
	CHECK_EQ(statfs(mnt, &sf), 0);
	CHECK_EQ(sf.f_type, TMPFS_MAGIC_);
	r = in_mounts(mnt);
	if (r >= 0)
		CHECK_EQ(r, 1);

	/* Busy while a file is open in it, or it is somebody's cwd. */
	t_join(file, sizeof file, mnt, "new");
	fd = open(file, O_CREAT | O_RDWR, 0644);
	CHECK(fd >= 0);
	CHECK_ERR(umount2(mnt, 0), EBUSY);
	close(fd);
	pid = fork();
	if (pid == 0) {
		if (chdir(mnt) != 0)
			_exit(1);
		pause();
		_exit(0);
	}
	t_msleep(20);
	CHECK_ERR(umount(mnt), EBUSY);
	kill(pid, SIGKILL);
	t_wait(pid);

	/* Unmount: the old contents are back. */
	CHECK_EQ(umount(mnt), 0);
	CHECK_EQ(access(path, F_OK), 0);
	CHECK_ERR(access(file, F_OK), ENOENT);
	r = in_mounts(mnt);
	if (r >= 0)
		CHECK_EQ(r, 0);

	/* Lazy unmount with an open file. */
	CHECK_EQ(mount("none", mnt, "tmpfs", 0, NULL), 0);
	fd = open(file, O_CREAT | O_RDWR, 0644);
	CHECK_EQ(write(fd, "lazy", 4), 4);
	CHECK_EQ(umount2(mnt, MNT_DETACH), 0);
	CHECK_EQ(access(path, F_OK), 0);
	{
		char b[8];

		CHECK_EQ(pread(fd, b, 4, 0), 4);
		CHECK(memcmp(b, "lazy", 4) == 0);
	}
	close(fd);

	/* Errors. */
	CHECK_ERR(umount(mnt), EINVAL);	/* not a mount point */
	CHECK_ERR(umount2(mnt, 0x1000), EINVAL); /* unknown flag */
	t_join(file, sizeof file, dir, "missing");
	CHECK_ERR(mount("none", file, "tmpfs", 0, NULL), ENOENT);
	CHECK_ERR(umount(file), ENOENT);
	CHECK_ERR(mount("none", path, "tmpfs", 0, NULL), ENOTDIR);
	CHECK_ERR(mount("none", mnt, "no-such-fs-type", 0, NULL), ENODEV);
	CHECK_ERR(mount("none", mnt, (const char *)BAD_PTR2, 0, NULL), EFAULT);
	pid = fork();
	if (pid == 0) {
		if (setresuid(65534, 65534, 65534))
			_exit(10);
		CHECK_ERR(mount("none", mnt, "tmpfs", 0, NULL), EPERM);
		CHECK_ERR(umount("/"), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	t_rmtree(dir);
	DONE();
}
