/* The interface ioctls on sockets of several families (netdevice(7)):
 * SIOCGIFINDEX/NAME/FLAGS/ADDR/NETMASK/MTU/HWADDR/CONF on `lo`, ENODEV
 * for unknown names and indexes, EFAULT for bad pointers, ENOTTY for a
 * request that is not a socket's, EINVAL for a negative MTU, and (as
 * root) SIOCSIFMTU and SIOCSIFFLAGS round trips. */
#include "next.h"
#include "netns.h"
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <termios.h>
#define NETLINK_ROUTE 0

static void lo_ifreq(struct ifreq *ifr)
{
	memset(ifr, 0, sizeof *ifr);
	strcpy(ifr->ifr_name, "lo");
}

static void check_on(int s, int inet)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	struct ifconf ifc;
	struct ifreq list[64];
	int found = 0;

	lo_ifreq(&ifr);
	CHECK(ioctl(s, SIOCGIFINDEX, &ifr) == 0);
	CHECK_EQ(ifr.ifr_ifindex, 1);

	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_ifindex = 1;
	CHECK(ioctl(s, SIOCGIFNAME, &ifr) == 0);
	CHECK(strcmp(ifr.ifr_name, "lo") == 0);

	lo_ifreq(&ifr);
	CHECK(ioctl(s, SIOCGIFFLAGS, &ifr) == 0);
	CHECK_EQ(ifr.ifr_flags & (IFF_UP | IFF_LOOPBACK | IFF_RUNNING),
		 IFF_UP | IFF_LOOPBACK | IFF_RUNNING);

	/* The IPv4 address requests are AF_INET's. */
	lo_ifreq(&ifr);
	if (!inet) {
		CHECK_ERR(ioctl(s, SIOCGIFADDR, &ifr), ENOTTY);
		CHECK_ERR(ioctl(s, SIOCGIFNETMASK, &ifr), ENOTTY);
	} else {
		CHECK(ioctl(s, SIOCGIFADDR, &ifr) == 0);
		CHECK_EQ(sin->sin_family, AF_INET);
		CHECK_EQ(ntohl(sin->sin_addr.s_addr), 0x7f000001);
		lo_ifreq(&ifr);
		CHECK(ioctl(s, SIOCGIFNETMASK, &ifr) == 0);
		CHECK_EQ(ntohl(sin->sin_addr.s_addr), 0xff000000);
		memset(&ifr, 0, sizeof ifr);
		strcpy(ifr.ifr_name, "nosuchif0");
		CHECK_ERR(ioctl(s, SIOCGIFADDR, &ifr), ENODEV);
	}

	lo_ifreq(&ifr);
	CHECK(ioctl(s, SIOCGIFMTU, &ifr) == 0);
	CHECK_EQ(ifr.ifr_mtu, 65536);

	lo_ifreq(&ifr);
	CHECK(ioctl(s, SIOCGIFHWADDR, &ifr) == 0);
	CHECK_EQ(ifr.ifr_hwaddr.sa_family, ARPHRD_LOOPBACK);
	for (int i = 0; i < 6; i++)
		CHECK_EQ(ifr.ifr_hwaddr.sa_data[i], 0);

	/* SIOCGIFCONF: the size needed, then the list (lo with 127.0.0.1). */
	memset(&ifc, 0, sizeof ifc);
	CHECK(ioctl(s, SIOCGIFCONF, &ifc) == 0);
	CHECK(ifc.ifc_len >= (int)sizeof(struct ifreq));
	CHECK_EQ(ifc.ifc_len % (int)sizeof(struct ifreq), 0);
	ifc.ifc_len = sizeof list;
	ifc.ifc_req = list;
	CHECK(ioctl(s, SIOCGIFCONF, &ifc) == 0);
	for (int i = 0; i < ifc.ifc_len / (int)sizeof(struct ifreq); i++) {
		struct sockaddr_in *a = (struct sockaddr_in *)&list[i].ifr_addr;
		if (strcmp(list[i].ifr_name, "lo") == 0 &&
		    ntohl(a->sin_addr.s_addr) == 0x7f000001) {
			CHECK_EQ(a->sin_family, AF_INET);
			found++;
		}
	}
	CHECK_EQ(found, 1);
	/* Room for less than one entry: none is written. */
	ifc.ifc_len = sizeof(struct ifreq) - 1;
	CHECK(ioctl(s, SIOCGIFCONF, &ifc) == 0);
	CHECK_EQ(ifc.ifc_len, 0);

	/* Unknown names and indexes, bad pointers. */
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "nosuchif0");
	CHECK_ERR(ioctl(s, SIOCGIFFLAGS, &ifr), ENODEV);
	CHECK_ERR(ioctl(s, SIOCGIFINDEX, &ifr), ENODEV);
	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_ifindex = 0x7ffffff0;
	CHECK_ERR(ioctl(s, SIOCGIFNAME, &ifr), ENODEV);
	CHECK_ERR(ioctl(s, SIOCGIFFLAGS, (void *)8), EFAULT);
	CHECK_ERR(ioctl(s, SIOCGIFCONF, (void *)8), EFAULT);
	ifc.ifc_len = sizeof list;
	ifc.ifc_req = (struct ifreq *)8;
	CHECK_ERR(ioctl(s, SIOCGIFCONF, &ifc), EFAULT);
	/* A terminal request is not a socket's. */
	{
		struct termios t;
		CHECK_ERR(ioctl(s, TCGETS, &t), ENOTTY);
	}
}

int main(void)
{
	/* First: sockets belong to the namespace they are made in. */
	int may_change = t_private_netns();
	int u = socket(AF_UNIX, SOCK_DGRAM, 0);
	int n = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	int i = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;

	CHECK(u >= 0);
	CHECK(n >= 0);
	check_on(u, 0);
	check_on(n, 0);
	if (i >= 0)
		check_on(i, 1);
	else
		t_printf("  note: no AF_INET socket (errno %d); checked AF_UNIX and AF_NETLINK\n", errno);

	lo_ifreq(&ifr);
	ifr.ifr_mtu = -1;
	CHECK_ERR(ioctl(u, SIOCSIFMTU, &ifr), geteuid() == 0 ? EINVAL : EPERM);
	if (geteuid() == 0 && may_change) {
		lo_ifreq(&ifr);
		ifr.ifr_mtu = 16384;
		CHECK(ioctl(u, SIOCSIFMTU, &ifr) == 0);
		lo_ifreq(&ifr);
		CHECK(ioctl(u, SIOCGIFMTU, &ifr) == 0);
		CHECK_EQ(ifr.ifr_mtu, 16384);
		ifr.ifr_mtu = 65536;
		CHECK(ioctl(u, SIOCSIFMTU, &ifr) == 0);
		/* Setting the flags lo already has changes nothing. */
		lo_ifreq(&ifr);
		CHECK(ioctl(u, SIOCGIFFLAGS, &ifr) == 0);
		CHECK(ioctl(u, SIOCSIFFLAGS, &ifr) == 0);
		lo_ifreq(&ifr);
		CHECK(ioctl(u, SIOCGIFFLAGS, &ifr) == 0);
		CHECK(ifr.ifr_flags & IFF_UP);
		/* SIOCSIFADDR needs an AF_INET address (on an AF_INET
		 * socket). */
		if (i >= 0) {
			lo_ifreq(&ifr);
			ifr.ifr_addr.sa_family = AF_INET6;
			CHECK_ERR(ioctl(i, SIOCSIFADDR, &ifr), EINVAL);
		}
	}
	close(u);
	close(n);
	if (i >= 0)
		close(i);
	DONE();
}
