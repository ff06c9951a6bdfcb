/* pipe/pipe2: data flow, access modes, EOF after every writer closes
 * (including copies in children), EBADF for the wrong end, EFAULT,
 * EINVAL for bad pipe2 flags, fstat type. */
#include "next.h"

int main(void)
{
	int p[2], q[2];
	char buf[64];
	struct stat st;
	pid_t pid;

	CHECK_EQ(pipe(p), 0);
	CHECK(p[0] >= 0 && p[1] >= 0 && p[0] != p[1]);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_EQ(fcntl(p[0], F_GETFD), 0);
	CHECK_EQ(fstat(p[0], &st), 0);
	CHECK(S_ISFIFO(st.st_mode));

	CHECK_EQ(write(p[1], "hello", 5), 5);
	CHECK_EQ(write(p[1], " world", 6), 6);
	/* A read returns what is there (up to the size asked). */
	CHECK_EQ(read(p[0], buf, 3), 3);
	CHECK(memcmp(buf, "hel", 3) == 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 8);
	CHECK(memcmp(buf, "lo world", 8) == 0);

	/* Wrong ends. */
	CHECK_ERR(read(p[1], buf, 1), EBADF);
	CHECK_ERR(write(p[0], "x", 1), EBADF);

	/* Zero-length read/write succeed. */
	CHECK_EQ(write(p[1], buf, 0), 0);

	/* EOF only after all writers are closed, here the child's copy too. */
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		t_msleep(30);
		(void)!write(p[1], "c", 1);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read(p[0], buf, sizeof buf), 1);
	CHECK_EQ(buf[0], 'c');
	CHECK_EQ(read(p[0], buf, sizeof buf), 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 0);
	CHECK(t_wait_ok(pid));
	close(p[0]);

	/* Data written before the writer closed is still read. */
	CHECK_EQ(pipe(q), 0);
	CHECK_EQ(write(q[1], "tail", 4), 4);
	close(q[1]);
	CHECK_EQ(read(q[0], buf, sizeof buf), 4);
	CHECK_EQ(read(q[0], buf, sizeof buf), 0);
	close(q[0]);

	/* Errors. */
	CHECK_ERR(syscall(SYS_pipe, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_pipe2, q, 0x12345678), EINVAL);
	CHECK_ERR(syscall(SYS_pipe2, q, O_RDWR), EINVAL);
	CHECK_ERR(syscall(SYS_pipe2, BAD_PTR2, 0), EFAULT);
	DONE();
}
