/* fstat: file type, size, link count, ownership, consistency with stat. */
#include "t.h"

int main(void)
{
	char dir[128], path[256];
	struct stat st, st2;
	int fd, dfd;

	if (t_mktmp("fstat", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);

	/* Empty regular file. */
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK(st.st_blksize > 0);

	/* Size follows writes. */
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 10);

	/* fstat agrees with stat on the same file. */
	CHECK_EQ(stat(path, &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(st.st_dev, st2.st_dev);
	CHECK_EQ(st.st_mode, st2.st_mode);
	CHECK_EQ(st.st_size, st2.st_size);

	/* Raw syscall. */
	memset(&st2, 0, sizeof st2);
	CHECK_EQ(syscall(SYS_fstat, fd, &st2), 0);
	CHECK_EQ(st2.st_ino, st.st_ino);
	CHECK_EQ(st2.st_size, 10);

	/* An unlinked but open file is still fstat-able, with nlink 0. */
	CHECK_EQ(unlink(path), 0);
	CHECK_EQ(fstat(fd, &st2), 0);
	CHECK_EQ(st2.st_nlink, 0);
	CHECK_EQ(st2.st_ino, st.st_ino);

	/* Directory. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ(fstat(dfd, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);

	/* EBADF. */
	CHECK_ERR(fstat(-1, &st), EBADF);
	CHECK_ERR(fstat(999, &st), EBADF);
	CHECK_ERR(syscall(SYS_fstat, -1, &st), EBADF);
	CHECK_ERR(syscall(SYS_fstat, 999, &st), EBADF);

	/* EFAULT: the stat buffer is not writable. */
	CHECK_ERR(syscall(SYS_fstat, dfd, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_fstat, dfd, BAD_PTR2), EFAULT);

	CHECK_EQ(close(fd), 0);
	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
