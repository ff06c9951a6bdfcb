/*
 * flock(2): locks belong to the open file description (shared by dup and
 * fork, separate for another open), LOCK_SH shares, LOCK_EX excludes,
 * LOCK_NB gives EWOULDBLOCK, conversions, LOCK_UN, EINVAL/EBADF, a
 * blocked LOCK_EX waits for the holder to close, and flock locks ignore
 * fcntl record locks.
 */
#include "t.h"
#include <sys/file.h>

/* Child: flock(path, op|LOCK_NB) on a new description; 0 ok, 1 busy. */
static int try_in_child(const char *path, int op)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(path, O_RDONLY);

		if (flock(fd, op | LOCK_NB) == 0)
			_exit(0);
		_exit(errno == EWOULDBLOCK ? 1 : 2);
	}
	return WEXITSTATUS(t_wait(pid));
}

int main(void)
{
	char dir[128], path[256], c;
	int a, b, d, p[2];
	pid_t pid;
	struct flock fl;

	if (t_mktmp("flock_basic", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	a = open(path, O_RDONLY);
	b = open(path, O_RDONLY);
	CHECK(a >= 0 && b >= 0);

	CHECK_ERR(flock(a, 0), EINVAL);
	CHECK_ERR(flock(a, LOCK_SH | LOCK_EX), EINVAL);
	CHECK_ERR(flock(-1, LOCK_SH), EBADF);

	/* Shared locks share; an exclusive one excludes. */
	CHECK_EQ(flock(a, LOCK_SH), 0);
	CHECK_EQ(flock(b, LOCK_SH | LOCK_NB), 0);
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_EQ(try_in_child(path, LOCK_SH), 0);
	CHECK_EQ(try_in_child(path, LOCK_EX), 1);
	CHECK_EQ(flock(b, LOCK_UN), 0);
	/* Upgrade a's lock now that it is alone. */
	CHECK_EQ(flock(a, LOCK_EX | LOCK_NB), 0);
	CHECK_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
	CHECK_EQ(try_in_child(path, LOCK_SH), 1);

	/* dup shares the description, and so the lock. */
	d = dup(a);
	CHECK_EQ(flock(d, LOCK_EX | LOCK_NB), 0);
	CHECK_EQ(close(a), 0);
	CHECK_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
	/* Record locks do not interact with flock. */
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_RDLCK;
	CHECK_EQ(fcntl(b, F_SETLK, &fl), 0);
	/* Closing the last descriptor releases it. */
	CHECK_EQ(close(d), 0);
	CHECK_EQ(flock(b, LOCK_EX | LOCK_NB), 0);

	/* A fork child shares the description: unlocking there unlocks. */
	pid = fork();
	if (pid == 0)
		_exit(flock(b, LOCK_UN) == 0 ? 0 : 1);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(try_in_child(path, LOCK_EX), 0);

	/* A blocked LOCK_EX waits until the holder closes its file. */
	CHECK_EQ(flock(b, LOCK_EX), 0);
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDONLY);

		close(b);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			_exit(3);
		(void)!write(p[1], "w", 1);
		_exit(flock(fd, LOCK_EX) == 0 ? 0 : 1);
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	t_sleep_ns(50 * 1000 * 1000);
	CHECK_EQ(close(b), 0);
	CHECK(t_wait_ok(pid));
	close(p[0]);
	close(p[1]);
	t_rmtree(dir);
	DONE();
}
