/*
 * Path walks and the mount table: after many mounts and unmounts, and
 * with mounts stacked on one directory, every lookup sees exactly what is
 * mounted now (the walk's mount filter may only skip directories nothing
 * is mounted on); ".." climbs out of a mount; paths around the length of
 * the kernel's short-path buffer (255, 256, 257 bytes) and a path ending
 * just before an unmapped page resolve, one that runs into it is EFAULT.
 */
#include "next.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>

#define N 300

int main(void)
{
	char dir[256], path[400], sub[300];
	struct stat st, top;
	int i, bad;

	if (!t_is_root())
		SKIP("mount needs root");
	/* On the host, keep the mounts out of the machine's own table. */
	if (!t_is_trellis()) {
		CHECK_EQ(unshare(CLONE_NEWNS), 0);
		CHECK_EQ(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	}
	if (t_mktmp("vfs_walk_mounts", dir, sizeof dir) != 0)
		DONE();

	/* N directories, each with a file, each mounted over, then unmounted. */
	for (i = 0; i < N; i++) {
		snprintf(sub, sizeof sub, "%s/d%d", dir, i);
		CHECK_EQ(mkdir(sub, 0755), 0);
		snprintf(path, sizeof path, "%s/under", sub);
		CHECK_EQ(t_write_file(path, "u", 1, 0644), 0);
	}
	for (i = 0; i < N; i++) {
		snprintf(sub, sizeof sub, "%s/d%d", dir, i);
		CHECK_EQ(mount("none", sub, "tmpfs", 0, "size=64k"), 0);
	}
	bad = 0;
	for (i = 0; i < N; i++) {
		snprintf(path, sizeof path, "%s/d%d/under", dir, i);
		bad += stat(path, &st) == 0 || errno != ENOENT;
		snprintf(path, sizeof path, "%s/d%d/over", dir, i);
		bad += t_write_file(path, "o", 1, 0644) != 0;
	}
	CHECK_EQ(bad, 0);
	/* ".." from inside a mount is the directory holding the mount point. */
	snprintf(path, sizeof path, "%s/d7/..", dir);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(stat(dir, &top), 0);
	CHECK(st.st_ino == top.st_ino && st.st_dev == top.st_dev);
	/* Unmount every other one: those show their old contents again. */
	for (i = 0; i < N; i += 2) {
		snprintf(sub, sizeof sub, "%s/d%d", dir, i);
		CHECK_EQ(umount2(sub, 0), 0);
	}
	bad = 0;
	for (i = 0; i < N; i++) {
		int mounted = i % 2;
		snprintf(path, sizeof path, "%s/d%d/under", dir, i);
		bad += (stat(path, &st) == 0) == mounted;
		snprintf(path, sizeof path, "%s/d%d/over", dir, i);
		bad += (stat(path, &st) == 0) != mounted;
	}
	CHECK_EQ(bad, 0);

	/* Two mounts stacked on d0: the newest is seen; unmounting it shows
	 * the older one, then the directory itself. */
	snprintf(sub, sizeof sub, "%s/d0", dir);
	CHECK_EQ(mount("none", sub, "tmpfs", 0, "size=64k"), 0);
	snprintf(path, sizeof path, "%s/d0/first", dir);
	CHECK_EQ(t_write_file(path, "1", 1, 0644), 0);
	CHECK_EQ(mount("none", sub, "tmpfs", 0, "size=64k"), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_EQ(umount2(sub, 0), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(umount2(sub, 0), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
	snprintf(path, sizeof path, "%s/d0/under", dir);
	CHECK_EQ(stat(path, &st), 0);
	for (i = 1; i < N; i += 2) {
		snprintf(sub, sizeof sub, "%s/d%d", dir, i);
		CHECK_EQ(umount2(sub, 0), 0);
	}

	/* Paths of 255, 256 and 257 bytes (padded with "./"). */
	snprintf(path, sizeof path, "%s/d1/under", dir);
	for (int len = 250; len <= 262; len++) {
		char p[512];
		size_t base = strlen(path);
		int pad = len - (int)base;
		if (pad < 0 || pad % 2)
			continue;
		p[0] = 0;
		for (int k = 0; k < pad / 2; k++)
			strcat(p, "./");
		/* "./" prefixes on an absolute path: put them after the root. */
		char q[1000];
		snprintf(q, sizeof q, "/%s%s", p, path + 1);
		CHECK_EQ((int)strlen(q), len);
		CHECK_EQ(stat(q, &st), 0);
	}

	/* A path that ends just before an unmapped page, and one that runs
	 * into it. */
	char *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(pg != MAP_FAILED);
	CHECK_EQ(munmap(pg + 4096, 4096), 0);
	size_t n = strlen(path) + 1;
	memcpy(pg + 4096 - n, path, n);
	CHECK_EQ(stat(pg + 4096 - n, &st), 0);
	memcpy(pg + 4096 - (n - 1), path, n - 1);
	CHECK_ERR(stat(pg + 4096 - (n - 1), &st), EFAULT);

	t_rmtree(dir);
	DONE();
}
