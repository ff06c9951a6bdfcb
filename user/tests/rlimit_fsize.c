/* RLIMIT_FSIZE (root too): a write that starts at or beyond the limit
 * raises SIGXFSZ (killing by default) and, if the signal is ignored or
 * caught, fails with EFBIG; one that crosses it is cut short at the
 * limit. Growing a file past it with truncate, ftruncate, fallocate or
 * copy_file_range is refused the same way; shrinking is fine, and
 * streams (/dev/null, pipes) are not limited. */
#include "next.h"
#include <sys/resource.h>

#define LIMIT 10000

static volatile int caught;

static void on_xfsz(int sig)
{
	(void)sig;
	caught++;
}

static int set_fsize(rlim_t bytes)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl))
		return -1;
	rl.rlim_cur = bytes;
	return setrlimit(RLIMIT_FSIZE, &rl);
}

static void limited(const char *dir)
{
	static char buf[20000];
	char path[PATH_MAX], other[PATH_MAX];
	int fd, src, afd, p[2];

	t_join(path, sizeof path, dir, "f");
	t_join(other, sizeof other, dir, "src");
	CHECK_EQ(t_write_file(other, buf, sizeof buf, 0644), 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(set_fsize(LIMIT), 0);
	signal(SIGXFSZ, SIG_IGN);

	/* Up to the limit, then cut short, then EFBIG. */
	CHECK_EQ(write(fd, buf, 8000), 8000);
	CHECK_EQ(write(fd, buf, 4000), 2000);
	CHECK_ERR(write(fd, buf, 1), EFBIG);
	CHECK_EQ(write(fd, buf, 0), 0);
	CHECK_ERR(pwrite(fd, buf, 10, 20000), EFBIG);
	CHECK_EQ(pwrite(fd, buf, 10, LIMIT - 5), 5);
	CHECK_EQ(pwrite(fd, buf, 10, 100), 10);
	afd = open(path, O_WRONLY | O_APPEND);
	CHECK(afd >= 0);
	CHECK_ERR(write(afd, buf, 1), EFBIG);
	close(afd);

	/* Growing beyond it; shrinking and reaching it are fine. */
	CHECK_ERR(ftruncate(fd, LIMIT + 1), EFBIG);
	CHECK_ERR(truncate(path, 20000), EFBIG);
	CHECK_EQ(ftruncate(fd, 5000), 0);
	CHECK_EQ(ftruncate(fd, LIMIT), 0);
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_ERR(fallocate(fd, 0, 0, LIMIT + 1), EFBIG);
	CHECK_EQ(fallocate(fd, 0, 0, LIMIT), 0);
	src = open(other, O_RDONLY);
	CHECK(src >= 0);
	{
		loff_t in = 0, out = LIMIT;

		CHECK_ERR(syscall(SYS_copy_file_range, src, &in, fd, &out, 100, 0), EFBIG);
		out = LIMIT - 50;
		CHECK_EQ(syscall(SYS_copy_file_range, src, &in, fd, &out, 100, 0), 50);
	}
	close(src);

	/* Streams are not files. */
	src = open("/dev/null", O_WRONLY);
	CHECK_EQ(write(src, buf, sizeof buf), sizeof buf);
	close(src);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(write(p[1], buf, 16384), 16384);
	close(p[0]);
	close(p[1]);

	/* A handler runs once per refused write. */
	signal(SIGXFSZ, on_xfsz);
	CHECK_ERR(pwrite(fd, buf, 1, LIMIT), EFBIG);
	CHECK_EQ(caught, 1);
	CHECK_ERR(ftruncate(fd, LIMIT + 1), EFBIG);
	CHECK_EQ(caught, 2);

	/* By default, the signal kills. */
	signal(SIGXFSZ, SIG_DFL);
	{
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			pwrite(fd, buf, 1, LIMIT);
			_exit(0);
		}
		st = t_wait(pid);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ);
	}
	close(fd);
}

int main(void)
{
	char dir[PATH_MAX];
	pid_t pid;

	if (t_mktmp("rlimit_fsize", dir, sizeof dir))
		DONE();
	pid = fork();
	if (pid == 0) {
		limited(dir);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	t_rmtree(dir);
	DONE();
}
