/* TCP over loopback (IPv4 and IPv6): connect/accept, data both ways,
 * names, ephemeral ports, half-close, refused connects, EADDRINUSE,
 * non-blocking connect with SO_ERROR, RST on close with unread data. */
#include "next.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static struct sockaddr_in lo4(int port)
{
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* A listener on 127.0.0.1 with an ephemeral port; returns the port. */
static int listener4(int *port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(0);
	socklen_t len = sizeof a;
	CHECK(s >= 0);
	CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(listen(s, 8), 0);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

static void basic4(void)
{
	int port, l = listener4(&port);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(port), got;
	socklen_t len = sizeof got;
	char buf[64];

	CHECK(port > 0);
	CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	int s = accept(l, (struct sockaddr *)&got, &len);
	CHECK(s >= 0);
	CHECK_EQ(len, sizeof got);
	CHECK_EQ(got.sin_family, AF_INET);
	CHECK_EQ(got.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	/* The client's port is ephemeral: in net.ipv4.ip_local_port_range. */
	struct sockaddr_in me;
	len = sizeof me;
	CHECK_EQ(getsockname(c, (struct sockaddr *)&me, &len), 0);
	CHECK_EQ(me.sin_port, got.sin_port);
	CHECK(ntohs(me.sin_port) >= 32768 && ntohs(me.sin_port) <= 60999);
	struct sockaddr_in peer;
	len = sizeof peer;
	CHECK_EQ(getpeername(c, (struct sockaddr *)&peer, &len), 0);
	CHECK_EQ(ntohs(peer.sin_port), port);
	len = sizeof peer;
	CHECK_EQ(getpeername(s, (struct sockaddr *)&peer, &len), 0);
	CHECK_EQ(peer.sin_port, me.sin_port);
	len = sizeof peer;
	CHECK_ERR(getpeername(l, (struct sockaddr *)&peer, &len), ENOTCONN);

	CHECK_EQ(write(c, "hello", 5), 5);
	CHECK_EQ(read(s, buf, sizeof buf), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(send(s, "world!", 6, 0), 6);
	CHECK_EQ(recv(c, buf, 3, MSG_PEEK), 3);
	CHECK_EQ(recv(c, buf, sizeof buf, MSG_WAITALL | MSG_DONTWAIT), 6);
	CHECK(memcmp(buf, "world!", 6) == 0);
	CHECK_ERR(recv(c, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);

	/* Half-close: the server sees EOF, and can still send. */
	CHECK_EQ(shutdown(c, SHUT_WR), 0);
	CHECK_EQ(read(s, buf, sizeof buf), 0);
	CHECK_EQ(write(s, "late", 4), 4);
	CHECK_EQ(read(c, buf, sizeof buf), 4);
	CHECK_ERR(send(c, "x", 1, MSG_NOSIGNAL), EPIPE);
	close(s);
	CHECK_EQ(read(c, buf, sizeof buf), 0);
	close(c);
	close(l);
}

static void basic6(void)
{
	int l = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = {0}, got;
	socklen_t len = sizeof a;
	char buf[16];

	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_any;
	CHECK(l >= 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(listen(l, 4), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(len, sizeof a);
	int port = ntohs(a.sin6_port);

	/* Over ::1. */
	int c = socket(AF_INET6, SOCK_STREAM, 0);
	a.sin6_addr = in6addr_loopback;
	CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	len = sizeof got;
	int s = accept(l, (struct sockaddr *)&got, &len);
	CHECK(s >= 0);
	CHECK(memcmp(&got.sin6_addr, &in6addr_loopback, 16) == 0);
	CHECK_EQ(write(c, "v6", 2), 2);
	CHECK_EQ(read(s, buf, sizeof buf), 2);
	close(s);
	close(c);

	/* A dual-stack listener takes IPv4 peers as v4-mapped addresses. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a4 = lo4(port);
	CHECK_EQ(connect(c, (struct sockaddr *)&a4, sizeof a4), 0);
	len = sizeof got;
	s = accept(l, (struct sockaddr *)&got, &len);
	CHECK(s >= 0);
	CHECK(IN6_IS_ADDR_V4MAPPED(&got.sin6_addr));
	CHECK_EQ(write(s, "m", 1), 1);
	CHECK_EQ(read(c, buf, sizeof buf), 1);
	close(s);
	close(c);
	close(l);
}

static void refused(void)
{
	int port, l = listener4(&port);
	close(l); /* the port is now closed */
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(port);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
	close(c);

	/* Non-blocking: EINPROGRESS, then POLLOUT and SO_ERROR. */
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(c, (struct sockaddr *)&a, sizeof a);
	CHECK(r == 0 || errno == EINPROGRESS || errno == ECONNREFUSED);
	if (r < 0 && errno == EINPROGRESS) {
		struct pollfd p = {c, POLLOUT, 0};
		CHECK_EQ(poll(&p, 1, 10000), 1);
		CHECK(p.revents & (POLLOUT | POLLERR));
		int e = 0;
		socklen_t el = sizeof e;
		CHECK_EQ(getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &el), 0);
		CHECK_EQ(e, ECONNREFUSED);
		el = sizeof e;
		CHECK_EQ(getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &el), 0);
		CHECK_EQ(e, 0);
	}
	close(c);
}

static void nonblocking_connect(void)
{
	int port, l = listener4(&port);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = lo4(port);
	int r = connect(c, (struct sockaddr *)&a, sizeof a);
	CHECK(r == 0 || errno == EINPROGRESS);
	struct pollfd p = {c, POLLOUT, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK(p.revents & POLLOUT);
	int e = -1;
	socklen_t el = sizeof e;
	CHECK_EQ(getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &el), 0);
	CHECK_EQ(e, 0);
	/* The first connect after completion reports it; then EISCONN. */
	if (r < 0)
		CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof a), EISCONN);
	/* The listener is readable once a connection waits. */
	struct pollfd pl = {l, POLLIN, 0};
	CHECK_EQ(poll(&pl, 1, 10000), 1);
	int s = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	CHECK(s >= 0);
	char b;
	CHECK_ERR(read(s, &b, 1), EAGAIN);
	CHECK_EQ(fcntl(l, F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(accept(l, NULL, NULL), EAGAIN);
	close(s);
	close(c);
	close(l);
}

static void addrinuse(void)
{
	int port, l = listener4(&port);
	int t = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(port);
	CHECK_ERR(bind(t, (struct sockaddr *)&a, sizeof a), EADDRINUSE);
	int one = 1;
	CHECK_EQ(setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
	/* SO_REUSEADDR does not share a port with a listener. */
	CHECK_ERR(bind(t, (struct sockaddr *)&a, sizeof a), EADDRINUSE);
	close(t);
	/* SO_REUSEPORT on both does. */
	int r1 = socket(AF_INET, SOCK_STREAM, 0), r2 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_EQ(setsockopt(r1, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one), 0);
	CHECK_EQ(setsockopt(r2, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one), 0);
	struct sockaddr_in z = lo4(0);
	CHECK_EQ(bind(r1, (struct sockaddr *)&z, sizeof z), 0);
	socklen_t len = sizeof z;
	CHECK_EQ(getsockname(r1, (struct sockaddr *)&z, &len), 0);
	CHECK_EQ(bind(r2, (struct sockaddr *)&z, sizeof z), 0);
	CHECK_EQ(listen(r1, 4), 0);
	CHECK_EQ(listen(r2, 4), 0);
	close(r1);
	close(r2);
	/* A bound socket cannot bind again. */
	int b = socket(AF_INET, SOCK_STREAM, 0);
	z = lo4(0);
	CHECK_EQ(bind(b, (struct sockaddr *)&z, sizeof z), 0);
	CHECK_ERR(bind(b, (struct sockaddr *)&z, sizeof z), EINVAL);
	close(b);
	close(l);
}

static void reset_on_unread(void)
{
	int port, l = listener4(&port);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = lo4(port);
	char buf[8];
	CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	CHECK_EQ(write(c, "unread", 6), 6);
	/* Let the data arrive, then close with it unread: RST. */
	struct pollfd p = {s, POLLIN, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	close(s);
	p.fd = c;
	p.events = POLLIN;
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_ERR(read(c, buf, sizeof buf), ECONNRESET);
	close(c);
	close(l);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	basic4();
	basic6();
	refused();
	nonblocking_connect();
	addrinuse();
	reset_on_unread();
	DONE();
}
