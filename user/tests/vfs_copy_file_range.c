/* copy_file_range: offsets by pointer (advanced) or the file offsets,
 * short copies at EOF, 0 at EOF, EINVAL for overlapping ranges in one
 * file and non-zero flags, EBADF for wrong access modes, EISDIR. */
#include "next.h"

static long cfr(int in, off_t *oi, int out, off_t *oo, size_t len, unsigned f)
{
	return syscall(SYS_copy_file_range, in, oi, out, oo, len, f);
}

int main(void)
{
	char dir[PATH_MAX], src[PATH_MAX], dst[PATH_MAX], buf[64];
	off_t oi, oo;
	int in, out, d, mounted;

	mounted = t_tmpfs_scratch("vfs_copy_file_range", dir, sizeof dir);
	t_join(src, sizeof src, dir, "src");
	t_join(dst, sizeof dst, dir, "dst");
	CHECK_EQ(t_write_file(src, "ABCDEFGHIJKLMNOPQRST", 20, 0644), 0);
	in = open(src, O_RDWR);
	out = open(dst, O_CREAT | O_RDWR, 0644);

	/* File offsets. */
	CHECK_EQ(cfr(in, NULL, out, NULL, 5, 0), 5);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 5);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 5);
	/* Explicit offsets: the file offsets stay. */
	oi = 10;
	oo = 100;
	CHECK_EQ(cfr(in, &oi, out, &oo, 4, 0), 4);
	CHECK_EQ(oi, 14);
	CHECK_EQ(oo, 104);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 5);
	CHECK_EQ(pread(out, buf, 5, 0), 5);
	CHECK(memcmp(buf, "ABCDE", 5) == 0);
	CHECK_EQ(pread(out, buf, 4, 100), 4);
	CHECK(memcmp(buf, "KLMN", 4) == 0);
	/* The gap reads as zeros. */
	CHECK_EQ(pread(out, buf, 1, 50), 1);
	CHECK_EQ(buf[0], 0);
	/* Short at EOF, then 0. */
	oi = 18;
	oo = 0;
	CHECK_EQ(cfr(in, &oi, out, &oo, 100, 0), 2);
	CHECK_EQ(cfr(in, &oi, out, &oo, 100, 0), 0);
	/* Within one file, non-overlapping: fine. */
	oi = 0;
	oo = 40;
	CHECK_EQ(cfr(in, &oi, in, &oo, 5, 0), 5);
	CHECK_EQ(pread(in, buf, 5, 40), 5);
	CHECK(memcmp(buf, "ABCDE", 5) == 0);

	/* Errors. */
	oi = 0;
	oo = 2;
	CHECK_ERR(cfr(in, &oi, in, &oo, 5, 0), EINVAL);
	CHECK_ERR(cfr(in, NULL, out, NULL, 1, 1), EINVAL);
	CHECK_ERR(cfr(9999, NULL, out, NULL, 1, 0), EBADF);
	{
		int ro = open(dst, O_RDONLY);
		int wo = open(src, O_WRONLY);

		CHECK_ERR(cfr(in, NULL, ro, NULL, 1, 0), EBADF);
		CHECK_ERR(cfr(wo, NULL, out, NULL, 1, 0), EBADF);
		close(ro);
		close(wo);
	}
	{
		int ap = open(dst, O_WRONLY | O_APPEND);

		CHECK_ERR(cfr(in, NULL, ap, NULL, 1, 0), EBADF);
		close(ap);
	}
	d = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_ERR(cfr(d, NULL, out, NULL, 1, 0), EISDIR);
	close(d);
	/* A negative offset: Linux says EOVERFLOW or EINVAL depending on
	 * the version. */
	oi = -1;
	errno = 0;
	CHECK_EQ(cfr(in, &oi, out, NULL, 1, 0), -1);
	CHECK(errno == EINVAL || errno == EOVERFLOW);
	close(in);
	close(out);
	if (mounted == 1)
		t_umount(dir);
	t_rmtree(dir);
	DONE();
}
