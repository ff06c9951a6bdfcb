/* dup2: replace a descriptor, old==new, errors. */
#include "t.h"
#include <sys/resource.h>

int main(void)
{
	char dir[128], p1[256], p2[256], buf[16];
	struct rlimit rl;
	int a, b;

	if (t_mktmp("dup2", dir, sizeof dir))
		DONE();
	t_join(p1, sizeof p1, dir, "one");
	t_join(p2, sizeof p2, dir, "two");
	CHECK_EQ(t_write_file(p1, "one", 3, 0644), 0);
	CHECK_EQ(t_write_file(p2, "two", 3, 0644), 0);
	a = open(p1, O_RDONLY);
	b = open(p2, O_RDONLY);
	CHECK(a >= 0 && b >= 0);

	/* dup2 onto an open descriptor silently closes it first. */
	CHECK_EQ(dup2(a, b), b);
	CHECK_EQ(read(b, buf, 3), 3);
	CHECK(memcmp(buf, "one", 3) == 0);
	/* Shared offset with a. */
	CHECK_EQ(lseek(a, 0, SEEK_CUR), 3);

	/* dup2 onto an unused high descriptor. */
	CHECK_EQ(dup2(a, 100), 100);
	CHECK_EQ(lseek(100, 0, SEEK_SET), 0);
	CHECK_EQ(lseek(a, 0, SEEK_CUR), 0);
	CHECK_EQ(close(100), 0);

	/* dup2(fd, fd) returns fd and does nothing. */
	CHECK_EQ(dup2(a, a), a);
	CHECK_EQ(fcntl(a, F_GETFD), 0);
	CHECK_EQ(syscall(SYS_dup2, a, a), a);

	/* dup2(bad, bad) is still EBADF. */
	CHECK_ERR(dup2(999, 999), EBADF);

	/* The new descriptor never has FD_CLOEXEC. */
	CHECK_EQ(fcntl(a, F_SETFD, FD_CLOEXEC), 0);
	CHECK_EQ(dup2(a, b), b);
	CHECK_EQ(fcntl(b, F_GETFD), 0);
	CHECK_EQ(fcntl(a, F_GETFD), FD_CLOEXEC);

	/* EBADF: oldfd invalid (newfd stays open). */
	CHECK_ERR(dup2(-1, b), EBADF);
	CHECK_ERR(dup2(999, b), EBADF);
	CHECK(fcntl(b, F_GETFD) >= 0);

	/* EBADF: newfd negative or beyond RLIMIT_NOFILE. */
	CHECK_ERR(dup2(a, -1), EBADF);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)INT_MAX)
		CHECK_ERR(dup2(a, (int)rl.rlim_cur), EBADF);

	CHECK_EQ(close(a), 0);
	CHECK_EQ(close(b), 0);
	t_rmtree(dir);
	DONE();
}
