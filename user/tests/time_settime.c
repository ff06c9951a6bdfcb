/* clock_settime(2) and settimeofday(2): only CLOCK_REALTIME can be set
 * (EINVAL for the others), an invalid time is EINVAL, an unprivileged
 * caller gets EPERM, a bad pointer EFAULT. Setting the clock for real is
 * only done on Trellis (never on the host running the suite): the wall
 * clock jumps, the monotonic clock does not, new file times follow, and
 * the clock is put back. */
#include "next.h"

int main(void)
{
	struct timespec ts, mono0, mono1, real;
	struct timeval tv;
	pid_t pid;
	int st;

	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
	CHECK_ERR(clock_settime(CLOCK_MONOTONIC, &ts), EINVAL);
	CHECK_ERR(clock_settime(CLOCK_BOOTTIME, &ts), EINVAL);
	CHECK_ERR(clock_settime(CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
	CHECK_ERR(clock_settime(12345, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)8), EFAULT);
	ts.tv_nsec = 1000000000L;
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EINVAL);
	tv.tv_sec = 1;
	tv.tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	tv.tv_sec = -1;
	tv.tv_usec = 0;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);

	/* Unprivileged: EPERM (so nothing changes on the host either). */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setuid(4321), 0);
		CHECK_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
		CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EPERM);
		CHECK_EQ(gettimeofday(&tv, NULL), 0);
		CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EPERM);
		CHILD_DONE();
	}
	st = t_wait(pid);
	CHECK_EQ(st, 0);

	if (!t_is_trellis()) {
		t_note("not setting the host's clock");
		DONE();
	}
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &mono0), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
	ts.tv_sec += 100000;
	CHECK_EQ(clock_settime(CLOCK_REALTIME, &ts), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &real), 0);
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &mono1), 0);
	CHECK(real.tv_sec >= ts.tv_sec && real.tv_sec <= ts.tv_sec + 5);
	CHECK(mono1.tv_sec - mono0.tv_sec < 5);
	{
		char path[PATH_MAX];
		struct stat sb;

		CHECK_EQ(t_mktmp("time_settime", path, sizeof path), 0);
		CHECK_EQ(stat(path, &sb), 0);
		CHECK(sb.st_mtime >= ts.tv_sec);
		rmdir(path);
	}
	/* settimeofday back to the original time. */
	CHECK_EQ(gettimeofday(&tv, NULL), 0);
	tv.tv_sec -= 100000;
	CHECK_EQ(syscall(SYS_settimeofday, &tv, NULL), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &real), 0);
	CHECK(real.tv_sec < ts.tv_sec - 99000);
	DONE();
}
