/* utimensat/futimens: explicit times, UTIME_NOW, UTIME_OMIT, NULL (now),
 * AT_SYMLINK_NOFOLLOW on a link, nanoseconds kept, ctime updated, EINVAL
 * for bad nanoseconds or flags, utimensat(fd, NULL, ...). */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX];
	struct timespec ts[2];
	struct stat st, sl;
	long long now;
	int fd;

	if (t_mktmp("vfs_utimensat", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(t_write_file("f", "x", 1, 0644), 0);
	CHECK_EQ(symlink("f", "l"), 0);

	ts[0].tv_sec = 1000000000;
	ts[0].tv_nsec = 123456789;
	ts[1].tv_sec = 1100000000;
	ts[1].tv_nsec = 987654321;
	CHECK_EQ(utimensat(AT_FDCWD, "f", ts, 0), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_atim.tv_sec, 1000000000);
	CHECK_EQ(st.st_atim.tv_nsec, 123456789);
	CHECK_EQ(st.st_mtim.tv_sec, 1100000000);
	CHECK_EQ(st.st_mtim.tv_nsec, 987654321);

	/* UTIME_OMIT keeps, UTIME_NOW sets the current time. */
	now = t_now_ns(CLOCK_REALTIME);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_nsec = UTIME_NOW;
	CHECK_EQ(utimensat(AT_FDCWD, "f", ts, 0), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_atim.tv_sec, 1000000000);
	CHECK(st.st_mtim.tv_sec >= now / 1000000000LL - 1);

	/* NULL: both now. */
	CHECK_EQ(utimensat(AT_FDCWD, "f", NULL, 0), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK(st.st_atim.tv_sec >= now / 1000000000LL - 1);
	CHECK(st.st_ctim.tv_sec >= now / 1000000000LL - 1);

	/* The link itself. */
	ts[0].tv_sec = 5;
	ts[0].tv_nsec = 0;
	ts[1].tv_sec = 6;
	ts[1].tv_nsec = 0;
	CHECK_EQ(utimensat(AT_FDCWD, "l", ts, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_EQ(lstat("l", &sl), 0);
	CHECK_EQ(sl.st_mtim.tv_sec, 6);
	CHECK_EQ(stat("f", &st), 0);
	CHECK(st.st_mtim.tv_sec != 6);

	/* futimens, and utimensat with a NULL path and an fd. */
	fd = open("f", O_RDONLY);
	ts[1].tv_sec = 77;
	CHECK_EQ(futimens(fd, ts), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_mtim.tv_sec, 77);
	ts[1].tv_sec = 78;
	CHECK_EQ(syscall(SYS_utimensat, fd, NULL, ts, 0), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_mtim.tv_sec, 78);

	/* Errors. */
	ts[0].tv_nsec = 1000000000;
	CHECK_ERR(utimensat(AT_FDCWD, "f", ts, 0), EINVAL);
	ts[0].tv_nsec = -5;
	CHECK_ERR(utimensat(AT_FDCWD, "f", ts, 0), EINVAL);
	ts[0].tv_nsec = 0;
	CHECK_ERR(utimensat(AT_FDCWD, "f", ts, 0x4000), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "nope", ts, 0), ENOENT);
	CHECK_ERR(syscall(SYS_utimensat, AT_FDCWD, "f", BAD_PTR2, 0), EFAULT);
	close(fd);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
