/*
 * A program re-executed through /proc/self/exe (as busybox does) still has
 * a readable /proc/self/exe, and following it neither loops forever nor
 * brings the kernel down. (Linux records the resolved path; a kernel that
 * records "/proc/self/exe" itself must end the loop with ELOOP.)
 */
#include "t.h"

static int check_self(void)
{
	char link[256];
	struct stat st;
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", link, sizeof link - 1);
	CHECK(n > 0);
	errno = 0;
	if (stat("/proc/self/exe", &st) == 0)
		CHECK(S_ISREG(st.st_mode));
	else
		CHECK_EQ(errno, ELOOP);
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd >= 0)
		close(fd);
	else
		CHECK_EQ(errno, ELOOP);
	/* The parent's link too (when there is a parent: as init there is
	 * none). */
	if (getppid() > 0) {
		char p[64];
		snprintf(p, sizeof p, "/proc/%d/exe", getppid());
		n = readlink(p, link, sizeof link - 1);
		CHECK(n > 0);
		errno = 0;
		if (stat(p, &st) != 0)
			CHECK_EQ(errno, ELOOP);
	}
	return t_failures;
}

int main(int argc, char **argv)
{
	pid_t child;

	if (argc > 1 && strcmp(argv[1], "--reexeced") == 0) {
		check_self();
		DONE();
	}
	check_self();
	child = fork();
	if (child == 0) {
		char *args[] = { argv[0], "--reexeced", NULL };
		execv("/proc/self/exe", args);
		t_printf("  execv(/proc/self/exe): %s\n", strerror(errno));
		_exit(2);
	}
	CHECK(t_wait_ok(child));
	DONE();
}
