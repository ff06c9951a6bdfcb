/* Netlink (NETLINK_ROUTE) helpers shared by the netlink_*, gai_* tests:
 * send one request, collect the reply datagrams, walk the messages. */
#ifndef NL_H
#define NL_H

#include <sys/socket.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <stdint.h>

/* The netlink ABI (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h,
 * linux/if_addr.h), written out here because musl-gcc has no kernel
 * headers. */
struct sockaddr_nl {
	sa_family_t nl_family;
	unsigned short nl_pad;
	uint32_t nl_pid;
	uint32_t nl_groups;
};
struct nlmsghdr {
	uint32_t nlmsg_len;
	uint16_t nlmsg_type;
	uint16_t nlmsg_flags;
	uint32_t nlmsg_seq;
	uint32_t nlmsg_pid;
};
struct nlmsgerr {
	int error;
	struct nlmsghdr msg;
};
struct rtattr {
	unsigned short rta_len;
	unsigned short rta_type;
};
struct ifinfomsg {
	unsigned char ifi_family, __ifi_pad;
	unsigned short ifi_type;
	int ifi_index;
	unsigned ifi_flags, ifi_change;
};
struct ifaddrmsg {
	uint8_t ifa_family, ifa_prefixlen, ifa_flags, ifa_scope;
	uint32_t ifa_index;
};
struct rtmsg {
	unsigned char rtm_family, rtm_dst_len, rtm_src_len, rtm_tos;
	unsigned char rtm_table, rtm_protocol, rtm_scope, rtm_type;
	unsigned rtm_flags;
};

#define NETLINK_ROUTE 0
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#define NETLINK_CAP_ACK 10
#define NLMSG_NOOP 1
#define NLMSG_ERROR 2
#define NLMSG_DONE 3
#define NLM_F_REQUEST 0x1
#define NLM_F_MULTI 0x2
#define NLM_F_ACK 0x4
#define NLM_F_ROOT 0x100
#define NLM_F_MATCH 0x200
#define NLM_F_DUMP (NLM_F_ROOT | NLM_F_MATCH)
#define NLM_F_EXCL 0x200
#define NLM_F_CREATE 0x400
#define NLM_F_CAPPED 0x100
#define NLMSG_ALIGN(len) (((len) + 3U) & ~3U)
#define NLMSG_HDRLEN ((int)NLMSG_ALIGN(sizeof(struct nlmsghdr)))
#define NLMSG_LENGTH(len) ((len) + NLMSG_HDRLEN)
#define NLMSG_SPACE(len) NLMSG_ALIGN(NLMSG_LENGTH(len))
#define NLMSG_DATA(nlh) ((void *)(((char *)(nlh)) + NLMSG_HDRLEN))
#define NLMSG_NEXT(nlh, len)                                              \
	((len) -= NLMSG_ALIGN((nlh)->nlmsg_len),                          \
	 (struct nlmsghdr *)(((char *)(nlh)) + NLMSG_ALIGN((nlh)->nlmsg_len)))
#define NLMSG_OK(nlh, len)                                                \
	((len) >= (int)sizeof(struct nlmsghdr) &&                         \
	 (nlh)->nlmsg_len >= sizeof(struct nlmsghdr) &&                   \
	 (nlh)->nlmsg_len <= (unsigned)(len))
#define RTA_ALIGN(len) (((len) + 3U) & ~3U)
#define RTA_LENGTH(len) (RTA_ALIGN(sizeof(struct rtattr)) + (len))
#define RTA_DATA(rta) ((void *)(((char *)(rta)) + RTA_LENGTH(0)))
#define RTA_PAYLOAD(rta) ((int)((rta)->rta_len) - RTA_LENGTH(0))
#define RTA_OK(rta, len)                                                  \
	((len) >= (int)sizeof(struct rtattr) &&                           \
	 (rta)->rta_len >= sizeof(struct rtattr) && (rta)->rta_len <= (len))
#define RTA_NEXT(rta, attrlen)                                            \
	((attrlen) -= RTA_ALIGN((rta)->rta_len),                          \
	 (struct rtattr *)(((char *)(rta)) + RTA_ALIGN((rta)->rta_len)))

#define RTM_BASE 16
#define RTM_NEWLINK 16
#define RTM_GETLINK 18
#define RTM_SETLINK 19
#define RTM_NEWADDR 20
#define RTM_DELADDR 21
#define RTM_GETADDR 22
#define RTM_NEWROUTE 24
#define RTM_GETROUTE 26
#define IFLA_ADDRESS 1
#define IFLA_IFNAME 3
#define IFLA_MTU 4
#define IFLA_STATS64 23
#define IFA_ADDRESS 1
#define IFA_LOCAL 2
#define IFA_LABEL 3
#define RT_TABLE_MAIN 254
#define RT_SCOPE_HOST 254

/* A new NETLINK_ROUTE socket bound with nl_pid 0 (autobind): fd, and
 * its port in *port. */
static inline int nl_open(unsigned *port)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl sa;
	socklen_t len = sizeof sa;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	if (port)
		*port = sa.nl_pid;
	return fd;
}

/* Sends `len` bytes to the kernel. */
static inline int nl_send(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl k;

	memset(&k, 0, sizeof k);
	k.nl_family = AF_NETLINK;
	return sendto(fd, buf, len, 0, (struct sockaddr *)&k, sizeof k) ==
			       (ssize_t)len
		       ? 0
		       : -1;
}

/* A request: header, then `fixed` bytes of family header, then room for
 * attributes. */
struct nl_req {
	struct nlmsghdr h;
	unsigned char body[512];
};

static inline void nl_req_init(struct nl_req *r, int type, int flags,
			       unsigned seq, const void *fixed, size_t flen)
{
	memset(r, 0, sizeof *r);
	r->h.nlmsg_len = NLMSG_LENGTH(flen);
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = flags;
	r->h.nlmsg_seq = seq;
	memcpy(r->body, fixed, flen);
}

static inline void nl_req_attr(struct nl_req *r, int type, const void *data,
			       size_t len)
{
	struct rtattr *a =
		(struct rtattr *)((char *)r + NLMSG_ALIGN(r->h.nlmsg_len));
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->h.nlmsg_len = NLMSG_ALIGN(r->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Receives datagrams into buf (cap bytes) until an NLMSG_DONE or
 * NLMSG_ERROR arrives or nothing more is queued (MSG_DONTWAIT after the
 * first); returns the bytes collected, -1 on error. */
static inline ssize_t nl_collect(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	int first = 1;

	for (;;) {
		ssize_t n = recv(fd, buf + got, cap - got,
				 first ? 0 : MSG_DONTWAIT);
		struct nlmsghdr *h;
		int len, end = 0;

		if (n < 0)
			return (!first && errno == EAGAIN) ? (ssize_t)got : -1;
		first = 0;
		len = (int)n;
		for (h = (struct nlmsghdr *)(buf + got); NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len))
			if (h->nlmsg_type == NLMSG_DONE ||
			    h->nlmsg_type == NLMSG_ERROR)
				end = 1;
		got += (size_t)n;
		if (end || got >= cap)
			return (ssize_t)got;
	}
}

/* The data of attribute `type` in the attributes after `fixed` bytes of
 * message h's payload; NULL if absent (its length in *len). */
static inline void *nl_attr(struct nlmsghdr *h, size_t fixed, int type,
			    int *len)
{
	struct rtattr *a = (struct rtattr *)((char *)NLMSG_DATA(h) +
					     NLMSG_ALIGN(fixed));
	int rest = (int)h->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(fixed));

	for (; RTA_OK(a, rest); a = RTA_NEXT(a, rest))
		if (a->rta_type == type) {
			if (len)
				*len = (int)RTA_PAYLOAD(a);
			return RTA_DATA(a);
		}
	return NULL;
}

#endif
