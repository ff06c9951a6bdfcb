/*
 * Pipe capacity (pipe(7)): 64 KiB by default, F_GETPIPE_SZ/F_SETPIPE_SZ
 * (rounded up to a power-of-two number of pages, EBUSY if the pages in
 * use do not fit, EBADF on a non-pipe), a non-blocking writer fills it
 * exactly and then gets EAGAIN, occupancy counts pages (small writes
 * merge into the last one), a write of at most PIPE_BUF bytes is
 * all-or-nothing while a larger one writes what fits.
 */
#include "t.h"
#include <poll.h>

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#define F_GETPIPE_SZ 1032
#endif

static long fill(int fd, size_t chunk)
{
	static char buf[8192];
	long total = 0;
	ssize_t n;

	while ((n = write(fd, buf, chunk)) > 0)
		total += n;
	return n < 0 && errno == EAGAIN ? total : -1;
}

int main(void)
{
	int p[2], fd;
	static char buf[70000];
	struct pollfd pf;
	char dir[128], path[256];

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 65536);
	CHECK_EQ(fcntl(p[1], F_GETPIPE_SZ), 65536);
	CHECK_EQ(fill(p[1], 1), 65536);
	pf.fd = p[1];
	pf.events = POLLOUT;
	CHECK_EQ(poll(&pf, 1, 0), 0);
	/* Reading one byte of a full pipe does not make room for PIPE_BUF. */
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(poll(&pf, 1, 0), 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 65535);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);

	/*
	 * Occupancy counts pages: after 16 writes of 4096 bytes, reading 100
	 * frees no page, so not even one byte fits.
	 */
	CHECK_EQ(fill(p[1], 4096), 65536);
	CHECK_EQ(read(p[0], buf, 100), 100);
	CHECK_ERR(write(p[1], buf, 1), EAGAIN);
	CHECK_EQ(read(p[0], buf, 3996), 3996);
	CHECK_EQ(write(p[1], buf, 100), 100);
	/* Small writes merge into the last page while it has room... */
	CHECK_EQ(write(p[1], buf, 200), 200);
	/* ...and a write of at most PIPE_BUF bytes goes in whole or not at all. */
	CHECK_ERR(write(p[1], buf, 4000), EAGAIN);
	CHECK_EQ(write(p[1], buf, 3796), 3796);
	/* A larger one writes what fits: one free page. */
	CHECK_EQ(read(p[0], buf, 4096), 4096);
	CHECK_EQ(write(p[1], buf, 8000), 4096);
	CHECK_EQ(read(p[0], buf, sizeof buf), 65536);

	/* Resizing. */
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 4096);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 5000), 8192);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 1), 4096);
	CHECK_EQ(fill(p[1], 1), 4096);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 65536), 65536);
	CHECK_EQ(read(p[0], buf, sizeof buf), 4096);
	CHECK_EQ(write(p[1], buf, 3000), 3000);
	CHECK_EQ(write(p[1], buf, 4096), 4096);
	/* Two pages in use do not fit in one. */
	CHECK_ERR(fcntl(p[1], F_SETPIPE_SZ, 0), EBUSY);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 8192), 8192);
	CHECK_EQ(read(p[0], buf, sizeof buf), 7096);
	close(p[0]);
	close(p[1]);

	/* Not a pipe: EBADF. */
	if (t_mktmp("pipe_capacity", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	fd = open(path, O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK_ERR(fcntl(fd, F_GETPIPE_SZ), EBADF);
	CHECK_ERR(fcntl(fd, F_SETPIPE_SZ, 4096), EBADF);
	close(fd);
	t_rmtree(dir);
	DONE();
}
