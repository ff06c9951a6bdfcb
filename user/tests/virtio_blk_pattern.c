/* virtio-blk end to end: /dev/vda holds an image the host filled with a
 * known pattern (scripts/virtio_blk_pattern.py make IMG); the pattern must
 * read back (readahead keeps several requests in flight), and a second
 * pattern written here must reach the image (the host checks it after
 * poweroff: scripts/virtio_blk_pattern.py check IMG). Without such a disk
 * (every normal test boot, and Linux hosts) the test skips. */
#include "next.h"

#define MARKER "TRELLIS-VIRTIO-PATTERN\n"
#define READ_END (8u << 20)
#define WRITE_START (8u << 20)
#define WRITE_END (10u << 20)
#define CHUNK (256u << 10)

/* Byte i of the host's pattern (past the first page) and of ours. */
static unsigned char host_byte(unsigned long i)
{
	return (unsigned char)((i >> 9) * 131 + (i & 511) * 7 + 3);
}

static unsigned char guest_byte(unsigned long i)
{
	return (unsigned char)((i >> 9) * 17 + (i & 511) * 13 + 5);
}

static unsigned char buf[CHUNK];

#define READERS 4

struct reader {
	pthread_t thread;
	int fd;
	unsigned long start, end, bad, short_reads;
	unsigned char buf[CHUNK];
};

/* Each reader checks its own quarter of the host pattern. While one sleeps
 * on its read, the next submits its own: several requests in flight. */
static void *read_range(void *arg)
{
	struct reader *r = arg;
	unsigned long off, i;

	for (off = r->start; off < r->end; off += CHUNK) {
		unsigned long n = r->end - off < CHUNK ? r->end - off : CHUNK;
		if (pread(r->fd, r->buf, n, off) != (ssize_t)n) {
			r->short_reads++;
			continue;
		}
		for (i = 0; i < n; i++)
			r->bad += r->buf[i] != host_byte(off + i);
	}
	return NULL;
}

static struct reader readers[READERS];

/* The largest "virtio-blk: N requests in flight" in the kernel log. */
static int peak_in_flight(void)
{
	static char log[1 << 16];
	long n = syscall(SYS_syslog, 3, log, (long)sizeof log - 1);
	int peak = 0, v;
	char *p;

	if (n <= 0)
		return -1;
	log[n] = 0;
	for (p = log; (p = strstr(p, "virtio-blk: ")); p++)
		if (sscanf(p, "virtio-blk: %d requests in flight", &v) == 1 && v > peak)
			peak = v;
	return peak;
}

int main(void)
{
	char head[sizeof MARKER - 1];
	unsigned long off, i, bad = 0;
	int fd;

	if (!t_is_trellis())
		SKIP("reads the guest's /dev/vda only");
	fd = open("/dev/vda", O_RDWR);
	if (fd < 0)
		SKIP("no /dev/vda");
	if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head || memcmp(head, MARKER, sizeof head)) {
		close(fd);
		SKIP("/dev/vda is not a pattern image");
	}

	for (i = 0; i < READERS; i++) {
		readers[i].fd = fd;
		readers[i].start = 4096 + i * (READ_END - 4096) / READERS;
		readers[i].end = 4096 + (i + 1) * (READ_END - 4096) / READERS;
		CHECK_EQ(pthread_create(&readers[i].thread, NULL, read_range, &readers[i]), 0);
	}
	for (i = 0; i < READERS; i++) {
		CHECK_EQ(pthread_join(readers[i].thread, NULL), 0);
		CHECK_EQ(readers[i].short_reads, 0);
		bad += readers[i].bad;
	}
	CHECK_EQ(bad, 0);

	for (off = WRITE_START; off < WRITE_END; off += sizeof buf) {
		for (i = 0; i < sizeof buf; i++)
			buf[i] = guest_byte(off + i);
		CHECK_EQ(pwrite(fd, buf, sizeof buf, off), (ssize_t)sizeof buf);
	}
	/* fsync: the dirty pages go to the device (several writes in
	 * flight), then a flush. */
	CHECK_EQ(fsync(fd), 0);
	CHECK_EQ(close(fd), 0);

	/* Read back through a new descriptor (the page cache, which must hold
	 * what was written). */
	fd = open("/dev/vda", O_RDONLY);
	CHECK(fd >= 0);
	bad = 0;
	for (off = WRITE_START; off < WRITE_END; off += sizeof buf) {
		CHECK_EQ(pread(fd, buf, sizeof buf, off), (ssize_t)sizeof buf);
		for (i = 0; i < sizeof buf; i++)
			bad += buf[i] != guest_byte(off + i);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(close(fd), 0);
	/* Only reported: how deep the queue got depends on the host's timing. */
	t_printf("  note: most virtio-blk requests in flight: %d\n", peak_in_flight());
	DONE();
}
