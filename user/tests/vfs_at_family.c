/* The *at family: dirfd-relative paths, AT_FDCWD, absolute paths ignoring
 * dirfd, ENOTDIR/EBADF for bad dirfds, AT_SYMLINK_NOFOLLOW,
 * AT_SYMLINK_FOLLOW for linkat, AT_EMPTY_PATH, AT_REMOVEDIR, and EINVAL
 * for unknown flags. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], abs_[PATH_MAX], buf[64];
	struct stat st, st2;
	int d, f, fd;
	ssize_t n;

	if (t_mktmp("vfs_at_family", dir, sizeof dir) != 0)
		DONE();
	d = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(d >= 0);

	CHECK_EQ(mkdirat(d, "sub", 0755), 0);
	fd = openat(d, "sub/file", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "abc", 3), 3);
	close(fd);
	CHECK_EQ(fstatat(d, "sub/file", &st, 0), 0);
	CHECK_EQ(st.st_size, 3);
	CHECK_EQ(faccessat(d, "sub/file", R_OK, 0), 0);
	CHECK_EQ(symlinkat("sub/file", d, "ln"), 0);
	n = readlinkat(d, "ln", buf, sizeof buf);
	CHECK_EQ(n, 8);
	CHECK_EQ(fstatat(d, "ln", &st, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(fstatat(d, "ln", &st, 0), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(mknodat(d, "fifo", S_IFIFO | 0600, 0), 0);
	CHECK_EQ(fstatat(d, "fifo", &st, 0), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(fchmodat(d, "sub/file", 0600, 0), 0);
	CHECK_EQ(fstatat(d, "sub/file", &st, 0), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(fchownat(d, "ln", getuid(), getgid(), AT_SYMLINK_NOFOLLOW), 0);

	/* linkat: a link to the symlink itself, or (FOLLOW) to its target. */
	CHECK_EQ(linkat(d, "ln", d, "hard_ln", 0), 0);
	CHECK_EQ(fstatat(d, "hard_ln", &st, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(linkat(d, "ln", d, "hard_tgt", AT_SYMLINK_FOLLOW), 0);
	CHECK_EQ(fstatat(d, "hard_tgt", &st, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);

	/* renameat, unlinkat with and without AT_REMOVEDIR. */
	CHECK_EQ(renameat(d, "hard_tgt", d, "sub/moved"), 0);
	CHECK_ERR(unlinkat(d, "sub", 0), EISDIR);
	CHECK_ERR(unlinkat(d, "sub/moved", AT_REMOVEDIR), ENOTDIR);
	CHECK_ERR(unlinkat(d, "sub", AT_REMOVEDIR), ENOTEMPTY);
	CHECK_EQ(unlinkat(d, "sub/moved", 0), 0);
	CHECK_ERR(unlinkat(d, "sub/x", 0x1), EINVAL);

	/* AT_FDCWD and absolute paths. */
	t_join(abs_, sizeof abs_, dir, "sub/file");
	CHECK_EQ(fstatat(AT_FDCWD, abs_, &st, 0), 0);
	CHECK_EQ(fstatat(9999, abs_, &st2, 0), 0); /* dirfd ignored */
	CHECK_EQ(st.st_ino, st2.st_ino);
	f = open(abs_, O_RDONLY);
	CHECK_EQ(fstatat(f, abs_, &st2, 0), 0);
	/* A relative path with a file or closed dirfd. */
	CHECK_ERR(fstatat(f, "x", &st, 0), ENOTDIR);
	CHECK_ERR(openat(f, "x", O_RDONLY), ENOTDIR);
	CHECK_ERR(mkdirat(f, "x", 0755), ENOTDIR);
	CHECK_ERR(fstatat(9999, "x", &st, 0), EBADF);
	CHECK_ERR(openat(-5, "x", O_RDONLY), EBADF);
	/* AT_EMPTY_PATH. */
	CHECK_EQ(fstatat(f, "", &st2, AT_EMPTY_PATH), 0);
	CHECK_EQ(st2.st_ino, st.st_ino);
	CHECK_EQ(fstatat(AT_FDCWD, "", &st2, AT_EMPTY_PATH), 0);
	CHECK(S_ISDIR(st2.st_mode));
	if (t_is_root()) {
		/* linkat AT_EMPTY_PATH makes a name for an open file. */
		CHECK_EQ(linkat(f, "", d, "from_fd", AT_EMPTY_PATH), 0);
		CHECK_EQ(fstatat(d, "from_fd", &st2, 0), 0);
		CHECK_EQ(st2.st_ino, st.st_ino);
	}
	/* Unknown flags. */
	CHECK_ERR(fstatat(d, "ln", &st, 0x40000000), EINVAL);
	CHECK_ERR(faccessat(d, "ln", R_OK, 0x40000000), EINVAL);
	CHECK_ERR(linkat(d, "ln", d, "zz", 0x1), EINVAL);
	CHECK_ERR(fchownat(d, "ln", 0, 0, 0x1), EINVAL);
	close(f);
	close(d);
	t_rmtree(dir);
	DONE();
}
