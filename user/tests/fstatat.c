/* newfstatat (fstatat): dirfd-relative stat, AT_EMPTY_PATH, flags, errors. */
#include "t.h"

static long fstatat_raw(int dfd, const char *p, struct stat *st, int flags)
{
	return syscall(SYS_newfstatat, dfd, p, st, flags);
}

int main(void)
{
	char dir[128], path[256];
	struct stat st, ref;
	int dfd, fd;

	if (t_mktmp("fstatat", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "1234567", 7, 0644), 0);
	CHECK_EQ(stat(path, &ref), 0);

	/* Paths of every length around the kernel's first 64-byte read of a
	 * path, and a long one: the same file (and unlink/mkdir of such a
	 * path work). */
	{
		static const int lens[] = { 62, 63, 64, 65, 66, 127, 128, 300 };
		char lp[400];
		for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
			int want = lens[i];
			size_t n = (size_t)snprintf(lp, sizeof lp, "%s/", dir);
			if ((int)n + 1 > want)
				continue;
			while ((int)n + 1 < want) {
				if (want - 1 - (int)n >= 2) {
					memcpy(lp + n, "./", 2);
					n += 2;
				} else {
					lp[n++] = '/';
				}
			}
			lp[n++] = 'f';
			lp[n] = 0;
			CHECK_EQ((int)strlen(lp), want);
			memset(&st, 0, sizeof st);
			CHECK_EQ(stat(lp, &st), 0);
			CHECK_EQ(st.st_ino, ref.st_ino);
			lp[n - 1] = 'g';
			CHECK_EQ(mkdir(lp, 0755), 0);
			CHECK_EQ(stat(lp, &st), 0);
			CHECK(S_ISDIR(st.st_mode));
			CHECK_EQ(rmdir(lp), 0);
			CHECK_EQ(t_write_file(lp, "x", 1, 0644), 0);
			CHECK_EQ(unlink(lp), 0);
			CHECK_ERR(stat(lp, &st), ENOENT);
		}
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);

	/* Relative to a directory fd. */
	CHECK_EQ(fstatat_raw(dfd, "f", &st, 0), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);
	CHECK_EQ(st.st_size, 7);
	CHECK_EQ(fstatat(dfd, "f", &st, 0), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);

	/* AT_SYMLINK_NOFOLLOW on a regular file changes nothing. */
	CHECK_EQ(fstatat_raw(dfd, "f", &st, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);

	/* AT_FDCWD with an absolute and with a relative path. */
	CHECK_EQ(fstatat_raw(AT_FDCWD, path, &st, 0), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(fstatat_raw(AT_FDCWD, "f", &st, 0), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);
	CHECK_EQ(chdir("/"), 0);

	/* Absolute path ignores dirfd. */
	CHECK_EQ(fstatat_raw(999, path, &st, 0), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);

	/* AT_EMPTY_PATH with "" stats the fd itself. */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fstatat_raw(fd, "", &st, AT_EMPTY_PATH), 0);
	CHECK_EQ(st.st_ino, ref.st_ino);
	CHECK_EQ(fstatat_raw(dfd, "", &st, AT_EMPTY_PATH), 0);
	CHECK(S_ISDIR(st.st_mode));

	/* "" without AT_EMPTY_PATH is ENOENT. */
	CHECK_ERR(fstatat_raw(dfd, "", &st, 0), ENOENT);

	/* ENOENT / ENOTDIR relative to dirfd. */
	CHECK_ERR(fstatat_raw(dfd, "missing", &st, 0), ENOENT);
	CHECK_ERR(fstatat_raw(dfd, "f/x", &st, 0), ENOTDIR);

	/* ENOTDIR: relative path with a non-directory dirfd. */
	CHECK_ERR(fstatat_raw(fd, "x", &st, 0), ENOTDIR);

	/* EBADF: relative path with an invalid dirfd. */
	CHECK_ERR(fstatat_raw(-1, "f", &st, 0), EBADF);
	CHECK_ERR(fstatat_raw(999, "f", &st, 0), EBADF);

	/* EINVAL: unknown flag bits. */
	CHECK_ERR(fstatat_raw(dfd, "f", &st, 0x40000000), EINVAL);

	/* EFAULT: bad path or buffer. */
	CHECK_ERR(fstatat_raw(dfd, BAD_PTR, &st, 0), EFAULT);
	CHECK_ERR(fstatat_raw(dfd, "f", BAD_PTR2, 0), EFAULT);

	CHECK_EQ(close(fd), 0);
	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
