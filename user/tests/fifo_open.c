/*
 * FIFOs (fifo(7)): mkfifo/mknod S_IFIFO, O_RDONLY|O_NONBLOCK opens at
 * once (and reads EOF with no writer, without POLLHUP), O_WRONLY|O_NONBLOCK
 * without a reader is ENXIO, a blocking open waits for the other end,
 * O_RDWR never blocks, data goes through, the pipe outlives neither its
 * last opener (data is dropped), and a blocked open is interrupted by a
 * signal (EINTR from a handler without SA_RESTART).
 */
#include "t.h"
#include <poll.h>

static void on_alarm(int s)
{
	(void)s;
}

int main(void)
{
	char dir[128], path[256], path2[256], buf[16];
	int r, w, rw, st;
	pid_t pid;
	struct stat sb;
	struct pollfd pf;
	struct sigaction sa;

	if (t_mktmp("fifo_open", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	t_join(path2, sizeof path2, dir, "g");
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK_EQ(mknod(path2, S_IFIFO | 0600, 0), 0);
	CHECK_EQ(stat(path, &sb), 0);
	CHECK(S_ISFIFO(sb.st_mode));
	CHECK_ERR(mkfifo(path, 0600), EEXIST);

	/* Non-blocking opens. */
	CHECK_ERR(open(path, O_WRONLY | O_NONBLOCK), ENXIO);
	r = open(path, O_RDONLY | O_NONBLOCK);
	CHECK(r >= 0);
	CHECK_EQ(read(r, buf, sizeof buf), 0);
	pf.fd = r;
	pf.events = POLLIN;
	CHECK_EQ(poll(&pf, 1, 0), 0);
	w = open(path, O_WRONLY | O_NONBLOCK);
	CHECK(w >= 0);
	CHECK_EQ(write(w, "abc", 3), 3);
	CHECK_EQ(read(r, buf, sizeof buf), 3);
	CHECK_ERR(read(r, buf, sizeof buf), EAGAIN);
	CHECK_ERR(lseek(r, 0, SEEK_SET), ESPIPE);
	/* The writer leaves: EOF and POLLHUP now. */
	CHECK_EQ(close(w), 0);
	CHECK_EQ(read(r, buf, sizeof buf), 0);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLHUP);
	CHECK_EQ(close(r), 0);

	/* Blocking opens meet: the reader waits for the writer. */
	pid = fork();
	if (pid == 0) {
		int fd;

		t_sleep_ns(50 * 1000 * 1000);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "hi", 2) != 2)
			_exit(1);
		_exit(0);
	}
	r = open(path, O_RDONLY);
	CHECK(r >= 0);
	CHECK_EQ(read(r, buf, 2), 2);
	CHECK(memcmp(buf, "hi", 2) == 0);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(read(r, buf, 2), 0);
	CHECK_EQ(close(r), 0);

	/* ...and the writer waits for a reader. */
	pid = fork();
	if (pid == 0) {
		int fd;

		t_sleep_ns(50 * 1000 * 1000);
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, 3) != 3 || memcmp(buf, "xyz", 3))
			_exit(1);
		_exit(0);
	}
	w = open(path, O_WRONLY);
	CHECK(w >= 0);
	CHECK_EQ(write(w, "xyz", 3), 3);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(close(w), 0);

	/* O_RDWR opens at once, and sees its own data. */
	rw = open(path, O_RDWR);
	CHECK(rw >= 0);
	CHECK_EQ(write(rw, "q", 1), 1);
	CHECK_EQ(read(rw, buf, 1), 1);
	CHECK_EQ(buf[0], 'q');
	/* Data left when the last opener closes is dropped. */
	CHECK_EQ(write(rw, "lost", 4), 4);
	CHECK_EQ(close(rw), 0);
	rw = open(path, O_RDWR | O_NONBLOCK);
	CHECK(rw >= 0);
	CHECK_ERR(read(rw, buf, sizeof buf), EAGAIN);
	CHECK_EQ(close(rw), 0);

	/* A blocked open is interrupted by a handled signal. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	pid = fork();
	if (pid == 0) {
		alarm(1);
		r = open(path, O_RDONLY);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* O_PATH does not open the pipe. */
	r = open(path, O_PATH);
	CHECK(r >= 0);
	CHECK_ERR(open(path, O_WRONLY | O_NONBLOCK), ENXIO);
	close(r);
	t_rmtree(dir);
	DONE();
}
