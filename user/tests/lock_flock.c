/* flock: shared/exclusive between open file descriptions (even in one
 * process), LOCK_NB -> EWOULDBLOCK, conversion, sharing through dup and
 * fork, release on the last close, blocking wait woken by another
 * process, independence from fcntl locks, errors. */
#include "next.h"
#include <sys/file.h>

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int a, b, d, p[2];
	pid_t pid;

	if (t_mktmp("lock_flock", dir, sizeof dir) != 0)
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	a = open(path, O_RDONLY);
	b = open(path, O_RDONLY);

	/* Two descriptions conflict, even in one process. */
	CHECK_EQ(flock(a, LOCK_EX), 0);
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
	/* Re-locking the same description is fine. */
	CHECK_EQ(flock(a, LOCK_EX | LOCK_NB), 0);
	/* Convert to shared: b can share. */
	CHECK_EQ(flock(a, LOCK_SH), 0);
	CHECK_EQ(flock(b, LOCK_SH | LOCK_NB), 0);
	CHECK_ERR(flock(a, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_EQ(flock(b, LOCK_UN), 0);
	CHECK_EQ(flock(a, LOCK_EX | LOCK_NB), 0);

	/* A dup shares the lock; closing one copy keeps it. */
	d = dup(a);
	close(a);
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	/* The last close releases it. */
	close(d);
	CHECK_EQ(flock(b, LOCK_EX | LOCK_NB), 0);

	/* fork shares the description: the child can unlock it for us. */
	pid = fork();
	if (pid == 0) {
		flock(b, LOCK_UN);
		_exit(0);
	}
	CHECK(t_wait_ok(pid));
	a = open(path, O_RDONLY);
	CHECK_EQ(flock(a, LOCK_EX | LOCK_NB), 0);

	/* Blocking wait, released when the holder (a child) exits. */
	CHECK_EQ(flock(a, LOCK_UN), 0);
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		int c = open(path, O_RDONLY);

		flock(c, LOCK_EX);
		t_post(p[1]);
		t_msleep(30);
		_exit(0);
	}
	CHECK_EQ(t_await(p[0]), 0);
	CHECK_ERR(flock(a, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_EQ(flock(a, LOCK_EX), 0);
	CHECK(t_wait_ok(pid));

	/* Independent of fcntl locks (Linux). */
	{
		int w = open(path, O_RDWR);
		struct flock fl;

		memset(&fl, 0, sizeof fl);
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		CHECK_EQ(fcntl(w, F_SETLK, &fl), 0);
		close(w);
	}

	/* Errors. */
	CHECK_ERR(flock(a, 0), EINVAL);
	CHECK_ERR(flock(a, LOCK_NB), EINVAL);
	CHECK_ERR(flock(a, 77), EINVAL);
	CHECK_ERR(flock(9999, LOCK_SH), EBADF);
	close(a);
	close(b);
	close(p[0]);
	close(p[1]);
	t_rmtree(dir);
	DONE();
}
