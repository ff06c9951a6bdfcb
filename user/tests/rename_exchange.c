/*
 * renameat2(2) RENAME_EXCHANGE: swaps two names atomically, of the same or
 * different types and across directories (".." of a moved directory
 * follows it); both must exist; a directory cannot swap with something
 * inside it.
 */
#include "t.h"

#define X_RENAME_NOREPLACE 1
#define X_RENAME_EXCHANGE 2

static long xrename(const char *o, const char *n, unsigned flags)
{
	return syscall(SYS_renameat2, AT_FDCWD, o, AT_FDCWD, n, flags);
}

int main(void)
{
	char dir[128], a[256], b[256], d1[256], d2[256], x[256], buf[16];
	struct stat st, sta, stb;

	if (t_mktmp("rename_exchange", dir, sizeof dir))
		DONE();
	t_join(a, sizeof a, dir, "a");
	t_join(b, sizeof b, dir, "b");
	CHECK_EQ(t_write_file(a, "AAA", 3, 0644), 0);
	CHECK_EQ(t_write_file(b, "B", 1, 0600), 0);
	CHECK_EQ(stat(a, &sta), 0);
	CHECK_EQ(stat(b, &stb), 0);

	/* Two files in one directory. */
	CHECK_EQ(xrename(a, b, X_RENAME_EXCHANGE), 0);
	CHECK_EQ(t_read_file(a, buf, sizeof buf), 1);
	CHECK_EQ(t_read_file(b, buf, sizeof buf), 3);
	CHECK_EQ(stat(a, &st), 0);
	CHECK_EQ(st.st_ino, stb.st_ino);
	CHECK_EQ(st.st_mode & 0777, 0600);

	/* A file and a directory in different directories. */
	t_join(d1, sizeof d1, dir, "d1");
	t_join(d2, sizeof d2, dir, "d2");
	CHECK_EQ(mkdir(d1, 0755), 0);
	CHECK_EQ(mkdir(d2, 0755), 0);
	t_join(x, sizeof x, d1, "sub");
	CHECK_EQ(mkdir(x, 0755), 0);
	{
		char f[256], subfile[300], dotdot[300];
		struct stat before1, before2, after1, after2;
		t_join(f, sizeof f, d2, "file");
		CHECK_EQ(t_write_file(f, "F", 1, 0644), 0);
		t_join(subfile, sizeof subfile, x, "inner");
		CHECK_EQ(t_write_file(subfile, "I", 1, 0644), 0);
		CHECK_EQ(stat(d1, &before1), 0);
		CHECK_EQ(stat(d2, &before2), 0);
		/* d1/sub (dir) <-> d2/file (file) */
		{
			char target[256];
			t_join(target, sizeof target, d2, "file");
			CHECK_EQ(xrename(x, target, X_RENAME_EXCHANGE), 0);
		}
		CHECK_EQ(lstat(x, &st), 0);
		CHECK(S_ISREG(st.st_mode));
		t_join(subfile, sizeof subfile, f, "inner");
		CHECK_EQ(stat(subfile, &st), 0);
		/* The moved directory's ".." is its new parent. */
		t_join(dotdot, sizeof dotdot, f, "..");
		CHECK_EQ(stat(dotdot, &st), 0);
		CHECK_EQ(st.st_ino, before2.st_ino);
		/* Link counts: d1 lost a subdirectory, d2 gained one. */
		CHECK_EQ(stat(d1, &after1), 0);
		CHECK_EQ(stat(d2, &after2), 0);
		CHECK_EQ(after1.st_nlink, before1.st_nlink - 1);
		CHECK_EQ(after2.st_nlink, before2.st_nlink + 1);
	}

	/* Both names must exist. */
	t_join(x, sizeof x, dir, "missing");
	CHECK_ERR(xrename(a, x, X_RENAME_EXCHANGE), ENOENT);
	CHECK_ERR(xrename(x, a, X_RENAME_EXCHANGE), ENOENT);
	/* Not with RENAME_NOREPLACE. */
	CHECK_ERR(xrename(a, b, X_RENAME_EXCHANGE | X_RENAME_NOREPLACE), EINVAL);
	/* A directory cannot swap with its own descendant. */
	{
		char inner[256];
		t_join(inner, sizeof inner, d2, "file");
		CHECK_ERR(xrename(d2, inner, X_RENAME_EXCHANGE), EINVAL);
		CHECK_ERR(xrename(inner, d2, X_RENAME_EXCHANGE), EINVAL);
	}
	/* Exchanging a name with itself changes nothing. */
	CHECK_EQ(xrename(a, a, X_RENAME_EXCHANGE), 0);
	CHECK_EQ(t_read_file(a, buf, sizeof buf), 1);
	/* Across file systems: EXDEV. */
	{
		char shm[128];
		snprintf(shm, sizeof shm, "/dev/shm/rename_exchange.%d", getpid());
		CHECK_EQ(t_write_file(shm, "S", 1, 0644), 0);
		CHECK_ERR(xrename(a, shm, X_RENAME_EXCHANGE), EXDEV);
		unlink(shm);
	}
	t_rmtree(dir);
	DONE();
}
