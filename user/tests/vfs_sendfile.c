/* sendfile: file to pipe and file to file, with an offset pointer (the
 * file offset is untouched and the pointer advanced) and without (the
 * offset advances), short counts at EOF, EBADF, EINVAL for an O_APPEND
 * destination or a non-readable source. */
#include "next.h"
#include <sys/sendfile.h>

int main(void)
{
	char dir[PATH_MAX], src[PATH_MAX], dst[PATH_MAX], buf[128];
	int in, out, p[2], ap;
	off_t off;

	if (t_mktmp("vfs_sendfile", dir, sizeof dir) != 0)
		DONE();
	t_join(src, sizeof src, dir, "src");
	t_join(dst, sizeof dst, dir, "dst");
	CHECK_EQ(t_write_file(src, "0123456789abcdefghij", 20, 0644), 0);
	in = open(src, O_RDONLY);
	out = open(dst, O_CREAT | O_RDWR, 0644);
	CHECK_EQ(pipe(p), 0);

	/* To a pipe, with the file offset. */
	CHECK_EQ(sendfile(p[1], in, NULL, 5), 5);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 5);
	CHECK_EQ(read(p[0], buf, sizeof buf), 5);
	CHECK(memcmp(buf, "01234", 5) == 0);
	/* With an offset pointer. */
	off = 10;
	CHECK_EQ(sendfile(p[1], in, &off, 4), 4);
	CHECK_EQ(off, 14);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 5);
	CHECK_EQ(read(p[0], buf, sizeof buf), 4);
	CHECK(memcmp(buf, "abcd", 4) == 0);

	/* File to file, short at EOF, then 0. */
	off = 15;
	CHECK_EQ(sendfile(out, in, &off, 100), 5);
	CHECK_EQ(off, 20);
	CHECK_EQ(sendfile(out, in, &off, 100), 0);
	CHECK_EQ(pread(out, buf, sizeof buf, 0), 5);
	CHECK(memcmp(buf, "fghij", 5) == 0);
	CHECK_EQ(sendfile(out, in, NULL, 0), 0);

	/* Errors. */
	CHECK_ERR(sendfile(9999, in, NULL, 1), EBADF);
	CHECK_ERR(sendfile(out, 9999, NULL, 1), EBADF);
	CHECK_ERR(sendfile(in, out, NULL, 1), EBADF); /* in is read-only */
	ap = open(dst, O_WRONLY | O_APPEND);
	CHECK_ERR(sendfile(ap, in, NULL, 1), EINVAL);
	close(ap);
	{
		int wo = open(src, O_WRONLY);

		CHECK_ERR(sendfile(out, wo, NULL, 1), EBADF);
		close(wo);
	}
	off = -1;
	CHECK_ERR(sendfile(out, in, &off, 1), EINVAL);
	CHECK_ERR(sendfile(out, in, (off_t *)BAD_PTR2, 1), EFAULT);
	close(in);
	close(out);
	close(p[0]);
	close(p[1]);
	t_rmtree(dir);
	DONE();
}
