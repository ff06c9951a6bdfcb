/* syslog(2) through klogctl: the size of the kernel log, reading all of
 * it (as root; for others as /proc/sys/kernel/dmesg_restrict says), the
 * privileged actions refused to others (EPERM), and EINVAL for bad
 * actions, buffers and console levels. Nothing is cleared or changed. */
#include "next.h"
#include <sys/klog.h>

int main(void)
{
	static char buf[1 << 20];
	char restrict_s[8] = "";
	int size, n, st, restricted;
	pid_t pid;

	size = klogctl(10, NULL, 0);
	CHECK(size > 0);
	n = klogctl(3, buf, sizeof buf);
	CHECK(n >= 0);
	CHECK(klogctl(9, NULL, 0) >= 0);
	CHECK_EQ(klogctl(3, buf, 0), 0);
	CHECK_ERR(klogctl(99, NULL, 0), EINVAL);
	CHECK_ERR(klogctl(3, NULL, 10), EINVAL);
	CHECK_ERR(klogctl(3, buf, -1), EINVAL);
	CHECK_ERR(klogctl(8, NULL, 0), EINVAL);
	CHECK_ERR(klogctl(8, NULL, 9), EINVAL);

	CHECK(t_read_file("/proc/sys/kernel/dmesg_restrict", restrict_s,
			  sizeof restrict_s) > 0);
	restricted = restrict_s[0] == '1';
	if (!t_is_root())
		DONE();
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setuid(4321), 0);
		if (restricted) {
			CHECK_ERR(klogctl(3, buf, 100), EPERM);
		} else {
			CHECK(klogctl(3, buf, 100) >= 0);
			CHECK(klogctl(10, NULL, 0) > 0);
		}
		CHECK_ERR(klogctl(5, NULL, 0), EPERM);
		CHECK_ERR(klogctl(4, buf, 100), EPERM);
		CHECK_ERR(klogctl(9, NULL, 0), EPERM);
		CHILD_DONE();
	}
	st = t_wait(pid);
	CHECK_EQ(st, 0);
	DONE();
}
