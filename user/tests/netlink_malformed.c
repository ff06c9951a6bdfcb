/* NETLINK_ROUTE with hostile input: short and overlong nlmsg_len, bytes
 * shorter than a header, bad attribute lengths, unknown types, messages
 * without NLM_F_REQUEST, bad pointers, unbound destination ports,
 * changes by an unprivileged user (EPERM), and a sweep of random
 * datagrams, after which the socket still answers. Never a crash. */
#include "next.h"
#include "nl.h"
#include <sys/ioctl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>

static char buf[65536];

/* Nothing is queued in answer. */
static void expect_nothing(int fd)
{
	CHECK_ERR(recv(fd, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
}

/* The next datagram is one NLMSG_ERROR with `err` for seq. */
static void expect_error(int fd, unsigned seq, int err)
{
	ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;

	CHECK(n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)));
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return;
	CHECK_EQ(h->nlmsg_type, NLMSG_ERROR);
	CHECK_EQ(h->nlmsg_seq, seq);
	CHECK_EQ(((struct nlmsgerr *)NLMSG_DATA(h))->error, err);
}

static void link_request_still_works(int fd)
{
	struct nl_req r;
	struct ifinfomsg ifi;
	ssize_t n;

	memset(&ifi, 0, sizeof ifi);
	ifi.ifi_index = 1;
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 77, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	n = recv(fd, buf, sizeof buf, 0);
	CHECK(n > 0);
	CHECK_EQ(((struct nlmsghdr *)buf)->nlmsg_type, RTM_NEWLINK);
	CHECK_EQ(((struct nlmsghdr *)buf)->nlmsg_seq, 77);
}

int main(void)
{
	unsigned port;
	int fd = nl_open(&port);
	struct nl_req r;
	struct ifinfomsg ifi;
	struct ifaddrmsg ifa;
	struct sockaddr_nl to;
	unsigned seed = 12345;
	pid_t pid;

	CHECK(fd >= 0);
	memset(&ifi, 0, sizeof ifi);
	ifi.ifi_index = 1;

	/* nlmsg_len below the header, past the datagram, and a datagram
	 * shorter than a header: silently ignored. */
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, 1, &ifi, sizeof ifi);
	r.h.nlmsg_len = 8;
	CHECK(nl_send(fd, &r, NLMSG_LENGTH(sizeof ifi)) == 0);
	expect_nothing(fd);
	r.h.nlmsg_len = 4096;
	CHECK(nl_send(fd, &r, NLMSG_LENGTH(sizeof ifi)) == 0);
	expect_nothing(fd);
	r.h.nlmsg_len = 0xffffffff;
	CHECK(nl_send(fd, &r, NLMSG_LENGTH(sizeof ifi)) == 0);
	expect_nothing(fd);
	r.h.nlmsg_len = NLMSG_LENGTH(sizeof ifi);
	CHECK(nl_send(fd, &r, 10) == 0);
	expect_nothing(fd);

	/* A payload shorter than struct ifinfomsg: EINVAL. */
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 2, &ifi, 4);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_error(fd, 2, -EINVAL);

	/* An attribute whose length runs past the message: EINVAL. */
	memset(&ifi, 0, sizeof ifi);
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 3, &ifi, sizeof ifi);
	nl_req_attr(&r, IFLA_IFNAME, "lo", 3);
	((struct rtattr *)(r.body + NLMSG_ALIGN(sizeof ifi)))->rta_len = 200;
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_error(fd, 3, -EINVAL);
	/* ... and one shorter than its own header. */
	((struct rtattr *)(r.body + NLMSG_ALIGN(sizeof ifi)))->rta_len = 2;
	r.h.nlmsg_seq = 4;
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_error(fd, 4, -EINVAL);

	/* A type past rtnetlink's: EOPNOTSUPP. */
	nl_req_init(&r, 0x7ff, NLM_F_REQUEST, 5, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_error(fd, 5, -EOPNOTSUPP);

	/* No NLM_F_REQUEST, and NLMSG_NOOP: nothing done, acked if asked. */
	ifi.ifi_index = 1;
	nl_req_init(&r, RTM_GETLINK, NLM_F_ACK, 6, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_error(fd, 6, 0);
	nl_req_init(&r, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, 7, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_error(fd, 7, 0);
	nl_req_init(&r, NLMSG_NOOP, NLM_F_REQUEST, 8, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_nothing(fd);

	/* A dump request without even its family byte: ignored. */
	nl_req_init(&r, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 9, &ifi, 0);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	expect_nothing(fd);

	/* Bad pointers, and a user port nobody holds. */
	memset(&to, 0, sizeof to);
	to.nl_family = AF_NETLINK;
	CHECK_ERR(sendto(fd, (void *)8, 64, 0, (struct sockaddr *)&to, sizeof to), EFAULT);
	link_request_still_works(fd);
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 11, &ifi, sizeof ifi);
	CHECK(nl_send(fd, &r, r.h.nlmsg_len) == 0);
	CHECK_ERR(recv(fd, (void *)8, 64, 0), EFAULT);
	/* The datagram that could not be stored is gone. */
	expect_nothing(fd);
	to.nl_pid = 0x7fffeeee;
	nl_req_init(&r, RTM_GETLINK, NLM_F_REQUEST, 10, &ifi, sizeof ifi);
	CHECK_ERR(sendto(fd, &r, r.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof to),
		  ECONNREFUSED);

	/* A random sweep: whatever comes back, the socket still works. */
	for (int i = 0; i < 300; i++) {
		unsigned char junk[256];
		size_t len = 16 + (i % 200);

		for (size_t k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			junk[k] = (unsigned char)(seed >> 16);
		}
		/* Make most of them look like requests to rtnetlink. */
		if (i % 3) {
			struct nlmsghdr *h = (struct nlmsghdr *)junk;
			h->nlmsg_len = (unsigned)len - (i % 7);
			h->nlmsg_type = RTM_NEWLINK + (i % 12);
			h->nlmsg_flags |= NLM_F_REQUEST;
		}
		/* Only reads: a junk change could reconfigure the host. */
		if (((struct nlmsghdr *)junk)->nlmsg_type != 0 &&
		    (((struct nlmsghdr *)junk)->nlmsg_type - RTM_BASE) % 4 != 2)
			((struct nlmsghdr *)junk)->nlmsg_type = RTM_GETLINK + 4 * (i % 3);
		if (nl_send(fd, junk, len) != 0)
			CHECK(0);
		while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
			;
	}
	link_request_still_works(fd);

	/* Changes without CAP_NET_ADMIN: EPERM; reading is allowed. */
	pid = fork();
	if (pid == 0) {
		int ufd, s;
		unsigned uport;
		struct ifreq ifr;
		unsigned char a[4] = {127, 0, 0, 99};

		CHECK(setgid(65534) == 0);
		CHECK(setuid(65534) == 0);
		ufd = nl_open(&uport);
		CHECK(ufd >= 0);
		link_request_still_works(ufd);
		memset(&ifa, 0, sizeof ifa);
		ifa.ifa_family = AF_INET;
		ifa.ifa_prefixlen = 8;
		ifa.ifa_scope = RT_SCOPE_HOST;
		ifa.ifa_index = 1;
		nl_req_init(&r, RTM_NEWADDR, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL, 20, &ifa,
			    sizeof ifa);
		nl_req_attr(&r, IFA_LOCAL, a, 4);
		CHECK(nl_send(ufd, &r, r.h.nlmsg_len) == 0);
		expect_error(ufd, 20, -EPERM);
		memset(&ifi, 0, sizeof ifi);
		ifi.ifi_index = 1;
		ifi.ifi_change = IFF_UP;
		nl_req_init(&r, RTM_SETLINK, NLM_F_REQUEST, 21, &ifi, sizeof ifi);
		CHECK(nl_send(ufd, &r, r.h.nlmsg_len) == 0);
		expect_error(ufd, 21, -EPERM);
		{
			struct rtmsg rt;
			memset(&rt, 0, sizeof rt);
			rt.rtm_family = AF_INET;
			rt.rtm_table = RT_TABLE_MAIN;
			nl_req_init(&r, RTM_NEWROUTE, NLM_F_REQUEST, 22, &rt, sizeof rt);
			CHECK(nl_send(ufd, &r, r.h.nlmsg_len) == 0);
			expect_error(ufd, 22, -EPERM);
		}
		/* Multicast sends need the capability too. */
		to.nl_pid = 0;
		to.nl_groups = 1;
		CHECK_ERR(sendto(ufd, &r, r.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof to),
			  EPERM);
		s = socket(AF_UNIX, SOCK_DGRAM, 0);
		memset(&ifr, 0, sizeof ifr);
		strcpy(ifr.ifr_name, "lo");
		CHECK(ioctl(s, SIOCGIFFLAGS, &ifr) == 0);
		CHECK_ERR(ioctl(s, SIOCSIFFLAGS, &ifr), EPERM);
		ifr.ifr_mtu = 1500;
		CHECK_ERR(ioctl(s, SIOCSIFMTU, &ifr), EPERM);
		{
			/* route(8)'s ioctls (AF_INET's) need it too; Linux
			 * reads the structure first. */
			int in = socket(AF_INET, SOCK_DGRAM, 0);
			struct rtentry rt;

			CHECK(in >= 0);
			memset(&rt, 0, sizeof rt);
			((struct sockaddr_in *)&rt.rt_dst)->sin_family = AF_INET;
			((struct sockaddr_in *)&rt.rt_genmask)->sin_family = AF_INET;
			rt.rt_flags = RTF_UP;
			CHECK_ERR(ioctl(in, SIOCADDRT, &rt), EPERM);
			CHECK_ERR(ioctl(in, SIOCDELRT, &rt), EPERM);
			CHECK_ERR(ioctl(in, SIOCDELRT, (void *)8), EFAULT);
			close(in);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	close(fd);
	DONE();
}
