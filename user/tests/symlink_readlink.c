/* Symlink-dependent behaviour: readlink/readlinkat, lstat vs stat, ELOOP. */
#include "t.h"

int main(void)
{
	char dir[128], file[256], link[256], dlink[256], path[300], buf[64];
	struct stat st, lst;
	int dfd, fd;
	const char *target = "file";

	if (t_mktmp("symlink_readlink", dir, sizeof dir))
		DONE();
	t_join(file, sizeof file, dir, "file");
	t_join(link, sizeof link, dir, "link");
	CHECK_EQ(t_write_file(file, "payload", 7, 0644), 0);

	/* A relative symlink to the file. */
	CHECK_EQ(symlink(target, link), 0);

	/* readlink returns the target bytes, not NUL terminated. */
	memset(buf, 'X', sizeof buf);
	CHECK_EQ(readlink(link, buf, sizeof buf), 4);
	CHECK(memcmp(buf, "file", 4) == 0);
	CHECK_EQ(buf[4], 'X');

	/* A short buffer truncates silently. */
	memset(buf, 'X', sizeof buf);
	CHECK_EQ(readlink(link, buf, 2), 2);
	CHECK(memcmp(buf, "fiX", 3) == 0);

	/* Raw syscalls. */
	CHECK_EQ(syscall(SYS_readlink, link, buf, sizeof buf), 4);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	memset(buf, 0, sizeof buf);
	CHECK_EQ(readlinkat(dfd, "link", buf, sizeof buf), 4);
	CHECK(strcmp(buf, "file") == 0);
	CHECK_EQ(syscall(SYS_readlinkat, dfd, "link", buf, sizeof buf), 4);

	/* lstat sees the link, stat follows it. */
	CHECK_EQ(lstat(link, &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK_EQ(lst.st_size, 4);
	CHECK_EQ(stat(link, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 7);
	CHECK(st.st_ino != lst.st_ino);
	CHECK_EQ(fstatat(dfd, "link", &lst, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISLNK(lst.st_mode));

	/* open follows the link. */
	fd = open(link, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 7);
	CHECK(memcmp(buf, "payload", 7) == 0);
	CHECK_EQ(close(fd), 0);

	/* O_NOFOLLOW on a symlink: ELOOP. */
	CHECK_ERR(open(link, O_RDONLY | O_NOFOLLOW), ELOOP);

	/* EEXIST: creating a symlink over an existing name. */
	CHECK_ERR(symlink("other", link), EEXIST);
	CHECK_ERR(symlink("other", file), EEXIST);

	/* A dangling link: lstat works, stat is ENOENT, readlink works. */
	t_join(path, sizeof path, dir, "dangling");
	CHECK_EQ(symlink("does-not-exist", path), 0);
	CHECK_EQ(lstat(path, &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_EQ(readlink(path, buf, sizeof buf), 14);

	/* A symlink loop: ELOOP on follow. */
	t_join(path, sizeof path, dir, "loop1");
	CHECK_EQ(symlink("loop2", path), 0);
	t_join(path, sizeof path, dir, "loop2");
	CHECK_EQ(symlink("loop1", path), 0);
	CHECK_ERR(stat(path, &st), ELOOP);
	CHECK_ERR(open(path, O_RDONLY), ELOOP);

	/* A link to a directory is traversed as a path component. */
	t_join(dlink, sizeof dlink, dir, "dirlink");
	CHECK_EQ(symlink(dir, dlink), 0);
	t_join(path, sizeof path, dlink, "file");
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 7);

	/* unlink removes the link, not the target. */
	CHECK_EQ(unlink(link), 0);
	CHECK_ERR(lstat(link, &lst), ENOENT);
	CHECK_EQ(stat(file, &st), 0);

	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
