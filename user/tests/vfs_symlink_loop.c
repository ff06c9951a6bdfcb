/* Symlink resolution limits and flags: ELOOP for loops, a chain of 40
 * links resolves and 41 do not, O_NOFOLLOW (ELOOP on a final symlink, but
 * intermediate ones are followed), stat vs lstat, dangling links, relative
 * targets resolved from the link's directory, trailing slash after a
 * link. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], name[32], target[32];
	struct stat st;
	int i, fd;

	if (t_mktmp("vfs_symlink_loop", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);

	/* Loops. */
	CHECK_EQ(symlink("self", "self"), 0);
	CHECK_ERR(stat("self", &st), ELOOP);
	CHECK_ERR(open("self", O_RDONLY), ELOOP);
	CHECK_EQ(lstat("self", &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(symlink("b", "a"), 0);
	CHECK_EQ(symlink("a", "b"), 0);
	CHECK_ERR(stat("a", &st), ELOOP);
	CHECK_ERR(stat("a/x", &st), ELOOP);
	CHECK_ERR(open("b", O_CREAT | O_WRONLY, 0644), ELOOP);

	/* A chain: l0 -> file, l1 -> l0, ..., l40 -> l39. */
	CHECK_EQ(t_write_file("file", "end", 3, 0644), 0);
	CHECK_EQ(symlink("file", "l0"), 0);
	for (i = 1; i <= 40; i++) {
		snprintf(name, sizeof name, "l%d", i);
		snprintf(target, sizeof target, "l%d", i - 1);
		CHECK_EQ(symlink(target, name), 0);
	}
	/* l39 needs 40 traversals: fine.  l40 needs 41: ELOOP. */
	CHECK_EQ(stat("l39", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_ERR(stat("l40", &st), ELOOP);

	/* O_NOFOLLOW. */
	CHECK_ERR(open("l0", O_RDONLY | O_NOFOLLOW), ELOOP);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_EQ(t_write_file("d/f", "in", 2, 0644), 0);
	CHECK_EQ(symlink("d", "dl"), 0);
	fd = open("dl/f", O_RDONLY | O_NOFOLLOW); /* intermediate: followed */
	CHECK(fd >= 0);
	close(fd);
	/* With O_DIRECTORY too, Linux reports the link as "not a
	 * directory". */
	CHECK_ERR(open("dl", O_RDONLY | O_NOFOLLOW | O_DIRECTORY), ENOTDIR);
	/* Trailing slash forces following. */
	CHECK_EQ(stat("dl/", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(lstat("dl/", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(lstat("dl", &st), 0);
	CHECK(S_ISLNK(st.st_mode));

	/* Dangling. */
	CHECK_EQ(symlink("missing", "dang"), 0);
	CHECK_ERR(stat("dang", &st), ENOENT);
	CHECK_EQ(lstat("dang", &st), 0);
	CHECK_EQ(st.st_size, 7);
	CHECK_ERR(open("dang", O_RDONLY), ENOENT);
	/* O_CREAT through a dangling link creates the target... */
	fd = open("dang", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(stat("missing", &st), 0);
	/* ...but O_EXCL refuses any symlink. */
	CHECK_ERR(open("dl", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	CHECK_ERR(open("self", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);

	/* Relative targets resolve from the link's directory. */
	CHECK_EQ(symlink("f", "d/rel"), 0);
	CHECK_EQ(stat("d/rel", &st), 0);
	CHECK_EQ(st.st_size, 2);
	CHECK_EQ(symlink("../file", "d/up"), 0);
	CHECK_EQ(stat("d/up", &st), 0);
	CHECK_EQ(st.st_size, 3);

	/* readlink on a non-link. */
	{
		char buf[8];

		CHECK_ERR(readlink("file", buf, sizeof buf), EINVAL);
	}
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
