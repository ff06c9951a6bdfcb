/*
 * Write-back of a block device's page cache (/dev/ram0, the RAM disk the
 * test boots create): Trellis hands dirty pages to the device in batches
 * of many pages, several requests in flight.  Whatever the batching, what
 * reaches the device must be exactly what was written: a run of whole
 * dirty pages longer than one batch, whole pages separated by clean ones,
 * pages with only a few bytes changed inside one sector or across two
 * (the rest of the page must keep the device's data), a page changed only
 * through a MAP_SHARED mapping, and the last page of the device.  After
 * fsync and BLKFLSBUF (which drops the clean cache, so the reads come from
 * the device) every byte of the region reads back as expected.
 * On a Linux host without /dev/ram0 it is skipped.
 */
#include "next.h"
#include <sys/ioctl.h>
#include <sys/mman.h>

#ifndef BLKFLSBUF
#define BLKFLSBUF _IO(0x12, 97)
#endif
#ifndef BLKGETSIZE64
#define BLKGETSIZE64 _IOR(0x12, 114, size_t)
#endif

#define NPAGES 1024 /* the last 4 MiB of the device */
#define CHUNK (64 * 1024)

static unsigned char *want;

static unsigned char base_byte(size_t at)
{
	return (unsigned char)((at * 11 + (at >> 12) * 5 + 3) & 0xff);
}

static unsigned char new_byte(size_t at)
{
	return (unsigned char)((at * 29 + (at >> 9) + 0x5a) & 0xff);
}

/* pwrite of `n` new bytes at region offset `at`, kept in the model. */
static void put(int fd, off_t base, size_t at, size_t n)
{
	unsigned char buf[PAGE];
	for (size_t i = 0; i < n; i++)
		buf[i] = want[at + i] = new_byte(at + i);
	CHECK_EQ(pwrite(fd, buf, n, base + (off_t)at), (ssize_t)n);
}

static void read_back(int fd, off_t base, const char *when)
{
	static unsigned char got[CHUNK];
	for (size_t at = 0; at < (size_t)NPAGES * PAGE; at += CHUNK) {
		CHECK_EQ(pread(fd, got, CHUNK, base + (off_t)at), CHUNK);
		if (memcmp(got, want + at, CHUNK) != 0) {
			size_t i = 0;
			while (got[i] == want[at + i])
				i++;
			t_note("%s: first difference at region byte %zu (page %zu): %02x, expected %02x",
			       when, at + i, (at + i) / PAGE, got[i], want[at + i]);
			CHECK(!"the device holds what was written");
			return;
		}
	}
}

int main(void)
{
	const char *dev = "/dev/ram0";
	struct stat st;
	uint64_t size = 0;

	if (stat(dev, &st) != 0)
		SKIP("no %s (Linux host without brd)", dev);
	if (geteuid() != 0)
		SKIP("not root");
	int fd = open(dev, O_RDWR);
	if (fd < 0)
		SKIP("cannot open %s: %s", dev, strerror(errno));
	CHECK_EQ(ioctl(fd, BLKGETSIZE64, &size), 0);
	CHECK(size >= (uint64_t)NPAGES * PAGE);
	if (size < (uint64_t)NPAGES * PAGE)
		DONE();
	off_t base = (off_t)(size - (uint64_t)NPAGES * PAGE);
	want = malloc((size_t)NPAGES * PAGE);
	CHECK(want != NULL);
	if (!want)
		DONE();

	/* The device's data before the test: a known pattern, on the
	 * device, nothing of it cached. */
	{
		static unsigned char buf[CHUNK];
		for (size_t at = 0; at < (size_t)NPAGES * PAGE; at += CHUNK) {
			for (size_t i = 0; i < CHUNK; i++)
				buf[i] = want[at + i] = base_byte(at + i);
			CHECK_EQ(pwrite(fd, buf, CHUNK, base + (off_t)at), CHUNK);
		}
		CHECK_EQ(fsync(fd), 0);
		CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
		read_back(fd, base, "baseline");
		CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
	}

	/* Pages 0..299: whole pages in a row (more than one batch). */
	for (size_t p = 0; p < 300; p++)
		put(fd, base, p * PAGE, PAGE);
	/* Pages 300..1023: every third page whole (the last page of the
	 * device among them); of the others, some get 100 bytes inside
	 * sector 1, some 10 bytes across sectors 1 and 2, the rest stay
	 * clean. */
	for (size_t p = 300; p < NPAGES; p++) {
		if (p % 3 == 0)
			put(fd, base, p * PAGE, PAGE);
		else if (p % 3 == 1)
			put(fd, base, p * PAGE + 700, 100);
		else if (p % 5 == 0)
			put(fd, base, p * PAGE + 1020, 10);
	}
	/* Page 502 (clean so far): changed only through a shared mapping. */
	{
		size_t p = 502;
		unsigned char *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					base + (off_t)(p * PAGE));
		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			CHECK_EQ(m[0], want[p * PAGE]);
			for (size_t i = 2000; i < 2064; i++)
				m[i] = want[p * PAGE + i] = new_byte(p * PAGE + i);
			CHECK_EQ(msync(m, PAGE, MS_SYNC), 0);
			CHECK_EQ(munmap(m, PAGE), 0);
		}
	}
	CHECK_EQ(fsync(fd), 0);
	/* Through the cache, then from the device. */
	read_back(fd, base, "cached");
	CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
	read_back(fd, base, "after BLKFLSBUF");

	/* A second round over the same pages, written back by fsync alone
	 * while none of them is cached clean. */
	for (size_t p = 0; p < NPAGES; p += 2)
		put(fd, base, p * PAGE + 512, PAGE - 1024);
	CHECK_EQ(fsync(fd), 0);
	CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
	read_back(fd, base, "second round");

	free(want);
	close(fd);
	DONE();
}
