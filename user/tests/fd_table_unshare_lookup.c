/* Descriptor lookups follow the table the caller has now: after
 * close_range(CLOSE_RANGE_UNSHARE) a CLONE_FILES child's read, write,
 * fstat, open and close act on its own copy, and the parent's table is
 * untouched; while the table is shared, a close by one process is seen by
 * the other's next read, write and fstat. (Trellis keeps the table from
 * one system call to the next in the thread's loop: this checks that it
 * notices a change.) */
#include "next.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

/* The child's half: exit status names the first check that failed. */
static int child_after_unshare(int rd, int wr)
{
	struct stat st;
	char c;
	if (syscall(SYS_close_range, rd, rd, CLOSE_RANGE_UNSHARE) != 0)
		return 1;
	if (fstat(rd, &st) != -1 || errno != EBADF)
		return 2;
	if (read(rd, &c, 1) != -1 || errno != EBADF)
		return 3;
	/* The write end is still open in the copy. */
	if (write(wr, "a", 1) != 1)
		return 4;
	/* The freed number is reused in the copy only. */
	int fd = open("/dev/null", O_WRONLY);
	if (fd != rd)
		return 5;
	if (write(fd, "b", 1) != 1 || fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))
		return 6;
	if (close(fd) != 0 || close(wr) != 0)
		return 7;
	if (write(wr, "x", 1) != -1 || errno != EBADF)
		return 8;
	return 0;
}

int main(void)
{
	int p[2];
	CHECK_EQ(pipe(p), 0);
	long pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(child_after_unshare(p[0], p[1]));
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* Both ends are still open here, and the child's byte came through. */
	struct stat st;
	char c = 0;
	CHECK_EQ(fstat(p[0], &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'a');
	CHECK_EQ(write(p[1], "c", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'c');

	/* Shared: the child's close is what the parent's next lookup sees. */
	pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(close(p[1]) == 0 ? 0 : 1);
	CHECK(pid > 0);
	t_wait_ok(pid);
	CHECK_ERR(fstat(p[1], &st), EBADF);
	CHECK_ERR(write(p[1], "d", 1), EBADF);
	/* No writer is left: end of file. */
	CHECK_EQ(read(p[0], &c, 1), 0);
	CHECK_EQ(close(p[0]), 0);
	DONE();
}
