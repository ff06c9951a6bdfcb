/* getcwd: value after chdir, ERANGE, EFAULT, deleted cwd (raw syscall). */
#include "t.h"

static long getcwd_raw(char *b, size_t n)
{
	return syscall(SYS_getcwd, b, n);
}

int main(void)
{
	char dir[128], sub[256], buf[PATH_MAX], small[8];
	size_t len;

	if (t_mktmp("getcwd", dir, sizeof dir))
		DONE();
	t_join(sub, sizeof sub, dir, "sub");
	CHECK_EQ(mkdir(sub, 0755), 0);

	/* Root. */
	CHECK_EQ(chdir("/"), 0);
	CHECK(getcwd(buf, sizeof buf) == buf);
	CHECK(strcmp(buf, "/") == 0);
	/* The raw syscall returns the length including the NUL. */
	CHECK_EQ(getcwd_raw(buf, sizeof buf), 2);

	/* After chdir into the scratch directory. */
	CHECK_EQ(chdir(dir), 0);
	memset(buf, 'x', sizeof buf);
	CHECK(getcwd(buf, sizeof buf) == buf);
	CHECK(strcmp(buf, dir) == 0);
	len = strlen(dir);
	CHECK_EQ(getcwd_raw(buf, sizeof buf), (long)len + 1);
	CHECK(strcmp(buf, dir) == 0);

	/* Relative chdir. */
	CHECK_EQ(chdir("sub"), 0);
	CHECK(getcwd(buf, sizeof buf) == buf);
	CHECK(strcmp(buf, sub) == 0);
	CHECK_EQ(chdir(".."), 0);
	CHECK(getcwd(buf, sizeof buf) == buf);
	CHECK(strcmp(buf, dir) == 0);

	/* Exactly enough space works; one byte less is ERANGE. */
	CHECK_EQ(getcwd_raw(buf, len + 1), (long)len + 1);
	CHECK_ERR(getcwd_raw(buf, len), ERANGE);
	CHECK_ERR(getcwd_raw(small, 1), ERANGE);
	CHECK_ERR(getcwd_raw(buf, 0), ERANGE);
	CHECK(getcwd(small, sizeof small) == NULL);
	CHECK_EQ(errno, ERANGE);

	/* EFAULT: bad buffer. */
	CHECK_ERR(getcwd_raw(BAD_PTR2, sizeof buf), EFAULT);

	/* getcwd(NULL, 0) allocates (libc extension over the syscall). */
	{
		char *p = getcwd(NULL, 0);
		CHECK(p != NULL && strcmp(p, dir) == 0);
		free(p);
	}

	/* ENOENT: the current directory was removed. */
	CHECK_EQ(chdir(sub), 0);
	CHECK_EQ(rmdir(sub), 0);
	CHECK_ERR(getcwd_raw(buf, sizeof buf), ENOENT);

	CHECK_EQ(chdir("/"), 0);
	t_rmtree(dir);
	DONE();
}
