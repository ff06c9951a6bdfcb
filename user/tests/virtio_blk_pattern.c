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

	for (off = 4096; off < READ_END; off += sizeof buf) {
		unsigned long n = READ_END - off < sizeof buf ? READ_END - off : sizeof buf;
		CHECK_EQ(pread(fd, buf, n, off), (ssize_t)n);
		for (i = 0; i < n; i++)
			bad += buf[i] != host_byte(off + i);
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
	DONE();
}
