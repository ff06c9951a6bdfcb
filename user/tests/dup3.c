/* dup3 (raw syscall): O_CLOEXEC, EINVAL for old==new and bad flags. */
#include "t.h"

static long dup3_raw(int o, int n, int f)
{
	return syscall(SYS_dup3, o, n, f);
}

int main(void)
{
	char dir[128], path[256];
	int a;

	if (t_mktmp("dup3", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	a = open(path, O_RDONLY);
	CHECK(a >= 0);

	/* Plain dup3 with flags 0. */
	CHECK_EQ(dup3_raw(a, 50, 0), 50);
	CHECK_EQ(fcntl(50, F_GETFD), 0);

	/* dup3 onto an open descriptor replaces it; O_CLOEXEC is applied. */
	CHECK_EQ(dup3_raw(a, 50, O_CLOEXEC), 50);
	CHECK_EQ(fcntl(50, F_GETFD), FD_CLOEXEC);

	/* And flags 0 again clears it. */
	CHECK_EQ(dup3_raw(a, 50, 0), 50);
	CHECK_EQ(fcntl(50, F_GETFD), 0);
	CHECK_EQ(close(50), 0);

	/* EINVAL: oldfd == newfd (unlike dup2). */
	CHECK_ERR(dup3_raw(a, a, 0), EINVAL);
	CHECK_ERR(dup3_raw(a, a, O_CLOEXEC), EINVAL);
	CHECK_ERR(dup3(a, a, 0), EINVAL);

	/* EINVAL: flags other than O_CLOEXEC. */
	CHECK_ERR(dup3_raw(a, 51, O_APPEND), EINVAL);
	CHECK_ERR(dup3_raw(a, 51, 0x7fffffff), EINVAL);
	CHECK_ERR(fcntl(51, F_GETFD), EBADF);

	/* EBADF: bad oldfd or negative newfd. */
	CHECK_ERR(dup3_raw(-1, 51, 0), EBADF);
	CHECK_ERR(dup3_raw(999, 51, 0), EBADF);
	CHECK_ERR(dup3_raw(a, -1, 0), EBADF);

	/* libc wrapper with O_CLOEXEC reaches the syscall too. */
	CHECK_EQ(dup3(a, 52, O_CLOEXEC), 52);
	CHECK_EQ(fcntl(52, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(close(52), 0);

	CHECK_EQ(close(a), 0);
	t_rmtree(dir);
	DONE();
}
