/* open/close: creation, lowest-fd allocation, and the documented errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], sub[256], bad[256];
	int fd, fd2;

	if (t_mktmp("open_close", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "file");

	/* O_CREAT creates a new file; the fd is non-negative. */
	fd = open(path, O_RDWR | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);

	/* Re-opening an existing file without O_CREAT works. */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);

	/* open returns the lowest free descriptor. */
	fd2 = open(path, O_RDONLY);
	CHECK(fd2 > fd);
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && fd < fd2);
	CHECK_EQ(close(fd2), 0);

	/* Closing twice: second close is EBADF. */
	CHECK_EQ(close(fd), 0);
	CHECK_ERR(close(fd), EBADF);

	/* close on never-valid descriptors. */
	CHECK_ERR(close(-1), EBADF);
	CHECK_ERR(close(999), EBADF);

	/* ENOENT: missing file without O_CREAT; missing parent with O_CREAT. */
	t_join(bad, sizeof bad, dir, "missing");
	CHECK_ERR(open(bad, O_RDONLY), ENOENT);
	t_join(bad, sizeof bad, dir, "nodir/file");
	CHECK_ERR(open(bad, O_RDWR | O_CREAT, 0644), ENOENT);

	/* ENOENT: empty path. */
	CHECK_ERR(open("", O_RDONLY), ENOENT);

	/* ENOTDIR: a regular file used as a directory component. */
	t_cat3(sub, sizeof sub, path, "/x", "");
	CHECK_ERR(open(sub, O_RDONLY), ENOTDIR);
	CHECK_ERR(open(sub, O_RDWR | O_CREAT, 0644), ENOTDIR);

	/* EEXIST: O_CREAT|O_EXCL on an existing file. */
	CHECK_ERR(open(path, O_RDWR | O_CREAT | O_EXCL, 0644), EEXIST);

	/* EISDIR: a directory opened for writing. */
	CHECK_ERR(open(dir, O_WRONLY), EISDIR);
	CHECK_ERR(open(dir, O_RDWR), EISDIR);

	/* A directory can be opened read-only. */
	fd = open(dir, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);

	/* EFAULT: pathname outside the address space. */
	CHECK_ERR(open(BAD_PTR, O_RDONLY), EFAULT);
	CHECK_ERR(open(BAD_PTR2, O_RDONLY), EFAULT);

	CHECK_EQ(unlink(path), 0);
	t_rmtree(dir);
	DONE();
}
