/* TCP socket options and the less common paths: TCP_NODELAY, keep-alive
 * options, SO_LINGER 0 (reset), SO_RCVTIMEO, SIGPIPE and MSG_NOSIGNAL,
 * FIONREAD/SIOCOUTQ, sendfile to a socket, MSG_ZEROCOPY, IPV6_V6ONLY,
 * and bad arguments (lengths, families, levels, options). */
#include "next.h"

#include <arpa/inet.h>
#ifndef SIOCOUTQ
#define SIOCOUTQ TIOCOUTQ
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

static volatile int pipes;

static void on_pipe(int sig)
{
	(void)sig;
	pipes++;
}

static struct sockaddr_in lo4(int port)
{
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* A connected pair over 127.0.0.1: *c the client, returns the server. */
static int pair(int *c)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(0);
	socklen_t len = sizeof a;
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(listen(l, 1), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
	*c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_EQ(connect(*c, (struct sockaddr *)&a, sizeof a), 0);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	close(l);
	return s;
}

static int getint(int fd, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof v;
	CHECK_EQ(getsockopt(fd, level, name, &v, &l), 0);
	return v;
}

static void options(void)
{
	int c, s = pair(&c), one = 1, v;
	CHECK_EQ(getint(c, IPPROTO_TCP, TCP_NODELAY), 0);
	CHECK_EQ(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
	CHECK(getint(c, IPPROTO_TCP, TCP_NODELAY) != 0);
	CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one), 0);
	CHECK(getint(c, SOL_SOCKET, SO_KEEPALIVE) != 0);
	v = 30;
	CHECK_EQ(setsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &v, sizeof v), 0);
	CHECK_EQ(getint(c, IPPROTO_TCP, TCP_KEEPIDLE), 30);
	v = 5;
	CHECK_EQ(setsockopt(c, IPPROTO_TCP, TCP_KEEPINTVL, &v, sizeof v), 0);
	CHECK_EQ(getint(c, IPPROTO_TCP, TCP_KEEPINTVL), 5);
	v = 3;
	CHECK_EQ(setsockopt(c, IPPROTO_TCP, TCP_KEEPCNT, &v, sizeof v), 0);
	CHECK_EQ(getint(c, IPPROTO_TCP, TCP_KEEPCNT), 3);
	v = 0;
	CHECK_ERR(setsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &v, sizeof v), EINVAL);
	CHECK_ERR(setsockopt(c, IPPROTO_TCP, TCP_KEEPCNT, &v, sizeof v), EINVAL);
	CHECK(getint(c, IPPROTO_TCP, TCP_MAXSEG) > 0);
	CHECK_EQ(getint(c, SOL_SOCKET, SO_TYPE), SOCK_STREAM);
	CHECK_EQ(getint(c, SOL_SOCKET, SO_DOMAIN), AF_INET);
	CHECK_EQ(getint(c, SOL_SOCKET, SO_PROTOCOL), IPPROTO_TCP);
	CHECK_EQ(getint(c, SOL_SOCKET, SO_ACCEPTCONN), 0);
	CHECK_EQ(getint(c, SOL_SOCKET, SO_ERROR), 0);
	struct tcp_info ti;
	socklen_t tl = sizeof ti;
	CHECK_EQ(getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &tl), 0);
	CHECK_EQ(ti.tcpi_state, 1 /* TCP_ESTABLISHED */);
	/* Bad options: unknown names and levels, short values. */
	CHECK_ERR(setsockopt(c, IPPROTO_TCP, 9999, &one, sizeof one), ENOPROTOOPT);
	CHECK_ERR(setsockopt(c, 999, 1, &one, sizeof one), ENOPROTOOPT);
	CHECK_ERR(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, 2), EINVAL);
	CHECK_ERR(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, BAD_PTR, sizeof one), EFAULT);
	CHECK_ERR(setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), ENOPROTOOPT);
	/* MSG_ZEROCOPY without SO_ZEROCOPY is an ordinary send on Linux; with
	 * it Trellis may refuse (EOPNOTSUPP). */
	CHECK_EQ(send(c, "z", 1, MSG_ZEROCOPY), 1);
	char b;
	CHECK_EQ(read(s, &b, 1), 1);
	int zr = setsockopt(c, SOL_SOCKET, 60 /* SO_ZEROCOPY */, &one, sizeof one);
	CHECK(zr == 0 || errno == EOPNOTSUPP);
	close(c);
	close(s);
}

static void timeouts_and_queues(void)
{
	int c, s = pair(&c), n = -1;
	struct timeval tv = {0, 20000};
	char buf[16];
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
	CHECK_ERR(read(s, buf, sizeof buf), EAGAIN);
	CHECK_EQ(ioctl(s, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(write(c, "0123456789", 10), 10);
	struct pollfd p = {s, POLLIN, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_EQ(ioctl(s, FIONREAD, &n), 0);
	CHECK_EQ(n, 10);
	CHECK_EQ(ioctl(c, SIOCOUTQ, &n), 0);
	CHECK(n >= 0 && n <= 10);
	CHECK_EQ(read(s, buf, sizeof buf), 10);
	CHECK_ERR(ioctl(s, FIONREAD, BAD_PTR), EFAULT);
	close(c);
	close(s);
}

static void sigpipe_and_reset(void)
{
	int c, s = pair(&c);
	char buf[8];
	signal(SIGPIPE, on_pipe);
	/* SO_LINGER {1, 0}: close resets. */
	struct linger lg = {1, 0};
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
	close(s);
	struct pollfd p = {c, POLLIN, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_ERR(read(c, buf, sizeof buf), ECONNRESET);
	/* After the reset: writes fail with EPIPE, SIGPIPE unless
	 * MSG_NOSIGNAL. */
	CHECK_ERR(send(c, "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(pipes, 0);
	CHECK_ERR(write(c, "x", 1), EPIPE);
	CHECK_EQ(pipes, 1);
	close(c);

	/* A never-connected stream socket: EPIPE for writes, ENOTCONN for
	 * reads and shutdown. */
	int u = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_ERR(send(u, "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_ERR(recv(u, buf, sizeof buf, 0), ENOTCONN);
	CHECK_ERR(shutdown(u, SHUT_RDWR), ENOTCONN);
	CHECK_ERR(shutdown(u, 7), EINVAL);
	close(u);
	signal(SIGPIPE, SIG_DFL);
}

static void sendfile_to_socket(void)
{
	char path[] = "/tmp/tcp_opts.XXXXXX";
	int fd = mkstemp(path);
	static char data[100000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)(i * 7);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, sizeof data), (ssize_t)sizeof data);
	unlink(path);
	int c, s = pair(&c);
	off_t off = 0;
	size_t total = 0;
	while (total < sizeof data) {
		ssize_t n = sendfile(c, fd, &off, sizeof data - total);
		if (n <= 0)
			break;
		total += (size_t)n;
		/* The reader drains as we go. */
	}
	CHECK_EQ(total, sizeof data);
	CHECK_EQ(shutdown(c, SHUT_WR), 0);
	static char got[sizeof data];
	size_t have = 0;
	for (;;) {
		ssize_t n = read(s, got + have, sizeof got - have);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	CHECK_EQ(have, sizeof data);
	CHECK(memcmp(got, data, sizeof data) == 0);
	close(fd);
	close(c);
	close(s);
}

static void v6only(void)
{
	int l = socket(AF_INET6, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in6 a = {0};
	socklen_t len = sizeof a;
	a.sin6_family = AF_INET6;
	CHECK_EQ(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), 0);
	CHECK_EQ(getint(l, IPPROTO_IPV6, IPV6_V6ONLY), 1);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
	/* A v6-only socket and an AF_INET one share the port. */
	int l4 = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a4 = lo4(ntohs(a.sin6_port));
	CHECK_EQ(bind(l4, (struct sockaddr *)&a4, sizeof a4), 0);
	/* IPV6_V6ONLY cannot change once bound. */
	CHECK_ERR(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), EINVAL);
	/* A v4-mapped address on a v6-only socket is refused. */
	int m = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 mapped = {0};
	mapped.sin6_family = AF_INET6;
	mapped.sin6_addr.s6_addr[10] = 0xff;
	mapped.sin6_addr.s6_addr[11] = 0xff;
	mapped.sin6_addr.s6_addr[12] = 127;
	mapped.sin6_addr.s6_addr[15] = 1;
	CHECK_EQ(setsockopt(m, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), 0);
	CHECK(bind(m, (struct sockaddr *)&mapped, sizeof mapped) < 0);
	close(m);
	close(l4);
	close(l);
}

static void bad_args(void)
{
	int t = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(1);
	struct sockaddr_in6 a6 = {0};
	a6.sin6_family = AF_INET6;
	CHECK_ERR(connect(t, (struct sockaddr *)&a, 3), EINVAL);
	CHECK_ERR(connect(t, (struct sockaddr *)&a, -1), EINVAL);
	CHECK_ERR(connect(t, BAD_PTR, sizeof a), EFAULT);
	CHECK_ERR(connect(t, (struct sockaddr *)&a6, sizeof a6), EAFNOSUPPORT);
	CHECK_ERR(bind(t, (struct sockaddr *)&a6, sizeof a6), EAFNOSUPPORT);
	/* An address that is not ours. */
	a.sin_addr.s_addr = htonl(0xc0000201); /* 192.0.2.1, TEST-NET-1 */
	a.sin_port = 0;
	CHECK_ERR(bind(t, (struct sockaddr *)&a, sizeof a), EADDRNOTAVAIL);
	CHECK_ERR(accept(t, NULL, NULL), EINVAL);
	int s6 = socket(AF_INET6, SOCK_STREAM, 0);
	a = lo4(1);
	CHECK_ERR(bind(s6, (struct sockaddr *)&a, sizeof a), EINVAL);
	close(s6);
	CHECK_ERR(socket(AF_INET, SOCK_STREAM, 99), EPROTONOSUPPORT);
	close(t);
}

int main(void)
{
	options();
	timeouts_and_queues();
	sigpipe_and_reset();
	sendfile_to_socket();
	v6only();
	bad_args();
	DONE();
}
