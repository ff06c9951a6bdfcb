/* /dev/tty and /dev/console: device numbers; opening /dev/tty without a
 * controlling terminal fails with ENXIO (after setsid this is certain);
 * with one it refers to it. */
#include "next.h"

int main(void)
{
	struct stat st;
	pid_t pid;
	int fd;

	CHECK_EQ(stat("/dev/tty", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 5);
	CHECK_EQ(minor(st.st_rdev), 0);
	CHECK_EQ(st.st_mode & 0666, 0666);
	CHECK_EQ(stat("/dev/console", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 5);
	CHECK_EQ(minor(st.st_rdev), 1);

	/* In a new session there is no controlling terminal. */
	pid = fork();
	if (pid == 0) {
		setsid();
		CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Here: either ENXIO or a terminal. */
	fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	if (fd >= 0) {
		CHECK(isatty(fd));
		close(fd);
	} else {
		CHECK_EQ(errno, ENXIO);
		t_note("no controlling terminal here");
	}
	DONE();
}
