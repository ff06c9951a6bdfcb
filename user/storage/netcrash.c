/*
 * netcrash - the crash layer's network workload: TCP transfers between the
 * guest and a server xtask runs on the host while the virtio-net driver is
 * made to crash (drivers.crash=virtio-net:1s).
 *
 *   netcrash run ADDR PORT SECONDS BYTES [MIN_CRASHES]
 *       for SECONDS of guest time (and at least one round; then on, up to
 *       3 * SECONDS in all, until the debugfs counter shows MIN_CRASHES
 *       injected crashes), round k:
 *       connect to ADDR:PORT, send a 16-byte header (seed, length; little
 *       endian u64s) and BYTES bytes of content(seed), shut down the
 *       sending side, then read the host's reply: the FNV-1a 64 digest of
 *       what the host received, then BYTES bytes of content(seed ^ 0xffff).
 *       The digest must be that of what was sent and the content must match
 *       byte for byte.
 *   netcrash fail IFNAME ADDR PORT
 *       with the driver crashing at every point (the caller wrote
 *       /sys/kernel/debug/domains/virtio-net/crash): a connection attempt
 *       must not succeed within 10 s, after which the interface must report
 *       no link (IFF_RUNNING clear, as Linux reports a lost carrier); every
 *       call returns (nothing hangs).
 *
 * Content: splitmix64(seed << 40 ^ word index), little endian, as
 * crashwork.c and xtask/src/test_crash.rs make it. Prints `NETCRASH <mode>
 * OK ...` or `NETCRASH <mode> FAIL ...`; every failed system call is
 * counted and printed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "content.h"

#define CHUNK (64 * 1024)

static long failed_calls, mismatches;

static void failed(const char *what)
{
	failed_calls++;
	printf("NETCRASH syscall failed: %s: %s\n", what, strerror(errno));
	fflush(stdout);
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		p[b] = (unsigned char)(v >> (8 * b));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int b = 0; b < 8; b++)
		v |= (uint64_t)p[b] << (8 * b);
	return v;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			failed("write");
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads exactly n bytes; -1 on an error or an early end. */
static int read_all(int fd, unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			failed("read");
			return -1;
		}
		if (r == 0) {
			failed_calls++;
			printf("NETCRASH the host closed early (%zu bytes missing)\n", n);
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int connect_to(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		printf("NETCRASH bad address %s\n", addr);
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		failed("socket");
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		failed("connect");
		close(fd);
		return -1;
	}
	return fd;
}

static int round_trip(const char *addr, int port, uint64_t seed, uint64_t bytes,
		      unsigned char *buf, unsigned char *want)
{
	int fd = connect_to(addr, port);
	if (fd < 0)
		return -1;
	unsigned char head[16];
	put64(head, seed);
	put64(head + 8, bytes);
	int rc = write_all(fd, head, sizeof head);
	uint64_t digest = 0xcbf29ce484222325ULL;
	for (uint64_t off = 0; rc == 0 && off < bytes; off += CHUNK) {
		size_t n = bytes - off < CHUNK ? (size_t)(bytes - off) : CHUNK;
		fill(buf, seed, off, n);
		digest = fnv(digest, buf, n);
		rc = write_all(fd, buf, n);
	}
	if (rc == 0 && shutdown(fd, SHUT_WR) < 0) {
		failed("shutdown");
		rc = -1;
	}
	unsigned char got[8];
	if (rc == 0)
		rc = read_all(fd, got, 8);
	if (rc == 0 && get64(got) != digest) {
		mismatches++;
		printf("NETCRASH round %llu: the host received other bytes than were sent\n",
		       (unsigned long long)seed);
	}
	for (uint64_t off = 0; rc == 0 && off < bytes; off += CHUNK) {
		size_t n = bytes - off < CHUNK ? (size_t)(bytes - off) : CHUNK;
		rc = read_all(fd, buf, n);
		if (rc == 0) {
			fill(want, seed ^ 0xffff, off, n);
			if (memcmp(buf, want, n) != 0) {
				mismatches++;
				printf("NETCRASH round %llu: bytes from the host differ at %llu\n",
				       (unsigned long long)seed, (unsigned long long)off);
				rc = -1;
			}
		}
	}
	if (rc == 0) {
		/* The host closes after its reply. */
		ssize_t r = read(fd, buf, 1);
		if (r != 0) {
			if (r < 0)
				failed("read at the end");
			else
				printf("NETCRASH round %llu: extra bytes after the reply\n",
				       (unsigned long long)seed), mismatches++;
			rc = -1;
		}
	}
	close(fd);
	return rc;
}

/* Crashes injected so far (the debugfs counter), or -1. */
static long injected(void)
{
	FILE *f = fopen("/sys/kernel/debug/domains/virtio-net/injected", "r");
	long n = -1;
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/*
 * Rounds for `seconds`, then on until `min_crashes` have been injected
 * (TCP back-off after a lost frame can stall the traffic, and crashes land
 * only while frames flow), for at most three times `seconds` in all.
 */
static int run(const char *addr, int port, double seconds, uint64_t bytes, long min_crashes)
{
	bytes &= ~(uint64_t)7;
	unsigned char *buf = malloc(CHUNK), *want = malloc(CHUNK);
	if (!buf || !want) {
		printf("NETCRASH run FAIL out of memory\n");
		return 1;
	}
	double start = now(), end = start + seconds;
	uint64_t rounds = 0, moved = 0;
	do {
		if (round_trip(addr, port, rounds + 1, bytes, buf, want) == 0)
			moved += 2 * bytes;
		rounds++;
	} while ((now() < end || (injected() < min_crashes && now() < start + 3 * seconds)) &&
		 failed_calls == 0 && mismatches == 0);
	double took = now() - start;
	printf("NETCRASH rounds %llu bytes %llu seconds %.1f failed %ld mismatches %ld\n",
	       (unsigned long long)rounds, (unsigned long long)moved, took, failed_calls,
	       mismatches);
	if (failed_calls || mismatches) {
		printf("NETCRASH run FAIL\n");
		return 1;
	}
	printf("NETCRASH run OK\n");
	return 0;
}

static int fail_mode(const char *ifname, const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		printf("NETCRASH fail FAIL bad address %s\n", addr);
		return 1;
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		failed("socket");
		printf("NETCRASH fail FAIL\n");
		return 1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	int connected = 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
		connected = 1;
	} else if (errno == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int n = poll(&p, 1, 10000);
		int err = 0;
		socklen_t len = sizeof err;
		if (n > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
			connected = 1;
		printf("NETCRASH connect: poll %d, error %s\n", n, err ? strerror(err) : "none");
	} else {
		printf("NETCRASH connect: %s\n", strerror(errno));
	}
	close(fd);
	if (connected) {
		printf("NETCRASH fail FAIL a connection went through a failed device\n");
		return 1;
	}
	/* The worker fails the device after its back-off (150 ms in all);
	 * the connection attempt above took longer. */
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		failed("SIOCGIFFLAGS");
		printf("NETCRASH fail FAIL\n");
		return 1;
	}
	close(s);
	int flags = ifr.ifr_flags;
	printf("NETCRASH %s flags %#x\n", ifname, flags);
	if (flags & IFF_RUNNING) {
		printf("NETCRASH fail FAIL the link is still reported up\n");
		return 1;
	}
	printf("NETCRASH fail OK\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "run") == 0)
		return run(argv[2], atoi(argv[3]), atof(argv[4]), strtoull(argv[5], NULL, 0),
			   argc == 7 ? atol(argv[6]) : 0);
	if (argc == 5 && strcmp(argv[1], "fail") == 0)
		return fail_mode(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: netcrash run ADDR PORT SECONDS BYTES [MIN_CRASHES] | fail IFNAME ADDR PORT\n");
	return 2;
}
