/*
 * netns.h - interface changes without touching the host's own network.
 *
 * A test that changes interfaces as root (addresses, MTU, flags) would, on
 * the host Linux, change the machine's own configuration and race with
 * another test run beside it. t_private_netns() moves the test into a
 * network namespace of its own there and brings its lo up (Linux then
 * gives it 127.0.0.1/8 and ::1, as the default namespace has). It returns
 * whether the test may change interfaces: always on Trellis (each boot is
 * its own machine), on the host only if the namespace was made.
 */
#ifndef TRELLIS_NETNS_H
#define TRELLIS_NETNS_H

#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <net/if.h>

static inline int t_private_netns(void)
{
	struct ifreq ifr;
	int s, ok;

	if (t_is_trellis())
		return 1;
	if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0)
		return 0;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return 0;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	ok = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	ok = ok && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	close(s);
	return ok;
}

#endif
