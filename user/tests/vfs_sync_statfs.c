/* fsync/fdatasync/sync/syncfs succeed on files and directories (EBADF,
 * EINVAL for pipes); statfs/fstatfs report sane numbers and the right
 * magic for tmpfs and procfs, and errors. */
#include "next.h"
#include <sys/statfs.h>

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct statfs sf, sf2;
	int fd, d, p[2], mounted;

	mounted = t_tmpfs_scratch("vfs_sync_statfs", dir, sizeof dir);
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "data", 4, 0644), 0);
	fd = open(path, O_RDWR);
	d = open(dir, O_RDONLY | O_DIRECTORY);

	CHECK_EQ(fsync(fd), 0);
	CHECK_EQ(fdatasync(fd), 0);
	CHECK_EQ(fsync(d), 0);
	CHECK_EQ(syncfs(fd), 0);
	sync();
	CHECK_ERR(fsync(9999), EBADF);
	CHECK_ERR(fdatasync(-1), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(fsync(p[0]), EINVAL);
	CHECK_ERR(fdatasync(p[1]), EINVAL);
	close(p[0]);
	close(p[1]);
	/* A read-only fd can be synced. */
	{
		int ro = open(path, O_RDONLY);

		CHECK_EQ(fsync(ro), 0);
		close(ro);
	}

	CHECK_EQ(statfs(dir, &sf), 0);
	CHECK_EQ(fstatfs(fd, &sf2), 0);
	CHECK_EQ(sf.f_type, sf2.f_type);
	CHECK(sf.f_bsize > 0);
	CHECK(sf.f_blocks >= sf.f_bfree);
	CHECK(sf.f_bfree >= sf.f_bavail);
	CHECK_EQ(sf.f_namelen, 255);
	if (mounted >= 0) {
		CHECK_EQ(sf.f_type, 0x01021994);
		CHECK(sf.f_blocks > 0);
		/* Writing data lowers the free count (tmpfs with a size). */
		if (mounted == 1) {
			static char big[1 << 20];
			int bf = open(path, O_WRONLY);

			CHECK_EQ(write(bf, big, sizeof big), (long)sizeof big);
			close(bf);
			CHECK_EQ(statfs(dir, &sf2), 0);
			CHECK(sf2.f_bfree < sf.f_bfree);
		}
	}
	CHECK_EQ(statfs("/proc", &sf), 0);
	CHECK_EQ(sf.f_type, 0x9fa0);
	CHECK_EQ(statfs("/", &sf), 0);

	CHECK_ERR(statfs("/nonexistent/x", &sf), ENOENT);
	CHECK_ERR(statfs((const char *)BAD_PTR2, &sf), EFAULT);
	CHECK_ERR(syscall(SYS_statfs, dir, BAD_PTR2), EFAULT);
	CHECK_ERR(fstatfs(9999, &sf), EBADF);
	close(fd);
	close(d);
	if (mounted == 1)
		t_umount(dir);
	t_rmtree(dir);
	DONE();
}
