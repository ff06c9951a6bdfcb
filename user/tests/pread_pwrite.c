/* pread64/pwrite64: positioned I/O that leaves the file offset alone. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[64];
	struct stat st;
	int fd, dfd;

	if (t_mktmp("pread_pwrite", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "abcdefghij", 10), 10);
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);

	/* pread reads at the given offset; file offset unchanged. */
	memset(buf, 0, sizeof buf);
	CHECK_EQ(pread(fd, buf, 4, 5), 4);
	CHECK(memcmp(buf, "fghi", 4) == 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);

	/* pread past EOF returns 0; straddling EOF is short. */
	CHECK_EQ(pread(fd, buf, 4, 100), 0);
	CHECK_EQ(pread(fd, buf, 8, 7), 3);
	CHECK(memcmp(buf, "hij", 3) == 0);

	/* pwrite writes at the given offset; file offset unchanged. */
	CHECK_EQ(pwrite(fd, "XYZ", 3, 1), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);
	CHECK_EQ(pread(fd, buf, 10, 0), 10);
	CHECK(memcmp(buf, "aXYZefghij", 10) == 0);

	/* pwrite beyond EOF extends the file, the gap reads as zeros. */
	CHECK_EQ(pwrite(fd, "END", 3, 20), 3);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 23);
	memset(buf, 'q', sizeof buf);
	CHECK_EQ(pread(fd, buf, sizeof buf, 10), 13);
	CHECK(memcmp(buf, "\0\0\0\0\0\0\0\0\0\0END", 13) == 0);

	/* The ordinary read continues from the unchanged offset 3. */
	CHECK_EQ(read(fd, buf, 2), 2);
	CHECK(memcmp(buf, "Ze", 2) == 0);

	/* Raw syscalls behave identically. */
	CHECK_EQ(syscall(SYS_pread64, fd, buf, 3, 0L), 3);
	CHECK(memcmp(buf, "aXY", 3) == 0);
	CHECK_EQ(syscall(SYS_pwrite64, fd, "a", 1, 2L), 1);
	CHECK_EQ(pread(fd, buf, 3, 0), 3);
	CHECK(memcmp(buf, "aXa", 3) == 0);

	/* EINVAL: negative offset. */
	CHECK_ERR(pread(fd, buf, 1, -1), EINVAL);
	CHECK_ERR(pwrite(fd, "x", 1, -1), EINVAL);

	/* EBADF: invalid descriptors and wrong access modes. */
	CHECK_ERR(pread(-1, buf, 1, 0), EBADF);
	CHECK_ERR(pread(999, buf, 1, 0), EBADF);
	CHECK_ERR(pwrite(-1, "x", 1, 0), EBADF);
	CHECK_ERR(pwrite(999, "x", 1, 0), EBADF);
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(pwrite(fd, "x", 1, 0), EBADF);
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_ERR(pread(fd, buf, 1, 0), EBADF);

	/* EFAULT. */
	CHECK_ERR(pwrite(fd, BAD_PTR2, 4, 0), EFAULT);
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(pread(fd, BAD_PTR, 4, 0), EFAULT);
	CHECK_EQ(close(fd), 0);

	/* EISDIR: pread on a directory. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_ERR(pread(dfd, buf, 1, 0), EISDIR);
	CHECK_EQ(close(dfd), 0);

	t_rmtree(dir);
	DONE();
}
