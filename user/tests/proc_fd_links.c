/*
 * /proc/self/fd and /proc/self/fdinfo: a link per open descriptor naming
 * the path it was opened with (" (deleted)" once unlinked), its mode
 * showing the access mode, and fdinfo with the position and flags.
 */
#include "t.h"

static int has_entry(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, name) == 0)
			found = 1;
	closedir(d);
	return found;
}

int main(void)
{
	char dir[128], file[256], link[512], want[600], fdpath[64], buf[512];
	struct stat st;
	int fd, wfd, dfd, n;

	if (t_mktmp("proc_fd_links", dir, sizeof dir))
		DONE();
	t_join(file, sizeof file, dir, "data");
	CHECK_EQ(t_write_file(file, "0123456789", 10, 0644), 0);

	fd = open(file, O_RDONLY);
	CHECK(fd >= 0);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	n = readlink(fdpath, link, sizeof link - 1);
	CHECK_EQ(n, (long)strlen(file));
	if (n > 0) {
		link[n] = 0;
		CHECK(strcmp(link, file) == 0);
	}
	/* A read-only descriptor's link is lr-x------. */
	CHECK_EQ(lstat(fdpath, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0500);
	snprintf(buf, sizeof buf, "%d", fd);
	CHECK_EQ(has_entry("/proc/self/fd", buf), 1);
	CHECK_EQ(has_entry("/proc/self/fdinfo", buf), 1);

	/* Following the link reaches the file. */
	CHECK_EQ(stat(fdpath, &st), 0);
	{
		struct stat st2;
		CHECK_EQ(fstat(fd, &st2), 0);
		CHECK_EQ(st.st_ino, st2.st_ino);
	}

	/* fdinfo: position and flags (octal, with O_CLOEXEC when set). */
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fdinfo/%d", fd);
	CHECK(t_read_file(fdpath, buf, sizeof buf) > 0);
	CHECK(strncmp(buf, "pos:\t3\n", 7) == 0);
	CHECK(strstr(buf, "\nflags:\t") != NULL);

	/* A write-only descriptor: l-wx------; O_RDWR: lrwx------. */
	wfd = open(file, O_WRONLY | O_CLOEXEC);
	CHECK(wfd >= 0);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", wfd);
	CHECK_EQ(lstat(fdpath, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0300);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fdinfo/%d", wfd);
	CHECK(t_read_file(fdpath, buf, sizeof buf) > 0);
	{
		char *f = strstr(buf, "flags:\t");
		unsigned long flags = f ? strtoul(f + 7, NULL, 8) : 0;
		CHECK(f != NULL);
		CHECK(flags & O_CLOEXEC);
		CHECK_EQ(flags & O_ACCMODE, O_WRONLY);
	}

	/* A directory descriptor names the directory. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", dfd);
	n = readlink(fdpath, link, sizeof link - 1);
	CHECK_EQ(n, (long)strlen(dir));
	CHECK(n > 0 && memcmp(link, dir, (size_t)n) == 0);

	/* Once unlinked, the name gets " (deleted)". */
	CHECK_EQ(unlink(file), 0);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	n = readlink(fdpath, link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		snprintf(want, sizeof want, "%s (deleted)", file);
		CHECK(strcmp(link, want) == 0);
	}

	/* A closed descriptor has no entry (a high one, which opendir will
	 * not reuse). */
	CHECK_EQ(dup2(fd, 200), 200);
	CHECK_EQ(has_entry("/proc/self/fd", "200"), 1);
	CHECK_EQ(close(200), 0);
	CHECK_EQ(has_entry("/proc/self/fd", "200"), 0);
	CHECK_EQ(close(fd), 0);
	CHECK_ERR(readlink(fdpath, link, sizeof link), ENOENT);
	CHECK_ERR(open("/proc/self/fd/99999", O_RDONLY), ENOENT);

	/* A child sees its parent's descriptors through /proc/<ppid>/fd. */
	{
		pid_t child = fork();
		if (child == 0) {
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/fd/%d", getppid(), dfd);
			n = readlink(p, link, sizeof link - 1);
			CHECK_EQ(n, (long)strlen(dir));
			if (n < 0)
				t_printf("  readlink %s: %s\n", p, strerror(errno));
			CHILD_DONE();
		}
		CHECK(t_wait_ok(child));
	}
	close(wfd);
	close(dfd);
	t_rmtree(dir);
	DONE();
}
