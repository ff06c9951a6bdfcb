/* uname: Linux-compatible identification fields; EFAULT. */
#include "t.h"
#include <sys/utsname.h>

static int terminated(const char *f, size_t n)
{
	return memchr(f, 0, n) != NULL;
}

int main(void)
{
	struct utsname u, u2;

	memset(&u, 0x7f, sizeof u);
	CHECK_EQ(uname(&u), 0);

	/* All fields are NUL-terminated within their 65 bytes. */
	CHECK(terminated(u.sysname, sizeof u.sysname));
	CHECK(terminated(u.nodename, sizeof u.nodename));
	CHECK(terminated(u.release, sizeof u.release));
	CHECK(terminated(u.version, sizeof u.version));
	CHECK(terminated(u.machine, sizeof u.machine));
	CHECK_EQ(sizeof u.sysname, 65);

	/* Programs test for "Linux" to pick Linux behaviour. */
	CHECK(strcmp(u.sysname, "Linux") == 0);
	CHECK(strcmp(u.machine, "x86_64") == 0);
	CHECK(u.nodename[0] != 0);
	CHECK(u.release[0] != 0);
	CHECK(u.version[0] != 0);
	/* libc and others parse the release as a version: leading digit. */
	CHECK(u.release[0] >= '0' && u.release[0] <= '9');

	/* Raw syscall gives the same answer. */
	memset(&u2, 0, sizeof u2);
	CHECK_EQ(syscall(SYS_uname, &u2), 0);
	CHECK(memcmp(&u, &u2, sizeof u) == 0);

	/* EFAULT. */
	CHECK_ERR(syscall(SYS_uname, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_uname, BAD_PTR2), EFAULT);

	/* Children see the same. */
	{
		pid_t pid = fork();

		if (pid == 0) {
			struct utsname c;
			_exit(uname(&c) == 0 && !strcmp(c.release, u.release) &&
			      !strcmp(c.nodename, u.nodename) ? 0 : 1);
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
	}
	DONE();
}
