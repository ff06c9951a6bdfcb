/* /proc/self and friends: self and thread-self links, exe, cwd, root, the
 * fd directory (entries appear and vanish, links name the files), and
 * reopening through /proc/self/fd/N. */
#include "next.h"

int main(int argc, char **argv)
{
	char buf[PATH_MAX], self[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n;
	int fd, fd2;
	DIR *d;
	struct dirent *de;
	int seen0 = 0, seenfd = 0;

	(void)argc;
	n = readlink("/proc/self", buf, sizeof buf - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK_EQ(atoi(buf), getpid());
	n = readlink("/proc/thread-self", buf, sizeof buf - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof path, "%d/task/%d", (int)getpid(), (int)getpid());
	CHECK(strcmp(buf, path) == 0);

	/* exe is our binary. */
	t_self_path(argv[0], self, sizeof self);
	n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	{
		struct stat a, b;

		CHECK_EQ(stat(buf, &a), 0);
		CHECK_EQ(stat(self, &b), 0);
		CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	}

	/* cwd and root. */
	if (t_mktmp("procfs_self", dir, sizeof dir) != 0)
		DONE();
	CHECK_EQ(chdir(dir), 0);
	n = readlink("/proc/self/cwd", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strcmp(buf, dir) == 0);
	n = readlink("/proc/self/root", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strcmp(buf, "/") == 0);
	/* Following the links works. */
	CHECK_EQ(t_write_file("here", "h", 1, 0644), 0);
	CHECK_EQ(access("/proc/self/cwd/here", F_OK), 0);

	/* fd directory. */
	fd = open("here", O_RDONLY);
	d = opendir("/proc/self/fd");
	CHECK(d != NULL);
	while (d && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, "0"))
			seen0 = 1;
		if (atoi(de->d_name) == fd && de->d_name[0] != '.')
			seenfd = 1;
	}
	if (d)
		closedir(d);
	CHECK(seen0);
	CHECK(seenfd);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	n = readlink(path, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	{
		char want[PATH_MAX + 8];

		t_join(want, sizeof want, dir, "here");
		CHECK(strcmp(buf, want) == 0);
	}
	/* Reopen: a new open file description. */
	fd2 = open(path, O_RDONLY);
	CHECK(fd2 >= 0);
	CHECK_EQ(lseek(fd, 1, SEEK_SET), 1);
	CHECK_EQ(lseek(fd2, 0, SEEK_CUR), 0);
	close(fd2);
	/* Pipes show as pipe:[inode]. */
	{
		int p[2];

		CHECK_EQ(pipe(p), 0);
		snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
		n = readlink(path, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = 0;
		CHECK(strncmp(buf, "pipe:[", 6) == 0);
		close(p[0]);
		close(p[1]);
	}
	/* A closed fd disappears. */
	close(fd);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	CHECK_ERR(access(path, F_OK), ENOENT);
	/* /proc/<pid> for ourselves equals /proc/self. */
	{
		struct stat a, b;

		snprintf(path, sizeof path, "/proc/%d", (int)getpid());
		CHECK_EQ(stat(path, &a), 0);
		CHECK_EQ(stat("/proc/self/", &b), 0);
		CHECK_EQ(a.st_ino, b.st_ino);
		CHECK_EQ(a.st_uid, getuid());
	}
	CHECK_EQ(chdir("/"), 0);
	t_rmtree(dir);
	DONE();
}
