/* link/unlink: shared data and inode, st_nlink counting, EEXIST, EPERM
 * for directories, ENOENT, ENOTDIR; link() does not follow a final
 * symlink; an unlinked but open file stays readable. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[16];
	struct stat a, b;
	int fd;

	if (t_mktmp("vfs_link", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(t_write_file("f", "one", 3, 0644), 0);

	CHECK_EQ(link("f", "g"), 0);
	CHECK_EQ(stat("f", &a), 0);
	CHECK_EQ(stat("g", &b), 0);
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_nlink, 2);
	/* Writing through one name shows through the other. */
	fd = open("g", O_WRONLY | O_APPEND);
	CHECK_EQ(write(fd, "two", 3), 3);
	close(fd);
	CHECK_EQ(t_read_file("f", buf, sizeof buf), 6);
	CHECK(strcmp(buf, "onetwo") == 0);
	/* A third link in a subdirectory. */
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_EQ(link("g", "d/h"), 0);
	CHECK_EQ(stat("f", &a), 0);
	CHECK_EQ(a.st_nlink, 3);

	CHECK_ERR(link("f", "g"), EEXIST);
	CHECK_ERR(link("d", "d2"), EPERM);
	CHECK_ERR(link("nope", "x"), ENOENT);
	CHECK_ERR(link("f", "nope/x"), ENOENT);
	CHECK_ERR(link("f/x", "y"), ENOTDIR);
	CHECK_ERR(link("f", ""), ENOENT);

	/* Unlinking decrements. */
	CHECK_EQ(unlink("g"), 0);
	CHECK_EQ(stat("f", &a), 0);
	CHECK_EQ(a.st_nlink, 2);
	CHECK_ERR(unlink("g"), ENOENT);
	CHECK_ERR(unlink("d"), EISDIR);

	/* link() makes a hard link to a symlink, not to its target. */
	CHECK_EQ(symlink("f", "sl"), 0);
	CHECK_EQ(link("sl", "sl2"), 0);
	CHECK_EQ(lstat("sl2", &b), 0);
	CHECK(S_ISLNK(b.st_mode));

	/* Open and unlinked: still readable, nlink 0. */
	fd = open("f", O_RDONLY);
	CHECK_EQ(unlink("f"), 0);
	CHECK_EQ(unlink("d/h"), 0);
	CHECK_EQ(fstat(fd, &a), 0);
	CHECK_EQ(a.st_nlink, 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 6);
	close(fd);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
