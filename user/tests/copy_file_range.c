/*
 * copy_file_range(2): copies between regular files of one file system,
 * from and to explicit offsets (updated) or the file positions; stops at
 * the end of the input; checks flags, descriptors, types, overlap within
 * one file, and refuses to cross file systems (EXDEV).
 */
#include "t.h"

static long cfr(int in, loff_t *oin, int out, loff_t *oout, size_t len,
		unsigned flags)
{
	return syscall(SYS_copy_file_range, in, oin, out, oout, len, flags);
}

int main(void)
{
	char dir[128], a[256], b[256], buf[64];
	loff_t oin, oout;
	int in, out, ap;

	if (t_mktmp("copy_file_range", dir, sizeof dir))
		DONE();
	t_join(a, sizeof a, dir, "a");
	t_join(b, sizeof b, dir, "b");
	CHECK_EQ(t_write_file(a, "0123456789", 10, 0644), 0);
	in = open(a, O_RDONLY);
	out = open(b, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(in >= 0 && out >= 0);

	/* Using the file positions. */
	CHECK_EQ(lseek(in, 2, SEEK_SET), 2);
	CHECK_EQ(cfr(in, NULL, out, NULL, 4, 0), 4);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 6);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 4);
	CHECK_EQ(pread(out, buf, sizeof buf, 0), 4);
	CHECK(memcmp(buf, "2345", 4) == 0);

	/* Explicit offsets are updated; the positions are not. */
	oin = 7;
	oout = 10;
	CHECK_EQ(cfr(in, &oin, out, &oout, 100, 0), 3);
	CHECK_EQ(oin, 10);
	CHECK_EQ(oout, 13);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 6);
	CHECK_EQ(pread(out, buf, sizeof buf, 0), 13);
	CHECK(memcmp(buf + 4, "\0\0\0\0\0\0" "789", 9) == 0);
	/* At or past the end of the input: 0. */
	CHECK_EQ(cfr(in, &oin, out, &oout, 5, 0), 0);
	oin = 100;
	CHECK_EQ(cfr(in, &oin, out, NULL, 5, 0), 0);

	/* Within one file, overlapping ranges are EINVAL; disjoint ones copy. */
	oin = 0;
	oout = 2;
	CHECK_ERR(cfr(out, &oin, out, &oout, 4, 0), EINVAL);
	oin = 0;
	oout = 20;
	CHECK_EQ(cfr(out, &oin, out, &oout, 4, 0), 4);

	/* Checks. */
	CHECK_ERR(cfr(in, NULL, out, NULL, 1, 1), EINVAL);
	CHECK_ERR(cfr(-1, NULL, out, NULL, 1, 0), EBADF);
	CHECK_ERR(cfr(in, NULL, 99, NULL, 1, 0), EBADF);
	CHECK_ERR(cfr(out, NULL, in, NULL, 1, 0), EBADF); /* in is read-only */
	ap = open(b, O_WRONLY | O_APPEND);
	CHECK(ap >= 0);
	CHECK_ERR(cfr(in, NULL, ap, NULL, 1, 0), EBADF);
	close(ap);
	ap = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_ERR(cfr(ap, NULL, out, NULL, 1, 0), EISDIR);
	close(ap);
	ap = open("/dev/zero", O_RDONLY);
	CHECK_ERR(cfr(ap, NULL, out, NULL, 1, 0), EINVAL);
	close(ap);
	CHECK_ERR(cfr(in, BAD_PTR, out, NULL, 1, 0), EFAULT);
	/* A negative offset wraps past the largest one. */
	oin = -1;
	CHECK_ERR(cfr(in, &oin, out, NULL, 1, 0), EOVERFLOW);

	/* Another file system: EXDEV. */
	{
		char shm[128];
		int s;
		snprintf(shm, sizeof shm, "/dev/shm/copy_file_range.%d", getpid());
		s = open(shm, O_RDWR | O_CREAT | O_TRUNC, 0644);
		CHECK(s >= 0);
		CHECK_ERR(cfr(in, NULL, s, NULL, 4, 0), EXDEV);
		close(s);
		unlink(shm);
	}
	close(in);
	close(out);
	t_rmtree(dir);
	DONE();
}
