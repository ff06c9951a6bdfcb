/* Mode-bit semantics: the owner class wins even when it grants less than
 * "other", the group class, the sticky bit on directories, setgid
 * directories passing their group on, root's override (except execute
 * needs some x bit), umask on mkdir and mknod. */
#include "next.h"

static char dir[PATH_MAX];

int main(void)
{
	struct stat st;
	pid_t pid;

	if (!t_is_root())
		SKIP("needs root to set up files for other users");
	if (t_mktmp("vfs_perm_modes", dir, sizeof dir) != 0)
		DONE();
	CHECK_EQ(chmod(dir, 0755), 0);
	CHECK_EQ(chdir(dir), 0);

	/* Owned by nobody with mode 0077: nobody cannot read it, others can. */
	CHECK_EQ(t_write_file("f_owner", "o", 1, 0644), 0);
	CHECK_EQ(chown("f_owner", 65534, 65534), 0);
	CHECK_EQ(chmod("f_owner", 0077), 0);
	/* Group 65534 without access, other with read. */
	CHECK_EQ(t_write_file("f_group", "g", 1, 0644), 0);
	CHECK_EQ(chown("f_group", 0, 65534), 0);
	CHECK_EQ(chmod("f_group", 0604), 0);
	/* Sticky, world-writable directory with root's and nobody's files. */
	CHECK_EQ(mkdir("sticky", 0777), 0);
	CHECK_EQ(chmod("sticky", 01777), 0);
	CHECK_EQ(t_write_file("sticky/roots", "r", 1, 0666), 0);
	CHECK_EQ(chmod("sticky/roots", 0666), 0);
	/* Setgid directory. */
	CHECK_EQ(mkdir("sgid", 0777), 0);
	CHECK_EQ(chown("sgid", 0, 4321), 0);
	CHECK_EQ(chmod("sgid", 02777), 0);

	pid = fork();
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		/* Owner class: denied although "other" may read. */
		CHECK_ERR(open("f_owner", O_RDONLY), EACCES);
		/* The owner may still chmod. */
		CHECK_EQ(chmod("f_owner", 0400), 0);
		fd = open("f_owner", O_RDONLY);
		CHECK(fd >= 0);
		close(fd);
		/* Group class: denied although "other" may read. */
		CHECK_ERR(open("f_group", O_RDONLY), EACCES);
		/* Sticky: may create, may delete own, not others'. */
		CHECK_EQ(t_write_file("sticky/mine", "m", 1, 0644), 0);
		CHECK_ERR(unlink("sticky/roots"), EPERM);
		CHECK_ERR(rename("sticky/roots", "sticky/x"), EPERM);
		CHECK_EQ(unlink("sticky/mine"), 0);
		/* ...but may write to the world-writable file. */
		fd = open("sticky/roots", O_WRONLY);
		CHECK(fd >= 0);
		close(fd);
		/* setgid directory: new files get its group, subdirectories
		 * its group and the setgid bit. */
		CHECK_EQ(t_write_file("sgid/f", "s", 1, 0644), 0);
		CHECK_EQ(stat("sgid/f", &st), 0);
		CHECK_EQ(st.st_gid, 4321);
		CHECK_EQ(mkdir("sgid/d", 0755), 0);
		CHECK_EQ(stat("sgid/d", &st), 0);
		CHECK_EQ(st.st_gid, 4321);
		CHECK(st.st_mode & S_ISGID);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Root reads and writes anything, but executes only with an x bit. */
	CHECK_EQ(t_write_file("noexec", "#!/bin/true\n", 12, 0644), 0);
	CHECK_EQ(chmod("noexec", 0), 0);
	{
		int fd = open("noexec", O_RDWR);

		CHECK(fd >= 0);
		close(fd);
	}
	CHECK_ERR(access("noexec", X_OK), EACCES);
	CHECK_EQ(chmod("noexec", 0001), 0);
	CHECK_EQ(access("noexec", X_OK), 0);
	CHECK_EQ(access("noexec", R_OK | W_OK), 0);

	/* umask applies to mkdir and mknod too. */
	{
		mode_t old = umask(0077);

		CHECK_EQ(mkdir("um", 0777), 0);
		CHECK_EQ(stat("um", &st), 0);
		CHECK_EQ(st.st_mode & 0777, 0700);
		CHECK_EQ(mknod("um_fifo", S_IFIFO | 0666, 0), 0);
		CHECK_EQ(stat("um_fifo", &st), 0);
		CHECK_EQ(st.st_mode & 0777, 0600);
		umask(old);
	}
	CHECK_EQ(chdir("/"), 0);
	t_rmtree(dir);
	DONE();
}
