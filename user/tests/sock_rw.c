/* read(2) and write(2) on sockets (TCP, UDP, AF_UNIX stream and
 * datagram), which copy straight between the caller's memory and the
 * socket: large transfers arrive whole and in order, a read or write
 * whose buffer is not mapped fails with EFAULT and leaves the socket
 * usable, a datagram write is one whole datagram (EMSGSIZE past UDP's
 * largest), short reads of a stream keep the rest, and a buffer that
 * faults part way moves a prefix with nothing lost or made up. */
#include "next.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define BIG (300 * 1024)

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + (i >> 11));
}

/* A connected TCP pair over 127.0.0.1. */
static void tcp_pair(int sv[2])
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof a;
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(listen(l, 1), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
	sv[0] = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(sv[0] >= 0);
	CHECK_EQ(connect(sv[0], (struct sockaddr *)&a, sizeof a), 0);
	sv[1] = accept(l, NULL, NULL);
	CHECK(sv[1] >= 0);
	close(l);
}

/* A child writes BIG bytes of the pattern with write(2) in uneven pieces;
 * the parent reads them with read(2) in other uneven pieces. */
static void stream_big(int sv[2], const char *what)
{
	unsigned char *buf = malloc(BIG);
	CHECK(buf != NULL);
	for (size_t i = 0; i < BIG; i++)
		buf[i] = pattern(i);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[1]);
		size_t off = 0, step = 1;
		while (off < BIG) {
			size_t n = step < BIG - off ? step : BIG - off;
			ssize_t w = write(sv[0], buf + off, n);
			if (w <= 0)
				_exit(2);
			off += (size_t)w;
			step = step * 3 + 1000;
			if (step > 100000)
				step = 5;
		}
		close(sv[0]);
		_exit(0);
	}
	close(sv[0]);
	unsigned char *in = malloc(BIG);
	CHECK(in != NULL);
	size_t got = 0, step = 70000;
	for (;;) {
		size_t room = BIG + 1 - got;
		ssize_t r = read(sv[1], in + got, step < room ? step : room);
		if (r <= 0) {
			CHECK_EQ(r, 0);
			break;
		}
		got += (size_t)r;
		step = step == 70000 ? 3 : 70000;
		if (got > BIG)
			break;
	}
	if (got != BIG || memcmp(in, buf, BIG) != 0)
		printf("  note: %s: %zu bytes of %d, data %s\n", what, got, BIG,
		       got == BIG ? "differs" : "short");
	CHECK_EQ(got, (size_t)BIG);
	CHECK(memcmp(in, buf, BIG) == 0);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(sv[1]);
	free(in);
	free(buf);
}

/* An unmapped buffer: EFAULT, and the socket still works after. */
static void stream_fault(int sv[2])
{
	char *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(bad != MAP_FAILED);
	CHECK_ERR(write(sv[0], bad, 100), EFAULT);
	CHECK_EQ(write(sv[0], "hello", 5), 5);
	char buf[8] = {0};
	struct pollfd p = {sv[1], POLLIN, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	/* A short read keeps the rest for the next one. */
	CHECK_EQ(read(sv[1], buf, 2), 2);
	CHECK(memcmp(buf, "he", 2) == 0);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 3);
	CHECK(memcmp(buf, "llo", 3) == 0);
	CHECK_EQ(write(sv[0], "x", 1), 1);
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_EQ(read(sv[1], buf, 1), 1);
	CHECK_EQ(buf[0], 'x');
	munmap(bad, 4096);
}

/* Reads n bytes of a stream into buf, waiting for them. */
static void read_all(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = {fd, POLLIN, 0};
		CHECK_EQ(poll(&p, 1, 10000), 1);
		ssize_t r = read(fd, buf + got, n - got);
		CHECK(r > 0);
		got += (size_t)r;
	}
}

/* Buffers that run into an unmapped page part way, and buffers whose pages
 * were never touched: a write sends a prefix of its bytes (or nothing, with
 * EFAULT), a read stores a prefix (or nothing) and leaves the rest queued;
 * no byte is lost, duplicated or made up on either side. */
static void stream_partial_fault(int sv[2])
{
	const size_t pg = 4096;
	unsigned char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	for (size_t i = 0; i < 2 * pg; i++)
		m[i] = pattern(i);
	CHECK_EQ(mprotect(m + 2 * pg, pg, PROT_NONE), 0);
	unsigned char *in = malloc(3 * pg);
	CHECK(in != NULL);

	/* Write from two good pages and a bad one. */
	ssize_t w = write(sv[0], m, 3 * pg);
	if (w < 0)
		CHECK_EQ(errno, EFAULT);
	else
		CHECK(w >= 1 && w <= (ssize_t)(2 * pg));
	size_t sent = w < 0 ? 0 : (size_t)w;
	CHECK_EQ(write(sv[0], "END!", 4), 4);
	read_all(sv[1], in, sent + 4);
	for (size_t i = 0; i < sent; i++)
		CHECK_EQ(in[i], pattern(i));
	CHECK(memcmp(in + sent, "END!", 4) == 0);

	/* Read into one good page and a bad one, with two pages queued. */
	CHECK_EQ(write(sv[0], m, 2 * pg), (ssize_t)(2 * pg));
	unsigned char *half = m + pg;
	size_t got = 0;
	struct pollfd p = {sv[1], POLLIN, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	ssize_t r = read(sv[1], half, 2 * pg);
	if (r < 0)
		CHECK_EQ(errno, EFAULT);
	else
		CHECK(r >= 1 && r <= (ssize_t)pg);
	if (r > 0) {
		memcpy(in, half, (size_t)r);
		got = (size_t)r;
	}
	/* What was not stored is still there, first byte first. */
	unsigned char first;
	CHECK_EQ(recv(sv[1], &first, 1, MSG_PEEK), 1);
	CHECK_EQ(first, pattern(got));
	read_all(sv[1], in + got, 2 * pg - got);
	for (size_t i = 0; i < 2 * pg; i++)
		CHECK_EQ(in[i], pattern(i));
	munmap(m, 3 * pg);

	/* Pages never touched: the copies fault them in and go on. */
	unsigned char *fresh = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fresh != MAP_FAILED);
	CHECK_EQ(write(sv[0], fresh, 4 * pg), (ssize_t)(4 * pg));
	unsigned char *src = malloc(4 * pg);
	CHECK(src != NULL);
	for (size_t i = 0; i < 4 * pg; i++)
		src[i] = pattern(i + 1);
	CHECK_EQ(write(sv[0], src, 4 * pg), (ssize_t)(4 * pg));
	read_all(sv[1], fresh + 4 * pg, 4 * pg);
	for (size_t i = 0; i < 4 * pg; i++)
		CHECK_EQ(fresh[4 * pg + i], 0);
	unsigned char *dst = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(dst != MAP_FAILED);
	read_all(sv[1], dst, 4 * pg);
	CHECK(memcmp(dst, src, 4 * pg) == 0);
	munmap(dst, 4 * pg);
	munmap(fresh, 8 * pg);
	free(src);
	free(in);
}

static void udp(void)
{
	struct sockaddr_in a[2];
	int s[2];
	for (int i = 0; i < 2; i++) {
		socklen_t len = sizeof a[i];
		memset(&a[i], 0, sizeof a[i]);
		a[i].sin_family = AF_INET;
		a[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s[i] = socket(AF_INET, SOCK_DGRAM, 0);
		CHECK(s[i] >= 0);
		CHECK_EQ(bind(s[i], (struct sockaddr *)&a[i], sizeof a[i]), 0);
		CHECK_EQ(getsockname(s[i], (struct sockaddr *)&a[i], &len), 0);
	}
	CHECK_EQ(connect(s[0], (struct sockaddr *)&a[1], sizeof a[1]), 0);
	CHECK_EQ(connect(s[1], (struct sockaddr *)&a[0], sizeof a[0]), 0);

	/* The largest datagram goes whole; one byte more is EMSGSIZE. */
	size_t max = 65507;
	unsigned char *buf = malloc(max + 1), *in = malloc(max + 1);
	CHECK(buf != NULL && in != NULL);
	for (size_t i = 0; i <= max; i++)
		buf[i] = pattern(i);
	CHECK_ERR(write(s[0], buf, max + 1), EMSGSIZE);
	CHECK_EQ(write(s[0], buf, max), (ssize_t)max);
	CHECK_EQ(read(s[1], in, max + 1), (ssize_t)max);
	CHECK(memcmp(in, buf, max) == 0);

	/* A short read takes the head of the datagram; the rest is gone. */
	CHECK_EQ(write(s[0], "abcdef", 6), 6);
	CHECK_EQ(write(s[0], "gh", 2), 2);
	CHECK_EQ(read(s[1], in, 3), 3);
	CHECK(memcmp(in, "abc", 3) == 0);
	CHECK_EQ(read(s[1], in, 10), 2);
	CHECK(memcmp(in, "gh", 2) == 0);

	/* Faults: nothing is sent, nothing is lost on the way. */
	char *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(bad != MAP_FAILED);
	CHECK_ERR(write(s[0], bad, 10), EFAULT);
	CHECK_EQ(write(s[0], "ok", 2), 2);
	CHECK_EQ(read(s[1], in, 10), 2);
	CHECK(memcmp(in, "ok", 2) == 0);
	CHECK_ERR(recv(s[1], in, 10, MSG_DONTWAIT), EAGAIN);
	/* An empty write is an empty datagram. */
	CHECK_EQ(write(s[0], buf, 0), 0);
	CHECK_EQ(read(s[1], in, 10), 0);
	munmap(bad, 4096);
	free(buf);
	free(in);
	close(s[0]);
	close(s[1]);
}

static void unix_dgram(void)
{
	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	char in[16];
	CHECK_EQ(write(sv[0], "one", 3), 3);
	CHECK_EQ(write(sv[0], "two!", 4), 4);
	CHECK_EQ(read(sv[1], in, 2), 2);
	CHECK(memcmp(in, "on", 2) == 0);
	CHECK_EQ(read(sv[1], in, sizeof in), 4);
	CHECK(memcmp(in, "two!", 4) == 0);
	char *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(bad != MAP_FAILED);
	CHECK_ERR(write(sv[0], bad, 10), EFAULT);
	CHECK_ERR(recv(sv[1], in, sizeof in, MSG_DONTWAIT), EAGAIN);
	munmap(bad, 4096);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	int sv[2];

	tcp_pair(sv);
	stream_fault(sv);
	stream_partial_fault(sv);
	stream_big(sv, "tcp");

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	stream_fault(sv);
	stream_partial_fault(sv);
	stream_big(sv, "unix stream");

	udp();
	unix_dgram();
	DONE();
}
