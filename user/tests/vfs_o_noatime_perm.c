/* O_NOATIME may only be asked for by the file's owner or root: open(2)
 * and fcntl(F_SETFL) give EPERM to anyone else (after the permission
 * check: no read permission is still EACCES); F_GETFL shows it. */
#include "next.h"

#define NOBODY 65534

int main(void)
{
	char dir[PATH_MAX], theirs[PATH_MAX], mine[PATH_MAX], secret[PATH_MAX];
	int fd;
	pid_t pid;

	if (t_mktmp("vfs_o_noatime_perm", dir, sizeof dir))
		DONE();
	CHECK_EQ(chmod(dir, 0777), 0);
	t_join(theirs, sizeof theirs, dir, "theirs");
	t_join(mine, sizeof mine, dir, "mine");
	t_join(secret, sizeof secret, dir, "secret");
	CHECK_EQ(t_write_file(theirs, "x", 1, 0666), 0);
	CHECK_EQ(chmod(theirs, 0666), 0);
	CHECK_EQ(t_write_file(secret, "x", 1, 0600), 0);
	CHECK_EQ(t_write_file(mine, "x", 1, 0644), 0);

	/* The owner (and root, for anyone's file). */
	fd = open(theirs, O_RDONLY | O_NOATIME);
	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_GETFL) & O_NOATIME);
	CHECK_EQ(fcntl(fd, F_SETFL, 0), 0);
	CHECK(!(fcntl(fd, F_GETFL) & O_NOATIME));
	CHECK_EQ(fcntl(fd, F_SETFL, O_NOATIME), 0);
	CHECK(fcntl(fd, F_GETFL) & O_NOATIME);
	close(fd);

	if (!t_is_root())
		SKIP("needs root to check another user");
	CHECK_EQ(chown(mine, NOBODY, NOBODY), 0);
	pid = fork();
	if (pid == 0) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		CHECK_ERR(open(theirs, O_RDONLY | O_NOATIME), EPERM);
		CHECK_ERR(open(theirs, O_RDWR | O_NOATIME), EPERM);
		CHECK_ERR(open(secret, O_RDONLY | O_NOATIME), EACCES);
		fd = open(mine, O_RDONLY | O_NOATIME);
		CHECK(fd >= 0);
		close(fd);
		fd = open(theirs, O_RDONLY);
		CHECK(fd >= 0);
		CHECK_ERR(fcntl(fd, F_SETFL, O_NOATIME), EPERM);
		CHECK(!(fcntl(fd, F_GETFL) & O_NOATIME));
		CHECK_EQ(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
		close(fd);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	t_rmtree(dir);
	DONE();
}
