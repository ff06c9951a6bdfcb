/*
 * open(2) O_TMPFILE: an unnamed file in a directory, with no links until
 * linkat(2) AT_EMPTY_PATH gives it a name (not with O_EXCL); the flag
 * needs write access and a directory.
 */
#include "t.h"

int main(void)
{
	char dir[128], name[256], link[512], fdpath[64], buf[16];
	struct stat st;
	int fd, n;

	if (t_mktmp("o_tmpfile", dir, sizeof dir))
		DONE();
	fd = open(dir, O_TMPFILE | O_RDWR, 0640);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_nlink, 0);
	CHECK_EQ(st.st_mode & 0777, 0640); /* umask 022 */
	CHECK_EQ(write(fd, "hello", 5), 5);
	CHECK_EQ(pread(fd, buf, sizeof buf, 0), 5);

	/* Nothing appears in the directory. */
	{
		DIR *d = opendir(dir);
		struct dirent *de;
		int entries = 0;
		while (d && (de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				entries++;
		if (d)
			closedir(d);
		CHECK_EQ(entries, 0);
	}
	/* Its /proc link names the directory and says it is deleted. */
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	n = readlink(fdpath, link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK(strncmp(link, dir, strlen(dir)) == 0);
		CHECK(strstr(link, " (deleted)") != NULL);
	}

	/* linkat gives it a name. */
	t_join(name, sizeof name, dir, "named");
	CHECK_EQ(linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(t_read_file(name, buf, sizeof buf), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	close(fd);

	/* With O_EXCL it can never be linked. */
	fd = open(dir, O_TMPFILE | O_WRONLY | O_EXCL, 0600);
	CHECK(fd >= 0);
	t_join(name, sizeof name, dir, "never");
	CHECK_ERR(linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH), ENOENT);
	close(fd);

	/* Checks. */
	CHECK_ERR(open(dir, O_TMPFILE | O_RDONLY, 0600), EINVAL);
	CHECK_ERR(open(dir, O_TMPFILE | O_RDWR | O_CREAT, 0600), EINVAL);
	t_join(name, sizeof name, dir, "named");
	CHECK_ERR(open(name, O_TMPFILE | O_RDWR, 0600), ENOTDIR);
	t_join(name, sizeof name, dir, "missing");
	CHECK_ERR(open(name, O_TMPFILE | O_RDWR, 0600), ENOENT);
	t_rmtree(dir);
	DONE();
}
