/* getuid/geteuid/getgid/getegid: consistent values, inherited, ownership. */
#include "t.h"

int main(void)
{
	char dir[128], path[256];
	uid_t uid = getuid(), euid = geteuid();
	gid_t gid = getgid(), egid = getegid();
	struct stat st;
	pid_t pid;

	/* Real and effective ids agree for a normal (non-setuid) program. */
	CHECK_EQ(uid, euid);
	CHECK_EQ(gid, egid);

	/* Raw syscalls agree with the wrappers and are stable. */
	CHECK_EQ(syscall(SYS_getuid), uid);
	CHECK_EQ(syscall(SYS_geteuid), euid);
	CHECK_EQ(syscall(SYS_getgid), gid);
	CHECK_EQ(syscall(SYS_getegid), egid);
	CHECK_EQ(getuid(), uid);
	CHECK_EQ(getgid(), gid);

	/* Ids are never the "invalid" value -1. */
	CHECK(uid != (uid_t)-1);
	CHECK(gid != (gid_t)-1);

	/* Children inherit the same ids. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(getuid(), uid);
		CHECK_EQ(geteuid(), euid);
		CHECK_EQ(getgid(), gid);
		CHECK_EQ(getegid(), egid);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* New files and directories are owned by the effective ids. */
	if (t_mktmp("uid_gid", dir, sizeof dir))
		DONE();
	CHECK_EQ(stat(dir, &st), 0);
	CHECK_EQ(st.st_uid, euid);
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_uid, euid);
	CHECK_EQ(st.st_gid, egid);

	t_rmtree(dir);
	DONE();
}
