/* umask: returns the previous mask; applied to open(O_CREAT) and mkdir. */
#include "t.h"

int main(void)
{
	char dir[128], path[256];
	struct stat st;
	mode_t orig;
	pid_t pid;
	int fd;

	if (t_mktmp("umask", dir, sizeof dir))
		DONE();

	/* Set/get round trip: each call returns the previous value. */
	orig = umask(022);
	CHECK_EQ(umask(077), 022);
	CHECK_EQ(umask(0), 077);
	CHECK_EQ(umask(0777), 0);
	CHECK_EQ(umask(022), 0777);

	/* Only the permission bits (0777) are kept. */
	umask(07777);
	CHECK_EQ(umask(022), 0777);

	/* Raw syscall. */
	CHECK_EQ(syscall(SYS_umask, 027), 022);
	CHECK_EQ(syscall(SYS_umask, 022), 027);

	/* Applied to files. */
	umask(022);
	t_join(path, sizeof path, dir, "f022");
	fd = open(path, O_WRONLY | O_CREAT, 0666);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0644);

	umask(077);
	t_join(path, sizeof path, dir, "f077");
	fd = open(path, O_WRONLY | O_CREAT, 0666);
	CHECK(fd >= 0);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);

	/* Applied to directories. */
	umask(022);
	t_join(path, sizeof path, dir, "d022");
	CHECK_EQ(mkdir(path, 0777), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0755);

	umask(0);
	t_join(path, sizeof path, dir, "d000");
	CHECK_EQ(mkdir(path, 0777), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0777);

	/* Inherited across fork; the child's change does not affect us. */
	umask(033);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(umask(0), 033);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
	CHECK_EQ(umask(orig), 033);

	t_rmtree(dir);
	DONE();
}
