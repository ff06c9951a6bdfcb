/* unlink: removes names; open descriptors survive; errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], sub[256], bad[256], buf[16];
	struct stat st;
	int fd;

	if (t_mktmp("unlink", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "file");
	t_join(sub, sizeof sub, dir, "sub");
	CHECK_EQ(t_write_file(path, "contents", 8, 0644), 0);
	CHECK_EQ(mkdir(sub, 0755), 0);

	/* Unlink removes the name. */
	CHECK_EQ(unlink(path), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_ERR(open(path, O_RDONLY), ENOENT);

	/* ENOENT on a second unlink. */
	CHECK_ERR(unlink(path), ENOENT);

	/* An open descriptor keeps the data alive after unlink. */
	CHECK_EQ(t_write_file(path, "contents", 8, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(syscall(SYS_unlink, path), 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 8);
	CHECK(memcmp(buf, "contents", 8) == 0);
	CHECK_EQ(write(fd, "++", 2), 2);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 10);
	CHECK_EQ(close(fd), 0);

	/* The name can be reused for a brand-new file. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(close(fd), 0);

	/* EISDIR: unlink on a directory (Linux returns EISDIR). */
	CHECK_ERR(unlink(sub), EISDIR);
	CHECK_ERR(unlink(dir), EISDIR);
	CHECK_EQ(stat(sub, &st), 0);

	/* ENOENT: missing component; empty path. */
	t_join(bad, sizeof bad, dir, "missing/x");
	CHECK_ERR(unlink(bad), ENOENT);
	CHECK_ERR(unlink(""), ENOENT);

	/* ENOTDIR: file used as a directory. */
	t_join(bad, sizeof bad, dir, "file/x");
	CHECK_ERR(unlink(bad), ENOTDIR);

	/* EFAULT. */
	CHECK_ERR(unlink(BAD_PTR), EFAULT);

	CHECK_EQ(unlink(path), 0);
	t_rmtree(dir);
	DONE();
}
