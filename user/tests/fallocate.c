/*
 * fallocate(2) on tmpfs: mode 0 backs the range and grows the file,
 * FALLOC_FL_KEEP_SIZE backs it without growing, PUNCH_HOLE|KEEP_SIZE
 * frees it (it reads as zeros); other modes are EOPNOTSUPP there; the
 * argument and descriptor checks come in vfs_fallocate's order.
 */
#include "t.h"

/* linux/falloc.h, which musl's headers lack in part. */
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif
#define X_FALLOC_FL_ZERO_RANGE 0x10

static int scratch(char *path, size_t n)
{
	snprintf(path, n, "/dev/shm/fallocate.%d", getpid());
	return open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
}

int main(void)
{
	char path[128], buf[PAGE];
	struct stat st;
	int fd, ro, i;

	fd = scratch(path, sizeof path);
	CHECK(fd >= 0);

	/* Mode 0: size and blocks grow. */
	CHECK_EQ(fallocate(fd, 0, 0, 3 * PAGE), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 3 * PAGE);
	CHECK(st.st_blocks >= 3 * PAGE / 512);
	CHECK_EQ(pread(fd, buf, sizeof buf, PAGE), (long)sizeof buf);
	for (i = 0; i < (int)sizeof buf && buf[i] == 0; i++)
		;
	CHECK_EQ(i, (int)sizeof buf);
	/* A range inside the file does not shrink or grow it. */
	CHECK_EQ(fallocate(fd, 0, 100, 10), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 3 * PAGE);

	/* KEEP_SIZE past the end: blocks grow, size does not. */
	{
		blkcnt_t blocks = st.st_blocks;
		CHECK_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 3 * PAGE, 2 * PAGE), 0);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK_EQ(st.st_size, 3 * PAGE);
		CHECK(st.st_blocks >= blocks + 2 * PAGE / 512);
	}

	/* PUNCH_HOLE: the range reads as zeros, bytes around it stay. */
	memset(buf, 'a', sizeof buf);
	for (i = 0; i < 3; i++)
		CHECK_EQ(pwrite(fd, buf, sizeof buf, i * PAGE), (long)sizeof buf);
	CHECK_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			   PAGE - 10, PAGE + 20), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 3 * PAGE);
	CHECK_EQ(pread(fd, buf, 30, PAGE - 20), 30);
	CHECK(buf[9] == 'a' && buf[10] == 0 && buf[29] == 0);
	CHECK_EQ(pread(fd, buf, 20, 2 * PAGE + 5), 20);
	CHECK(buf[4] == 0 && buf[5] == 'a');

	/* Argument checks. */
	CHECK_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CHECK_ERR(fallocate(fd, 0, -1, 10), EINVAL);
	CHECK_ERR(fallocate(fd, 0, 0, -5), EINVAL);
	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, 0x1000, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, X_FALLOC_FL_ZERO_RANGE, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, 0, 0x7fffffffffffff00LL, 0x1000), EFBIG);
	CHECK_ERR(fallocate(-1, 0, 0, 10), EBADF);
	ro = open(path, O_RDONLY);
	CHECK(ro >= 0);
	CHECK_ERR(fallocate(ro, 0, 0, 10), EBADF);
	close(ro);
	ro = open("/dev/shm", O_RDONLY | O_DIRECTORY);
	CHECK(ro >= 0);
	CHECK_ERR(fallocate(ro, 0, 0, 10), EBADF);
	close(ro);
	ro = open("/dev/null", O_WRONLY);
	CHECK(ro >= 0);
	CHECK_ERR(fallocate(ro, 0, 0, 10), ENODEV);
	close(ro);

	close(fd);
	unlink(path);
	DONE();
}
