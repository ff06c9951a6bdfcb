/* Name service without a network, as both libcs do it: getaddrinfo and
 * gethostbyname through /etc/hosts (AI_ADDRCONFIG makes glibc ask
 * netlink for the addresses, musl probe with UDP sockets), and the
 * interface enumerations if_nameindex, if_nametoindex and getifaddrs
 * (netlink in both libcs). Built for musl and glibc. */
#include "next.h"
#include <netdb.h>
#include <net/if.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>

/* Whether the list has AF_INET 127.0.0.1 port `port`. */
static int has_lo4(struct addrinfo *res, int port)
{
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		struct sockaddr_in *sin = (struct sockaddr_in *)a->ai_addr;
		if (a->ai_family == AF_INET && ntohl(sin->sin_addr.s_addr) == 0x7f000001 &&
		    ntohs(sin->sin_port) == port)
			return 1;
	}
	return 0;
}

int main(void)
{
	struct addrinfo hints, *res = NULL;
	struct hostent *he;
	struct if_nameindex *ni;
	struct ifaddrs *ifs = NULL;
	char name[IF_NAMESIZE];
	int rc, found;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo("localhost", "80", &hints, &res);
	CHECK_EQ(rc, 0);
	if (rc == 0) {
		CHECK(has_lo4(res, 80));
		freeaddrinfo(res);
	}

	hints.ai_family = AF_UNSPEC;
	hints.ai_flags = AI_ADDRCONFIG;
	res = NULL;
	rc = getaddrinfo("localhost", "8080", &hints, &res);
	if (rc != 0)
		t_printf("  getaddrinfo(AI_ADDRCONFIG): %s\n", gai_strerror(rc));
	CHECK_EQ(rc, 0);
	if (rc == 0) {
		CHECK(has_lo4(res, 8080));
		freeaddrinfo(res);
	}

	/* No lookup for a name when only numbers are allowed. */
	hints.ai_flags = AI_NUMERICHOST;
	CHECK_EQ(getaddrinfo("localhost", NULL, &hints, &res), EAI_NONAME);
	hints.ai_flags = AI_NUMERICHOST;
	res = NULL;
	CHECK_EQ(getaddrinfo("127.0.0.1", "22", &hints, &res), 0);
	if (res) {
		CHECK(has_lo4(res, 22));
		freeaddrinfo(res);
	}

	he = gethostbyname("localhost");
	CHECK(he != NULL);
	if (he) {
		CHECK_EQ(he->h_addrtype, AF_INET);
		CHECK(he->h_addr_list[0] && ntohl(*(in_addr_t *)he->h_addr_list[0]) == 0x7f000001);
	}

	CHECK_EQ(if_nametoindex("lo"), 1);
	CHECK_EQ(if_nametoindex("nosuchif0"), 0);
	CHECK(if_indextoname(1, name) != NULL && strcmp(name, "lo") == 0);
	ni = if_nameindex();
	CHECK(ni != NULL);
	found = 0;
	for (struct if_nameindex *p = ni; p && p->if_index; p++)
		if (p->if_index == 1 && strcmp(p->if_name, "lo") == 0)
			found++;
	CHECK_EQ(found, 1);
	if (ni)
		if_freenameindex(ni);

	CHECK(getifaddrs(&ifs) == 0);
	found = 0;
	for (struct ifaddrs *p = ifs; p; p = p->ifa_next) {
		if (strcmp(p->ifa_name, "lo") != 0 || !p->ifa_addr)
			continue;
		CHECK(p->ifa_flags & IFF_UP);
		CHECK(p->ifa_flags & IFF_LOOPBACK);
		if (p->ifa_addr->sa_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)p->ifa_addr;
			struct sockaddr_in *m = (struct sockaddr_in *)p->ifa_netmask;
			if (ntohl(a->sin_addr.s_addr) == 0x7f000001) {
				found++;
				CHECK(m && ntohl(m->sin_addr.s_addr) == 0xff000000);
			}
		}
	}
	CHECK_EQ(found, 1);
	if (ifs)
		freeifaddrs(ifs);
	DONE();
}
