/* tmpfs(5) mount options: size= (bytes with a suffix, or a percentage of
 * RAM) bounds the pages the instance holds, statfs reports it, and writes,
 * fallocate and truncation past it fail with ENOSPC (a write that partly
 * fits is short); nr_inodes= bounds the inodes (the root counts);
 * size=0/nr_inodes=0 mean unlimited (statfs reports 0); the defaults are
 * half the RAM and as many inodes; mode/uid/gid set the root; unknown
 * options and bad values are EINVAL. Needs root (mount). */
#include "next.h"
#include <sys/statfs.h>
#include <sys/sysinfo.h>

static char dir[PATH_MAX];

static int mnt(const char *opts)
{
	return mount("t", dir, "tmpfs", 0, opts);
}

int main(void)
{
	static char buf[100000];
	char path[PATH_MAX + 16];
	struct statfs s;
	struct sysinfo si;
	struct stat st;
	unsigned long ram_pages;
	int fd, i;

	if (!t_is_root())
		SKIP("mount needs root");
	CHECK_EQ(t_mktmp("tmpfs_options", dir, sizeof dir), 0);
	CHECK_EQ(sysinfo(&si), 0);
	ram_pages = (unsigned long)si.totalram * si.mem_unit / 4096;

	/* size=64k: 16 pages. */
	CHECK_EQ(mnt("size=64k"), 0);
	CHECK_EQ(statfs(dir, &s), 0);
	CHECK_EQ(s.f_bsize, 4096);
	CHECK_EQ(s.f_blocks, 16);
	CHECK_EQ(s.f_bfree, 16);
	snprintf(path, sizeof path, "%s/f", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, buf, sizeof buf), 65536);
	CHECK_ERR(write(fd, buf, 10), ENOSPC);
	CHECK_EQ(statfs(dir, &s), 0);
	CHECK_EQ(s.f_bfree, 0);
	CHECK_ERR(fallocate(fd, 0, 0, 1 << 20), ENOSPC);
	/* Growing the size needs no pages; freeing pages gives space back. */
	CHECK_EQ(ftruncate(fd, 1 << 20), 0);
	CHECK_EQ(ftruncate(fd, 4096), 0);
	CHECK_EQ(statfs(dir, &s), 0);
	CHECK_EQ(s.f_bfree, 15);
	close(fd);
	CHECK_EQ(umount(dir), 0);

	/* nr_inodes=3: the root and two more. */
	CHECK_EQ(mnt("nr_inodes=3"), 0);
	CHECK_EQ(statfs(dir, &s), 0);
	CHECK_EQ(s.f_files, 3);
	CHECK_EQ(s.f_ffree, 2);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (i < 2) {
			CHECK(fd >= 0);
			close(fd);
		} else {
			CHECK(fd == -1 && errno == ENOSPC);
		}
	}
	snprintf(path, sizeof path, "%s/d", dir);
	CHECK_ERR(mkdir(path, 0700), ENOSPC);
	snprintf(path, sizeof path, "%s/0", dir);
	CHECK_EQ(unlink(path), 0);
	snprintf(path, sizeof path, "%s/d", dir);
	CHECK_EQ(mkdir(path, 0700), 0);
	CHECK_EQ(rmdir(path), 0);
	CHECK_EQ(umount(dir), 0);

	/* Unlimited, defaults, percentages. */
	CHECK_EQ(mnt("size=0,nr_inodes=0"), 0);
	CHECK_EQ(statfs(dir, &s), 0);
	CHECK_EQ(s.f_blocks, 0);
	CHECK_EQ(s.f_files, 0);
	CHECK_EQ(umount(dir), 0);
	CHECK_EQ(mnt(""), 0);
	CHECK_EQ(statfs(dir, &s), 0);
	CHECK_EQ(s.f_blocks, ram_pages / 2);
	CHECK_EQ(s.f_files, ram_pages / 2);
	CHECK_EQ(umount(dir), 0);
	CHECK_EQ(mnt("size=25%,nr_inodes=1k"), 0);
	CHECK_EQ(statfs(dir, &s), 0);
	/* Rounded up to whole pages. */
	CHECK_EQ(s.f_blocks, (ram_pages * 25 + 99) / 100);
	CHECK_EQ(s.f_files, 1024);
	CHECK_EQ(umount(dir), 0);

	/* The root's mode and owner. */
	CHECK_EQ(mnt("mode=0710,uid=123,gid=456"), 0);
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0710);
	CHECK_EQ(st.st_uid, 123);
	CHECK_EQ(st.st_gid, 456);
	CHECK_EQ(umount(dir), 0);

	/* Errors. */
	CHECK_ERR(mnt("bogus=1"), EINVAL);
	CHECK_ERR(mnt("size=abc"), EINVAL);
	CHECK_ERR(mnt("mode=99"), EINVAL);
	CHECK_ERR(mnt("nr_inodes=x"), EINVAL);
	rmdir(dir);
	DONE();
}
