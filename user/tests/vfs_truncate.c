/* truncate/ftruncate: growing fills with zeros, shrinking discards, the
 * file offset is untouched, mtime changes, EINVAL for negative lengths,
 * EISDIR, EINVAL/EBADF for fds not open for writing, through symlinks. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[64];
	struct stat st;
	int fd, ro, i;

	if (t_mktmp("vfs_truncate", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(t_write_file("f", "abcdefgh", 8, 0644), 0);
	CHECK_EQ(symlink("f", "l"), 0);

	CHECK_EQ(truncate("f", 3), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_size, 3);
	CHECK_EQ(truncate("l", 10), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_size, 10);
	CHECK_EQ(t_read_file("f", buf, sizeof buf), 10);
	CHECK(memcmp(buf, "abc", 3) == 0);
	for (i = 3; i < 10; i++)
		CHECK_EQ(buf[i], 0);

	fd = open("f", O_RDWR);
	CHECK_EQ(lseek(fd, 8, SEEK_SET), 8);
	CHECK_EQ(ftruncate(fd, 2), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8); /* offset unchanged */
	CHECK_EQ(read(fd, buf, 4), 0);	      /* past EOF */
	/* Writing there leaves a zero-filled gap. */
	CHECK_EQ(write(fd, "Z", 1), 1);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 9);
	CHECK_EQ(pread(fd, buf, 9, 0), 9);
	CHECK(buf[0] == 'a' && buf[1] == 'b' && buf[2] == 0 && buf[7] == 0 &&
	      buf[8] == 'Z');
	/* Shrink then grow: the old bytes do not come back. */
	CHECK_EQ(ftruncate(fd, 1), 0);
	CHECK_EQ(ftruncate(fd, 4), 0);
	CHECK_EQ(pread(fd, buf, 4, 0), 4);
	CHECK(buf[0] == 'a' && buf[1] == 0 && buf[2] == 0 && buf[3] == 0);

	/* Errors. */
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	CHECK_ERR(truncate("f", -1), EINVAL);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_ERR(truncate("d", 0), EISDIR);
	CHECK_ERR(truncate("nope", 0), ENOENT);
	ro = open("f", O_RDONLY);
	CHECK_ERR(ftruncate(ro, 0), EINVAL);
	{
		int dfd = open("d", O_RDONLY);

		CHECK_ERR(ftruncate(dfd, 0), EINVAL);
		close(dfd);
	}
	CHECK_ERR(ftruncate(9999, 0), EBADF);
	{
		int p[2];

		CHECK_EQ(pipe(p), 0);
		CHECK_ERR(ftruncate(p[1], 0), EINVAL);
		close(p[0]);
		close(p[1]);
	}
	close(ro);
	close(fd);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
