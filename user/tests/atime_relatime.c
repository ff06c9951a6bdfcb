/*
 * Access times, relatime style (mount(8)): a read moves atime to now when
 * it is not newer than mtime or ctime (or is a day old), and leaves a
 * newer atime alone; writes move mtime and ctime.
 */
#include "t.h"

int main(void)
{
	char path[128], buf[8];
	struct stat st, st2;
	struct timespec ts[2];
	int fd;

	snprintf(path, sizeof path, "/dev/shm/atime_relatime.%d", getpid());
	CHECK_EQ(t_write_file(path, "data", 4, 0644), 0);
	CHECK_EQ(stat(path, &st), 0);

	/* atime older than mtime: a read updates it. */
	ts[0].tv_sec = st.st_mtime - 1000;
	ts[0].tv_nsec = 0;
	ts[1].tv_sec = 0;
	ts[1].tv_nsec = UTIME_OMIT;
	CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_atime, st.st_mtime - 1000);
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 4);
	CHECK_EQ(stat(path, &st2), 0);
	CHECK(st2.st_atime >= st2.st_mtime);

	/* atime newer than mtime and ctime, and recent: a read keeps it. */
	CHECK_EQ(stat(path, &st), 0);
	ts[0].tv_sec = st.st_ctime + 100;
	ts[0].tv_nsec = 5;
	CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 4);
	CHECK_EQ(stat(path, &st2), 0);
	CHECK_EQ(st2.st_atime, st.st_ctime + 100);
	CHECK_EQ(st2.st_atim.tv_nsec, 5);

	/* A write moves mtime, not atime. */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	ts[0].tv_sec = 1000;
	ts[0].tv_nsec = 0;
	ts[1].tv_sec = 1000;
	ts[1].tv_nsec = 0;
	CHECK_EQ(futimens(fd, ts), 0);
	CHECK_EQ(write(fd, "x", 1), 1);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(st.st_mtime > 1000);
	CHECK_EQ(st.st_atime, 1000);
	close(fd);

	/* A day-old atime moves even when newer than mtime. */
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = 1000;
	ts[1].tv_nsec = 0;
	CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
	ts[0].tv_sec = 2000;
	ts[0].tv_nsec = 0;
	ts[1].tv_nsec = UTIME_OMIT;
	CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
	CHECK_EQ(stat(path, &st), 0);
	/* ctime is now, newer than atime 2000: the read moves atime anyway. */
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 5);
	CHECK_EQ(stat(path, &st2), 0);
	CHECK(st2.st_atime > 2000);

	unlink(path);
	DONE();
}
