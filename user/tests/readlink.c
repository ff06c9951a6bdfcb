/* readlink/readlinkat on non-symlinks: EINVAL, ENOENT, ENOTDIR, EBADF. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], bad[256], buf[64];
	int dfd, ffd;

	if (t_mktmp("readlink", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "file");
	CHECK_EQ(t_write_file(path, "data", 4, 0644), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);

	/* EINVAL: the path is not a symbolic link. */
	CHECK_ERR(readlink(path, buf, sizeof buf), EINVAL);
	CHECK_ERR(readlink(dir, buf, sizeof buf), EINVAL);
	CHECK_ERR(readlink("/", buf, sizeof buf), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, path, buf, sizeof buf), EINVAL);

	/* EINVAL: bufsiz 0 (raw syscall; libc may special-case it). */
	CHECK_ERR(syscall(SYS_readlink, path, buf, 0), EINVAL);

	/* ENOENT: missing path or empty string. */
	t_join(bad, sizeof bad, dir, "missing");
	CHECK_ERR(readlink(bad, buf, sizeof buf), ENOENT);
	CHECK_ERR(readlink("", buf, sizeof buf), ENOENT);
	t_join(bad, sizeof bad, dir, "missing/deeper");
	CHECK_ERR(readlink(bad, buf, sizeof buf), ENOENT);

	/* ENOTDIR: regular file used as a directory. */
	t_join(bad, sizeof bad, dir, "file/x");
	CHECK_ERR(readlink(bad, buf, sizeof buf), ENOTDIR);

	/* EFAULT: bad pathname. */
	CHECK_ERR(readlink(BAD_PTR, buf, sizeof buf), EFAULT);

	/* readlinkat relative to a directory fd. */
	CHECK_ERR(readlinkat(dfd, "file", buf, sizeof buf), EINVAL);
	CHECK_ERR(syscall(SYS_readlinkat, dfd, "file", buf, sizeof buf), EINVAL);
	CHECK_ERR(readlinkat(dfd, "missing", buf, sizeof buf), ENOENT);
	CHECK_ERR(readlinkat(dfd, "file/x", buf, sizeof buf), ENOTDIR);
	CHECK_ERR(readlinkat(AT_FDCWD, path, buf, sizeof buf), EINVAL);
	CHECK_ERR(syscall(SYS_readlinkat, dfd, "file", buf, 0), EINVAL);

	/* readlinkat: EBADF for a bad dirfd with a relative path. */
	CHECK_ERR(readlinkat(-1, "file", buf, sizeof buf), EBADF);
	CHECK_ERR(readlinkat(999, "file", buf, sizeof buf), EBADF);

	/* readlinkat: ENOTDIR when dirfd is a regular file. */
	ffd = open(path, O_RDONLY);
	CHECK(ffd >= 0);
	CHECK_ERR(readlinkat(ffd, "x", buf, sizeof buf), ENOTDIR);
	CHECK_EQ(close(ffd), 0);

	/* readlinkat: absolute path ignores dirfd. */
	CHECK_ERR(readlinkat(999, path, buf, sizeof buf), EINVAL);

	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
