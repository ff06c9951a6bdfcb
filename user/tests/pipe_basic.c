/*
 * pipe(2)/pipe2(2): flags (O_CLOEXEC, O_NONBLOCK, EINVAL for others),
 * EFAULT, data in order, EOF once every write end is closed (also one
 * inherited by a child), EAGAIN when empty and non-blocking, FIONREAD,
 * fstat (S_IFIFO, both ends the same inode), ESPIPE, EBADF on the wrong end.
 */
#include "t.h"
#include <sys/ioctl.h>

int main(void)
{
	int p[2], n;
	char buf[64];
	struct stat a, b;
	pid_t pid;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fcntl(p[0], F_GETFD), 0);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_EQ(fstat(p[0], &a), 0);
	CHECK_EQ(fstat(p[1], &b), 0);
	CHECK(S_ISFIFO(a.st_mode));
	CHECK(S_ISFIFO(b.st_mode));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(pread(p[0], buf, 1, 0), ESPIPE);

	/* Data in order; a read returns what is there, up to its size. */
	CHECK_EQ(write(p[1], "hello", 5), 5);
	CHECK_EQ(write(p[1], " world", 6), 6);
	CHECK_EQ(ioctl(p[0], FIONREAD, &n), 0);
	CHECK_EQ(n, 11);
	CHECK_EQ(read(p[0], buf, 3), 3);
	CHECK(memcmp(buf, "hel", 3) == 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 8);
	CHECK(memcmp(buf, "lo world", 8) == 0);
	CHECK_EQ(read(p[0], buf, 0), 0);

	/* The wrong end: EBADF. */
	CHECK_ERR(write(p[0], "x", 1), EBADF);
	CHECK_ERR(read(p[1], buf, 1), EBADF);

	/* EOF only when the child's inherited write end is closed too. */
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		t_sleep_ns(50 * 1000 * 1000);
		if (write(p[1], "c", 1) != 1)
			_exit(1);
		_exit(0);
	}
	CHECK_EQ(close(p[1]), 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 1);
	CHECK_EQ(buf[0], 'c');
	CHECK_EQ(read(p[0], buf, sizeof buf), 0);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(close(p[0]), 0);

	/* pipe2 flags. */
	CHECK_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(p[1], F_GETFD), FD_CLOEXEC);
	CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	CHECK(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	CHECK_ERR(read(p[0], buf, 1), EAGAIN);
	CHECK_EQ(write(p[1], "z", 1), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(close(p[1]), 0);
	/* No writer left: EOF, not EAGAIN. */
	CHECK_EQ(read(p[0], buf, 1), 0);
	CHECK_EQ(close(p[0]), 0);

	CHECK_ERR(pipe2(p, O_RDWR), EINVAL);
	CHECK_ERR(pipe2(p, O_APPEND), EINVAL);
	CHECK_ERR(syscall(SYS_pipe2, BAD_PTR2, 0), EFAULT);
	CHECK_ERR(syscall(SYS_pipe, BAD_PTR2), EFAULT);
	DONE();
}
