/* open flags: O_TRUNC, O_APPEND, O_EXCL, O_DIRECTORY, O_CLOEXEC, mode bits. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], buf[64];
	struct stat st;
	int fd;
	mode_t old;

	if (t_mktmp("open_flags", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "file");
	old = umask(0);

	/* O_EXCL creates when absent; mode bits are applied (umask 0). */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "hello world", 11), 11);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 11);

	/* O_CREAT on an existing file does not truncate or change mode. */
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 11);
	CHECK_EQ(st.st_mode & 07777, 0640);

	/* O_APPEND: every write goes to the end regardless of offset. */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "!", 1), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 12);
	CHECK(memcmp(buf, "hello world!", 12) == 0);

	/* O_TRUNC empties the file. */
	fd = open(path, O_RDWR | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 0);
	CHECK_EQ(close(fd), 0);

	/* O_DIRECTORY: works on a directory, ENOTDIR on a file. */
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	CHECK_ERR(open(path, O_RDONLY | O_DIRECTORY), ENOTDIR);

	/* O_CLOEXEC sets FD_CLOEXEC; without it the flag is clear. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(close(fd), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_EQ(close(fd), 0);

	/* Access mode is reported back by F_GETFL. */
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_EQ(close(fd), 0);

	/* umask is applied to O_CREAT modes. */
	umask(027);
	t_join(path, sizeof path, dir, "masked");
	fd = open(path, O_WRONLY | O_CREAT, 0777);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0750);

	umask(old);
	t_rmtree(dir);
	DONE();
}
