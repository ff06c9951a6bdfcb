/*
 * fcntl(2) record locks: F_GETLK reports a conflicting lock (type, range,
 * pid) or F_UNLCK; F_SETLK fails with EAGAIN on conflict; read locks
 * share, write locks exclude; a process's own locks are replaced, split
 * and merged; EBADF for a lock type the open mode does not allow; EINVAL
 * for bad types and whence; closing ANY descriptor of the file drops the
 * process's locks; F_SETLKW waits for the holder; EDEADLK when two
 * processes would wait for each other; locks go at exit; OFD locks belong
 * to the open file description.
 */
#include "t.h"

#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif

/* Child: try F_SETLK and exit 0 on success, 1 on EAGAIN/EACCES, 2 else. */
static int try_in_child(const char *path, short type, off_t start, off_t len)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(path, O_RDWR);

		if (t_lk(fd, F_SETLK, type, start, len) == 0)
			_exit(0);
		_exit(errno == EAGAIN || errno == EACCES ? 1 : 2);
	}
	return WEXITSTATUS(t_wait(pid));
}

int main(void)
{
	char dir[128], path[256];
	int fd, fd2, rdonly, p[2], q[2], st;
	struct flock fl;
	pid_t pid, holder;
	char c;

	if (t_mktmp("fcntl_lock", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);

	/* Argument errors. */
	CHECK_ERR(t_lk(fd, F_SETLK, 7, 0, 1), EINVAL);
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_RDLCK;
	fl.l_whence = 9;
	CHECK_ERR(fcntl(fd, F_SETLK, &fl), EINVAL);
	CHECK_ERR(t_lk(fd, F_SETLK, F_RDLCK, -1, 1), EINVAL);
	CHECK_ERR(t_lk(fd, F_SETLK, F_RDLCK, 5, -6), EINVAL);
	CHECK_ERR(fcntl(fd, F_SETLK, BAD_PTR2), EFAULT);
	CHECK_ERR(t_lk(-1, F_SETLK, F_RDLCK, 0, 1), EBADF);
	rdonly = open(path, O_RDONLY);
	CHECK_ERR(t_lk(rdonly, F_SETLK, F_WRLCK, 0, 1), EBADF);
	CHECK_EQ(t_lk(rdonly, F_SETLK, F_RDLCK, 0, 1), 0);
	CHECK_EQ(t_lk(rdonly, F_SETLK, F_UNLCK, 0, 1), 0);

	/* Nothing held: F_UNLCK, the rest untouched. */
	fl = t_getlk(fd, F_WRLCK, 0, 0);
	CHECK_EQ(fl.l_type, F_UNLCK);
	CHECK_EQ(fl.l_pid, 12345);

	/* Our own locks never conflict with us. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_WRLCK, 10, 10), 0);
	CHECK_EQ(t_getlk(fd, F_WRLCK, 0, 0).l_type, F_UNLCK);
	/* Another process sees it. */
	pid = fork();
	if (pid == 0) {
		int f = open(path, O_RDWR);
		struct flock g = t_getlk(f, F_RDLCK, 0, 0);

		CHECK_EQ(g.l_type, F_WRLCK);
		CHECK_EQ(g.l_whence, SEEK_SET);
		CHECK_EQ(g.l_start, 10);
		CHECK_EQ(g.l_len, 10);
		CHECK_EQ(g.l_pid, getppid());
		CHECK_EQ(t_getlk(f, F_WRLCK, 0, 10).l_type, F_UNLCK);
		CHECK_EQ(t_getlk(f, F_WRLCK, 19, 1).l_type, F_WRLCK);
		CHECK_ERR(t_lk(f, F_SETLK, F_RDLCK, 15, 1), EAGAIN);
		CHECK_EQ(t_lk(f, F_SETLK, F_WRLCK, 20, 5), 0);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Split: unlock the middle, both ends stay locked. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_UNLCK, 13, 4), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 13, 4), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 12, 1), 1);
	CHECK_EQ(try_in_child(path, F_WRLCK, 17, 1), 1);
	/* Downgrade part to a read lock: readers share it, writers do not. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_RDLCK, 10, 3), 0);
	CHECK_EQ(try_in_child(path, F_RDLCK, 10, 3), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 10, 1), 1);
	/* Merge: one write lock over everything, to EOF. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_WRLCK, 0, 0), 0);
	CHECK_EQ(try_in_child(path, F_RDLCK, 1000000, 1), 1);
	fl = t_getlk(fd, F_WRLCK, 0, 0);
	CHECK_EQ(fl.l_type, F_UNLCK);
	/* Unlocking everything. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_UNLCK, 0, 0), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 0, 0), 0);

	/* Closing any descriptor of the file drops all our locks on it. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_WRLCK, 0, 5), 0);
	fd2 = open(path, O_RDONLY);
	CHECK(fd2 >= 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 0, 5), 1);
	CHECK_EQ(close(fd2), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 0, 5), 0);

	/* F_SETLKW waits until the holder unlocks. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	holder = fork();
	if (holder == 0) {
		int f = open(path, O_RDWR);

		CHECK_EQ(t_lk(f, F_SETLK, F_WRLCK, 0, 1), 0);
		CHECK_EQ(write(p[1], "L", 1), 1);
		CHECK_EQ(read(q[0], &c, 1), 1);
		CHILD_DONE();
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_ERR(t_lk(fd, F_SETLK, F_WRLCK, 0, 1), EAGAIN);
	pid = fork();
	if (pid == 0) {
		t_sleep_ns(50 * 1000 * 1000);
		(void)!write(q[1], "U", 1);
		_exit(0);
	}
	/* The holder exits after "U": its lock goes with it. */
	CHECK_EQ(t_lk(fd, F_SETLKW, F_WRLCK, 0, 1), 0);
	CHECK(t_wait_ok(holder));
	CHECK(t_wait_ok(pid));
	CHECK_EQ(t_lk(fd, F_SETLK, F_UNLCK, 0, 0), 0);

	/* EDEADLK: we hold 0, the child holds 1 and waits for 0; we ask 1. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_WRLCK, 0, 1), 0);
	pid = fork();
	if (pid == 0) {
		int f = open(path, O_RDWR);

		CHECK_EQ(t_lk(f, F_SETLK, F_WRLCK, 1, 1), 0);
		CHECK_EQ(write(p[1], "L", 1), 1);
		CHECK_EQ(t_lk(f, F_SETLKW, F_WRLCK, 0, 1), 0);
		CHILD_DONE();
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	t_sleep_ns(100 * 1000 * 1000);
	CHECK_ERR(t_lk(fd, F_SETLKW, F_WRLCK, 1, 1), EDEADLK);
	CHECK_EQ(t_lk(fd, F_SETLK, F_UNLCK, 0, 1), 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* OFD locks belong to the description: they conflict with another
	 * description even in the same process, and with POSIX locks. */
	fd2 = open(path, O_RDWR);
	CHECK_EQ(t_lk(fd, F_OFD_SETLK, F_WRLCK, 0, 1), 0);
	CHECK_ERR(t_lk(fd2, F_OFD_SETLK, F_WRLCK, 0, 1), EAGAIN);
	CHECK_ERR(t_lk(fd2, F_SETLK, F_WRLCK, 0, 1), EAGAIN);
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_len = 1;
	CHECK_EQ(fcntl(fd2, F_OFD_GETLK, &fl), 0);
	CHECK_EQ(fl.l_type, F_WRLCK);
	CHECK_EQ(fl.l_pid, -1);
	fl.l_pid = 1;
	CHECK_ERR(fcntl(fd2, F_OFD_GETLK, &fl), EINVAL);
	/* Closing fd2 does not drop fd's OFD lock; closing fd does. */
	CHECK_EQ(close(fd2), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 0, 1), 1);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(try_in_child(path, F_WRLCK, 0, 1), 0);

	close(rdonly);
	t_rmtree(dir);
	DONE();
}
