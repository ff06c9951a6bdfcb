/* When a read moves the access time: not through a descriptor opened with
 * O_NOATIME (or given it by F_SETFL), never on a noatime mount, always on
 * a strictatime one, by relatime's rule otherwise (the default); mmap is a
 * read (Linux's file_accessed); on tmpfs even a read of 0 bytes or at the
 * end of the file is one (shmem_file_read_iter). */
#include "next.h"
#include <sys/mman.h>
#include <sys/mount.h>

/* Sets atime to mtime - 1000 s (stale for relatime). */
static void make_stale(const char *path)
{
	struct stat st;
	struct timespec ts[2] = { { 0, 0 }, { 0, UTIME_OMIT } };

	CHECK_EQ(stat(path, &st), 0);
	ts[0].tv_sec = st.st_mtime - 1000;
	CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Sets atime to 100 s after ctime (recent and newer: relatime keeps it). */
static time_t make_fresh(const char *path)
{
	struct stat st;
	struct timespec ts[2] = { { 0, 0 }, { 0, UTIME_OMIT } };

	CHECK_EQ(stat(path, &st), 0);
	ts[0].tv_sec = st.st_ctime + 100;
	CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
	return ts[0].tv_sec;
}

static time_t atime_of(const char *path)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	return st.st_atime;
}

static time_t mtime_of(const char *path)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	return st.st_mtime;
}

static void read_with(const char *path, int flags)
{
	char buf[8];
	int fd = open(path, O_RDONLY | flags);

	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 4);
	close(fd);
}

int main(void)
{
	char dir[128], path[192], buf[8];
	int mounted, fd;
	time_t fresh;
	void *p;

	mounted = t_tmpfs_scratch("vfs_noatime", dir, sizeof dir);
	if (mounted < 0)
		SKIP("no tmpfs scratch directory");
	snprintf(path, sizeof path, "%s/f", dir);
	CHECK_EQ(t_write_file(path, "data", 4, 0644), 0);

	/* Default (relatime): a stale atime moves on a read. */
	make_stale(path);
	read_with(path, 0);
	CHECK(atime_of(path) >= mtime_of(path));

	/* O_NOATIME: it does not. */
	make_stale(path);
	read_with(path, O_NOATIME);
	CHECK_EQ(atime_of(path), mtime_of(path) - 1000);

	/* ... nor after F_SETFL gives a descriptor O_NOATIME. */
	make_stale(path);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_SETFL, O_NOATIME), 0);
	CHECK_EQ(pread(fd, buf, sizeof buf, 0), 4);
	CHECK_EQ(atime_of(path), mtime_of(path) - 1000);
	/* Without it again, a read of 0 bytes is an access on tmpfs... */
	CHECK_EQ(fcntl(fd, F_SETFL, 0), 0);
	CHECK_EQ(read(fd, buf, 0), 0);
	CHECK(atime_of(path) >= mtime_of(path));
	/* ... and so is a read at the end of the file. */
	make_stale(path);
	CHECK_EQ(pread(fd, buf, sizeof buf, 100), 0);
	CHECK(atime_of(path) >= mtime_of(path));
	close(fd);

	/* mmap is a read. */
	make_stale(path);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(atime_of(path) >= mtime_of(path));
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(fd);

	/* Relatime keeps a recent atime newer than mtime and ctime. */
	fresh = make_fresh(path);
	read_with(path, 0);
	CHECK_EQ(atime_of(path), fresh);

	if (mounted == 1) {
		/* strictatime: every read moves it. */
		CHECK_EQ(mount(NULL, dir, NULL, MS_REMOUNT | MS_STRICTATIME, NULL), 0);
		fresh = make_fresh(path);
		read_with(path, 0);
		CHECK(atime_of(path) != fresh);
		/* noatime: no read moves it. */
		CHECK_EQ(mount(NULL, dir, NULL, MS_REMOUNT | MS_NOATIME, NULL), 0);
		make_stale(path);
		read_with(path, 0);
		CHECK_EQ(atime_of(path), mtime_of(path) - 1000);
		t_umount(dir);
	} else {
		t_note("not root: the mount atime flags are not checked");
	}
	unlink(path);
	rmdir(dir);
	DONE();
}
