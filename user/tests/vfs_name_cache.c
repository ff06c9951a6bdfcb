/* Cached lookups never go stale: names looked up (and so cached, where a
 * kernel caches them) are looked up again after each change to them:
 * rename over a cached name, unlink and re-create, a symlink replaced,
 * rmdir and mkdir of the same name, a mount over a cached directory and
 * its umount, and a permission change on a cached directory (EACCES must
 * follow at once: permission checks are never cached). Negative entries:
 * a name looked up while absent is found once created. */
#include "next.h"

#include <sys/mount.h>

static ino_t ino_of(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0;
	return st.st_ino;
}

/* In a child with uid/gid 65534 (when root): stat `path`, 0 or errno. */
static int stat_as_nobody(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(100);
		struct stat st;
		_exit(stat(path, &st) == 0 ? 0 : errno);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	char dir[PATH_MAX], buf[16];
	struct stat st;

	if (t_mktmp("vfs_name_cache", dir, sizeof dir) != 0)
		DONE();
	CHECK_EQ(chdir(dir), 0);

	/* Negative, then positive. */
	for (int i = 0; i < 3; i++)
		CHECK_ERR(stat("n", &st), ENOENT);
	CHECK_EQ(t_write_file("n", "n", 1, 0644), 0);
	CHECK_EQ(stat("n", &st), 0);
	CHECK_EQ(st.st_size, 1);

	/* Rename over a cached name: the target name is the moved file. */
	CHECK_EQ(t_write_file("a", "AA", 2, 0644), 0);
	CHECK_EQ(t_write_file("b", "BBB", 3, 0644), 0);
	ino_t ia = ino_of("a"), ib = ino_of("b");
	CHECK(ia != 0 && ib != 0 && ia != ib);
	CHECK_EQ(rename("a", "b"), 0);
	CHECK_EQ(ino_of("b"), ia);
	CHECK_ERR(stat("a", &st), ENOENT);
	CHECK_EQ(t_read_file("b", buf, sizeof buf), 2);
	CHECK(memcmp(buf, "AA", 2) == 0);

	/* Unlink and re-create under the same name. */
	CHECK_EQ(t_write_file("u", "old", 3, 0644), 0);
	CHECK_EQ(stat("u", &st), 0);
	CHECK_EQ(unlink("u"), 0);
	CHECK_ERR(stat("u", &st), ENOENT);
	CHECK_ERR(open("u", O_RDONLY), ENOENT);
	CHECK_EQ(t_write_file("u", "newer", 5, 0600), 0);
	CHECK_EQ(stat("u", &st), 0);
	CHECK_EQ(st.st_size, 5);
	CHECK_EQ(st.st_mode & 07777, 0600);

	/* A symlink replaced: the path follows the new target. */
	CHECK_EQ(t_write_file("t1", "1", 1, 0644), 0);
	CHECK_EQ(t_write_file("t2", "22", 2, 0644), 0);
	CHECK_EQ(symlink("t1", "l"), 0);
	CHECK_EQ(ino_of("l"), ino_of("t1"));
	CHECK_EQ(unlink("l"), 0);
	CHECK_EQ(symlink("t2", "l"), 0);
	CHECK_EQ(ino_of("l"), ino_of("t2"));
	/* A directory replaced by a symlink in the middle of a path. */
	CHECK_EQ(mkdir("m", 0755), 0);
	CHECK_EQ(mkdir("m2", 0755), 0);
	CHECK_EQ(t_write_file("m/f", "m", 1, 0644), 0);
	CHECK_EQ(t_write_file("m2/f", "m2", 2, 0644), 0);
	CHECK_EQ(stat("m/f", &st), 0);
	CHECK_EQ(st.st_size, 1);
	CHECK_EQ(rename("m", "m1"), 0);
	CHECK_EQ(symlink("m2", "m"), 0);
	CHECK_EQ(stat("m/f", &st), 0);
	CHECK_EQ(st.st_size, 2);

	/* rmdir and mkdir of the same name: no old entry shows through. */
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_EQ(t_write_file("d/x", "x", 1, 0644), 0);
	CHECK_EQ(stat("d/x", &st), 0);
	CHECK_ERR(stat("d/y", &st), ENOENT);
	CHECK_EQ(unlink("d/x"), 0);
	CHECK_EQ(rmdir("d"), 0);
	CHECK_ERR(stat("d/x", &st), ENOENT);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_ERR(stat("d/x", &st), ENOENT);
	CHECK_EQ(t_write_file("d/y", "y", 1, 0644), 0);
	CHECK_EQ(stat("d/y", &st), 0);

	/* A permission change on a cached directory takes effect at once. */
	CHECK_EQ(mkdir("p", 0755), 0);
	CHECK_EQ(t_write_file("p/f", "p", 1, 0644), 0);
	char pf[PATH_MAX + 8];
	snprintf(pf, sizeof pf, "%s/p/f", dir);
	/* (The scratch directory must be searchable by everyone.) */
	CHECK_EQ(chmod(dir, 0755), 0);
	CHECK_EQ(stat_as_nobody(pf), 0);
	CHECK_EQ(stat_as_nobody(pf), 0);
	CHECK_EQ(chmod("p", 0700), 0);
	if (geteuid() == 0) {
		CHECK_EQ(stat_as_nobody(pf), EACCES);
		CHECK_EQ(stat(pf, &st), 0); /* root: CAP_DAC_OVERRIDE */
	} else {
		/* The owner lost nothing (0700); without search, EACCES. */
		CHECK_EQ(stat(pf, &st), 0);
		CHECK_EQ(chmod("p", 0600), 0);
		CHECK_ERR(stat(pf, &st), EACCES);
	}
	CHECK_EQ(chmod("p", 0755), 0);
	CHECK_EQ(stat_as_nobody(pf), 0);

	/* A mount over a cached directory hides it; umount shows it again. */
	CHECK_EQ(mkdir("mnt", 0755), 0);
	CHECK_EQ(t_write_file("mnt/under", "u", 1, 0644), 0);
	CHECK_EQ(stat("mnt/under", &st), 0);
	CHECK_ERR(stat("mnt/over", &st), ENOENT);
	if (geteuid() == 0 && mount("none", "mnt", "tmpfs", 0, "") == 0) {
		CHECK_ERR(stat("mnt/under", &st), ENOENT);
		CHECK_EQ(t_write_file("mnt/over", "o", 1, 0644), 0);
		CHECK_EQ(stat("mnt/over", &st), 0);
		CHECK_EQ(umount("mnt"), 0);
		CHECK_EQ(stat("mnt/under", &st), 0);
		CHECK_ERR(stat("mnt/over", &st), ENOENT);
	} else {
		t_printf("  note: mount over a cached directory not checked (not root)\n");
	}

	CHECK_EQ(chdir("/"), 0);
	t_rmtree(dir);
	DONE();
}
