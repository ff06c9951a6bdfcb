/* /proc/net and /sys/class/net: /proc/net is a link to self/net; the
 * tables' headers and fixed widths are Linux's; lo appears in dev,
 * if_inet6 and /sys/class/net with its attributes. */
#include "next.h"
#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

static char text[65536];

/* The whole file, NUL-terminated; its length, -1 if unreadable. */
static ssize_t slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t got = 0, n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, text + got, sizeof text - 1 - got)) > 0)
		got += n;
	close(fd);
	text[got] = 0;
	return got;
}

#define DEV_HEAD                                                                        \
	"Inter-|   Receive                                                |  Transmit\n"   \
	" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets " \
	"errs drop fifo colls carrier compressed\n"
#define INET6_HEAD                                                                  \
	"  sl  local_address                         remote_address                        " \
	"st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"

/* The current text starts with `head`. */
static int starts(const char *head)
{
	return strncmp(text, head, strlen(head)) == 0;
}

/* Every line of the current text is `width` characters. */
static int lines_are(size_t width)
{
	char *p = text, *nl;

	while ((nl = strchr(p, '\n'))) {
		if ((size_t)(nl - p) != width)
			return 0;
		p = nl + 1;
	}
	return *p == 0;
}

static void check_attr(const char *name, const char *want)
{
	char path[128];

	snprintf(path, sizeof path, "/sys/class/net/lo/%s", name);
	CHECK(slurp(path) > 0);
	if (strcmp(text, want) != 0) {
		t_printf("  %s: got '%s', want '%s'\n", path, text, want);
		CHECK(0);
	}
}

int main(void)
{
	char link[64];
	ssize_t n = readlink("/proc/net", link, sizeof link - 1);

	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK(strcmp(link, "self/net") == 0);
	}

	CHECK(slurp("/proc/net/dev") > 0);
	CHECK(starts(DEV_HEAD));
	CHECK(strstr(text, "\n    lo:") != NULL);

	CHECK(slurp("/proc/net/route") > 0);
	CHECK(starts("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT  "));
	CHECK(lines_are(127));

	CHECK(slurp("/proc/net/tcp") > 0);
	CHECK(starts("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode  "));
	CHECK(lines_are(149));
	CHECK(slurp("/proc/net/udp") > 0);
	CHECK(starts("   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops  "));
	CHECK(lines_are(127));
	CHECK(slurp("/proc/net/unix") > 0);
	CHECK(starts("Num       RefCount Protocol Flags    Type St Inode Path\n"));
	if (access("/proc/net/if_inet6", F_OK) == 0) {
		CHECK(slurp("/proc/net/tcp6") > 0);
		CHECK(starts(INET6_HEAD "\n"));
		CHECK(slurp("/proc/net/udp6") > 0);
		CHECK(starts(INET6_HEAD " ref pointer drops\n"));
		CHECK(slurp("/proc/net/if_inet6") > 0);
		CHECK(strstr(text, "00000000000000000000000000000001 01 80 10 80       lo\n") != NULL);
	}

	/* /proc/<pid>/net is the same directory. */
	{
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/net/dev", getpid());
		CHECK(access(path, R_OK) == 0);
	}

	/* A TCP listener and a bound AF_UNIX socket are in the tables. */
	{
		int l = socket(AF_INET, SOCK_STREAM, 0);
		int u = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_in sin;
		struct sockaddr_un sun;
		socklen_t len = sizeof sin;
		char want[64];

		CHECK(l >= 0);
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(0x7f000001);
		CHECK(bind(l, (struct sockaddr *)&sin, sizeof sin) == 0);
		CHECK(listen(l, 4) == 0);
		CHECK(getsockname(l, (struct sockaddr *)&sin, &len) == 0);
		snprintf(want, sizeof want, ": 0100007F:%04X 00000000:0000 0A ", ntohs(sin.sin_port));
		CHECK(slurp("/proc/net/tcp") > 0);
		CHECK(strstr(text, want) != NULL);
		CHECK(lines_are(149));

		CHECK(u >= 0);
		memset(&sun, 0, sizeof sun);
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path + 1, sizeof sun.sun_path - 1, "procnet%d", getpid());
		CHECK(bind(u, (struct sockaddr *)&sun,
			   offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sun.sun_path + 1)) == 0);
		CHECK(listen(u, 1) == 0);
		snprintf(want, sizeof want, " 00010000 0001 01 ");
		CHECK(slurp("/proc/net/unix") > 0);
		{
			char tail[64];
			char *line;
			snprintf(tail, sizeof tail, " @procnet%d\n", getpid());
			line = strstr(text, tail);
			CHECK(line != NULL);
			/* Its line says listening (__SO_ACCEPTCON), stream, unconnected. */
			while (line && line > text && line[-1] != '\n')
				line--;
			CHECK(line && strstr(line, want) != NULL && strstr(line, want) < strchr(line, '\n'));
		}
		close(l);
		close(u);
	}

	check_attr("address", "00:00:00:00:00:00\n");
	check_attr("mtu", "65536\n");
	check_attr("flags", "0x9\n");
	check_attr("ifindex", "1\n");
	check_attr("type", "772\n");
	check_attr("operstate", "unknown\n");
	CHECK(slurp("/sys/class/net/lo/statistics/rx_bytes") > 0);
	CHECK(text[0] >= '0' && text[0] <= '9');
	CHECK(slurp("/sys/class/net/lo/statistics/tx_packets") > 0);
	CHECK(access("/sys/class/net/nosuchif0", F_OK) == -1 && errno == ENOENT);
	DONE();
}
