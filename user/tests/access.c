/* access: F_OK/R_OK/W_OK/X_OK on files and directories; errors. */
#include "t.h"

int main(void)
{
	char dir[128], f644[256], f755[256], f000[256], bad[256];

	if (t_mktmp("access", dir, sizeof dir))
		DONE();
	t_join(f644, sizeof f644, dir, "rw");
	t_join(f755, sizeof f755, dir, "rwx");
	t_join(f000, sizeof f000, dir, "none");
	umask(0);
	CHECK_EQ(t_write_file(f644, "x", 1, 0644), 0);
	CHECK_EQ(t_write_file(f755, "x", 1, 0755), 0);
	CHECK_EQ(t_write_file(f000, "x", 1, 0), 0);

	/* Owner permissions on a file we created. */
	CHECK_EQ(access(f644, F_OK), 0);
	CHECK_EQ(access(f644, R_OK), 0);
	CHECK_EQ(access(f644, W_OK), 0);
	CHECK_EQ(access(f644, R_OK | W_OK), 0);
	/* No execute bit anywhere: X_OK fails, even for root. */
	CHECK_ERR(access(f644, X_OK), EACCES);
	CHECK_ERR(access(f644, R_OK | X_OK), EACCES);
	CHECK_EQ(access(f755, X_OK), 0);
	CHECK_EQ(access(f755, R_OK | W_OK | X_OK), 0);

	/* Mode 0: root may still read and write, others may not. */
	CHECK_EQ(access(f000, F_OK), 0);
	if (getuid() == 0) {
		CHECK_EQ(access(f000, R_OK), 0);
		CHECK_EQ(access(f000, W_OK), 0);
	} else {
		CHECK_ERR(access(f000, R_OK), EACCES);
		CHECK_ERR(access(f000, W_OK), EACCES);
	}
	CHECK_ERR(access(f000, X_OK), EACCES);

	/* Directories are searchable. */
	CHECK_EQ(access(dir, F_OK), 0);
	CHECK_EQ(access(dir, R_OK | W_OK | X_OK), 0);
	CHECK_EQ(access("/", X_OK), 0);

	/* Raw syscall. */
	CHECK_EQ(syscall(SYS_access, f644, R_OK), 0);
	CHECK_ERR(syscall(SYS_access, f644, X_OK), EACCES);

	/* ENOENT, ENOTDIR. */
	t_join(bad, sizeof bad, dir, "missing");
	CHECK_ERR(access(bad, F_OK), ENOENT);
	CHECK_ERR(access("", F_OK), ENOENT);
	t_join(bad, sizeof bad, dir, "rw/x");
	CHECK_ERR(access(bad, F_OK), ENOTDIR);

	/* EINVAL: mode with unknown bits. */
	CHECK_ERR(access(f644, 0x10), EINVAL);
	CHECK_ERR(syscall(SYS_access, f644, 0xff), EINVAL);

	/* EFAULT. */
	CHECK_ERR(access(BAD_PTR, F_OK), EFAULT);
	CHECK_ERR(access(BAD_PTR2, R_OK), EFAULT);

	t_rmtree(dir);
	DONE();
}
