/*
 * mount(2)/umount2(2) of the virtual file systems: a second proc shows the
 * same processes, sysfs has the CPU list, devtmpfs has the device nodes,
 * and each reports its own statfs type; unknown types, non-mount points
 * and busy mounts fail as on Linux.
 */
#include "t.h"
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#define PROC_SUPER_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572
#define TMPFS_MAGIC 0x01021994

int main(void)
{
	char dir[128], path[256], sub[256], buf[256];
	struct statfs sf;
	struct stat st;

	if (t_mktmp("mount_pseudo_fs", dir, sizeof dir))
		DONE();

	/* proc: our own directory is there; the type is proc. */
	CHECK_EQ(mount("proc", dir, "proc", 0, NULL), 0);
	CHECK_EQ(statfs(dir, &sf), 0);
	CHECK_EQ(sf.f_type, PROC_SUPER_MAGIC);
	snprintf(path, sizeof path, "%s/%d/stat", dir, getpid());
	CHECK(t_read_file(path, buf, sizeof buf) > 0);
	CHECK_EQ(atoi(buf), getpid());
	t_join(path, sizeof path, dir, "meminfo");
	CHECK(t_read_file(path, buf, sizeof buf) > 0);
	CHECK(strncmp(buf, "MemTotal:", 9) == 0);
	CHECK(t_read_file("/proc/self/mounts", buf, sizeof buf) > 0);
	/* Another mount on top keeps it busy. */
	t_join(sub, sizeof sub, dir, "sys");
	CHECK_EQ(mount("tmpfs", sub, "tmpfs", 0, NULL), 0);
	CHECK_ERR(umount(dir), EBUSY);
	CHECK_EQ(umount(sub), 0);
	CHECK_EQ(umount(dir), 0);
	/* Unmounted: the directory is the empty one again. */
	t_join(path, sizeof path, dir, "meminfo");
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_EQ(statfs(dir, &sf), 0);
	CHECK(sf.f_type != PROC_SUPER_MAGIC);

	/* sysfs. */
	CHECK_EQ(mount("sysfs", dir, "sysfs", 0, NULL), 0);
	CHECK_EQ(statfs(dir, &sf), 0);
	CHECK_EQ(sf.f_type, SYSFS_MAGIC);
	t_join(path, sizeof path, dir, "devices/system/cpu/online");
	CHECK(t_read_file(path, buf, sizeof buf) > 0);
	CHECK(buf[0] == '0' && buf[strlen(buf) - 1] == '\n');
	t_join(path, sizeof path, dir, "kernel");
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	t_join(path, sizeof path, dir, "class");
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(umount(dir), 0);

	/* devtmpfs: a tmpfs to statfs, with the memory devices. */
	CHECK_EQ(mount("devtmpfs", dir, "devtmpfs", 0, NULL), 0);
	CHECK_EQ(statfs(dir, &sf), 0);
	CHECK_EQ(sf.f_type, TMPFS_MAGIC);
	t_join(path, sizeof path, dir, "null");
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(st.st_rdev, makedev(1, 3));
	CHECK_EQ(umount(dir), 0);

	/* Errors. */
	CHECK_ERR(mount("none", dir, "no-such-fs", 0, NULL), ENODEV);
	CHECK_ERR(umount(dir), EINVAL);
	t_join(path, sizeof path, dir, "missing");
	CHECK_ERR(mount("proc", path, "proc", 0, NULL), ENOENT);
	CHECK_ERR(umount(path), ENOENT);

	/* Only root mounts. */
	{
		pid_t child = fork();
		if (child == 0) {
			CHECK_EQ(setuid(65534), 0);
			CHECK_ERR(mount("proc", dir, "proc", 0, NULL), EPERM);
			CHILD_DONE();
		}
		CHECK(t_wait_ok(child));
	}
	t_rmtree(dir);
	DONE();
}
