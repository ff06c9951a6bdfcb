/* chmod/fchmod/fchmodat and chown/fchown/lchown/fchownat: mode bits
 * (including setuid/setgid/sticky), following symlinks or not, -1 keeping
 * an id, chown clearing setuid/setgid, ctime moving, errors. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX];
	struct stat st, sl;
	int fd;

	if (t_mktmp("vfs_chmod_chown", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(t_write_file("f", "x", 1, 0644), 0);
	CHECK_EQ(symlink("f", "l"), 0);

	CHECK_EQ(chmod("f", 04755), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 04755);
	CHECK(S_ISREG(st.st_mode));
	/* Type bits in the argument are ignored. */
	CHECK_EQ(chmod("f", S_IFDIR | 0600), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0600);
	/* Through the symlink: the target changes. */
	CHECK_EQ(chmod("l", 0640), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0640);
	fd = open("f", O_RDONLY);
	CHECK_EQ(fchmod(fd, 01777), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 01777);
	CHECK_EQ(fchmodat(AT_FDCWD, "f", 0644, 0), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0644);
	CHECK_ERR(chmod("nope", 0644), ENOENT);
	CHECK_ERR(syscall(SYS_fchmod, 9999, 0644), EBADF);

	if (!t_is_root()) {
		t_note("not root: chown checks skipped");
		close(fd);
		CHECK_EQ(chdir(orig), 0);
		t_rmtree(dir);
		DONE();
	}

	/* chown follows, lchown does not. */
	CHECK_EQ(chown("l", 100, 200), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK(st.st_uid == 100 && st.st_gid == 200);
	CHECK_EQ(lstat("l", &sl), 0);
	CHECK_EQ(sl.st_uid, 0);
	CHECK_EQ(lchown("l", 300, 400), 0);
	CHECK_EQ(lstat("l", &sl), 0);
	CHECK(sl.st_uid == 300 && sl.st_gid == 400);
	CHECK_EQ(stat("f", &st), 0);
	CHECK(st.st_uid == 100 && st.st_gid == 200);
	/* -1 leaves the id alone. */
	CHECK_EQ(fchown(fd, -1, 500), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(st.st_uid == 100 && st.st_gid == 500);
	CHECK_EQ(fchownat(AT_FDCWD, "f", 600, (gid_t)-1, 0), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK(st.st_uid == 600 && st.st_gid == 500);
	CHECK_EQ(fchownat(AT_FDCWD, "l", 1, 1, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_EQ(lstat("l", &sl), 0);
	CHECK_EQ(sl.st_uid, 1);

	/* chown of a setuid/setgid executable clears both bits. */
	CHECK_EQ(chmod("f", 06755), 0);
	CHECK_EQ(chown("f", 700, 700), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0755);
	/* ctime moves forward (or stays within the same tick). */
	{
		struct stat s1, s2;

		CHECK_EQ(stat("f", &s1), 0);
		t_msleep(20);
		CHECK_EQ(chmod("f", 0700), 0);
		CHECK_EQ(stat("f", &s2), 0);
		CHECK(s2.st_ctim.tv_sec > s1.st_ctim.tv_sec ||
		      (s2.st_ctim.tv_sec == s1.st_ctim.tv_sec &&
		       s2.st_ctim.tv_nsec >= s1.st_ctim.tv_nsec));
	}
	CHECK_ERR(chown("nope", 1, 1), ENOENT);
	CHECK_ERR(fchown(9999, 1, 1), EBADF);
	close(fd);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
