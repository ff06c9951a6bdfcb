/* personality(2) (query with 0xffffffff, stored flags kept across fork
 * and execve) and sethostname(2)/setdomainname(2) (root only, at most 64
 * bytes, shown by uname(2) and /proc/sys/kernel). */
#include "next.h"

#include <sys/personality.h>

static long persona(unsigned long v)
{
	return syscall(SYS_personality, v);
}

static void read_proc(const char *path, char *buf, size_t n)
{
	if (t_read_file(path, buf, n) < 0)
		buf[0] = 0;
}

static void test_personality(const char *self)
{
	pid_t pid = fork();

	if (pid == 0) {
		long old = persona(0xffffffff);
		CHECK(old >= 0);
		CHECK_EQ(persona(PER_LINUX | ADDR_NO_RANDOMIZE), old);
		CHECK_EQ(persona(0xffffffff), ADDR_NO_RANDOMIZE);
		CHECK_EQ(persona(0xffffffff), ADDR_NO_RANDOMIZE);
		/* The argument is an unsigned int: the high word is dropped. */
		CHECK_EQ(persona(0x1ffffffffUL), ADDR_NO_RANDOMIZE);
		/* Any value is stored, and comes back as an unsigned int. */
		CHECK_EQ(persona(0xfffffffe), ADDR_NO_RANDOMIZE);
		CHECK_EQ(persona(0xffffffff), 0xfffffffeL);
		CHECK_EQ(persona(0x12345678), 0xfffffffeL);
		CHECK_EQ(persona(PER_LINUX | ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC), 0x12345678);
		/* Kept by fork and execve, except READ_IMPLIES_EXEC, which
		 * loading a 64-bit program clears. */
		{
			pid_t c = fork();
			if (c == 0)
				_exit(persona(0xffffffff) == (ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC) ? 0 : 1);
			t_wait_ok(c);
			c = fork();
			if (c == 0) {
				execl(self, self, "persona", (char *)NULL);
				_exit(9);
			}
			t_wait_ok(c);
		}
		CHECK_EQ(persona(PER_LINUX), ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC);
		CHECK_EQ(persona(0xffffffff), PER_LINUX);
		CHILD_DONE();
	}
	t_wait_ok(pid);
}

static void test_names(void)
{
	struct utsname u0, u;
	char name[80], buf[128];
	int isolated;

	CHECK_EQ(uname(&u0), 0);
	/* Do not rename the host Linux: a private UTS namespace there. */
	isolated = unshare(CLONE_NEWUTS) == 0;
	if (geteuid() != 0) {
		t_printf("  note: not root: only EPERM checked\n");
		CHECK_ERR(sethostname("x", 1), EPERM);
		return;
	}
	CHECK_EQ(sethostname("trellis-test", 12), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK(!strcmp(u.nodename, "trellis-test"));
	CHECK_EQ(gethostname(name, sizeof name), 0);
	CHECK(!strcmp(name, "trellis-test"));
	read_proc("/proc/sys/kernel/hostname", buf, sizeof buf);
	CHECK(!strcmp(buf, "trellis-test\n"));
	/* Only len bytes are taken; 64 is the most. */
	CHECK_EQ(sethostname("abcdef", 3), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK(!strcmp(u.nodename, "abc"));
	memset(name, 'h', 64);
	CHECK_EQ(sethostname(name, 64), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_EQ(strlen(u.nodename), 64);
	CHECK_ERR(sethostname(name, 65), EINVAL);
	CHECK_ERR(syscall(SYS_sethostname, name, -1), EINVAL);
	CHECK_ERR(sethostname(BAD_PTR2, 3), EFAULT);
	CHECK_EQ(sethostname("", 0), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_EQ(u.nodename[0], 0);

	CHECK_EQ(setdomainname("example.org", 11), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK(!strcmp(u.domainname, "example.org"));
	read_proc("/proc/sys/kernel/domainname", buf, sizeof buf);
	CHECK(!strcmp(buf, "example.org\n"));
	CHECK_ERR(setdomainname(name, 65), EINVAL);
	CHECK_ERR(setdomainname(BAD_PTR2, 3), EFAULT);
	CHECK(!strcmp(u.nodename, ""));

	/* Unprivileged: EPERM, before the length is looked at. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			CHECK_EQ(setuid(65534), 0);
			CHECK_ERR(sethostname("x", 1), EPERM);
			CHECK_ERR(sethostname("x", 65), EPERM);
			CHECK_ERR(setdomainname("x", 1), EPERM);
			CHILD_DONE();
		}
		t_wait_ok(pid);
	}

	/* Put the names back (the guest has one UTS namespace). */
	CHECK_EQ(sethostname(u0.nodename, strlen(u0.nodename)), 0);
	CHECK_EQ(setdomainname(u0.domainname, strlen(u0.domainname)), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK(!strcmp(u.nodename, u0.nodename));
	CHECK(!strcmp(u.domainname, u0.domainname));
	(void)isolated;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];

	if (argc > 1 && !strcmp(argv[1], "persona"))
		return persona(0xffffffff) == ADDR_NO_RANDOMIZE ? 0 : 1;
	t_self_path(argv[0], self, sizeof self);
	test_personality(self);
	/* Names last: a test of its own process's UTS namespace. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			test_names();
			CHILD_DONE();
		}
		t_wait_ok(pid);
	}
	DONE();
}
