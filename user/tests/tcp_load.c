/* Many concurrent TCP connections over loopback, each moving a buffer of
 * pseudo-random bytes that the server checksums and answers: nothing may
 * be lost, reordered or hang.  `tcp_load [CONNS [KIB]]`; the suite runs
 * 200 connections of 64 KiB (`cargo xtask bench` and the full
 * size: tcp_load 200 1024). */
#include "next.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int conns = 200;
static size_t bytes = 64 * 1024;
static int port;
static volatile int failures;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* FNV-1a over the stream. */
static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, (const char *)buf + done, n - done);
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

/* Server side of one connection: reads the length, then the bytes,
 * answers the checksum. */
static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint64_t len, h = 0xcbf29ce484222325ULL;
	unsigned char buf[8192];
	if (read_full(fd, &len, sizeof len) < 0) {
		__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
		close(fd);
		return NULL;
	}
	while (len > 0) {
		ssize_t r = read(fd, buf, len < sizeof buf ? len : sizeof buf);
		if (r <= 0) {
			__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
			break;
		}
		h = fnv(h, buf, (size_t)r);
		len -= (uint64_t)r;
	}
	if (write_full(fd, &h, sizeof h) < 0)
		__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
	close(fd);
	return NULL;
}

static volatile int clients_done;

static void *acceptor(void *arg)
{
	int l = (int)(intptr_t)arg;
	for (int i = 0; i < conns;) {
		/* Once every client has finished (some may have failed to
		 * connect, and are counted), stop waiting for more. */
		struct pollfd p = {l, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0) {
			if (__atomic_load_n(&clients_done, __ATOMIC_SEQ_CST))
				break;
			continue;
		}
		int fd = accept(l, NULL, NULL);
		i++;
		if (fd < 0) {
			__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 64 * 1024);
		if (pthread_create(&t, &at, serve, (void *)(intptr_t)fd) != 0)
			serve((void *)(intptr_t)fd);
	}
	return NULL;
}

static void *client(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL * ((uint64_t)(intptr_t)arg + 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	unsigned char buf[8192];
	uint64_t h = 0xcbf29ce484222325ULL, got = 0, len = bytes;
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		t_printf("  client %d: connect: %s\n", (int)(intptr_t)arg, strerror(errno));
		goto fail;
	}
	if (write_full(fd, &len, sizeof len) < 0)
		goto fail;
	for (size_t done = 0; done < bytes;) {
		size_t n = bytes - done < sizeof buf ? bytes - done : sizeof buf;
		for (size_t i = 0; i < n; i += 8) {
			uint64_t r = next_rand(&seed);
			memcpy(buf + i, &r, n - i < 8 ? n - i : 8);
		}
		h = fnv(h, buf, n);
		if (write_full(fd, buf, n) < 0)
			goto fail;
		done += n;
	}
	if (read_full(fd, &got, sizeof got) < 0 || got != h) {
		t_printf("  client %d: checksum mismatch or short answer\n", (int)(intptr_t)arg);
		goto fail;
	}
	close(fd);
	return NULL;
fail:
	__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
	if (fd >= 0)
		close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		conns = atoi(argv[1]);
	if (argc > 2)
		bytes = (size_t)atol(argv[2]) * 1024;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	socklen_t len = sizeof a;
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	CHECK_EQ(listen(l, SOMAXCONN), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);

	pthread_t acc, *cl = calloc((size_t)conns, sizeof *cl);
	CHECK_EQ(pthread_create(&acc, NULL, acceptor, (void *)(intptr_t)l), 0);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < conns; i++)
		CHECK_EQ(pthread_create(&cl[i], &at, client, (void *)(intptr_t)i), 0);
	for (int i = 0; i < conns; i++)
		pthread_join(cl[i], NULL);
	__atomic_store_n(&clients_done, 1, __ATOMIC_SEQ_CST);
	pthread_join(acc, NULL);
	CHECK_EQ(failures, 0);
	t_printf("  %d connections x %zu bytes: %d failures\n", conns, bytes, failures);
	close(l);
	DONE();
}
