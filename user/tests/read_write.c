/* read/write: data round trip, file offset movement, EOF, short reads. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[8192], big[8192];
	int fd, fd2, i;
	ssize_t n, total;

	if (t_mktmp("read_write", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "data");

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);

	/* write returns the byte count and advances the offset. */
	CHECK_EQ(write(fd, "hello", 5), 5);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(write(fd, ", world", 7), 7);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);

	/* Reading at EOF returns 0. */
	CHECK_EQ(read(fd, buf, sizeof buf), 0);

	/* Read back from the start. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	memset(buf, 0, sizeof buf);
	CHECK_EQ(read(fd, buf, 5), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);

	/* A read larger than the remaining data is short. */
	n = read(fd, buf, sizeof buf);
	CHECK_EQ(n, 7);
	CHECK(memcmp(buf, ", world", 7) == 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 0);

	/* Zero-length read and write return 0. */
	CHECK_EQ(read(fd, buf, 0), 0);
	CHECK_EQ(write(fd, buf, 0), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);

	/* Overwrite in the middle. */
	CHECK_EQ(lseek(fd, 7, SEEK_SET), 7);
	CHECK_EQ(write(fd, "W", 1), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(read(fd, buf, 12), 12);
	CHECK(memcmp(buf, "hello, World", 12) == 0);

	/* A multi-page write reads back intact through a second fd. */
	for (i = 0; i < (int)sizeof big; i++)
		big[i] = (char)(i * 7 + 3);
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, big, sizeof big), (ssize_t)sizeof big);
	fd2 = open(path, O_RDONLY);
	CHECK(fd2 >= 0);
	total = 0;
	memset(buf, 0, sizeof buf);
	while (total < (ssize_t)sizeof buf) {
		n = read(fd2, buf + total, sizeof buf - (size_t)total);
		if (n <= 0)
			break;
		total += n;
	}
	CHECK_EQ(total, (ssize_t)sizeof big);
	CHECK(memcmp(buf, big, sizeof big) == 0);

	/* Separate open file descriptions have independent offsets. */
	CHECK_EQ(lseek(fd2, 0, SEEK_CUR), (off_t)sizeof big);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(lseek(fd2, 0, SEEK_CUR), (off_t)sizeof big);

	CHECK_EQ(close(fd), 0);
	CHECK_EQ(close(fd2), 0);
	t_rmtree(dir);
	DONE();
}
