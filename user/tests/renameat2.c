/* renameat2 (raw syscall): flags 0, RENAME_NOREPLACE, flag validation. */
#include "t.h"

#define X_RENAME_NOREPLACE 1
#define X_RENAME_EXCHANGE 2

static long renameat2_raw(int od, const char *o, int nd, const char *n,
			  unsigned flags)
{
	return syscall(SYS_renameat2, od, o, nd, n, flags);
}

int main(void)
{
	char dir[128], path[256], buf[16];
	struct stat st;
	int dfd, sfd;

	if (t_mktmp("renameat2", dir, sizeof dir))
		DONE();
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	t_join(path, sizeof path, dir, "sub");
	CHECK_EQ(mkdir(path, 0755), 0);
	sfd = open(path, O_RDONLY | O_DIRECTORY);
	CHECK(sfd >= 0);
	t_join(path, sizeof path, dir, "a");
	CHECK_EQ(t_write_file(path, "AA", 2, 0644), 0);
	t_join(path, sizeof path, dir, "b");
	CHECK_EQ(t_write_file(path, "BBB", 3, 0644), 0);

	/* flags 0 behaves like renameat: relative to two dirfds. */
	CHECK_EQ(renameat2_raw(dfd, "a", sfd, "a2", 0), 0);
	CHECK_ERR(fstatat(dfd, "a", &st, 0), ENOENT);
	CHECK_EQ(fstatat(sfd, "a2", &st, 0), 0);
	CHECK_EQ(st.st_size, 2);

	/* flags 0 replaces an existing target. */
	CHECK_EQ(renameat2_raw(sfd, "a2", dfd, "b", 0), 0);
	t_join(path, sizeof path, dir, "b");
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 2);
	CHECK(memcmp(buf, "AA", 2) == 0);

	/* RENAME_NOREPLACE with an existing target: EEXIST, nothing moves. */
	t_join(path, sizeof path, dir, "c");
	CHECK_EQ(t_write_file(path, "C", 1, 0644), 0);
	CHECK_ERR(renameat2_raw(dfd, "c", dfd, "b", X_RENAME_NOREPLACE), EEXIST);
	CHECK_EQ(fstatat(dfd, "c", &st, 0), 0);
	t_join(path, sizeof path, dir, "b");
	CHECK_EQ(t_read_file(path, buf, sizeof buf), 2);

	/* RENAME_NOREPLACE with no target: succeeds. */
	CHECK_EQ(renameat2_raw(dfd, "c", dfd, "d", X_RENAME_NOREPLACE), 0);
	CHECK_ERR(fstatat(dfd, "c", &st, 0), ENOENT);
	CHECK_EQ(fstatat(dfd, "d", &st, 0), 0);

	/* AT_FDCWD with absolute paths. */
	{
		char o[256], n[256];
		t_join(o, sizeof o, dir, "d");
		t_join(n, sizeof n, dir, "e");
		CHECK_EQ(renameat2_raw(AT_FDCWD, o, AT_FDCWD, n, 0), 0);
		CHECK_EQ(stat(n, &st), 0);
	}

	/* EINVAL: NOREPLACE together with EXCHANGE; unknown flag bits. */
	CHECK_ERR(renameat2_raw(dfd, "e", dfd, "b",
				X_RENAME_NOREPLACE | X_RENAME_EXCHANGE), EINVAL);
	CHECK_ERR(renameat2_raw(dfd, "e", dfd, "f", 0x100), EINVAL);

	/* ENOENT. */
	CHECK_ERR(renameat2_raw(dfd, "missing", dfd, "x", 0), ENOENT);
	CHECK_ERR(renameat2_raw(dfd, "missing", dfd, "x", X_RENAME_NOREPLACE),
		  ENOENT);

	/* EBADF: relative paths with bad dirfds. */
	CHECK_ERR(renameat2_raw(999, "e", dfd, "x", 0), EBADF);
	CHECK_ERR(renameat2_raw(dfd, "e", -1, "x", 0), EBADF);

	/* EFAULT. */
	CHECK_ERR(renameat2_raw(dfd, BAD_PTR, dfd, "x", 0), EFAULT);

	CHECK_EQ(close(sfd), 0);
	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
