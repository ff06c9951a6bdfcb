/* Credentials: setresuid/getresuid and the gid versions, setuid as root
 * (all three ids) and as non-root (only to real or saved), setreuid,
 * supplementary groups, EPERM; a fork child inherits them. */
#include "next.h"
#include <grp.h>

int main(void)
{
	pid_t pid;

	if (!t_is_root())
		SKIP("needs root");

	pid = fork();
	if (pid == 0) {
		uid_t r, e, s;
		gid_t gr, ge, gs, groups[8];

		CHECK_EQ(setgroups(2, (gid_t[]){ 111, 222 }), 0);
		CHECK_EQ(getgroups(8, groups), 2);
		CHECK_EQ(getgroups(0, NULL), 2);
		CHECK_ERR(getgroups(1, groups), EINVAL);

		CHECK_EQ(setresgid(1001, 1002, 1003), 0);
		CHECK_EQ(getresgid(&gr, &ge, &gs), 0);
		CHECK(gr == 1001 && ge == 1002 && gs == 1003);
		CHECK_EQ(getgid(), 1001);
		CHECK_EQ(getegid(), 1002);

		/* Keep the saved uid 0 for now. */
		CHECK_EQ(setresuid(2001, 2002, 0), 0);
		CHECK_EQ(getresuid(&r, &e, &s), 0);
		CHECK(r == 2001 && e == 2002 && s == 0);
		/* Back to root via the saved uid. */
		CHECK_EQ(seteuid(0), 0);
		CHECK_EQ(geteuid(), 0);
		/* -1 leaves an id alone. */
		CHECK_EQ(setresuid(-1, 3000, -1), 0);
		CHECK_EQ(getresuid(&r, &e, &s), 0);
		CHECK(r == 2001 && e == 3000 && s == 0);
		CHECK_EQ(seteuid(0), 0);

		/* setuid as root sets all three. */
		CHECK_EQ(setuid(4000), 0);
		CHECK_EQ(getresuid(&r, &e, &s), 0);
		CHECK(r == 4000 && e == 4000 && s == 4000);
		/* Now unprivileged: no way back. */
		CHECK_ERR(setuid(0), EPERM);
		CHECK_ERR(seteuid(0), EPERM);
		CHECK_ERR(setresuid(0, -1, -1), EPERM);
		CHECK_ERR(setgid(0), EPERM);
		CHECK_ERR(setgroups(0, NULL), EPERM);
		/* Setting to the current ids is allowed. */
		CHECK_EQ(setuid(4000), 0);
		CHECK_EQ(setresuid(4000, 4000, 4000), 0);
		/* Groups survived the uid change. */
		CHECK_EQ(getgroups(8, groups), 2);
		/* A child inherits everything. */
		{
			pid_t g = fork();

			if (g == 0)
				_exit(getuid() == 4000 && getegid() == 1002 ? 0 : 1);
			CHECK(t_wait_ok(g));
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Non-root swapping real and effective with setreuid. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setresuid(10, 20, 30), 0);
		/* Effective may become the real or the saved one, not the
		 * old effective once changed away. */
		CHECK_EQ(seteuid(30), 0);
		CHECK_EQ(seteuid(10), 0);
		CHECK_ERR(seteuid(20), EPERM);
		CHECK_ERR(seteuid(40), EPERM);
		/* 20 is none of (10, 10, 30) now. */
		CHECK_ERR(setresuid(10, 20, 30), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	pid = fork();
	if (pid == 0) {
		uid_t r, e, s;

		CHECK_EQ(setresuid(10, 20, 30), 0);
		/* setreuid that sets the real id also sets saved = new
		 * effective. */
		CHECK_EQ(setreuid(20, 10), 0);
		CHECK_EQ(getresuid(&r, &e, &s), 0);
		CHECK(r == 20 && e == 10 && s == 10);
		CHECK_ERR(seteuid(30), EPERM);
		CHECK_EQ(seteuid(20), 0);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	DONE();
}
