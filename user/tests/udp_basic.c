/* UDP over loopback (IPv4 and IPv6): sendto/recvfrom with names,
 * connect filtering and AF_UNSPEC disconnect, truncation (MSG_TRUNC),
 * MSG_PEEK, FIONREAD, EADDRINUSE / SO_REUSEADDR, bad arguments. */
#include "next.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static struct sockaddr_in lo4(int port)
{
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int bound4(int *port)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = lo4(0);
	socklen_t len = sizeof a;
	CHECK(s >= 0);
	CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

static void basic(void)
{
	int pa, pb;
	int a = bound4(&pa), b = bound4(&pb);
	struct sockaddr_in to = lo4(pb), from;
	socklen_t len = sizeof from;
	char buf[32];

	CHECK_EQ(sendto(a, "ping", 4, 0, (struct sockaddr *)&to, sizeof to), 4);
	CHECK_EQ(sendto(a, "", 0, 0, (struct sockaddr *)&to, sizeof to), 0);
	struct pollfd p = {b, POLLIN, 0};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	int n = -1;
	CHECK_EQ(ioctl(b, FIONREAD, &n), 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(recv(b, buf, sizeof buf, MSG_PEEK), 4);
	CHECK_EQ(recvfrom(b, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 4);
	CHECK(memcmp(buf, "ping", 4) == 0);
	CHECK_EQ(len, sizeof from);
	CHECK_EQ(ntohs(from.sin_port), pa);
	CHECK_EQ(from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	/* The empty datagram is a datagram. */
	CHECK_EQ(recv(b, buf, sizeof buf, 0), 0);
	CHECK_ERR(recv(b, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);

	/* Truncation: the rest of the datagram is gone; MSG_TRUNC returns
	 * the real length, and recvmsg flags it. */
	CHECK_EQ(sendto(a, "0123456789", 10, 0, (struct sockaddr *)&to, sizeof to), 10);
	CHECK_EQ(sendto(a, "abcdefghij", 10, 0, (struct sockaddr *)&to, sizeof to), 10);
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_EQ(recv(b, buf, 4, MSG_TRUNC), 10);
	CHECK(memcmp(buf, "0123", 4) == 0);
	struct iovec iov = {buf, 3};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	CHECK_EQ(recvmsg(b, &m, 0), 3);
	CHECK(m.msg_flags & MSG_TRUNC);
	CHECK(memcmp(buf, "abc", 3) == 0);

	/* connect: send() needs no address, only the peer's datagrams come. */
	struct sockaddr_in pa_addr = lo4(pa);
	CHECK_EQ(connect(b, (struct sockaddr *)&pa_addr, sizeof pa_addr), 0);
	struct sockaddr_in peer;
	len = sizeof peer;
	CHECK_EQ(getpeername(b, (struct sockaddr *)&peer, &len), 0);
	CHECK_EQ(ntohs(peer.sin_port), pa);
	int pc, c = bound4(&pc);
	CHECK_EQ(sendto(c, "other", 5, 0, (struct sockaddr *)&to, sizeof to), 5);
	CHECK_EQ(send(a, "mine", 4, 0) < 0 ? sendto(a, "mine", 4, 0, (struct sockaddr *)&to, sizeof to) : 4, 4);
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_EQ(recv(b, buf, sizeof buf, 0), 4);
	CHECK(memcmp(buf, "mine", 4) == 0);
	CHECK_ERR(recv(b, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(send(b, "back", 4, 0), 4);
	p.fd = a;
	CHECK_EQ(poll(&p, 1, 10000), 1);
	CHECK_EQ(recv(a, buf, sizeof buf, 0), 4);
	/* AF_UNSPEC dissolves the association. */
	struct sockaddr un = {0};
	un.sa_family = AF_UNSPEC;
	CHECK_EQ(connect(b, &un, sizeof un), 0);
	len = sizeof peer;
	CHECK_ERR(getpeername(b, (struct sockaddr *)&peer, &len), ENOTCONN);
	CHECK_ERR(send(b, "x", 1, 0), EDESTADDRREQ);
	close(a);
	close(b);
	close(c);
}

static void v6(void)
{
	int s = socket(AF_INET6, SOCK_DGRAM, 0), r = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 a = {0}, from;
	socklen_t len = sizeof a;
	char buf[8];

	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_loopback;
	CHECK_EQ(bind(r, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(getsockname(r, (struct sockaddr *)&a, &len), 0);
	CHECK(a.sin6_port != 0);
	CHECK_EQ(sendto(s, "six", 3, 0, (struct sockaddr *)&a, sizeof a), 3);
	len = sizeof from;
	CHECK_EQ(recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 3);
	CHECK_EQ(len, sizeof from);
	CHECK(memcmp(&from.sin6_addr, &in6addr_loopback, 16) == 0);
	int v = -1;
	socklen_t vl = sizeof v;
	CHECK_EQ(getsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl), 0);
	CHECK_EQ(v, 0);
	close(s);
	close(r);
}

static void errors(void)
{
	int port, s = bound4(&port);
	int t = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = lo4(port);
	char big[70000] = {0};

	CHECK_ERR(bind(t, (struct sockaddr *)&a, sizeof a), EADDRINUSE);
	CHECK_ERR(bind(t, (struct sockaddr *)&a, 4), EINVAL);
	CHECK_ERR(bind(t, (struct sockaddr *)&a, 0), EINVAL);
	a.sin_family = AF_INET6;
	CHECK_ERR(bind(t, (struct sockaddr *)&a, sizeof a), EAFNOSUPPORT);
	a = lo4(port);
	a.sin_addr.s_addr = htonl(0x0a0b0c0d); /* not ours */
	CHECK_ERR(bind(t, (struct sockaddr *)&a, sizeof a), EADDRNOTAVAIL);
	CHECK_ERR(sendto(t, big, sizeof big, 0, (struct sockaddr *)&a, sizeof a), EMSGSIZE);
	CHECK_ERR(send(t, "x", 1, 0), EDESTADDRREQ);
	CHECK_ERR(listen(t, 1), EOPNOTSUPP);
	CHECK_ERR(accept(t, NULL, NULL), EOPNOTSUPP);
	CHECK_ERR(shutdown(t, SHUT_RD), ENOTCONN);
	CHECK_ERR(socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_SEQPACKET, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(sendto(t, "x", 1, 0, BAD_PTR, sizeof a), EFAULT);
	close(t);
	close(s);
}

int main(void)
{
	basic();
	v6();
	errors();
	DONE();
}
