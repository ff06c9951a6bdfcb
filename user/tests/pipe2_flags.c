/* pipe2 O_CLOEXEC and O_NONBLOCK: flags on both ends, EAGAIN for an empty
 * read and a full write, partial writes above PIPE_BUF, EAGAIN for small
 * writes that do not fit, and fcntl F_SETFL O_NONBLOCK on a plain pipe. */
#include "next.h"

int main(void)
{
	static char big[1 << 17];
	int p[2], i;
	ssize_t n, total = 0;
	char c;

	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	CHECK_EQ(fcntl(p[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(p[1], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
	close(p[0]);
	close(p[1]);

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[0], F_GETFD), 0);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);

	/* Fill it: 4 KiB writes until EAGAIN. */
	memset(big, 'f', sizeof big);
	for (i = 0; i < 1000; i++) {
		n = write(p[1], big, 4096);
		if (n < 0)
			break;
		total += n;
	}
	CHECK_EQ(n, -1);
	CHECK_EQ(errno, EAGAIN);
	CHECK(total >= 4096);
	CHECK_EQ(total % 4096, 0);
	/* The default capacity is 16 pages. */
	CHECK_EQ(total, 65536);
	/* Reading some makes room again. */
	CHECK_EQ(read(p[0], big, 4096), 4096);
	CHECK_EQ(write(p[1], big, 4096), 4096);
	CHECK_ERR(write(p[1], big, 1), EAGAIN);

	/* Drain. */
	while (read(p[0], big, sizeof big) > 0)
		;
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);

	/* A write larger than PIPE_BUF into a non-blocking pipe with some
	 * room is partial (how much fits depends on the pipe's page
	 * accounting; Linux takes 4096 here). */
	CHECK_EQ(write(p[1], big, 60000), 60000);
	n = write(p[1], big, 20000);
	CHECK(n > 0 && n < 20000);
	/* Full now. */
	CHECK_ERR(write(p[1], big, 100), EAGAIN);
	close(p[0]);
	close(p[1]);

	/* O_NONBLOCK via fcntl. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);
	/* EOF beats EAGAIN once the writer is gone. */
	close(p[1]);
	CHECK_EQ(read(p[0], &c, 1), 0);
	close(p[0]);
	DONE();
}
