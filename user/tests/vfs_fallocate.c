/* fallocate on tmpfs: mode 0 extends the size with zeros and allocates
 * blocks, FALLOC_FL_KEEP_SIZE allocates without growing, existing data
 * is kept; EINVAL for bad ranges, EBADF for read-only fds, ESPIPE for
 * pipes, EOPNOTSUPP for unknown modes. */
#include "next.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 1
#endif

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[8192];
	struct stat st;
	int fd, ro, mounted, i, p[2];

	mounted = t_tmpfs_scratch("vfs_fallocate", dir, sizeof dir);
	if (mounted < 0)
		SKIP("no tmpfs available");
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "keep", 4, 0644), 0);
	fd = open(path, O_RDWR);

	CHECK_EQ(fallocate(fd, 0, 0, 8192), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 8192);
	CHECK(st.st_blocks >= 16);
	CHECK_EQ(pread(fd, buf, sizeof buf, 0), 8192);
	CHECK(memcmp(buf, "keep", 4) == 0);
	for (i = 4; i < 8192; i++)
		if (buf[i] != 0)
			break;
	CHECK_EQ(i, 8192);

	/* Beyond the end with an offset: size = offset + len. */
	CHECK_EQ(fallocate(fd, 0, 100000, 4096), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 104096);
	/* A range inside the file changes nothing visible. */
	CHECK_EQ(fallocate(fd, 0, 0, 10), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 104096);

	/* KEEP_SIZE. */
	CHECK_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 200000, 65536), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 104096);

	/* posix_fallocate is the same thing. */
	CHECK_EQ(posix_fallocate(fd, 0, 300000), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 300000);

	/* Errors. */
	CHECK_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CHECK_ERR(fallocate(fd, 0, -1, 10), EINVAL);
	CHECK_ERR(fallocate(fd, 0, 0, -10), EINVAL);
	CHECK_ERR(fallocate(fd, 0x1000, 0, 10), EOPNOTSUPP);
	ro = open(path, O_RDONLY);
	CHECK_ERR(fallocate(ro, 0, 0, 10), EBADF);
	CHECK_ERR(fallocate(9999, 0, 0, 10), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(fallocate(p[1], 0, 0, 10), ESPIPE);
	close(p[0]);
	close(p[1]);
	close(ro);
	close(fd);
	if (mounted == 1)
		t_umount(dir);
	t_rmtree(dir);
	DONE();
}
