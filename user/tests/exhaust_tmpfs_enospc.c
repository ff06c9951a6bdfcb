/*
 * exhaust_tmpfs_enospc: fill a tmpfs until ENOSPC, and statfs agrees
 * (issue 11 item 7).  On a tmpfs of size=4m (1024 pages) the test writes
 * files of 1.5 MiB in chunks of 10,000 bytes until a write fails: the
 * last write that partly fits is short, the next one is ENOSPC, exactly
 * 4 MiB is stored, and statfs reports f_blocks 1024 and f_bfree = f_bavail
 * = 0; f_files - f_ffree counts the inodes.  Unlinking a file gives its 384
 * pages back (statfs shows it, and they can be written again); a remount
 * changes the size (EINVAL below what is in use).  An nr_inodes=16
 * instance runs out of inodes with ENOSPC.  The default /tmp has f_blocks
 * = half the RAM's pages, as Linux's tmpfs default size (Trellis only: a
 * host's /tmp may be anything).  After the unmount the kernel's memory is
 * back where it was, and a second program (fork + exec) runs.  Needs root
 * (mount).
 */
#include "next.h"
#include "exhaust.h"
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>

#define TMPFS_MAGIC 0x01021994
#define CHUNK 10000
#define FILE_BYTES (3 << 19) /* 1.5 MiB, 384 pages */

static char dir[PATH_MAX];
static char buf[CHUNK];

static void path_of(char *p, size_t n, int k)
{
	snprintf(p, n, "%s/f%d", dir, k);
}

/* Writes file k up to FILE_BYTES in CHUNKs; returns bytes stored, and
 * counts short writes and the errno that stopped it (0: none). */
static long fill_file(int k, int *shorts, int *err)
{
	char p[PATH_MAX + 16];
	long done = 0;
	int fd;

	path_of(p, sizeof p, k);
	*err = 0;
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0) {
		*err = errno;
		return 0;
	}
	while (done < FILE_BYTES) {
		size_t want = FILE_BYTES - done < CHUNK ? FILE_BYTES - done
							: CHUNK;
		ssize_t w = write(fd, buf, want);

		if (w < 0) {
			*err = errno;
			break;
		}
		if ((size_t)w < want)
			(*shorts)++;
		done += w;
	}
	close(fd);
	return done;
}

static struct statfs fs_now(void)
{
	struct statfs s;

	memset(&s, 0, sizeof s);
	CHECK_EQ(statfs(dir, &s), 0);
	return s;
}

int main(int argc, char **argv)
{
	struct x_usage before, after;
	struct statfs s;
	struct sysinfo si;
	long total = 0, ram_pages;
	int k, shorts = 0, err = 0;
	char p[PATH_MAX + 16];

	X_MAYBE_SECOND(argc, argv);
	memset(buf, 'z', sizeof buf);
	CHECK_EQ(sysinfo(&si), 0);
	ram_pages = (long)((unsigned long long)si.totalram * si.mem_unit / 4096);

	/* The default /tmp: a tmpfs of half the RAM. */
	CHECK_EQ(statfs("/tmp", &s), 0);
	if (t_is_trellis()) {
		CHECK_EQ(s.f_type, TMPFS_MAGIC);
		CHECK_EQ(s.f_bsize, 4096);
		CHECK_EQ(s.f_blocks, ram_pages / 2);
		CHECK_EQ(s.f_files, ram_pages / 2);
		CHECK(s.f_bfree > 0 && s.f_bfree <= s.f_blocks);
		CHECK_EQ(s.f_bavail, s.f_bfree);
		CHECK(s.f_ffree > 0 && s.f_ffree < s.f_files);
	}
	t_note("/tmp: type %#lx, %ld of %ld blocks free, %ld of %ld inodes "
	       "free; RAM %ld pages",
	       (long)s.f_type, (long)s.f_bfree, (long)s.f_blocks,
	       (long)s.f_ffree, (long)s.f_files, ram_pages);

	if (!t_is_root())
		SKIP("mount needs root");
	CHECK_EQ(t_mktmp("exhaust_tmpfs", dir, sizeof dir), 0);
	x_settle(&after);
	x_read_usage(&before);
	CHECK_EQ(mount("t", dir, "tmpfs", 0, "size=4m"), 0);
	s = fs_now();
	CHECK_EQ(s.f_type, TMPFS_MAGIC);
	CHECK_EQ(s.f_bsize, 4096);
	CHECK_EQ(s.f_blocks, 1024);
	CHECK_EQ(s.f_bfree, 1024);
	CHECK_EQ(s.f_bavail, 1024);
	CHECK_EQ(s.f_files - s.f_ffree, 1); /* the root */

	/* Fill it: two whole files, then 1 MiB of the third, whose write
	 * across the end of the 4 MiB is short. */
	for (k = 0; err == 0 && k < 10; k++)
		total += fill_file(k, &shorts, &err);
	CHECK_EQ(err, ENOSPC);
	CHECK_EQ(k, 3);
	CHECK_EQ(total, 4L << 20);
	CHECK_EQ(shorts, 1);
	s = fs_now();
	CHECK_EQ(s.f_blocks, 1024);
	CHECK_EQ(s.f_bfree, 0);
	CHECK_EQ(s.f_bavail, 0);
	CHECK_EQ(s.f_files - s.f_ffree, 1 + 3);
	/* Nothing more fits, not even a byte in a new page. */
	path_of(p, sizeof p, 2);
	{
		int fd = open(p, O_WRONLY | O_APPEND);
		struct stat st;

		CHECK(fd >= 0);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK_EQ(st.st_size, 1 << 20);
		CHECK_EQ(st.st_blocks, (1 << 20) / 512);
		CHECK_ERR(write(fd, buf, 1), ENOSPC);
		CHECK_ERR(fallocate(fd, 0, 0, 8 << 20), ENOSPC);
		close(fd);
	}
	CHECK_EQ(fs_now().f_bfree, 0);

	/* Unlink gives the pages back, and they can be used again. */
	path_of(p, sizeof p, 1);
	CHECK_EQ(unlink(p), 0);
	s = fs_now();
	CHECK_EQ(s.f_bfree, 384);
	CHECK_EQ(s.f_bavail, 384);
	CHECK_EQ(s.f_files - s.f_ffree, 1 + 2);
	shorts = 0;
	CHECK_EQ(fill_file(1, &shorts, &err), FILE_BYTES);
	CHECK_EQ(err, 0);
	CHECK_EQ(shorts, 0);
	CHECK_EQ(fs_now().f_bfree, 0);

	/* A remount changes the size, not below what is in use. */
	CHECK_ERR(mount("t", dir, "tmpfs", MS_REMOUNT, "size=1m"), EINVAL);
	CHECK_EQ(fs_now().f_blocks, 1024);
	CHECK_EQ(mount("t", dir, "tmpfs", MS_REMOUNT, "size=5m"), 0);
	s = fs_now();
	CHECK_EQ(s.f_blocks, 1280);
	CHECK_EQ(s.f_bfree, 256);
	CHECK_EQ(fill_file(3, &shorts, &err), 1 << 20);
	CHECK_EQ(err, ENOSPC);
	CHECK_EQ(fs_now().f_bfree, 0);
	/* Down to exactly what is used: full, and still nothing fits. */
	CHECK_EQ(mount("t", dir, "tmpfs", MS_REMOUNT, "size=5m"), 0);
	for (k = 0; k <= 5; k++) {
		path_of(p, sizeof p, k);
		unlink(p);
	}
	s = fs_now();
	CHECK_EQ(s.f_bfree, 1280);
	CHECK_EQ(s.f_files - s.f_ffree, 1);
	CHECK_EQ(umount(dir), 0);

	/* Out of inodes: nr_inodes=16 is the root and 15 more. */
	CHECK_EQ(mount("t", dir, "tmpfs", 0, "nr_inodes=16"), 0);
	for (k = 0; k < 20; k++) {
		int fd;

		path_of(p, sizeof p, k);
		fd = open(p, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			break;
		close(fd);
	}
	CHECK_EQ(k, 15);
	CHECK_EQ(errno, ENOSPC);
	s = fs_now();
	CHECK_EQ(s.f_files, 16);
	CHECK_EQ(s.f_ffree, 0);
	CHECK_ERR(mount("t", dir, "tmpfs", MS_REMOUNT, "nr_inodes=8"), EINVAL);
	CHECK_EQ(mount("t", dir, "tmpfs", MS_REMOUNT, "nr_inodes=17"), 0);
	CHECK_EQ(fs_now().f_ffree, 1);
	CHECK_EQ(umount(dir), 0);
	rmdir(dir);

	x_read_usage(&after);
	/* The 4 MiB of file pages went with the unmount: no extra. */
	x_check_usage("before the mount and after the unmount", &before,
		      &after, 0);
	x_run_second();
	DONE();
}
