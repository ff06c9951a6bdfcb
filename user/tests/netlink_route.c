/* NETLINK_ROUTE: socket types, port ids, dumps of links, addresses and
 * routes (NLM_F_MULTI, sequence numbers and port ids, NLMSG_DONE), single
 * GETLINK replies, acks, and (as root) adding and removing an address.
 * Host-specific interfaces are ignored: `lo` is what is compared. */
#include "next.h"
#include "nl.h"
#include "netns.h"
#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>

static char buf[65536];

/* Dumps `type` for `family`; returns the bytes, checks the framing. */
static ssize_t dump(int fd, unsigned port, int type, int family, unsigned seq)
{
	struct nl_req r;
	struct ifinfomsg ifi;
	ssize_t n;
	struct nlmsghdr *h;
	int len, done = 0;

	memset(&ifi, 0, sizeof ifi);
	ifi.ifi_family = family;
	nl_req_init(&r, type, NLM_F_REQUEST | NLM_F_DUMP, seq, &ifi,
		    type == RTM_GETLINK ? sizeof(struct ifinfomsg)
		    : type == RTM_GETADDR ? sizeof(struct ifaddrmsg)
					  : sizeof(struct rtmsg));
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	n = nl_collect(fd, buf, sizeof buf);
	CHECK(n > 0);
	len = (int)n;
	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		CHECK_EQ(h->nlmsg_seq, seq);
		CHECK_EQ(h->nlmsg_pid, port);
		CHECK(h->nlmsg_flags & NLM_F_MULTI);
		if (h->nlmsg_type == NLMSG_DONE) {
			done = 1;
			break;
		}
		CHECK_EQ(h->nlmsg_type, type - 2); /* RTM_NEW* */
	}
	CHECK(done);
	return n;
}

static int find_lo_link(void)
{
	struct nlmsghdr *h;
	int len = (int)sizeof buf, found = 0;

	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len) && h->nlmsg_type == RTM_NEWLINK;
	     h = NLMSG_NEXT(h, len)) {
		struct ifinfomsg *ifi = NLMSG_DATA(h);
		int alen = 0;
		char *name = nl_attr(h, sizeof *ifi, IFLA_IFNAME, &alen);
		unsigned *mtu = nl_attr(h, sizeof *ifi, IFLA_MTU, NULL);

		CHECK(name != NULL);
		if (!name || strcmp(name, "lo") != 0)
			continue;
		found++;
		CHECK_EQ(ifi->ifi_index, 1);
		CHECK_EQ(ifi->ifi_type, ARPHRD_LOOPBACK);
		CHECK_EQ(ifi->ifi_flags & (IFF_UP | IFF_LOOPBACK | IFF_RUNNING),
			 IFF_UP | IFF_LOOPBACK | IFF_RUNNING);
		CHECK(mtu != NULL);
		if (mtu)
			CHECK_EQ(*mtu, 65536);
		CHECK(nl_attr(h, sizeof *ifi, IFLA_ADDRESS, &alen) != NULL);
		CHECK_EQ(alen, 6);
		CHECK(nl_attr(h, sizeof *ifi, IFLA_STATS64, NULL) != NULL);
	}
	return found;
}

/* Counts RTM_NEWADDR messages for (family, addr, prefix) on index 1. */
static int count_lo_addr(int family, const void *addr, int prefix)
{
	struct nlmsghdr *h;
	int len = (int)sizeof buf, found = 0;

	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len) && h->nlmsg_type == RTM_NEWADDR;
	     h = NLMSG_NEXT(h, len)) {
		struct ifaddrmsg *ifa = NLMSG_DATA(h);
		int alen = 0;
		void *a = nl_attr(h, sizeof *ifa, IFA_ADDRESS, &alen);

		CHECK(a != NULL);
		if (ifa->ifa_family != family || ifa->ifa_index != 1 || !a ||
		    alen != (family == AF_INET ? 4 : 16) || memcmp(a, addr, alen) != 0)
			continue;
		CHECK_EQ(ifa->ifa_prefixlen, prefix);
		if (family == AF_INET) {
			char *label = nl_attr(h, sizeof *ifa, IFA_LABEL, NULL);
			CHECK(label && strcmp(label, "lo") == 0);
			CHECK(nl_attr(h, sizeof *ifa, IFA_LOCAL, NULL) != NULL);
		}
		found++;
	}
	return found;
}

/* Sends r and expects one NLMSG_ERROR with `err` answering it. */
static void expect_ack(int fd, unsigned port, struct nl_req *r, int err)
{
	ssize_t n;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlmsgerr *e = NLMSG_DATA(h);

	CHECK(nl_send(fd, r, r->h.nlmsg_len) == 0);
	n = recv(fd, buf, sizeof buf, 0);
	CHECK(n >= (ssize_t)NLMSG_LENGTH(sizeof *e));
	if (n < (ssize_t)NLMSG_LENGTH(sizeof *e))
		return;
	CHECK_EQ(h->nlmsg_type, NLMSG_ERROR);
	CHECK_EQ(h->nlmsg_seq, r->h.nlmsg_seq);
	CHECK_EQ(h->nlmsg_pid, port);
	CHECK_EQ(e->error, err);
	CHECK_EQ(e->msg.nlmsg_seq, r->h.nlmsg_seq);
	CHECK_EQ(e->msg.nlmsg_type, r->h.nlmsg_type);
	CHECK_EQ(e->msg.nlmsg_len, r->h.nlmsg_len);
	if (err == 0) {
		CHECK(h->nlmsg_flags & NLM_F_CAPPED);
	} else {
		/* An error carries the whole request. */
		CHECK_EQ(h->nlmsg_len, NLMSG_LENGTH(sizeof(int)) + r->h.nlmsg_len);
		CHECK(memcmp(&e->msg, r, r->h.nlmsg_len) == 0);
	}
}

int main(void)
{
	/* First: sockets belong to the namespace they are made in. */
	int may_change = t_private_netns();
	unsigned port = 0, port2 = 0;
	int fd, fd2, fd3;
	struct sockaddr_nl sa;
	socklen_t salen = sizeof sa;
	struct nl_req r;
	struct ifinfomsg ifi;
	struct ifaddrmsg ifa;
	static const unsigned char lo6[16] = {[15] = 1};
	unsigned char lo4[4] = {127, 0, 0, 1};
	unsigned char extra[4] = {127, 0, 0, 77};
	ssize_t n;
	int one = 1;

	/* Types and protocols. */
	fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(socket(AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_NETLINK, SOCK_RAW, 99), EPROTONOSUPPORT);

	/* Autobind: the first port is the pid, the next another one; an
	 * explicit port in use is EADDRINUSE. */
	fd = nl_open(&port);
	CHECK(fd >= 0);
	CHECK_EQ(port, getpid());
	fd2 = nl_open(&port2);
	CHECK(fd2 >= 0);
	CHECK(port2 != 0 && port2 != port);
	fd3 = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	sa.nl_pid = port;
	CHECK_ERR(bind(fd3, (struct sockaddr *)&sa, sizeof sa), EADDRINUSE);
	sa.nl_pid = 0x7ffff123;
	CHECK(bind(fd3, (struct sockaddr *)&sa, sizeof sa) == 0);
	CHECK(getsockname(fd3, (struct sockaddr *)&sa, &salen) == 0);
	CHECK_EQ(sa.nl_family, AF_NETLINK);
	CHECK_EQ(sa.nl_pid, 0x7ffff123);
	CHECK_ERR(bind(fd3, (struct sockaddr *)&sa, 4), EINVAL);
	close(fd3);
	close(fd2);

	/* Dumps. */
	dump(fd, port, RTM_GETLINK, AF_UNSPEC, 100);
	CHECK_EQ(find_lo_link(), 1);
	dump(fd, port, RTM_GETADDR, AF_INET, 101);
	CHECK_EQ(count_lo_addr(AF_INET, lo4, 8), 1);
	CHECK_EQ(count_lo_addr(AF_INET6, lo6, 128), 0);
	dump(fd, port, RTM_GETADDR, AF_UNSPEC, 102);
	CHECK_EQ(count_lo_addr(AF_INET, lo4, 8), 1);
	if (access("/proc/net/if_inet6", F_OK) == 0)
		CHECK_EQ(count_lo_addr(AF_INET6, lo6, 128), 1);
	dump(fd, port, RTM_GETROUTE, AF_INET, 103);

	/* One link by index, one by name; both then acked with NLM_F_ACK. */
	memset(&ifi, 0, sizeof ifi);
	ifi.ifi_index = 1;
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, 200, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	n = nl_collect(fd, buf, sizeof buf);
	CHECK(n > 0);
	{
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int len = (int)n;

		CHECK_EQ(h->nlmsg_type, RTM_NEWLINK);
		CHECK_EQ(h->nlmsg_flags & NLM_F_MULTI, 0);
		CHECK_EQ(h->nlmsg_seq, 200);
		CHECK_EQ(((struct ifinfomsg *)NLMSG_DATA(h))->ifi_index, 1);
		h = NLMSG_NEXT(h, len);
		if (!NLMSG_OK(h, len)) {
			/* The ack may come in its own datagram. */
			n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
			h = (struct nlmsghdr *)buf;
			len = (int)n;
		}
		CHECK(NLMSG_OK(h, len));
		if (NLMSG_OK(h, len)) {
			CHECK_EQ(h->nlmsg_type, NLMSG_ERROR);
			CHECK_EQ(((struct nlmsgerr *)NLMSG_DATA(h))->error, 0);
		}
	}
	memset(&ifi, 0, sizeof ifi);
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 201, &ifi, sizeof ifi);
	nl_req_attr(&r, IFLA_IFNAME, "lo", 3);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	n = recv(fd, buf, sizeof buf, 0);
	CHECK(n > 0);
	CHECK_EQ(((struct nlmsghdr *)buf)->nlmsg_type, RTM_NEWLINK);
	CHECK_EQ(((struct ifinfomsg *)NLMSG_DATA((struct nlmsghdr *)buf))->ifi_index, 1);

	/* An unknown index: ENODEV, carrying the request. */
	ifi.ifi_index = 0x7ffffff0;
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 202, &ifi, sizeof ifi);
	expect_ack(fd, port, &r, -ENODEV);

	/* Two requests in one datagram get their answers in order. */
	{
		char two[2 * NLMSG_SPACE(sizeof ifi)];
		struct nlmsghdr *h;
		int len, seqs = 0;

		memset(&ifi, 0, sizeof ifi);
		ifi.ifi_index = 1;
		nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 300, &ifi, sizeof ifi);
		memcpy(two, &r, NLMSG_SPACE(sizeof ifi));
		r.h.nlmsg_seq = 301;
		memcpy(two + NLMSG_SPACE(sizeof ifi), &r, NLMSG_SPACE(sizeof ifi));
		CHECK(nl_send(fd, two, sizeof two) == 0);
		for (int i = 0; i < 2; i++) {
			n = recv(fd, buf, sizeof buf, 0);
			len = (int)n;
			for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
				CHECK_EQ(h->nlmsg_seq, 300 + seqs);
				seqs++;
			}
			if (seqs == 2)
				break;
		}
		CHECK_EQ(seqs, 2);
	}

	/* MSG_PEEK|MSG_TRUNC tells the size of the next datagram. */
	dump(fd, port, RTM_GETLINK, AF_UNSPEC, 0); /* drain check only */
	memset(&ifi, 0, sizeof ifi);
	ifi.ifi_index = 1;
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 400, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	{
		char small[16];
		ssize_t full = recv(fd, small, sizeof small, MSG_PEEK | MSG_TRUNC);
		CHECK(full > (ssize_t)sizeof small);
		n = recv(fd, buf, sizeof buf, 0);
		CHECK_EQ(n, full);
	}

	/* NETLINK_CAP_ACK: errors carry only the request's header. */
	CHECK(setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one) == 0);
	ifi.ifi_index = 0x7ffffff0;
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 500, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	n = recv(fd, buf, sizeof buf, 0);
	CHECK_EQ(n, NLMSG_LENGTH(sizeof(struct nlmsgerr)));
	CHECK(((struct nlmsghdr *)buf)->nlmsg_flags & NLM_F_CAPPED);
	one = 0;
	CHECK(setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one) == 0);

	/* As root: add an address to lo, see it, remove it; removing it
	 * again is EADDRNOTAVAIL. */
	if (geteuid() == 0 && may_change) {
		memset(&ifa, 0, sizeof ifa);
		ifa.ifa_family = AF_INET;
		ifa.ifa_prefixlen = 8;
		ifa.ifa_scope = RT_SCOPE_HOST;
		ifa.ifa_index = 1;
		nl_req_init(&r, RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
			    600, &ifa, sizeof ifa);
		nl_req_attr(&r, IFA_LOCAL, extra, 4);
		nl_req_attr(&r, IFA_ADDRESS, extra, 4);
		expect_ack(fd, port, &r, 0);
		r.h.nlmsg_seq = 601;
		expect_ack(fd, port, &r, -EEXIST);
		dump(fd, port, RTM_GETADDR, AF_INET, 602);
		CHECK_EQ(count_lo_addr(AF_INET, extra, 8), 1);
		r.h.nlmsg_type = RTM_DELADDR;
		r.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		r.h.nlmsg_seq = 603;
		expect_ack(fd, port, &r, 0);
		r.h.nlmsg_seq = 604;
		expect_ack(fd, port, &r, -EADDRNOTAVAIL);
		dump(fd, port, RTM_GETADDR, AF_INET, 605);
		CHECK_EQ(count_lo_addr(AF_INET, extra, 8), 0);
		CHECK_EQ(count_lo_addr(AF_INET, lo4, 8), 1);

		/* The MTU through RTM_SETLINK, and back. */
		memset(&ifi, 0, sizeof ifi);
		ifi.ifi_index = 1;
		{
			unsigned mtu = 16384;
			nl_req_init(&r, RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, 700, &ifi, sizeof ifi);
			nl_req_attr(&r, IFLA_MTU, &mtu, 4);
			expect_ack(fd, port, &r, 0);
			CHECK_EQ(if_nametoindex("lo"), 1);
			dump(fd, port, RTM_GETLINK, AF_UNSPEC, 701);
			{
				struct nlmsghdr *h;
				int len = (int)sizeof buf;
				for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len) && h->nlmsg_type == RTM_NEWLINK;
				     h = NLMSG_NEXT(h, len)) {
					struct ifinfomsg *i = NLMSG_DATA(h);
					unsigned *m = nl_attr(h, sizeof *i, IFLA_MTU, NULL);
					if (i->ifi_index == 1 && m)
						CHECK_EQ(*m, 16384);
				}
			}
			mtu = 65536;
			nl_req_init(&r, RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, 702, &ifi, sizeof ifi);
			nl_req_attr(&r, IFLA_MTU, &mtu, 4);
			expect_ack(fd, port, &r, 0);
		}
	}
	close(fd);
	DONE();
}
