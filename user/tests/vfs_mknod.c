/* mknod: FIFOs, regular files (S_IFREG and type 0), character devices as
 * root (a node for 1:3 behaves as /dev/null, 1:5 as /dev/zero), EEXIST,
 * EINVAL for directories and bad types, umask applied. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[16];
	struct stat st;
	int fd, i;

	if (t_mktmp("vfs_mknod", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	umask(022);

	CHECK_EQ(mknod("fifo", S_IFIFO | 0666, 0), 0);
	CHECK_EQ(stat("fifo", &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0644);
	CHECK_EQ(mknod("reg", S_IFREG | 0600, 0), 0);
	CHECK_EQ(stat("reg", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(mknod("reg0", 0600, 0), 0); /* type 0 means regular */
	CHECK_EQ(stat("reg0", &st), 0);
	CHECK(S_ISREG(st.st_mode));

	CHECK_ERR(mknod("fifo", S_IFIFO | 0600, 0), EEXIST);
	CHECK_ERR(mknod("dir", S_IFDIR | 0755, 0), EPERM);
	CHECK_ERR(mknod("bad", 0170000 | 0600, 0), EINVAL);
	CHECK_ERR(mknod("nope/x", S_IFIFO | 0600, 0), ENOENT);

	if (t_is_root()) {
		CHECK_EQ(mknod("null", S_IFCHR | 0666, makedev(1, 3)), 0);
		CHECK_EQ(stat("null", &st), 0);
		CHECK(S_ISCHR(st.st_mode));
		CHECK_EQ(major(st.st_rdev), 1);
		CHECK_EQ(minor(st.st_rdev), 3);
		fd = open("null", O_RDWR);
		CHECK(fd >= 0);
		CHECK_EQ(write(fd, "abc", 3), 3);
		CHECK_EQ(read(fd, buf, sizeof buf), 0);
		close(fd);
		CHECK_EQ(mknod("zero", S_IFCHR | 0666, makedev(1, 5)), 0);
		fd = open("zero", O_RDONLY);
		memset(buf, 'x', sizeof buf);
		CHECK_EQ(read(fd, buf, sizeof buf), (long)sizeof buf);
		for (i = 0; i < (int)sizeof buf; i++)
			CHECK_EQ(buf[i], 0);
		close(fd);
		/* A node for a device that does not exist: ENXIO on open. */
		CHECK_EQ(mknod("nodev", S_IFCHR | 0600, makedev(250, 250)), 0);
		CHECK_ERR(open("nodev", O_RDONLY), ENXIO);
	} else {
		t_note("not root: device nodes not checked");
	}
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
