/* Extended attributes on tmpfs (xattr(7), setxattr(2), getxattr(2),
 * listxattr(2), removexattr(2)): the user., trusted. and security.
 * namespaces, XATTR_CREATE/XATTR_REPLACE, size queries, ERANGE, E2BIG,
 * name rules, ENODATA, symlinks and device nodes, the f* calls (EBADF,
 * O_PATH), EFAULT, EROFS, ctime, the rules for an unprivileged caller, and
 * what pipes, eventfds and procfs answer. Everything happens on a tmpfs the
 * test mounts itself. */
#include "next.h"
#include <sys/eventfd.h>
#include <sys/xattr.h>

#ifndef ENOATTR
#define ENOATTR ENODATA
#endif

static char big[65537];

/* The names listxattr reports for path, as one string "a|b|" (-1 on
 * error). */
static ssize_t list_of(const char *path, char *out, size_t n)
{
	char buf[4096];
	ssize_t len = listxattr(path, buf, sizeof buf);
	ssize_t i;

	if (len < 0 || (size_t)len >= n)
		return -1;
	for (i = 0; i < len; i++)
		out[i] = buf[i] ? buf[i] : '|';
	out[len] = 0;
	return len;
}

/* Whether the NUL-separated list holds name. */
static int has_name(const char *list, ssize_t len, const char *name)
{
	ssize_t i = 0;

	while (i < len) {
		if (!strcmp(list + i, name))
			return 1;
		i += (ssize_t)strlen(list + i) + 1;
	}
	return 0;
}

static void basics(const char *f)
{
	char buf[256];

	CHECK_EQ(setxattr(f, "user.a", "hello", 5, 0), 0);
	CHECK_EQ(getxattr(f, "user.a", NULL, 0), 5);
	CHECK_EQ(getxattr(f, "user.a", buf, 0), 5);
	CHECK_ERR(getxattr(f, "user.a", buf, 3), ERANGE);
	memset(buf, 0, sizeof buf);
	CHECK_EQ(getxattr(f, "user.a", buf, sizeof buf), 5);
	CHECK(!memcmp(buf, "hello", 5));

	/* XATTR_CREATE / XATTR_REPLACE; both: whichever applies. */
	CHECK_ERR(setxattr(f, "user.a", "x", 1, XATTR_CREATE), EEXIST);
	CHECK_ERR(setxattr(f, "user.b", "x", 1, XATTR_REPLACE), ENODATA);
	CHECK_ERR(setxattr(f, "user.b", "x", 1, XATTR_CREATE | XATTR_REPLACE),
		  ENODATA);
	CHECK_ERR(setxattr(f, "user.a", "x", 1, XATTR_CREATE | XATTR_REPLACE),
		  EEXIST);
	CHECK_ERR(setxattr(f, "user.b", "x", 1, 4), EINVAL);
	CHECK_ERR(setxattr(f, "user.b", "x", 1, -1), EINVAL);
	CHECK_EQ(setxattr(f, "user.a", "bye", 3, XATTR_REPLACE), 0);
	CHECK_EQ(getxattr(f, "user.a", buf, sizeof buf), 3);
	CHECK(!memcmp(buf, "bye", 3));
	CHECK_EQ(setxattr(f, "user.b", "new", 3, XATTR_CREATE), 0);

	/* Empty values, also from a NULL pointer. */
	CHECK_EQ(setxattr(f, "user.empty", "", 0, 0), 0);
	CHECK_EQ(getxattr(f, "user.empty", buf, sizeof buf), 0);
	CHECK_EQ(setxattr(f, "user.null", NULL, 0, 0), 0);
	CHECK_EQ(getxattr(f, "user.null", NULL, 0), 0);

	/* Missing attributes. */
	CHECK_ERR(getxattr(f, "user.missing", buf, sizeof buf), ENODATA);
	CHECK_ERR(getxattr(f, "user.missing", NULL, 0), ENODATA);
	CHECK_ERR(removexattr(f, "user.missing"), ENODATA);
	CHECK_EQ(removexattr(f, "user.empty"), 0);
	CHECK_ERR(getxattr(f, "user.empty", NULL, 0), ENOATTR);
	CHECK_ERR(removexattr(f, "user.empty"), ENODATA);
	CHECK_ERR(setxattr(f, "user.empty", "x", 1, XATTR_REPLACE), ENODATA);

	/* The other namespaces root may use. */
	CHECK_EQ(setxattr(f, "trusted.t", "tv", 2, 0), 0);
	CHECK_EQ(getxattr(f, "trusted.t", buf, sizeof buf), 2);
	CHECK_EQ(setxattr(f, "security.s", "sv", 2, 0), 0);
	CHECK_EQ(getxattr(f, "security.s", buf, sizeof buf), 2);
	CHECK(!memcmp(buf, "sv", 2));
}

static void names(const char *f)
{
	char name[300], buf[16];

	/* 255 bytes is the longest name; empty or longer ones are ERANGE. */
	strcpy(name, "user.");
	memset(name + 5, 'n', 250);
	name[255] = 0;
	CHECK_EQ(setxattr(f, name, "v", 1, 0), 0);
	CHECK_EQ(getxattr(f, name, buf, sizeof buf), 1);
	CHECK_EQ(removexattr(f, name), 0);
	name[255] = 'n';
	name[256] = 0;
	CHECK_ERR(setxattr(f, name, "v", 1, 0), ERANGE);
	CHECK_ERR(getxattr(f, name, buf, sizeof buf), ERANGE);
	CHECK_ERR(removexattr(f, name), ERANGE);
	CHECK_ERR(setxattr(f, "", "v", 1, 0), ERANGE);
	CHECK_ERR(getxattr(f, "", buf, sizeof buf), ERANGE);
	CHECK_ERR(removexattr(f, ""), ERANGE);

	/* No namespace, an unknown one, system.* (no ACLs here): EOPNOTSUPP;
	 * a bare prefix: EINVAL. */
	CHECK_ERR(setxattr(f, "foo", "v", 1, 0), EOPNOTSUPP);
	CHECK_ERR(getxattr(f, "foo", buf, sizeof buf), EOPNOTSUPP);
	CHECK_ERR(removexattr(f, "foo"), EOPNOTSUPP);
	CHECK_ERR(setxattr(f, "user", "v", 1, 0), EOPNOTSUPP);
	CHECK_ERR(setxattr(f, "other.x", "v", 1, 0), EOPNOTSUPP);
	CHECK_ERR(setxattr(f, "USER.x", "v", 1, 0), EOPNOTSUPP);
	CHECK_ERR(setxattr(f, "system.foo", "v", 1, 0), EOPNOTSUPP);
	CHECK_ERR(getxattr(f, "system.foo", buf, sizeof buf), EOPNOTSUPP);
	CHECK_ERR(removexattr(f, "system.foo"), EOPNOTSUPP);
	CHECK_ERR(setxattr(f, "user.", "v", 1, 0), EINVAL);
	CHECK_ERR(getxattr(f, "user.", buf, sizeof buf), EINVAL);
	CHECK_ERR(removexattr(f, "user."), EINVAL);
	CHECK_ERR(setxattr(f, "trusted.", "v", 1, 0), EINVAL);
	CHECK_ERR(setxattr(f, "security.", "v", 1, 0), EINVAL);
	/* A tmpfs with POSIX ACLs has none set (ENODATA); one without
	 * supports none (EOPNOTSUPP). */
	errno = 0;
	CHECK_EQ(getxattr(f, "system.posix_acl_access", buf, sizeof buf), -1);
	CHECK(errno == ENODATA || errno == EOPNOTSUPP);
}

static void sizes(const char *f)
{
	char buf[16];
	int i;

	memset(big, 'b', sizeof big);
	CHECK_ERR(setxattr(f, "user.big", big, 65537, 0), E2BIG);
	CHECK_ERR(syscall(SYS_setxattr, f, "user.big", big, (size_t)-1 >> 1, 0), E2BIG);
	CHECK_EQ(setxattr(f, "user.big", big, 65536, 0), 0);
	CHECK_EQ(getxattr(f, "user.big", NULL, 0), 65536);
	memset(big, 0, sizeof big);
	CHECK_EQ(getxattr(f, "user.big", big, 65536), 65536);
	CHECK_EQ(big[0], 'b');
	CHECK_EQ(big[65535], 'b');
	/* A buffer larger than the largest value is fine. */
	CHECK_EQ(getxattr(f, "user.big", big, sizeof big), 65536);
	CHECK_ERR(getxattr(f, "user.big", buf, sizeof buf), ERANGE);
	CHECK_EQ(setxattr(f, "trusted.big", big, 65536, 0), 0);
	CHECK_EQ(getxattr(f, "trusted.big", NULL, 0), 65536);
	/* Several large values on one inode. */
	for (i = 0; i < 8; i++) {
		char name[32];

		snprintf(name, sizeof name, "user.many%d", i);
		CHECK_EQ(setxattr(f, name, big, 65536, 0), 0);
	}
	for (i = 0; i < 8; i++) {
		char name[32];

		snprintf(name, sizeof name, "user.many%d", i);
		CHECK_EQ(getxattr(f, name, NULL, 0), 65536);
		CHECK_EQ(removexattr(f, name), 0);
	}
	CHECK_EQ(removexattr(f, "user.big"), 0);
	CHECK_EQ(removexattr(f, "trusted.big"), 0);
}

static void listing(const char *dir)
{
	char f[PATH_MAX], l1[512], l2[512], buf[512];
	ssize_t n, len;

	t_join(f, sizeof f, dir, "listed");
	CHECK_EQ(t_write_file(f, "", 0, 0644), 0);
	CHECK_EQ(listxattr(f, NULL, 0), 0);
	CHECK_EQ(listxattr(f, buf, sizeof buf), 0);
	CHECK_EQ(setxattr(f, "user.zz", "1", 1, 0), 0);
	CHECK_EQ(setxattr(f, "trusted.b", "1", 1, 0), 0);
	CHECK_EQ(setxattr(f, "user.aa", "1", 1, 0), 0);
	CHECK_EQ(setxattr(f, "security.c", "1", 1, 0), 0);
	CHECK_EQ(setxattr(f, "user.mm", "1", 1, 0), 0);
	len = (ssize_t)(sizeof "user.zz" + sizeof "trusted.b" + sizeof "user.aa" +
			sizeof "security.c" + sizeof "user.mm");
	CHECK_EQ(listxattr(f, NULL, 0), len);
	CHECK_EQ(listxattr(f, buf, 0), len);
	CHECK_ERR(listxattr(f, buf, 5), ERANGE);
	CHECK_ERR(listxattr(f, buf, len - 1), ERANGE);
	n = listxattr(f, buf, len);
	CHECK_EQ(n, len);
	CHECK(has_name(buf, n, "user.zz"));
	CHECK(has_name(buf, n, "user.aa"));
	CHECK(has_name(buf, n, "user.mm"));
	CHECK(has_name(buf, n, "trusted.b"));
	CHECK(has_name(buf, n, "security.c"));
	/* The order is stable. */
	CHECK_EQ(list_of(f, l1, sizeof l1), len);
	CHECK_EQ(list_of(f, l2, sizeof l2), len);
	CHECK(!strcmp(l1, l2));
	CHECK_EQ(removexattr(f, "user.mm"), 0);
	n = listxattr(f, buf, sizeof buf);
	CHECK_EQ(n, len - (ssize_t)sizeof "user.mm");
	CHECK(!has_name(buf, n, "user.mm"));
	CHECK(has_name(buf, n, "user.zz"));
}

static void links_and_nodes(const char *dir)
{
	char f[PATH_MAX], sl[PATH_MAX], dev[PATH_MAX], fifo[PATH_MAX];
	char sub[PATH_MAX], hard[PATH_MAX], buf[512];
	ssize_t n;

	t_join(f, sizeof f, dir, "target");
	t_join(sl, sizeof sl, dir, "sl");
	t_join(dev, sizeof dev, dir, "dev");
	t_join(fifo, sizeof fifo, dir, "fifo");
	t_join(sub, sizeof sub, dir, "sub");
	t_join(hard, sizeof hard, dir, "hard");
	CHECK_EQ(t_write_file(f, "", 0, 0644), 0);
	CHECK_EQ(symlink("target", sl), 0);
	CHECK_EQ(mknod(dev, S_IFCHR | 0644, makedev(1, 3)), 0);
	CHECK_EQ(mkfifo(fifo, 0644), 0);
	CHECK_EQ(mkdir(sub, 0755), 0);
	CHECK_EQ(link(f, hard), 0);

	/* Following the link reaches the target; not following it, user.*
	 * is refused on the symlink itself, trusted.* works. */
	CHECK_EQ(setxattr(sl, "user.via", "v", 1, 0), 0);
	CHECK_EQ(getxattr(f, "user.via", buf, sizeof buf), 1);
	CHECK_EQ(getxattr(hard, "user.via", buf, sizeof buf), 1);
	CHECK_ERR(lsetxattr(sl, "user.a", "v", 1, 0), EPERM);
	CHECK_ERR(lgetxattr(sl, "user.via", buf, sizeof buf), ENODATA);
	CHECK_ERR(lremovexattr(sl, "user.via"), EPERM);
	CHECK_EQ(llistxattr(sl, buf, sizeof buf), 0);
	CHECK_EQ(lsetxattr(sl, "trusted.l", "lv", 2, 0), 0);
	CHECK_EQ(lgetxattr(sl, "trusted.l", buf, sizeof buf), 2);
	CHECK_ERR(getxattr(sl, "trusted.l", buf, sizeof buf), ENODATA);
	n = llistxattr(sl, buf, sizeof buf);
	CHECK_EQ(n, (ssize_t)sizeof "trusted.l");
	CHECK_EQ(lremovexattr(sl, "trusted.l"), 0);
	CHECK_EQ(llistxattr(sl, NULL, 0), 0);
	/* l* on a non-link is the same as the plain call. */
	CHECK_EQ(lgetxattr(f, "user.via", buf, sizeof buf), 1);
	CHECK_EQ(lremovexattr(hard, "user.via"), 0);
	CHECK_ERR(getxattr(f, "user.via", buf, sizeof buf), ENODATA);

	/* Device nodes and FIFOs: no user.*, but trusted.* works. */
	CHECK_ERR(setxattr(dev, "user.a", "v", 1, 0), EPERM);
	CHECK_ERR(getxattr(dev, "user.a", buf, sizeof buf), ENODATA);
	CHECK_ERR(removexattr(dev, "user.a"), EPERM);
	CHECK_ERR(setxattr(fifo, "user.a", "v", 1, 0), EPERM);
	CHECK_EQ(setxattr(dev, "trusted.d", "v", 1, 0), 0);
	CHECK_EQ(getxattr(dev, "trusted.d", buf, sizeof buf), 1);
	CHECK_EQ(setxattr(fifo, "trusted.d", "v", 1, 0), 0);

	/* Directories take user.*. */
	CHECK_EQ(setxattr(sub, "user.d", "dv", 2, 0), 0);
	CHECK_EQ(getxattr(sub, "user.d", buf, sizeof buf), 2);
	CHECK_EQ(listxattr(sub, NULL, 0), (ssize_t)sizeof "user.d");

	/* Missing files. */
	t_join(buf, sizeof buf, dir, "nonexistent");
	CHECK_ERR(setxattr(buf, "user.a", "v", 1, 0), ENOENT);
	CHECK_ERR(getxattr(buf, "user.a", NULL, 0), ENOENT);
	CHECK_ERR(listxattr(buf, NULL, 0), ENOENT);
	CHECK_ERR(removexattr(buf, "user.a"), ENOENT);
	/* The name is checked before the path is looked up. */
	CHECK_ERR(setxattr(buf, "", "v", 1, 0), ERANGE);
}

static void faults(const char *f)
{
	char buf[64];

	CHECK_EQ(setxattr(f, "user.q", "qq", 2, 0), 0);
	CHECK_ERR(syscall(SYS_setxattr, f, BAD_PTR, "v", 1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_setxattr, f, "user.q", BAD_PTR, 1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_setxattr, f, "user.q", NULL, 5, 0), EFAULT);
	CHECK_ERR(syscall(SYS_setxattr, BAD_PTR, "user.q", "v", 1, 0), EFAULT);
	/* Nothing is read for a zero-size value. */
	CHECK_EQ(syscall(SYS_setxattr, f, "user.q", BAD_PTR, 0, 0), 0);
	CHECK_EQ(setxattr(f, "user.q", "qq", 2, 0), 0);
	CHECK_ERR(syscall(SYS_getxattr, f, BAD_PTR, buf, sizeof buf), EFAULT);
	CHECK_ERR(syscall(SYS_getxattr, f, "user.q", BAD_PTR, 64), EFAULT);
	CHECK_EQ(syscall(SYS_getxattr, f, "user.q", BAD_PTR, 0), 2);
	CHECK_ERR(syscall(SYS_getxattr, f, "user.nosuch", BAD_PTR, 64), ENODATA);
	CHECK_ERR(syscall(SYS_listxattr, f, BAD_PTR, 4096), EFAULT);
	CHECK(syscall(SYS_listxattr, f, BAD_PTR, 0) > 0);
	CHECK_ERR(syscall(SYS_removexattr, f, BAD_PTR), EFAULT);
	CHECK_EQ(getxattr(f, "user.q", buf, sizeof buf), 2);
}

static void descriptors(const char *f)
{
	char buf[512];
	int fd, pfd, p[2], efd;
	ssize_t n;

	/* The f* calls need no write access on the descriptor. */
	fd = open(f, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fsetxattr(fd, "user.fd", "fv", 2, 0), 0);
	CHECK_EQ(fgetxattr(fd, "user.fd", buf, sizeof buf), 2);
	CHECK_EQ(getxattr(f, "user.fd", buf, sizeof buf), 2);
	n = flistxattr(fd, buf, sizeof buf);
	CHECK(n > 0 && has_name(buf, n, "user.fd"));
	CHECK_EQ(flistxattr(fd, NULL, 0), n);
	CHECK_EQ(fremovexattr(fd, "user.fd"), 0);
	CHECK_ERR(fgetxattr(fd, "user.fd", buf, sizeof buf), ENODATA);
	close(fd);

	/* O_PATH descriptors and bad ones are EBADF. */
	pfd = open(f, O_PATH);
	CHECK(pfd >= 0);
	CHECK_ERR(fsetxattr(pfd, "user.fd", "v", 1, 0), EBADF);
	CHECK_ERR(fgetxattr(pfd, "user.q", buf, sizeof buf), EBADF);
	CHECK_ERR(flistxattr(pfd, buf, sizeof buf), EBADF);
	CHECK_ERR(fremovexattr(pfd, "user.q"), EBADF);
	close(pfd);
	CHECK_ERR(fgetxattr(999, "user.q", buf, sizeof buf), EBADF);
	CHECK_ERR(fgetxattr(-1, "user.q", buf, sizeof buf), EBADF);
	CHECK_ERR(flistxattr(999, buf, sizeof buf), EBADF);
	CHECK_ERR(fremovexattr(999, "user.q"), EBADF);
	CHECK_ERR(fsetxattr(999, "user.q", "v", 1, 0), EBADF);
	/* Flags and name are checked before the descriptor. */
	CHECK_ERR(fsetxattr(999, "user.q", "v", 1, 77), EINVAL);
	CHECK_ERR(fsetxattr(999, "", "v", 1, 0), ERANGE);
	CHECK_ERR(fgetxattr(999, "", buf, sizeof buf), ERANGE);
	CHECK_ERR(fsetxattr(999, "user.q", big, 65537, 0), E2BIG);

	/* A pipe and an eventfd: no user.* (they are neither regular files
	 * nor directories), nothing else stored, an empty list. */
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(fsetxattr(p[0], "user.a", "v", 1, 0), EPERM);
	CHECK_ERR(fgetxattr(p[0], "user.a", buf, sizeof buf), ENODATA);
	CHECK_ERR(fremovexattr(p[0], "user.a"), EPERM);
	CHECK_EQ(flistxattr(p[0], buf, sizeof buf), 0);
	CHECK_ERR(fgetxattr(p[1], "trusted.a", buf, sizeof buf), EOPNOTSUPP);
	close(p[0]);
	close(p[1]);
	efd = eventfd(0, 0);
	CHECK(efd >= 0);
	CHECK_ERR(fsetxattr(efd, "user.a", "v", 1, 0), EPERM);
	CHECK_ERR(fgetxattr(efd, "user.a", buf, sizeof buf), ENODATA);
	CHECK_EQ(flistxattr(efd, buf, sizeof buf), 0);
	close(efd);
}

static void other_filesystems(void)
{
	char buf[64];

	/* procfs keeps no attributes. */
	CHECK_ERR(getxattr("/proc/self/status", "user.a", buf, sizeof buf),
		  EOPNOTSUPP);
	CHECK_ERR(getxattr("/proc/self/status", "trusted.a", buf, sizeof buf),
		  EOPNOTSUPP);
	CHECK_ERR(setxattr("/proc/self/status", "user.a", "v", 1, 0),
		  EOPNOTSUPP);
	CHECK_ERR(getxattr("/proc", "user.a", buf, sizeof buf), EOPNOTSUPP);
	CHECK_EQ(listxattr("/proc/self/status", buf, sizeof buf), 0);
	CHECK_EQ(listxattr("/proc", NULL, 0), 0);
	/* devtmpfs: a device node has no user.* attributes. */
	CHECK_ERR(getxattr("/dev/null", "user.a", buf, sizeof buf), ENODATA);
}

static void ctime_changes(const char *f)
{
	struct stat a, b;

	CHECK_EQ(stat(f, &a), 0);
	t_sleep_ns(20000000L);
	CHECK_EQ(setxattr(f, "user.t", "1", 1, 0), 0);
	CHECK_EQ(stat(f, &b), 0);
	CHECK(b.st_ctim.tv_sec != a.st_ctim.tv_sec ||
	      b.st_ctim.tv_nsec != a.st_ctim.tv_nsec);
	CHECK(b.st_mtim.tv_sec == a.st_mtim.tv_sec &&
	      b.st_mtim.tv_nsec == a.st_mtim.tv_nsec);
	t_sleep_ns(20000000L);
	CHECK_EQ(getxattr(f, "user.t", NULL, 0), 1);
	CHECK_ERR(removexattr(f, "user.none"), ENODATA);
	CHECK_EQ(stat(f, &a), 0);
	CHECK(a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
	      a.st_ctim.tv_nsec == b.st_ctim.tv_nsec);
	t_sleep_ns(20000000L);
	CHECK_EQ(removexattr(f, "user.t"), 0);
	CHECK_EQ(stat(f, &b), 0);
	CHECK(b.st_ctim.tv_sec != a.st_ctim.tv_sec ||
	      b.st_ctim.tv_nsec != a.st_ctim.tv_nsec);
}

static void read_only(const char *dir)
{
	char ro[PATH_MAX], buf[16];
	int fd;

	t_join(ro, sizeof ro, dir, "ro");
	CHECK_EQ(mkdir(ro, 0755), 0);
	if (mount("none", ro, "tmpfs", MS_RDONLY, "size=64k") != 0) {
		t_printf("  note: no read-only tmpfs (errno=%d)\n", errno);
		return;
	}
	CHECK_ERR(setxattr(ro, "user.x", "1", 1, 0), EROFS);
	CHECK_ERR(setxattr(ro, "trusted.x", "1", 1, 0), EROFS);
	/* EROFS comes before the name's namespace is looked at. */
	CHECK_ERR(setxattr(ro, "foo", "1", 1, 0), EROFS);
	CHECK_ERR(removexattr(ro, "user.x"), EROFS);
	CHECK_ERR(getxattr(ro, "user.x", buf, sizeof buf), ENODATA);
	CHECK_EQ(listxattr(ro, buf, sizeof buf), 0);
	fd = open(ro, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_ERR(fsetxattr(fd, "user.x", "1", 1, 0), EROFS);
	close(fd);
	CHECK_EQ(umount(ro), 0);
}

/* An unprivileged caller: permission bits, trusted.* hidden, security.*
 * read-only, the sticky directory rule. */
static void unprivileged(const char *dir)
{
	char mine[PATH_MAX], other[PATH_MAX], noperm[PATH_MAX];
	char sticky[PATH_MAX], plain[PATH_MAX];
	pid_t pid;

	t_join(mine, sizeof mine, dir, "mine");
	t_join(other, sizeof other, dir, "other");
	t_join(noperm, sizeof noperm, dir, "noperm");
	t_join(sticky, sizeof sticky, dir, "sticky");
	t_join(plain, sizeof plain, dir, "plain");
	CHECK_EQ(t_write_file(mine, "", 0, 0644), 0);
	CHECK_EQ(chown(mine, 65534, 65534), 0);
	CHECK_EQ(t_write_file(other, "", 0, 0644), 0);
	CHECK_EQ(t_write_file(noperm, "", 0, 0644), 0);
	CHECK_EQ(mkdir(sticky, 0777), 0);
	CHECK_EQ(chmod(sticky, 01777), 0);
	CHECK_EQ(mkdir(plain, 0777), 0);
	CHECK_EQ(chmod(plain, 0777), 0);
	CHECK_EQ(setxattr(other, "user.o", "o", 1, 0), 0);
	CHECK_EQ(setxattr(other, "trusted.o", "o", 1, 0), 0);
	CHECK_EQ(setxattr(other, "security.o", "o", 1, 0), 0);
	CHECK_EQ(setxattr(noperm, "user.n", "n", 1, 0), 0);
	CHECK_EQ(setxattr(noperm, "trusted.n", "n", 1, 0), 0);
	CHECK_EQ(setxattr(noperm, "security.n", "n", 1, 0), 0);
	CHECK_EQ(chmod(noperm, 0), 0);
	CHECK_EQ(setxattr(sticky, "user.s", "s", 1, 0), 0);

	pid = fork();
	if (pid == 0) {
		char buf[256];
		ssize_t n;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		/* Own file: user.* yes, trusted.* and security.* no. */
		CHECK_EQ(setxattr(mine, "user.m", "m", 1, 0), 0);
		CHECK_EQ(getxattr(mine, "user.m", buf, sizeof buf), 1);
		CHECK_ERR(setxattr(mine, "trusted.m", "m", 1, 0), EPERM);
		CHECK_ERR(setxattr(mine, "security.m", "m", 1, 0), EPERM);
		CHECK_EQ(removexattr(mine, "user.m"), 0);

		/* Someone else's 0644 file: read yes, write no. */
		CHECK_EQ(getxattr(other, "user.o", buf, sizeof buf), 1);
		CHECK_ERR(getxattr(other, "user.none", buf, sizeof buf), ENODATA);
		CHECK_ERR(setxattr(other, "user.x", "x", 1, 0), EACCES);
		CHECK_ERR(removexattr(other, "user.o"), EACCES);
		CHECK_ERR(getxattr(other, "trusted.o", buf, sizeof buf), ENODATA);
		CHECK_ERR(getxattr(other, "trusted.none", buf, sizeof buf),
			  ENODATA);
		CHECK_ERR(setxattr(other, "trusted.o", "x", 1, 0), EPERM);
		CHECK_ERR(removexattr(other, "trusted.o"), EPERM);
		CHECK_EQ(getxattr(other, "security.o", buf, sizeof buf), 1);
		CHECK_ERR(removexattr(other, "security.o"), EPERM);
		/* security.* and system.* need no permission on the file;
		 * other names do. */
		CHECK_ERR(setxattr(other, "system.foo", "x", 1, 0), EOPNOTSUPP);
		CHECK_ERR(setxattr(other, "foo", "x", 1, 0), EACCES);
		CHECK_ERR(getxattr(other, "foo", buf, sizeof buf), EOPNOTSUPP);
		CHECK_ERR(getxattr(other, "system.foo", buf, sizeof buf),
			  EOPNOTSUPP);
		/* trusted.* is left out of the listing. */
		n = listxattr(other, buf, sizeof buf);
		CHECK_EQ(n, (ssize_t)(sizeof "user.o" + sizeof "security.o"));
		CHECK(n > 0 && !has_name(buf, n, "trusted.o"));
		CHECK(n > 0 && has_name(buf, n, "user.o"));

		/* Mode 000: no get or set, but listing needs no permission. */
		CHECK_ERR(getxattr(noperm, "user.n", buf, sizeof buf), EACCES);
		CHECK_ERR(getxattr(noperm, "user.none", buf, sizeof buf), EACCES);
		CHECK_ERR(setxattr(noperm, "user.n", "x", 1, 0), EACCES);
		CHECK_ERR(getxattr(noperm, "trusted.n", buf, sizeof buf), ENODATA);
		CHECK_EQ(getxattr(noperm, "security.n", buf, sizeof buf), 1);
		CHECK_ERR(getxattr(noperm, "security.none", buf, sizeof buf),
			  ENODATA);
		CHECK_EQ(listxattr(noperm, buf, sizeof buf),
			 (ssize_t)(sizeof "user.n" + sizeof "security.n"));

		/* A sticky directory's user.* belongs to its owner; a plain
		 * writable one's to anyone who may write. */
		CHECK_ERR(setxattr(sticky, "user.y", "y", 1, 0), EPERM);
		CHECK_ERR(removexattr(sticky, "user.s"), EPERM);
		CHECK_EQ(getxattr(sticky, "user.s", buf, sizeof buf), 1);
		CHECK_EQ(setxattr(plain, "user.y", "y", 1, 0), 0);
		CHECK_EQ(removexattr(plain, "user.y"), 0);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
}

int main(void)
{
	char dir[PATH_MAX], mnt[PATH_MAX], f[PATH_MAX];

	if (!t_is_root())
		SKIP("mounts a tmpfs: needs root");
	if (t_mktmp("vfs_xattr", dir, sizeof dir) != 0)
		DONE();
	t_join(mnt, sizeof mnt, dir, "mnt");
	CHECK_EQ(mkdir(mnt, 0755), 0);
	if (mount("none", mnt, "tmpfs", 0, "size=4m") != 0) {
		t_rmtree(dir);
		SKIP("cannot mount tmpfs (errno=%d)", errno);
	}
	t_join(f, sizeof f, mnt, "file");
	CHECK_EQ(t_write_file(f, "data", 4, 0644), 0);

	basics(f);
	names(f);
	sizes(f);
	listing(mnt);
	links_and_nodes(mnt);
	faults(f);
	descriptors(f);
	other_filesystems();
	ctime_changes(f);
	read_only(mnt);
	unprivileged(mnt);

	CHECK_EQ(umount(mnt), 0);
	t_rmtree(dir);
	DONE();
}
