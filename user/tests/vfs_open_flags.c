/* open flags: O_CREAT mode and umask, O_EXCL, O_TRUNC (also with
 * O_RDONLY on Linux), O_APPEND (every write at the end, pwrite too on
 * Linux), O_DIRECTORY, EISDIR for writing a directory, O_CREAT|O_DIRECTORY
 * is EINVAL, O_CLOEXEC, O_NONBLOCK and O_ACCMODE 3. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[64];
	struct stat st;
	int fd, fd2;
	mode_t old;

	if (t_mktmp("vfs_open_flags", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);

	old = umask(027);
	fd = open("f", O_CREAT | O_WRONLY, 0777);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0750);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	close(fd);
	umask(old);
	/* O_CREAT on an existing file keeps it (and its mode). */
	fd = open("f", O_CREAT | O_RDWR, 0600);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 10);
	CHECK_EQ(st.st_mode & 0777, 0750);
	close(fd);
	CHECK_ERR(open("f", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	CHECK_ERR(open("missing", O_RDONLY), ENOENT);

	/* O_APPEND: writes go to the end whatever the offset. */
	fd = open("f", O_WRONLY | O_APPEND);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "ab", 2), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);
	/* Linux: pwrite on an O_APPEND fd appends too. */
	CHECK_EQ(pwrite(fd, "cd", 2, 0), 2);
	close(fd);
	CHECK_EQ(t_read_file("f", buf, sizeof buf), 14);
	CHECK(strcmp(buf, "0123456789abcd") == 0);
	/* Two descriptions with O_APPEND never overwrite each other. */
	fd = open("f", O_WRONLY | O_APPEND);
	fd2 = open("f", O_WRONLY | O_APPEND);
	CHECK_EQ(write(fd, "X", 1), 1);
	CHECK_EQ(write(fd2, "Y", 1), 1);
	CHECK_EQ(write(fd, "Z", 1), 1);
	close(fd);
	close(fd2);
	CHECK_EQ(t_read_file("f", buf, sizeof buf), 17);
	CHECK(strcmp(buf + 14, "XYZ") == 0);

	/* O_TRUNC, also when opened read-only (Linux truncates). */
	fd = open("f", O_RDONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 0);
	close(fd);

	/* Directories. */
	CHECK_EQ(mkdir("d", 0755), 0);
	fd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(open("f", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open("d", O_WRONLY), EISDIR);
	CHECK_ERR(open("d", O_RDWR), EISDIR);
	CHECK_ERR(open("d", O_RDONLY | O_TRUNC), EISDIR);
	CHECK_ERR(open("newdir", O_CREAT | O_DIRECTORY | O_RDONLY, 0755), EINVAL);
	CHECK_ERR(open("d", O_CREAT | O_EXCL | O_RDONLY, 0644), EEXIST);

	/* O_CLOEXEC, O_NONBLOCK recorded; status flags visible. */
	fd = open("f", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE), O_NONBLOCK | O_RDWR);
	/* O_CLOEXEC is not a status flag. */
	CHECK_EQ(fcntl(fd, F_GETFL) & O_CLOEXEC, 0);
	close(fd);

	/* Access mode 3 is rejected for files (EINVAL) on Linux? It is
	 * accepted for ioctl-only use with permission checks for both. */
	fd = open("f", 3);
	if (fd >= 0) {
		CHECK_ERR(read(fd, buf, 1), EBADF);
		CHECK_ERR(write(fd, buf, 1), EBADF);
		close(fd);
	}
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
