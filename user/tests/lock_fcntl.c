/* POSIX record locks across processes: F_SETLK conflicts (EAGAIN),
 * F_GETLK reports the holder, shared read locks, access-mode rules
 * (EBADF), release on exit and on closing ANY fd of the file, locks not
 * inherited by fork, F_SETLKW waiting, EINTR, EDEADLK, EINVAL. */
#include "next.h"

static volatile int alarmed;

static void on_alrm(int s)
{
	(void)s;
	alarmed = 1;
}

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int fd, fd2, ro, p[2], q[2];
	struct flock fl;
	pid_t pid;

	if (t_mktmp("lock_fcntl", dir, sizeof dir) != 0)
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);

	/* The child holds a write lock on [0,10) and a read lock on [20,30). */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	pid = fork();
	if (pid == 0) {
		int cfd = open(path, O_RDWR);

		close(p[1]);
		if (t_lk(cfd, F_SETLK, F_WRLCK, 0, 10) || t_lk(cfd, F_SETLK, F_RDLCK, 20, 10))
			_exit(1);
		t_post(q[1]);
		t_await(p[0]);
		_exit(0);
	}
	CHECK_EQ(t_await(q[0]), 0);

	CHECK_ERR(t_lk(fd, F_SETLK, F_WRLCK, 5, 1), EAGAIN);
	CHECK_ERR(t_lk(fd, F_SETLK, F_RDLCK, 0, 0), EAGAIN);
	/* Read locks share. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_RDLCK, 25, 2), 0);
	CHECK_ERR(t_lk(fd, F_SETLK, F_WRLCK, 25, 2), EAGAIN);
	/* Free range. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_WRLCK, 10, 10), 0);

	fl = t_getlk(fd, F_WRLCK, 3, 2);
	CHECK_EQ(fl.l_type, F_WRLCK);
	CHECK_EQ(fl.l_pid, pid);
	CHECK_EQ(fl.l_start, 0);
	CHECK_EQ(fl.l_len, 10);
	CHECK_EQ(fl.l_whence, SEEK_SET);
	fl = t_getlk(fd, F_WRLCK, 28, 1);
	CHECK_EQ(fl.l_type, F_RDLCK);
	CHECK_EQ(fl.l_pid, pid);
	/* A read lock does not conflict with a read lock: F_UNLCK. */
	fl = t_getlk(fd, F_RDLCK, 28, 1);
	CHECK_EQ(fl.l_type, F_UNLCK);
	/* Our own locks never conflict with us. */
	fl = t_getlk(fd, F_WRLCK, 12, 1);
	CHECK_EQ(fl.l_type, F_UNLCK);

	/* Locks are not inherited by fork. */
	{
		pid_t g = fork();

		if (g == 0) {
			struct flock f2 = t_getlk(fd, F_WRLCK, 12, 1);

			_exit(f2.l_type == F_WRLCK && f2.l_pid == getppid() ? 0 : 1);
		}
		CHECK(t_wait_ok(g));
	}

	/* F_SETLKW waits until the child exits (releasing its locks). */
	close(p[1]);
	CHECK_EQ(t_lk(fd, F_SETLKW, F_WRLCK, 0, 10), 0);
	CHECK(t_wait_ok(pid));
	close(p[0]);
	close(q[0]);
	close(q[1]);

	/* Closing any fd of the file drops all our locks on it. */
	fd2 = open(path, O_RDONLY);
	CHECK(fd2 >= 0);
	close(fd2);
	pid = fork();
	if (pid == 0) {
		int cfd = open(path, O_RDWR);

		_exit(t_lk(cfd, F_SETLK, F_WRLCK, 0, 0) == 0 ? 0 : 1);
	}
	CHECK(t_wait_ok(pid));

	/* Access modes. */
	ro = open(path, O_RDONLY);
	CHECK_ERR(t_lk(ro, F_SETLK, F_WRLCK, 0, 1), EBADF);
	CHECK_EQ(t_lk(ro, F_SETLK, F_RDLCK, 0, 1), 0);
	{
		int wo = open(path, O_WRONLY);

		CHECK_ERR(t_lk(wo, F_SETLK, F_RDLCK, 0, 1), EBADF);
		CHECK_EQ(t_lk(wo, F_SETLK, F_WRLCK, 0, 1), 0);
		close(wo);
	}
	close(ro);

	/* Invalid arguments. */
	CHECK_ERR(t_lk(fd, F_SETLK, 42, 0, 1), EINVAL);
	CHECK_ERR(t_lk(fd, F_SETLK, F_WRLCK, -5, 1), EINVAL);
	fl.l_type = F_WRLCK;
	fl.l_whence = 7;
	fl.l_start = 0;
	fl.l_len = 1;
	CHECK_ERR(fcntl(fd, F_SETLK, &fl), EINVAL);
	CHECK_ERR(fcntl(fd, F_SETLK, BAD_PTR2), EFAULT);
	CHECK_ERR(t_lk(9999, F_SETLK, F_WRLCK, 0, 1), EBADF);

	/* F_SETLKW is interrupted by a handled signal: EINTR. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	pid = fork();
	if (pid == 0) {
		int cfd = open(path, O_RDWR);

		close(p[1]);
		if (t_lk(cfd, F_SETLK, F_WRLCK, 100, 1))
			_exit(1);
		t_post(q[1]);
		t_await(p[0]);
		_exit(0);
	}
	CHECK_EQ(t_await(q[0]), 0);
	t_sigaction(SIGALRM, on_alrm, 0);
	alarm(1);
	CHECK_ERR(t_lk(fd, F_SETLKW, F_WRLCK, 100, 1), EINTR);
	CHECK(alarmed);

	/* Deadlock detection: we hold 200, the child holds 100 and waits
	 * for 200; our wait for 100 would deadlock. */
	CHECK_EQ(t_lk(fd, F_SETLK, F_WRLCK, 200, 1), 0);
	{
		int r[2];
		pid_t b;

		CHECK_EQ(pipe(r), 0);
		b = fork();
		if (b == 0) {
			int cfd = open(path, O_RDWR);

			/* Grab 300, tell the parent, then wait for 200. */
			if (t_lk(cfd, F_SETLK, F_WRLCK, 300, 1))
				_exit(1);
			t_post(r[1]);
			_exit(t_lk(cfd, F_SETLKW, F_WRLCK, 200, 1) == 0 ? 0 : 2);
		}
		CHECK_EQ(t_await(r[0]), 0);
		if (!t_wait_proc_state(b, "S"))
			t_msleep(50);
		CHECK_ERR(t_lk(fd, F_SETLKW, F_WRLCK, 300, 1), EDEADLK);
		/* Release 200: the child gets it and exits. */
		CHECK_EQ(t_lk(fd, F_SETLK, F_UNLCK, 200, 1), 0);
		CHECK(t_wait_ok(b));
		close(r[0]);
		close(r[1]);
	}
	close(p[1]);
	CHECK(t_wait_ok(pid));
	close(fd);
	t_rmtree(dir);
	DONE();
}
