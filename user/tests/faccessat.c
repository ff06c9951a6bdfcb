/* faccessat (raw syscall, 3 arguments): dirfd-relative checks; errors. */
#include "t.h"

static long faccessat_raw(int dfd, const char *p, int mode)
{
	return syscall(SYS_faccessat, dfd, p, mode);
}

int main(void)
{
	char dir[128], path[256];
	int dfd, ffd;

	if (t_mktmp("faccessat", dir, sizeof dir))
		DONE();
	umask(0);
	t_join(path, sizeof path, dir, "rw");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	t_join(path, sizeof path, dir, "rwx");
	CHECK_EQ(t_write_file(path, "x", 1, 0755), 0);
	t_join(path, sizeof path, dir, "sub");
	CHECK_EQ(mkdir(path, 0755), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);

	/* Relative to a directory fd. */
	CHECK_EQ(faccessat_raw(dfd, "rw", F_OK), 0);
	CHECK_EQ(faccessat_raw(dfd, "rw", R_OK | W_OK), 0);
	CHECK_ERR(faccessat_raw(dfd, "rw", X_OK), EACCES);
	CHECK_EQ(faccessat_raw(dfd, "rwx", X_OK), 0);
	CHECK_EQ(faccessat_raw(dfd, "sub", R_OK | W_OK | X_OK), 0);
	CHECK_EQ(faccessat_raw(dfd, ".", F_OK), 0);

	/* libc wrapper with flags 0. */
	CHECK_EQ(faccessat(dfd, "rw", R_OK, 0), 0);
	CHECK_ERR(faccessat(dfd, "rw", X_OK, 0), EACCES);

	/* AT_FDCWD with relative and absolute paths. */
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(faccessat_raw(AT_FDCWD, "rwx", X_OK), 0);
	CHECK_EQ(chdir("/"), 0);
	t_join(path, sizeof path, dir, "rw");
	CHECK_EQ(faccessat_raw(AT_FDCWD, path, R_OK), 0);

	/* An absolute path ignores dirfd. */
	CHECK_EQ(faccessat_raw(999, path, F_OK), 0);

	/* ENOENT / ENOTDIR relative to dirfd. */
	CHECK_ERR(faccessat_raw(dfd, "missing", F_OK), ENOENT);
	CHECK_ERR(faccessat_raw(dfd, "rw/x", F_OK), ENOTDIR);

	/* ENOTDIR: a regular file as dirfd. */
	ffd = open(path, O_RDONLY);
	CHECK(ffd >= 0);
	CHECK_ERR(faccessat_raw(ffd, "x", F_OK), ENOTDIR);
	CHECK_EQ(close(ffd), 0);

	/* EBADF: relative path with a bad dirfd. */
	CHECK_ERR(faccessat_raw(-1, "rw", F_OK), EBADF);
	CHECK_ERR(faccessat_raw(999, "rw", F_OK), EBADF);

	/* EINVAL: bad mode bits. */
	CHECK_ERR(faccessat_raw(dfd, "rw", 0x10), EINVAL);

	/* EFAULT. */
	CHECK_ERR(faccessat_raw(dfd, BAD_PTR, F_OK), EFAULT);

	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
