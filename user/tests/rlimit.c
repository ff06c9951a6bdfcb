/* getrlimit and prlimit64 (raw): NOFILE/STACK, enforcement, errors. */
#include "t.h"
#include <sys/resource.h>

struct x_rlimit64 {
	uint64_t cur;
	uint64_t max;
};

static long prlimit_raw(pid_t pid, int res, const struct x_rlimit64 *n,
			struct x_rlimit64 *o)
{
	return syscall(SYS_prlimit64, pid, res, n, o);
}

int main(void)
{
	struct rlimit rl, rl2;
	struct x_rlimit64 p, q;
	pid_t pid;

	/* NOFILE: soft <= hard, and enough descriptors to be useful. */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	CHECK(rl.rlim_cur <= rl.rlim_max);
	CHECK(rl.rlim_cur >= 64);

	/* The raw getrlimit and prlimit64 syscalls agree with libc. */
	CHECK_EQ(syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl2), 0);
	CHECK_EQ(rl2.rlim_cur, rl.rlim_cur);
	CHECK_EQ(rl2.rlim_max, rl.rlim_max);
	CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &p), 0);
	CHECK_EQ(p.cur, rl.rlim_cur);
	CHECK_EQ(p.max, rl.rlim_max);
	CHECK_EQ(prlimit_raw(getpid(), RLIMIT_NOFILE, NULL, &q), 0);
	CHECK_EQ(q.cur, p.cur);

	/* STACK: soft <= hard (either may be RLIM_INFINITY). */
	CHECK_EQ(getrlimit(RLIMIT_STACK, &rl), 0);
	CHECK(rl.rlim_cur <= rl.rlim_max);
	CHECK(rl.rlim_cur > 0);
	CHECK_EQ(prlimit_raw(0, RLIMIT_STACK, NULL, &p), 0);
	CHECK_EQ(p.cur, rl.rlim_cur);
	CHECK_EQ(p.max, rl.rlim_max);

	/* Lowering the NOFILE soft limit is enforced (in a child). */
	pid = fork();
	if (pid == 0) {
		struct x_rlimit64 n, o;
		int fd = open("/", O_RDONLY | O_DIRECTORY);

		CHECK(fd >= 0 && fd < 32);

		CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &o), 0);
		n.cur = 32;
		n.max = o.max;
		CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, &n, &o), 0);
		CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &o), 0);
		CHECK_EQ(o.cur, 32);
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl2), 0);
		CHECK_EQ(rl2.rlim_cur, 32);
		CHECK_ERR(dup2(fd, 32), EBADF);
		CHECK_ERR(fcntl(fd, F_DUPFD, 32), EINVAL);
		CHECK_EQ(dup2(fd, 31), 31);
		/* Descriptor allocation stops below the limit: EMFILE. */
		{
			int i, last = 0;
			for (i = 0; i < 40; i++) {
				int d = dup(fd);
				if (d < 0)
					break;
				last = d;
			}
			CHECK_ERR(dup(fd), EMFILE);
			CHECK_ERR(open("/", O_RDONLY), EMFILE);
			CHECK(last < 32);
		}
		/* EINVAL: soft limit above the hard limit. */
		n.cur = 100;
		n.max = 50;
		CHECK_ERR(prlimit_raw(0, RLIMIT_NOFILE, &n, NULL), EINVAL);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
	/* The child's change did not affect us. */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl2), 0);
	CHECK(rl2.rlim_cur >= 64);

	/* EINVAL: unknown resource. */
	CHECK_ERR(getrlimit(100, &rl), EINVAL);
	CHECK_ERR(syscall(SYS_getrlimit, 100, &rl), EINVAL);
	CHECK_ERR(prlimit_raw(0, 100, NULL, &p), EINVAL);
	CHECK_ERR(prlimit_raw(0, -1, NULL, &p), EINVAL);

	/* ESRCH: no such process. */
	CHECK_ERR(prlimit_raw(0x3fffffff, RLIMIT_NOFILE, NULL, &p), ESRCH);

	/* EFAULT. */
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_NOFILE, BAD_PTR), EFAULT);
	CHECK_ERR(prlimit_raw(0, RLIMIT_NOFILE, NULL, BAD_PTR2), EFAULT);
	CHECK_ERR(prlimit_raw(0, RLIMIT_NOFILE, BAD_PTR2, NULL), EFAULT);

	DONE();
}
