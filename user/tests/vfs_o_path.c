/* O_PATH descriptors: usable as dirfds, with fstat, fchdir and
 * AT_EMPTY_PATH; not for I/O (EBADF); O_PATH|O_NOFOLLOW opens the link
 * itself; flags reported by F_GETFL; no permission needed to open. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[64];
	struct stat st;
	int pd, pf, pl, fd;

	if (t_mktmp("vfs_o_path", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_EQ(t_write_file("d/f", "data", 4, 0644), 0);
	CHECK_EQ(symlink("d/f", "lnk"), 0);

	pd = open("d", O_PATH | O_DIRECTORY);
	CHECK(pd >= 0);
	CHECK_EQ(fcntl(pd, F_GETFL) & O_PATH, O_PATH);
	/* As a dirfd. */
	fd = openat(pd, "f", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 4);
	close(fd);
	CHECK_EQ(fstatat(pd, "f", &st, 0), 0);
	CHECK_EQ(st.st_size, 4);
	/* No I/O. */
	CHECK_ERR(read(pd, buf, 1), EBADF);
	CHECK_ERR(syscall(SYS_getdents64, pd, buf, sizeof buf), EBADF);

	pf = open("d/f", O_PATH);
	CHECK(pf >= 0);
	CHECK_ERR(read(pf, buf, 1), EBADF);
	CHECK_ERR(write(pf, "x", 1), EBADF);
	/* Raw: musl's fchmod falls back to /proc/self/fd on EBADF. */
	CHECK_ERR(syscall(SYS_fchmod, pf, 0600), EBADF);
	CHECK_ERR(ioctl(pf, FIONREAD, &fd), EBADF);
	CHECK_EQ(fstat(pf, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 4);
	CHECK_EQ(fstatat(pf, "", &st, AT_EMPTY_PATH), 0);
	CHECK_EQ(st.st_size, 4);
	/* fstatat without AT_EMPTY_PATH on "" is ENOENT. */
	CHECK_ERR(fstatat(pf, "", &st, 0), ENOENT);
	/* Re-open through /proc/self/fd. */
	{
		char p[64];

		snprintf(p, sizeof p, "/proc/self/fd/%d", pf);
		fd = open(p, O_RDONLY);
		if (fd >= 0) {
			CHECK_EQ(read(fd, buf, sizeof buf), 4);
			close(fd);
		} else {
			t_note("no /proc/self/fd: reopen not checked");
		}
	}
	/* Close-on-exec and dup work. */
	fd = dup(pf);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
	close(fd);

	/* The link itself. */
	pl = open("lnk", O_PATH | O_NOFOLLOW);
	CHECK(pl >= 0);
	CHECK_EQ(fstat(pl, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	{
		ssize_t n = readlinkat(pl, "", buf, sizeof buf);

		CHECK_EQ(n, 3);
		CHECK(n == 3 && memcmp(buf, "d/f", 3) == 0);
	}
	/* Without O_NOFOLLOW it is the target. */
	fd = open("lnk", O_PATH);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	close(fd);

	/* fchdir through an O_PATH directory. */
	CHECK_EQ(fchdir(pd), 0);
	CHECK_EQ(access("f", F_OK), 0);
	CHECK_EQ(chdir(dir), 0);

	/* O_PATH ignores other flags except O_DIRECTORY/O_NOFOLLOW/O_CLOEXEC. */
	fd = open("d/f", O_PATH | O_RDWR | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ(stat("d/f", &st), 0);
	CHECK_EQ(st.st_size, 4); /* not truncated */
	close(fd);
	CHECK_ERR(open("d/f", O_PATH | O_DIRECTORY), ENOTDIR);

	/* No read permission needed (just search on the path). */
	CHECK_EQ(chmod("d/f", 0), 0);
	{
		pid_t pid = fork();

		if (pid == 0) {
			if (t_is_root() && setresuid(65534, 65534, 65534))
				_exit(10);
			fd = open("d/f", O_PATH);
			_exit(fd >= 0 ? 0 : 1);
		}
		CHECK(t_wait_ok(pid));
	}
	close(pd);
	close(pf);
	close(pl);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
