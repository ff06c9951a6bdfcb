/* readv/writev: gather writes and scatter reads across several buffers. */
#include "t.h"
#include <sys/uio.h>

int main(void)
{
	char dir[128], path[256], a[4], b[8], c[16], all[64];
	struct iovec iov[4];
	int fd;

	if (t_mktmp("readv_writev", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);

	/* writev concatenates the buffers in order; empty iovecs are fine. */
	iov[0].iov_base = "abc";
	iov[0].iov_len = 3;
	iov[1].iov_base = "";
	iov[1].iov_len = 0;
	iov[2].iov_base = "defgh";
	iov[2].iov_len = 5;
	iov[3].iov_base = "ijklmnop";
	iov[3].iov_len = 8;
	CHECK_EQ(writev(fd, iov, 4), 16);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 16);

	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(read(fd, all, sizeof all), 16);
	CHECK(memcmp(all, "abcdefghijklmnop", 16) == 0);

	/* readv fills each buffer completely before moving to the next. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	memset(c, 0, sizeof c);
	iov[0].iov_base = a;
	iov[0].iov_len = sizeof a;
	iov[1].iov_base = b;
	iov[1].iov_len = sizeof b;
	iov[2].iov_base = c;
	iov[2].iov_len = sizeof c;
	CHECK_EQ(readv(fd, iov, 3), 16);
	CHECK(memcmp(a, "abcd", 4) == 0);
	CHECK(memcmp(b, "efghijkl", 8) == 0);
	CHECK(memcmp(c, "mnop", 4) == 0);
	CHECK_EQ(c[4], 0);

	/* At EOF readv returns 0. */
	CHECK_EQ(readv(fd, iov, 3), 0);

	/* iovcnt 0 transfers nothing. */
	CHECK_EQ(writev(fd, iov, 0), 0);
	CHECK_EQ(readv(fd, iov, 0), 0);

	/* Appending with writev after a seek. */
	CHECK_EQ(lseek(fd, 4, SEEK_SET), 4);
	iov[0].iov_base = "XY";
	iov[0].iov_len = 2;
	iov[1].iov_base = "Z";
	iov[1].iov_len = 1;
	CHECK_EQ(writev(fd, iov, 2), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(read(fd, all, sizeof all), 16);
	CHECK(memcmp(all, "abcdXYZhijklmnop", 16) == 0);

	CHECK_EQ(close(fd), 0);
	t_rmtree(dir);
	DONE();
}
