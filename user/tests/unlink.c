/* unlink: removes names; open descriptors survive; errors. */
#include "t.h"

int main(void)
{
	char dir[128], path[256], sub[256], bad[256], buf[16];
	struct stat st;
	int fd;

	if (t_mktmp("unlink", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "file");
	t_join(sub, sizeof sub, dir, "sub");
	CHECK_EQ(t_write_file(path, "contents", 8, 0644), 0);
	CHECK_EQ(mkdir(sub, 0755), 0);

	/* Unlink removes the name. */
	CHECK_EQ(unlink(path), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_ERR(open(path, O_RDONLY), ENOENT);

	/* ENOENT on a second unlink. */
	CHECK_ERR(unlink(path), ENOENT);

	/* An open descriptor keeps the data alive after unlink. */
	CHECK_EQ(t_write_file(path, "contents", 8, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(syscall(SYS_unlink, path), 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 8);
	CHECK(memcmp(buf, "contents", 8) == 0);
	CHECK_EQ(write(fd, "++", 2), 2);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 10);
	CHECK_EQ(close(fd), 0);

	/* The name can be reused for a brand-new file. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(close(fd), 0);

	/* EISDIR: unlink on a directory (Linux returns EISDIR). */
	CHECK_ERR(unlink(sub), EISDIR);
	CHECK_ERR(unlink(dir), EISDIR);
	CHECK_EQ(stat(sub, &st), 0);

	/* ENOENT: missing component; empty path. */
	t_join(bad, sizeof bad, dir, "missing/x");
	CHECK_ERR(unlink(bad), ENOENT);
	CHECK_ERR(unlink(""), ENOENT);

	/* ENOTDIR: file used as a directory. */
	t_join(bad, sizeof bad, dir, "file/x");
	CHECK_ERR(unlink(bad), ENOTDIR);

	/* A trailing slash: ENOTDIR for a file, EISDIR for a directory; the
	 * file stays. */
	t_join(bad, sizeof bad, dir, "file/");
	CHECK_ERR(unlink(bad), ENOTDIR);
	CHECK_EQ(stat(path, &st), 0);
	t_join(bad, sizeof bad, dir, "sub/");
	CHECK_ERR(unlink(bad), EISDIR);

	/* Many names in one directory: unlinking every other one removes
	 * exactly those, and the listing shows exactly the rest. */
	{
		char name[300];
		int i, seen = 0, wrong = 0;
		for (i = 0; i < 200; i++) {
			snprintf(name, sizeof name, "%s/n%d", sub, i);
			CHECK_EQ(t_write_file(name, "x", 1, 0644), 0);
		}
		for (i = 0; i < 200; i += 2) {
			snprintf(name, sizeof name, "%s/n%d", sub, i);
			CHECK_EQ(unlink(name), 0);
		}
		for (i = 0; i < 200; i++) {
			snprintf(name, sizeof name, "%s/n%d", sub, i);
			if (i % 2)
				CHECK_EQ(stat(name, &st), 0);
			else
				CHECK_ERR(stat(name, &st), ENOENT);
		}
		DIR *d = opendir(sub);
		CHECK(d != NULL);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (e->d_name[0] == '.')
					continue;
				seen++;
				if (e->d_name[0] != 'n' || atoi(e->d_name + 1) % 2 == 0)
					wrong++;
			}
			closedir(d);
		}
		CHECK_EQ(seen, 100);
		CHECK_EQ(wrong, 0);
		for (i = 1; i < 200; i += 2) {
			snprintf(name, sizeof name, "%s/n%d", sub, i);
			CHECK_EQ(unlink(name), 0);
		}
	}

	/* EFAULT. */
	CHECK_ERR(unlink(BAD_PTR), EFAULT);

	CHECK_EQ(unlink(path), 0);
	t_rmtree(dir);
	DONE();
}
