/* openat: dirfd-relative lookup, AT_FDCWD, absolute paths, errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[16];
	int dfd, fd, ffd;

	if (t_mktmp("openat", dir, sizeof dir))
		DONE();

	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);

	/* Create relative to dirfd; visible at the joined absolute path. */
	fd = openat(dfd, "rel", O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(close(fd), 0);
	t_join(path, sizeof path, dir, "rel");
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 3);
	CHECK(memcmp(buf, "abc", 3) == 0);

	/* O_EXCL through openat. */
	CHECK_ERR(openat(dfd, "rel", O_RDWR | O_CREAT | O_EXCL, 0644), EEXIST);

	/* ENOENT relative to dirfd. */
	CHECK_ERR(openat(dfd, "nope", O_RDONLY), ENOENT);

	/* AT_FDCWD behaves like open(). */
	fd = openat(AT_FDCWD, path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);

	/* An absolute path ignores dirfd, even an invalid one. */
	fd = openat(-1, path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	fd = openat(999, path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);

	/* EBADF: relative path with an invalid dirfd. */
	CHECK_ERR(openat(-1, "rel", O_RDONLY), EBADF);
	CHECK_ERR(openat(999, "rel", O_RDONLY), EBADF);

	/* ENOTDIR: relative path with a dirfd that is a regular file. */
	ffd = open(path, O_RDONLY);
	CHECK(ffd >= 0);
	CHECK_ERR(openat(ffd, "x", O_RDONLY), ENOTDIR);
	CHECK_EQ(close(ffd), 0);

	/* Subdirectory lookups through dirfd. */
	t_join(path, sizeof path, dir, "sub");
	CHECK_EQ(mkdir(path, 0755), 0);
	fd = openat(dfd, "sub/inner", O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	t_join(path, sizeof path, dir, "sub/inner");
	CHECK_EQ(access(path, F_OK), 0);

	/* "." relative to dirfd opens the directory itself. */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);

	/* EFAULT on a bad pathname pointer. */
	CHECK_ERR(openat(dfd, BAD_PTR, O_RDONLY), EFAULT);

	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
