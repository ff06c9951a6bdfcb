/* read/write error cases: EBADF, EFAULT, EISDIR. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[64];
	int rfd, wfd, dfd;

	if (t_mktmp("read_write_errors", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);

	/* EBADF on invalid descriptors. */
	CHECK_ERR(read(-1, buf, 1), EBADF);
	CHECK_ERR(read(999, buf, 1), EBADF);
	CHECK_ERR(write(-1, "x", 1), EBADF);
	CHECK_ERR(write(999, "x", 1), EBADF);

	/* EBADF when the descriptor lacks the needed access mode. */
	rfd = open(path, O_RDONLY);
	wfd = open(path, O_WRONLY);
	CHECK(rfd >= 0 && wfd >= 0);
	CHECK_ERR(write(rfd, "x", 1), EBADF);
	CHECK_ERR(read(wfd, buf, 1), EBADF);

	/* EFAULT: destination buffer outside the address space. */
	CHECK_ERR(read(rfd, BAD_PTR, 4), EFAULT);
	CHECK_ERR(read(rfd, BAD_PTR2, 4), EFAULT);
	/* The failed reads consumed nothing. */
	CHECK_EQ(lseek(rfd, 0, SEEK_CUR), 0);
	CHECK_EQ(read(rfd, buf, 4), 4);
	CHECK(memcmp(buf, "0123", 4) == 0);

	/* EFAULT: source buffer outside the address space. */
	CHECK_ERR(write(wfd, BAD_PTR, 4), EFAULT);
	CHECK_ERR(write(wfd, BAD_PTR2, 4), EFAULT);
	CHECK_EQ(lseek(wfd, 0, SEEK_CUR), 0);

	/* File unchanged by the failed writes. */
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 10);
	CHECK(memcmp(buf, "0123456789", 10) == 0);

	/* A closed descriptor is EBADF. */
	CHECK_EQ(close(wfd), 0);
	CHECK_ERR(write(wfd, "x", 1), EBADF);
	CHECK_EQ(close(rfd), 0);
	CHECK_ERR(read(rfd, buf, 1), EBADF);

	/* EISDIR: read(2) on a directory descriptor. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_ERR(read(dfd, buf, sizeof buf), EISDIR);
	/* A directory opened read-only cannot be written: EBADF. */
	CHECK_ERR(write(dfd, "x", 1), EBADF);
	CHECK_EQ(close(dfd), 0);

	t_rmtree(dir);
	DONE();
}
