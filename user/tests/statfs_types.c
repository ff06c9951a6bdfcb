/*
 * statfs(2)/fstatfs(2) report the type of the file system a path is on:
 * proc, sysfs, and tmpfs for /dev (devtmpfs) and /dev/shm; the in-memory
 * file systems report a size with free blocks.
 */
#include "t.h"
#include <sys/vfs.h>

#define PROC_SUPER_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572
#define TMPFS_MAGIC 0x01021994

int main(void)
{
	struct statfs sf, sf2;
	int fd;

	CHECK_EQ(statfs("/proc", &sf), 0);
	CHECK_EQ(sf.f_type, PROC_SUPER_MAGIC);
	CHECK_EQ(sf.f_namelen, 255);
	CHECK_EQ(statfs("/proc/self/stat", &sf), 0);
	CHECK_EQ(sf.f_type, PROC_SUPER_MAGIC);
	fd = open("/proc/self/status", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fstatfs(fd, &sf2), 0);
	CHECK_EQ(sf2.f_type, PROC_SUPER_MAGIC);
	close(fd);

	CHECK_EQ(statfs("/sys", &sf), 0);
	CHECK_EQ(sf.f_type, SYSFS_MAGIC);
	CHECK_EQ(statfs("/sys/devices", &sf), 0);
	CHECK_EQ(sf.f_type, SYSFS_MAGIC);

	CHECK_EQ(statfs("/dev", &sf), 0);
	CHECK_EQ(sf.f_type, TMPFS_MAGIC);
	CHECK_EQ(statfs("/dev/shm", &sf), 0);
	CHECK_EQ(sf.f_type, TMPFS_MAGIC);
	CHECK(sf.f_blocks > 0);
	CHECK(sf.f_bfree <= sf.f_blocks);
	CHECK(sf.f_bavail <= sf.f_blocks);
	CHECK_EQ(sf.f_bsize, 4096);
	CHECK(sf.f_flags & 0x20); /* ST_VALID */

	/* Two mounts of one type are two file systems. */
	CHECK_EQ(statfs("/dev/shm", &sf2), 0);
	CHECK_EQ(statfs("/dev", &sf), 0);
	CHECK(memcmp(&sf.f_fsid, &sf2.f_fsid, sizeof sf.f_fsid) != 0);

	CHECK_ERR(statfs("/no/such/path", &sf), ENOENT);
	/* Raw calls: libc clears the buffer before the call. */
	CHECK_ERR(syscall(SYS_statfs, BAD_PTR, &sf), EFAULT);
	CHECK_ERR(syscall(SYS_fstatfs, -1, &sf), EBADF);
	CHECK_ERR(syscall(SYS_statfs, "/proc", BAD_PTR), EFAULT);
	DONE();
}
