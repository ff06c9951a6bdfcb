/*
 * Partition tables on /dev/ram1 (the second RAM disk of the test boots),
 * re-read with BLKRRPART: MBR primary entries, an extended partition with
 * a chain of logical ones (and a loop in the chain), a GPT behind a
 * protective MBR (CRCs checked; a bad one gives no partitions), hostile
 * entries past the end of the disk (ignored), and 300 random tables that
 * must neither crash the kernel nor yield a partition outside the disk.
 * /dev/ram1pN and /sys/block/ram1/ram1pN/{size,start,partition} follow.
 * Skipped where /dev/ram1 does not exist (a Linux host without brd).
 */
#include "next.h"
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

#ifndef BLKRRPART
#define BLKRRPART _IO(0x12, 95)
#endif
#ifndef BLKFLSBUF
#define BLKFLSBUF _IO(0x12, 97)
#endif
#ifndef BLKGETSIZE64
#define BLKGETSIZE64 _IOR(0x12, 114, size_t)
#endif

#define DISK "/dev/ram1"
#define SYS "/sys/block/ram1"

static uint64_t disk_sectors;

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t crc32(const unsigned char *p, size_t n)
{
	uint32_t c = ~0u;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static void mbr_entry(unsigned char *sec, int i, unsigned char type, uint32_t start, uint32_t size)
{
	unsigned char *e = sec + 446 + 16 * i;
	e[4] = type;
	put32(e + 8, start);
	put32(e + 12, size);
}

static void write_sector(int fd, uint64_t lba, const unsigned char *sec)
{
	CHECK_EQ(pwrite(fd, sec, 512, (off_t)(lba * 512)), 512);
}

/* A sysfs attribute as a number, -1 if absent. */
static long long sys_num(const char *path)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

static int part_exists(int n)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/dev/ram1p%d", n);
	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

static long long part_attr(int n, const char *attr)
{
	char path[96];
	snprintf(path, sizeof path, SYS "/ram1p%d/%s", n, attr);
	return sys_num(path);
}

static void rescan(int fd)
{
	CHECK_EQ(fsync(fd), 0);
	CHECK_EQ(ioctl(fd, BLKRRPART, 0), 0);
}

/* Every partition the kernel shows lies inside the disk. */
static void check_all_inside(void)
{
	for (int n = 1; n <= 64; n++) {
		long long start = part_attr(n, "start"), size = part_attr(n, "size");
		if (start < 0)
			continue;
		CHECK(start > 0 && size > 0);
		CHECK((uint64_t)(start + size) <= disk_sectors);
	}
}

static void gpt(int fd, int corrupt)
{
	static unsigned char sec[512], hdr[512], ents[128 * 128];
	memset(sec, 0, sizeof sec);
	mbr_entry(sec, 0, 0xee, 1, (uint32_t)(disk_sectors - 1));
	sec[510] = 0x55;
	sec[511] = 0xaa;
	write_sector(fd, 0, sec);
	memset(ents, 0, sizeof ents);
	/* 1: sectors 40..1063; 2: 2048..4095; 3: past the end (ignored). */
	uint64_t r[3][2] = { { 40, 1063 }, { 2048, 4095 }, { 3000, 99999 } };
	for (int i = 0; i < 3; i++) {
		unsigned char *e = ents + 128 * i;
		memset(e, 0x11 + i, 16);  /* type GUID */
		memset(e + 16, 0x21 + i, 16); /* unique GUID */
		put64(e + 32, r[i][0]);
		put64(e + 40, r[i][1]);
	}
	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, "EFI PART", 8);
	put32(hdr + 8, 0x00010000);
	put32(hdr + 12, 92);
	put64(hdr + 24, 1);
	put64(hdr + 32, disk_sectors - 1);
	put64(hdr + 40, 34);
	put64(hdr + 48, disk_sectors - 34);
	memset(hdr + 56, 0x42, 16);
	put64(hdr + 72, 2);
	put32(hdr + 80, 128);
	put32(hdr + 84, 128);
	put32(hdr + 88, crc32(ents, sizeof ents));
	put32(hdr + 16, crc32(hdr, 92));
	if (corrupt)
		ents[40] ^= 1; /* the entry array no longer matches its CRC */
	write_sector(fd, 1, hdr);
	for (int i = 0; i < 32; i++)
		write_sector(fd, 2 + (uint64_t)i, ents + 512 * i);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

int main(void)
{
	static unsigned char sec[512], buf[8192], back[8192];
	struct stat st;
	uint64_t bytes = 0;
	int fd;

	if (stat(DISK, &st) != 0)
		SKIP("no " DISK " (Linux host without brd)");
	if (geteuid() != 0)
		SKIP("not root");
	fd = open(DISK, O_RDWR);
	if (fd < 0)
		SKIP("cannot open " DISK ": %s", strerror(errno));
	CHECK_EQ(ioctl(fd, BLKGETSIZE64, &bytes), 0);
	disk_sectors = bytes / 512;
	CHECK_EQ(sys_num(SYS "/size"), (long long)disk_sectors);
	CHECK_EQ(sys_num(SYS "/queue/logical_block_size"), 512);
	CHECK_EQ(sys_num(SYS "/ro"), 0);
	if (disk_sectors < 32768)
		SKIP(DISK " is smaller than 16 MiB");

	/* MBR: two primaries, two hostile entries, an extended partition
	 * whose chain holds two logical partitions and then loops. */
	memset(sec, 0, sizeof sec);
	mbr_entry(sec, 0, 0x83, 2048, 4096);
	mbr_entry(sec, 1, 0x83, 8192, 4096);
	mbr_entry(sec, 2, 0x05, 16384, 12288);
	mbr_entry(sec, 3, 0x83, (uint32_t)disk_sectors - 10, 100);
	sec[510] = 0x55;
	sec[511] = 0xaa;
	write_sector(fd, 0, sec);
	memset(sec, 0, 510);
	mbr_entry(sec, 0, 0x83, 2048, 2048);   /* 5: 18432 + 2048 */
	mbr_entry(sec, 1, 0x05, 8192, 4096);   /* next EBR at 24576 */
	write_sector(fd, 16384, sec);
	memset(sec, 0, 510);
	mbr_entry(sec, 0, 0x83, 1, 100);       /* 6: 24577 + 100 */
	mbr_entry(sec, 1, 0x05, 8192, 4096);   /* back to itself: a loop */
	write_sector(fd, 24576, sec);
	rescan(fd);
	CHECK(part_exists(1));
	CHECK(part_exists(2));
	CHECK(part_exists(3));
	CHECK(!part_exists(4));
	CHECK(part_exists(5));
	CHECK(part_exists(6));
	CHECK(!part_exists(7));
	CHECK_EQ(part_attr(1, "start"), 2048);
	CHECK_EQ(part_attr(1, "size"), 4096);
	CHECK_EQ(part_attr(1, "partition"), 1);
	CHECK_EQ(part_attr(2, "start"), 8192);
	CHECK_EQ(part_attr(3, "size"), 2);
	CHECK_EQ(part_attr(5, "start"), 18432);
	CHECK_EQ(part_attr(5, "size"), 2048);
	CHECK_EQ(part_attr(6, "start"), 24577);
	CHECK_EQ(part_attr(6, "partition"), 6);
	check_all_inside();

	/* A partition is a window on the disk. */
	int p1 = open("/dev/ram1p1", O_RDWR);
	CHECK(p1 >= 0);
	if (p1 >= 0) {
		uint64_t psize = 0;
		CHECK_EQ(ioctl(p1, BLKGETSIZE64, &psize), 0);
		CHECK_EQ(psize, 4096u * 512);
		CHECK_EQ(lseek(p1, 0, SEEK_END), (off_t)psize);
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (unsigned char)(i * 31 + 5);
		CHECK_EQ(pwrite(p1, buf, sizeof buf, 4096), (ssize_t)sizeof buf);
		CHECK_ERR(pwrite(p1, buf, 1, (off_t)psize), ENOSPC);
		CHECK_ERR(ioctl(p1, BLKRRPART, 0), EINVAL);
		/* An open partition keeps the table. */
		CHECK_ERR(ioctl(fd, BLKRRPART, 0), EBUSY);
		CHECK_EQ(fsync(p1), 0);
		close(p1);
		CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
		CHECK_EQ(pread(fd, back, sizeof back, 2048 * 512 + 4096), (ssize_t)sizeof back);
		CHECK(memcmp(buf, back, sizeof buf) == 0);
	}

	/* Only root may re-read the table. */
	pid_t pid = fork();
	if (pid == 0) {
		int ro = open(DISK, O_RDONLY);
		if (ro < 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		CHECK_ERR(ioctl(ro, BLKRRPART, 0), EACCES);
		CHILD_DONE();
	}
	t_wait_ok(pid);

	/* GPT: two partitions; the old MBR ones are gone. */
	gpt(fd, 0);
	rescan(fd);
	CHECK(part_exists(1));
	CHECK(part_exists(2));
	CHECK(!part_exists(3));
	CHECK(!part_exists(5));
	CHECK_EQ(part_attr(1, "start"), 40);
	CHECK_EQ(part_attr(1, "size"), 1024);
	CHECK_EQ(part_attr(2, "start"), 2048);
	CHECK_EQ(part_attr(2, "size"), 2048);
	check_all_inside();

	/* A GPT whose entries do not match their CRC: no partitions. */
	gpt(fd, 1);
	rescan(fd);
	CHECK(!part_exists(1));
	CHECK(!part_exists(2));

	/* Random tables: never a crash, never a partition outside. */
	for (int round = 0; round < 300; round++) {
		for (int i = 0; i < 512; i += 4)
			put32(sec + i, rnd());
		sec[510] = 0x55;
		sec[511] = 0xaa;
		for (int e = 0; e < 4; e++) {
			unsigned char *ent = sec + 446 + 16 * e;
			static const unsigned char kinds[] = { 0x83, 0x05, 0x0f, 0x85, 0xee, 0x00 };
			ent[4] = kinds[rnd() % sizeof kinds];
			if (rnd() % 2)
				put32(ent + 8, rnd() % (uint32_t)(disk_sectors + 64));
			if (rnd() % 2)
				put32(ent + 12, rnd() % (uint32_t)(disk_sectors + 64));
		}
		write_sector(fd, 0, sec);
		if (round % 3 == 0) {
			/* A header with a valid CRC and hostile fields. */
			unsigned char h[512];
			for (int i = 0; i < 512; i += 4)
				put32(h + i, rnd());
			memcpy(h, "EFI PART", 8);
			put32(h + 12, 92 + rnd() % 8);
			put64(h + 24, 1);
			if (rnd() % 2)
				put64(h + 48, disk_sectors - 34);
			if (rnd() % 2)
				put64(h + 72, 2 + rnd() % 64);
			put32(h + 16, 0);
			put32(h + 16, crc32(h, 92));
			write_sector(fd, 1, h);
		}
		CHECK_EQ(fsync(fd), 0);
		CHECK_EQ(ioctl(fd, BLKRRPART, 0), 0);
		check_all_inside();
	}

	/* No table: no partitions (and the disk is left as found). */
	memset(sec, 0, sizeof sec);
	write_sector(fd, 0, sec);
	write_sector(fd, 1, sec);
	rescan(fd);
	CHECK(!part_exists(1));
	close(fd);
	DONE();
}
