/* fs.protected_hardlinks and fs.protected_symlinks, whatever the
 * /proc/sys/fs files say they are (Trellis: 1 and 1, as Debian).
 * Hard links: only the owner, root, or a caller that could read and
 * write a plain regular file may link it (EPERM, before the directory's
 * own EACCES). Symlinks in a sticky world-writable directory: followed
 * only by their owner or when the directory's owner owns them (EACCES,
 * for root too; lstat and readlink are unaffected). */
#include "next.h"

#define NOBODY 65534

static int sysctl(const char *name)
{
	char path[96], buf[32];

	snprintf(path, sizeof path, "/proc/sys/fs/%s", name);
	if (t_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	return atoi(buf);
}

static int mkfile(const char *dir, const char *name, mode_t mode, uid_t uid)
{
	char path[PATH_MAX];

	t_join(path, sizeof path, dir, name);
	if (t_write_file(path, "x", 1, 0600) || chown(path, uid, uid) || chmod(path, mode))
		return -1;
	return 0;
}

static int linkit(const char *dir, const char *from, const char *to)
{
	char a[PATH_MAX], b[PATH_MAX];

	t_join(a, sizeof a, dir, from);
	t_join(b, sizeof b, dir, to);
	return link(a, b);
}

static void hardlinks(const char *base, int on)
{
	char open_dir[PATH_MAX], closed_dir[PATH_MAX], target[PATH_MAX];
	pid_t pid;

	t_join(open_dir, sizeof open_dir, base, "h");
	t_join(closed_dir, sizeof closed_dir, base, "hc");
	CHECK_EQ(mkdir(open_dir, 0777), 0);
	CHECK_EQ(chmod(open_dir, 0777), 0);
	CHECK_EQ(mkdir(closed_dir, 0755), 0);
	CHECK_EQ(mkfile(open_dir, "secret", 0600, 0), 0);
	CHECK_EQ(mkfile(open_dir, "shared", 0666, 0), 0);
	CHECK_EQ(mkfile(open_dir, "readonly", 0644, 0), 0);
	CHECK_EQ(mkfile(open_dir, "suid", 04777, 0), 0);
	CHECK_EQ(mkfile(open_dir, "sgid", 02777, 0), 0);
	CHECK_EQ(mkfile(open_dir, "mine", 0600, NOBODY), 0);
	CHECK_EQ(mkfile(closed_dir, "secret", 0600, 0), 0);

	pid = fork();
	if (pid == 0) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		if (on) {
			CHECK_ERR(linkit(open_dir, "secret", "l1"), EPERM);
			CHECK_ERR(linkit(open_dir, "readonly", "l2"), EPERM);
			CHECK_ERR(linkit(open_dir, "suid", "l3"), EPERM);
			CHECK_ERR(linkit(open_dir, "sgid", "l4"), EPERM);
			/* EPERM comes before the directory's EACCES... */
			t_join(target, sizeof target, open_dir, "l5");
			{
				char src[PATH_MAX];

				t_join(src, sizeof src, closed_dir, "secret");
				CHECK_ERR(link(src, target), EPERM);
			}
			/* ... and after EEXIST. */
			CHECK_ERR(linkit(open_dir, "secret", "shared"), EEXIST);
		} else {
			CHECK_EQ(linkit(open_dir, "secret", "l1"), 0);
		}
		/* Readable and writable, or our own: allowed. */
		CHECK_EQ(linkit(open_dir, "shared", "l6"), 0);
		CHECK_EQ(linkit(open_dir, "mine", "l7"), 0);
		/* A directory we cannot write: EACCES for our own file. */
		{
			char src[PATH_MAX], dst[PATH_MAX];

			t_join(src, sizeof src, open_dir, "mine");
			t_join(dst, sizeof dst, closed_dir, "l8");
			CHECK_ERR(link(src, dst), EACCES);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	/* Root (CAP_FOWNER) links anything. */
	CHECK_EQ(linkit(open_dir, "secret", "l9"), 0);
	CHECK_EQ(linkit(open_dir, "mine", "l10"), 0);
}

/* stat() through `path`: 0 or -1 with errno. */
static int follow(const char *path)
{
	struct stat st;

	return stat(path, &st);
}

static void symlinks(const char *base, int on)
{
	char sticky[PATH_MAX], plain[PATH_MAX], p[PATH_MAX], buf[64];
	struct stat st;
	pid_t pid;

	t_join(sticky, sizeof sticky, base, "s");
	t_join(plain, sizeof plain, base, "p");
	CHECK_EQ(mkdir(sticky, 0777), 0);
	CHECK_EQ(chmod(sticky, 01777), 0);
	CHECK_EQ(mkdir(plain, 0777), 0);
	CHECK_EQ(chmod(plain, 0777), 0);
	CHECK_EQ(mkfile(sticky, "file", 0644, 0), 0);
	CHECK_EQ(mkdir(t_join(p, sizeof p, sticky, "dir"), 0755), 0);

	/* Links owned by nobody, and one by root (the directory's owner). */
	CHECK_EQ(symlink("file", t_join(p, sizeof p, sticky, "theirs")), 0);
	CHECK_EQ(lchown(p, NOBODY, NOBODY), 0);
	CHECK_EQ(symlink("dir", t_join(p, sizeof p, sticky, "theirdir")), 0);
	CHECK_EQ(lchown(p, NOBODY, NOBODY), 0);
	CHECK_EQ(symlink("newfile", t_join(p, sizeof p, sticky, "dangling")), 0);
	CHECK_EQ(lchown(p, NOBODY, NOBODY), 0);
	CHECK_EQ(symlink("file", t_join(p, sizeof p, sticky, "roots")), 0);
	CHECK_EQ(symlink("../s/file", t_join(p, sizeof p, plain, "theirs")), 0);
	CHECK_EQ(lchown(p, NOBODY, NOBODY), 0);

	t_join(p, sizeof p, sticky, "theirs");
	if (on) {
		CHECK_ERR(follow(p), EACCES);
		CHECK_ERR(open(p, O_RDONLY), EACCES);
		/* In the middle of a path too. */
		t_cat3(p, sizeof p, sticky, "/theirdir", "/.");
		CHECK_ERR(follow(p), EACCES);
		/* O_CREAT through a dangling one. */
		CHECK_ERR(open(t_join(p, sizeof p, sticky, "dangling"), O_WRONLY | O_CREAT, 0644), EACCES);
	} else {
		CHECK_EQ(follow(p), 0);
	}
	/* Not following is unaffected. */
	t_join(p, sizeof p, sticky, "theirs");
	CHECK_EQ(lstat(p, &st), 0);
	CHECK_EQ(readlink(p, buf, sizeof buf), 4);
	/* The directory's owner's link, and any link in a plain directory. */
	CHECK_EQ(follow(t_join(p, sizeof p, sticky, "roots")), 0);
	CHECK_EQ(follow(t_join(p, sizeof p, plain, "theirs")), 0);

	pid = fork();
	if (pid == 0) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		/* Our own links, and root's (the directory's owner's). */
		CHECK_EQ(follow(t_join(p, sizeof p, sticky, "theirs")), 0);
		t_cat3(p, sizeof p, sticky, "/theirdir", "/.");
		CHECK_EQ(follow(p), 0);
		CHECK_EQ(follow(t_join(p, sizeof p, sticky, "roots")), 0);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

int main(void)
{
	char base[PATH_MAX];
	int hard = sysctl("protected_hardlinks");
	int sym = sysctl("protected_symlinks");

	CHECK(hard == 0 || hard == 1);
	CHECK(sym == 0 || sym == 1 || sym == 2);
	if (t_is_trellis()) {
		CHECK_EQ(hard, 1);
		CHECK_EQ(sym, 1);
	}
	if (!t_is_root())
		SKIP("needs root to create files of another user");
	if (t_mktmp("vfs_protected_links", base, sizeof base))
		DONE();
	CHECK_EQ(chmod(base, 0755), 0);
	hardlinks(base, hard == 1);
	symlinks(base, sym >= 1);
	t_rmtree(base);
	/* The tunables are writable (only here: the host's stay as they are). */
	if (t_is_trellis()) {
		const char *f = "/proc/sys/fs/protected_symlinks";
		int fd;

		CHECK_EQ(t_write_file(f, "0\n", 2, 0644), 0);
		CHECK_EQ(sysctl("protected_symlinks"), 0);
		if (t_mktmp("vfs_protected_links_off", base, sizeof base) == 0) {
			CHECK_EQ(chmod(base, 0755), 0);
			symlinks(base, 0);
			t_rmtree(base);
		}
		fd = open(f, O_WRONLY);
		CHECK(fd >= 0);
		CHECK_ERR(write(fd, "2", 1), EINVAL);
		CHECK_ERR(write(fd, "x", 1), EINVAL);
		close(fd);
		CHECK_EQ(t_write_file(f, "1", 1, 0644), 0);
		CHECK_EQ(sysctl("protected_symlinks"), 1);
	}
	DONE();
}
