/*
 * Following /proc/self/fd/N opens what the descriptor has open, not the
 * text of the link: the same pipe, a file that has been unlinked, the
 * working directory through /proc/self/cwd; /dev/stdin and friends lead
 * there too.
 */
#include "t.h"

int main(void)
{
	char dir[128], file[256], path[64], buf[32];
	int p[2], fd, again, n;
	struct stat st, st2;

	/* A pipe reached through its /proc link is the same pipe. */
	CHECK_EQ(pipe(p), 0);
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "via proc", 8), 8);
	close(fd);
	CHECK_EQ(read(p[0], buf, sizeof buf), 8);
	CHECK(memcmp(buf, "via proc", 8) == 0);
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(fstat(p[0], &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(read(fd, buf, 1), 1);
	close(fd);

	/* /dev/stdin is fd 0. */
	again = dup(0);
	CHECK_EQ(dup2(p[0], 0), 0);
	CHECK_EQ(write(p[1], "std", 3), 3);
	fd = open("/dev/stdin", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 3);
	close(fd);
	CHECK_EQ(dup2(again, 0), 0);
	close(again);
	close(p[0]);
	close(p[1]);

	/* An unlinked file stays reachable. */
	if (t_mktmp("proc_magic_links", dir, sizeof dir))
		DONE();
	t_join(file, sizeof file, dir, "gone");
	CHECK_EQ(t_write_file(file, "still here", 10, 0644), 0);
	fd = open(file, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(unlink(file), 0);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	again = open(path, O_RDONLY);
	CHECK(again >= 0);
	n = read(again, buf, sizeof buf);
	CHECK_EQ(n, 10);
	CHECK(memcmp(buf, "still here", 10) == 0);
	/* A new open has its own position. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
	close(again);
	close(fd);

	/* /proc/self/cwd is the working directory itself. */
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(t_write_file("here", "h", 1, 0644), 0);
	CHECK_EQ(stat("/proc/self/cwd/here", &st), 0);
	CHECK_EQ(st.st_size, 1);
	CHECK_EQ(chdir("/"), 0);

	/* Closed descriptors lead nowhere. */
	CHECK_ERR(open("/proc/self/fd/250", O_RDONLY), ENOENT);
	t_rmtree(dir);
	DONE();
}
