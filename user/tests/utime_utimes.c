/*
 * The older time-setting calls: utime(2) with whole seconds, utimes(2)
 * and futimesat(2) with microseconds; NULL means now. Explicit times need
 * ownership (EPERM), "now" write access (EACCES).
 */
#include "t.h"
#include <sys/time.h>
#include <utime.h>

int main(void)
{
	char dir[128], file[256];
	struct stat st;
	struct utimbuf ub;
	struct timeval tv[2];
	time_t before;
	int dfd;

	if (t_mktmp("utime_utimes", dir, sizeof dir))
		DONE();
	t_join(file, sizeof file, dir, "f");
	CHECK_EQ(t_write_file(file, "x", 1, 0644), 0);

	/* utime: whole seconds. */
	ub.actime = 1000000000;
	ub.modtime = 1100000000;
	CHECK_EQ(syscall(SYS_utime, file, &ub), 0);
	CHECK_EQ(stat(file, &st), 0);
	CHECK_EQ(st.st_atime, 1000000000);
	CHECK_EQ(st.st_mtime, 1100000000);
	CHECK_EQ(st.st_atim.tv_nsec, 0);

	/* utimes: microseconds become nanoseconds. */
	tv[0].tv_sec = 1200000000;
	tv[0].tv_usec = 123456;
	tv[1].tv_sec = 1300000000;
	tv[1].tv_usec = 654321;
	CHECK_EQ(syscall(SYS_utimes, file, tv), 0);
	CHECK_EQ(stat(file, &st), 0);
	CHECK_EQ(st.st_atime, 1200000000);
	CHECK_EQ(st.st_atim.tv_nsec, 123456000);
	CHECK_EQ(st.st_mtime, 1300000000);
	CHECK_EQ(st.st_mtim.tv_nsec, 654321000);

	/* futimesat relative to a directory descriptor. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	tv[0].tv_usec = 0;
	tv[1].tv_sec = 1400000000;
	tv[1].tv_usec = 1;
	CHECK_EQ(syscall(SYS_futimesat, dfd, "f", tv), 0);
	CHECK_EQ(stat(file, &st), 0);
	CHECK_EQ(st.st_mtime, 1400000000);
	CHECK_EQ(st.st_mtim.tv_nsec, 1000);

	/* NULL: now. */
	before = time(NULL);
	CHECK_EQ(syscall(SYS_utimes, file, NULL), 0);
	CHECK_EQ(stat(file, &st), 0);
	CHECK(st.st_mtime >= before && st.st_mtime <= time(NULL));
	CHECK(st.st_atime >= before);
	CHECK_EQ(syscall(SYS_utime, file, NULL), 0);

	/* Bad microseconds. */
	tv[0].tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_utimes, file, tv), EINVAL);
	tv[0].tv_usec = -1;
	CHECK_ERR(syscall(SYS_futimesat, dfd, "f", tv), EINVAL);
	tv[0].tv_usec = 0;

	/* Errors of the path and pointers. */
	CHECK_ERR(syscall(SYS_utime, "/no/such/file", NULL), ENOENT);
	CHECK_ERR(syscall(SYS_utimes, file, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_utime, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_futimesat, 999, "f", tv), EBADF);

	/* Another user: explicit times EPERM; now needs write access. */
	{
		pid_t child;
		CHECK_EQ(chmod(file, 0644), 0);
		child = fork();
		if (child == 0) {
			CHECK_EQ(setuid(65534), 0);
			CHECK_ERR(syscall(SYS_utimes, file, tv), EPERM);
			CHECK_ERR(syscall(SYS_utime, file, NULL), EACCES);
			CHILD_DONE();
		}
		CHECK(t_wait_ok(child));
		CHECK_EQ(chmod(file, 0666), 0);
		child = fork();
		if (child == 0) {
			CHECK_EQ(setuid(65534), 0);
			CHECK_EQ(syscall(SYS_utimes, file, NULL), 0);
			CHECK_ERR(syscall(SYS_utime, file, &ub), EPERM);
			CHILD_DONE();
		}
		CHECK(t_wait_ok(child));
	}
	close(dfd);
	t_rmtree(dir);
	DONE();
}
