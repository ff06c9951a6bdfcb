/* Mounting the other kernel file systems at scratch points: proc (with
 * self and our pid), sysfs (a directory tree), devtmpfs (with null), and
 * the magic numbers statfs reports for them. */
#include "next.h"
#include <sys/statfs.h>

#define PROC_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572
#define TMPFS_MAGIC_ 0x01021994

int main(void)
{
	char dir[PATH_MAX], m[PATH_MAX], p[PATH_MAX + 64], link[64];
	struct statfs sf;
	struct stat st;
	ssize_t n;

	if (!t_is_root())
		SKIP("mount needs root");
	if (t_mktmp("vfs_mount_kinds", dir, sizeof dir) != 0)
		DONE();

	/* proc */
	t_join(m, sizeof m, dir, "proc");
	CHECK_EQ(mkdir(m, 0755), 0);
	CHECK_EQ(mount("proc", m, "proc", 0, NULL), 0);
	CHECK_EQ(statfs(m, &sf), 0);
	CHECK_EQ(sf.f_type, PROC_MAGIC);
	t_join(p, sizeof p, m, "self");
	n = readlink(p, link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK_EQ(atoi(link), getpid());
	}
	snprintf(p, sizeof p, "%s/%d/stat", m, (int)getpid());
	CHECK_EQ(stat(p, &st), 0);
	CHECK_EQ(umount(m), 0);

	/* sysfs */
	t_join(m, sizeof m, dir, "sys");
	CHECK_EQ(mkdir(m, 0755), 0);
	CHECK_EQ(mount("sysfs", m, "sysfs", 0, NULL), 0);
	CHECK_EQ(statfs(m, &sf), 0);
	CHECK_EQ(sf.f_type, SYSFS_MAGIC);
	CHECK_EQ(stat(m, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(umount(m), 0);

	/* devtmpfs */
	t_join(m, sizeof m, dir, "dev");
	CHECK_EQ(mkdir(m, 0755), 0);
	CHECK_EQ(mount("devtmpfs", m, "devtmpfs", 0, NULL), 0);
	t_join(p, sizeof p, m, "null");
	CHECK_EQ(stat(p, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 1);
	CHECK_EQ(minor(st.st_rdev), 3);
	{
		int fd = open(p, O_WRONLY);

		CHECK(fd >= 0);
		CHECK_EQ(write(fd, "gone", 4), 4);
		close(fd);
	}
	CHECK_EQ(umount(m), 0);

	/* The same tmpfs type twice at two places: independent. */
	{
		char a[PATH_MAX], b[PATH_MAX], fa[PATH_MAX], fb[PATH_MAX];

		t_join(a, sizeof a, dir, "a");
		t_join(b, sizeof b, dir, "b");
		mkdir(a, 0755);
		mkdir(b, 0755);
		CHECK_EQ(mount("x", a, "tmpfs", 0, NULL), 0);
		CHECK_EQ(mount("y", b, "tmpfs", 0, NULL), 0);
		t_join(fa, sizeof fa, a, "f");
		t_join(fb, sizeof fb, b, "f");
		CHECK_EQ(t_write_file(fa, "1", 1, 0644), 0);
		CHECK_ERR(access(fb, F_OK), ENOENT);
		CHECK_EQ(statfs(a, &sf), 0);
		CHECK_EQ(sf.f_type, TMPFS_MAGIC_);
		/* A mount on top of a mount: the top one is visible. */
		CHECK_EQ(mount("z", a, "tmpfs", 0, NULL), 0);
		CHECK_ERR(access(fa, F_OK), ENOENT);
		CHECK_EQ(umount(a), 0);
		CHECK_EQ(access(fa, F_OK), 0);
		CHECK_EQ(umount(a), 0);
		CHECK_EQ(umount(b), 0);
	}
	t_rmtree(dir);
	DONE();
}
