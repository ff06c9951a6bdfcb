/* Socket memory reused from one connection or message to the next must
 * carry nothing over:
 *  - many TCP connections over 127.0.0.1, one after another, each moving
 *    its own bytes both ways (the kernel may recycle a closed
 *    connection's buffers): every byte read is the one its peer wrote,
 *    and a new socket starts with the default options (TCP_NODELAY off,
 *    IP_TTL 64) whatever the one before it had set;
 *  - AF_UNIX stream pieces of 32 to 64 KiB (the size whose buffers may be
 *    reused): a write whose source is partly unmapped sends nothing past
 *    the fault, a read whose destination is partly unmapped keeps what it
 *    could not store, and the next large pieces arrive exactly, also
 *    through MSG_PEEK. */
#include "next.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define CONNS 40
#define TCP_BYTES (100 * 1000)
#define PIECE 40000

static unsigned char pattern(unsigned seed, size_t i)
{
	return (unsigned char)(i * 13 + seed * 101 + (i >> 9));
}

static int read_full(int fd, unsigned char *b, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const unsigned char *b, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, b + done, n - done);
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

/* Bytes [0, n) of `b` are the pattern of `seed`; -1 if all are, else the
 * first wrong offset. */
static long first_wrong(const unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pattern(seed, i))
			return (long)i;
	return -1;
}

static void tcp_churn(void)
{
	struct sockaddr_in a = {0};
	socklen_t alen = sizeof a;
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(listen(l, 4), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &alen), 0);
	unsigned char *out = malloc(TCP_BYTES), *in = malloc(TCP_BYTES);
	CHECK(out != NULL && in != NULL);
	for (unsigned c = 0; c < CONNS; c++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(s >= 0);
		int v = -1;
		socklen_t vl = sizeof v;
		CHECK_EQ(getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &vl), 0);
		CHECK_EQ(v, 0);
		vl = sizeof v;
		CHECK_EQ(getsockopt(s, IPPROTO_IP, IP_TTL, &v, &vl), 0);
		CHECK_EQ(v, 64);
		if (c % 2) {
			int one = 1, ttl = 7;
			CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
			CHECK_EQ(setsockopt(s, IPPROTO_IP, IP_TTL, &ttl, sizeof ttl), 0);
		}
		CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), 0);
		int t = accept(l, NULL, NULL);
		CHECK(t >= 0);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			/* The server side: read the client's bytes, check them,
			 * answer with its own. */
			close(s);
			if (read_full(t, in, TCP_BYTES) < 0 || first_wrong(in, TCP_BYTES, c) >= 0)
				_exit(2);
			for (size_t i = 0; i < TCP_BYTES; i++)
				out[i] = pattern(c + 1000, i);
			if (write_full(t, out, TCP_BYTES) < 0)
				_exit(3);
			close(t);
			_exit(0);
		}
		close(t);
		for (size_t i = 0; i < TCP_BYTES; i++)
			out[i] = pattern(c, i);
		CHECK_EQ(write_full(s, out, TCP_BYTES), 0);
		CHECK_EQ(read_full(s, in, TCP_BYTES), 0);
		CHECK_EQ(first_wrong(in, TCP_BYTES, c + 1000), -1);
		char end;
		CHECK_EQ(read(s, &end, 1), 0);
		int st = -1;
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		close(s);
		if (t_failures)
			break;
	}
	free(out);
	free(in);
	close(l);
}

static void unix_pieces(void)
{
	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	unsigned char *out = malloc(2 * 65536), *in = malloc(2 * 65536);
	CHECK(out != NULL && in != NULL);

	/* Large pieces, each of its own bytes, so a reused buffer would
	 * show an earlier piece's bytes. */
	static const size_t sizes[] = {65536, 40000, 32768, 65536, 50000, 32768};
	for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k];
		for (size_t i = 0; i < n; i++)
			out[i] = pattern(k, i);
		CHECK_EQ(write(sv[0], out, n), (ssize_t)n);
		CHECK_EQ(read_full(sv[1], in, n), 0);
		CHECK_EQ(first_wrong(in, n, k), -1);
	}

	/* A write whose source faults 100 bytes in: nothing past the fault
	 * is sent. */
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK_EQ(munmap(m + pg, pg), 0);
	unsigned char *edge = m + pg - 100;
	for (size_t i = 0; i < 100; i++)
		edge[i] = pattern(50, i);
	errno = 0;
	ssize_t w = write(sv[0], edge, PIECE);
	CHECK(w == -1 ? errno == EFAULT : w > 0 && w <= 100);
	if (w > 0) {
		CHECK_EQ(read_full(sv[1], in, (size_t)w), 0);
		CHECK_EQ(first_wrong(in, (size_t)w, 50), -1);
	}
	/* Then a piece of new bytes arrives exactly (nothing of the failed
	 * write in it), first peeked, then read. */
	for (size_t i = 0; i < PIECE; i++)
		out[i] = pattern(51, i);
	CHECK_EQ(write(sv[0], out, PIECE), PIECE);
	CHECK_EQ(recv(sv[1], in, PIECE, MSG_PEEK | MSG_WAITALL), PIECE);
	CHECK_EQ(first_wrong(in, PIECE, 51), -1);
	memset(in, 0, PIECE);
	CHECK_EQ(read_full(sv[1], in, PIECE), 0);
	CHECK_EQ(first_wrong(in, PIECE, 51), -1);

	/* A read whose destination faults 100 bytes in: what it could not
	 * store stays queued, in order. */
	for (size_t i = 0; i < PIECE; i++)
		out[i] = pattern(52, i);
	CHECK_EQ(write(sv[0], out, PIECE), PIECE);
	errno = 0;
	ssize_t r = read(sv[1], edge, PIECE);
	CHECK(r == -1 ? errno == EFAULT : r > 0 && r <= 100);
	size_t have = r > 0 ? (size_t)r : 0;
	if (r > 0)
		CHECK_EQ(first_wrong(edge, have, 52), -1);
	memset(in, 0, PIECE);
	CHECK_EQ(read_full(sv[1], in + have, PIECE - have), 0);
	for (size_t i = have; i < PIECE; i++)
		if (in[i] != pattern(52, i)) {
			CHECK_EQ((long)i, -1L);
			break;
		}
	int pending = -1;
	CHECK_EQ(ioctl(sv[1], FIONREAD, &pending), 0);
	CHECK_EQ(pending, 0);

	munmap(m, pg);
	free(out);
	free(in);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	tcp_churn();
	unix_pieces();
	DONE();
}
