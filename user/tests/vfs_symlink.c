/* symlink/readlink: the target is stored verbatim (not resolved, may be
 * dangling or relative), st_size is its length, readlink does not
 * NUL-terminate and truncates silently, EINVAL for a zero buffer, ENOENT
 * for an empty target, EEXIST, symlinkat. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], orig[PATH_MAX], buf[64];
	struct stat st;
	ssize_t n;
	int d;

	if (t_mktmp("vfs_symlink", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);

	CHECK_EQ(symlink("../some/where//odd/", "s"), 0);
	memset(buf, 'x', sizeof buf);
	n = readlink("s", buf, sizeof buf);
	CHECK_EQ(n, 19);
	CHECK(memcmp(buf, "../some/where//odd/", 19) == 0);
	CHECK_EQ(buf[19], 'x'); /* no terminator written */
	CHECK_EQ(lstat("s", &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_size, 19);
	/* Truncation. */
	CHECK_EQ(readlink("s", buf, 5), 5);
	CHECK(memcmp(buf, "../so", 5) == 0);
	/* Raw: musl substitutes a 1-byte buffer for a 0-byte one. */
	CHECK_ERR(syscall(SYS_readlink, "s", buf, 0), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, "s", buf, -1L), EINVAL);
	CHECK_ERR(readlink("s", (char *)BAD_PTR2, 10), EFAULT);

	CHECK_ERR(symlink("", "empty"), ENOENT);
	CHECK_ERR(symlink("x", "s"), EEXIST);
	CHECK_ERR(symlink("x", "nope/s"), ENOENT);
	CHECK_ERR(readlink("nope", buf, sizeof buf), ENOENT);

	/* A long target (up to PATH_MAX-1 bytes). */
	{
		static char longt[4095];

		memset(longt, 'a', sizeof longt - 1);
		longt[sizeof longt - 1] = 0;
		CHECK_EQ(symlink(longt, "long"), 0);
		CHECK_EQ(lstat("long", &st), 0);
		CHECK_EQ(st.st_size, 4094);
	}

	/* symlinkat/readlinkat relative to a dirfd. */
	CHECK_EQ(mkdir("d", 0755), 0);
	d = open("d", O_RDONLY | O_DIRECTORY);
	CHECK_EQ(symlinkat("tgt", d, "in"), 0);
	CHECK_EQ(readlinkat(d, "in", buf, sizeof buf), 3);
	CHECK_EQ(readlink("d/in", buf, sizeof buf), 3);
	close(d);
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
