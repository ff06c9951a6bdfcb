/*
 * Pipe reads and writes that copy straight between user memory and the
 * pipe's pages (pipe(7)): a read whose buffer faults part-way returns what
 * it copied and leaves the rest in the pipe, in order; a write whose
 * buffer faults part-way keeps the whole pages it copied; parts of pages
 * are read in order; small writes merge into one page of a one-page pipe
 * until it is full; non-blocking writes stop at the capacity; readv and
 * writev move the bytes of every iovec.
 */
#include "t.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>

static int pending(int fd)
{
	int n = -1;
	if (ioctl(fd, FIONREAD, &n) < 0)
		return -1;
	return n;
}

int main(void)
{
	int p[2], i, bad;
	static char src[20000], dst[20000];
	long page = 4096;

	for (i = 0; i < (int)sizeof src; i++)
		src[i] = (char)(i * 13 + 5);
	/* Two pages, the second unmapped. */
	char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(two != MAP_FAILED);
	CHECK_EQ(munmap(two + page, page), 0);

	/* A read that faults after the first page: 4096 bytes, the rest stays. */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(write(p[1], src, 10000), 10000);
	CHECK_EQ(read(p[0], two, 2 * page), page);
	CHECK_EQ(memcmp(two, src, page), 0);
	CHECK_EQ(pending(p[0]), 10000 - 4096);
	/* Nothing can be copied: EFAULT, the pipe unchanged. */
	CHECK_ERR(read(p[0], two + page, 100), EFAULT);
	CHECK_EQ(pending(p[0]), 10000 - 4096);
	CHECK_EQ(read(p[0], dst, sizeof dst), 10000 - 4096);
	CHECK_EQ(memcmp(dst, src + 4096, 10000 - 4096), 0);

	/* A write that faults after the first page keeps that page. */
	memcpy(two, src, page);
	CHECK_EQ(write(p[1], two, 2 * page), page);
	CHECK_EQ(pending(p[0]), page);
	CHECK_ERR(write(p[1], two + page, 10), EFAULT);
	CHECK_EQ(pending(p[0]), page);
	CHECK_EQ(read(p[0], dst, sizeof dst), page);
	CHECK_EQ(memcmp(dst, src, page), 0);

	/* Parts of pages, in order. */
	CHECK_EQ(write(p[1], src, 3000), 3000);
	CHECK_EQ(write(p[1], src + 3000, 5000), 5000);
	bad = 0;
	for (i = 0; i < 10; i++) {
		char c;
		CHECK_EQ(read(p[0], &c, 1), 1);
		bad += c != src[i];
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(read(p[0], dst, 100), 100);
	CHECK_EQ(memcmp(dst, src + 10, 100), 0);
	CHECK_EQ(read(p[0], dst, 2000), 2000);
	CHECK_EQ(memcmp(dst, src + 110, 2000), 0);
	CHECK_EQ(read(p[0], dst, sizeof dst), 8000 - 2110);
	CHECK_EQ(memcmp(dst, src + 2110, 8000 - 2110), 0);
	close(p[0]);
	close(p[1]);

	/* A one-page pipe: 100-byte writes merge until the page is full. */
	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	for (i = 0; i < 40; i++)
		CHECK_EQ(write(p[1], src + 100 * i, 100), 100);
	CHECK_EQ(write(p[1], src + 4000, 96), 96);
	CHECK_ERR(write(p[1], src, 1), EAGAIN);
	CHECK_EQ(read(p[0], dst, sizeof dst), 4096);
	CHECK_EQ(memcmp(dst, src, 4096), 0);
	CHECK_ERR(read(p[0], dst, 1), EAGAIN);
	close(p[0]);
	close(p[1]);

	/* Non-blocking writes stop at the capacity, page by page. */
	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	static char big[100000];
	CHECK_EQ(write(p[1], big, sizeof big), 65536);
	CHECK_ERR(write(p[1], big, 1), EAGAIN);
	CHECK_EQ(read(p[0], dst, 4096), 4096);
	CHECK_EQ(write(p[1], src, 5000), 4096);
	CHECK_ERR(write(p[1], src, 1), EAGAIN);
	CHECK_EQ(pending(p[0]), 65536);
	close(p[0]);
	close(p[1]);

	/* writev and readv. */
	CHECK_EQ(pipe(p), 0);
	struct iovec wv[3] = {
		{ src, 10 }, { src + 10, 5000 }, { src + 5010, 20 },
	};
	CHECK_EQ(writev(p[1], wv, 3), 5030);
	memset(dst, 0, sizeof dst);
	struct iovec rv[3] = {
		{ dst, 1 }, { dst + 1, 4200 }, { dst + 4201, 1000 },
	};
	CHECK_EQ(readv(p[0], rv, 3), 5030);
	CHECK_EQ(memcmp(dst, src, 5030), 0);

	/* End of file after the writer closes; EPIPE after the reader does. */
	close(p[1]);
	CHECK_EQ(read(p[0], dst, 10), 0);
	close(p[0]);
	CHECK_EQ(pipe(p), 0);
	signal(SIGPIPE, SIG_IGN);
	close(p[0]);
	CHECK_ERR(write(p[1], src, 5000), EPIPE);
	close(p[1]);
	DONE();
}
