/*
 * A block device file (/dev/ram0, the RAM disk the test boots create with
 * brd.rd_nr=2): stat, the BLK* ioctls, read/write/lseek/pread/pwrite
 * through the device's page cache, the end of the device (reads return
 * 0, writes ENOSPC or short), misaligned sizes, bad ioctls and pointers,
 * mmap MAP_SHARED written by one process and read with pread by another,
 * msync/fsync, and data surviving BLKFLSBUF (it reached the device).
 * On a Linux host without /dev/ram0 it is skipped.
 */
#include "next.h"
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/sysmacros.h>

/* linux/fs.h's block-device ioctls (musl's headers lack linux/). */
#ifndef BLKROSET
#define BLKROSET _IO(0x12, 93)
#endif
#ifndef BLKROGET
#define BLKROGET _IO(0x12, 94)
#endif
#ifndef BLKRRPART
#define BLKRRPART _IO(0x12, 95)
#endif
#ifndef BLKGETSIZE
#define BLKGETSIZE _IO(0x12, 96)
#endif
#ifndef BLKFLSBUF
#define BLKFLSBUF _IO(0x12, 97)
#endif
#ifndef BLKSSZGET
#define BLKSSZGET _IO(0x12, 104)
#endif
#ifndef BLKGETSIZE64
#define BLKGETSIZE64 _IOR(0x12, 114, size_t)
#endif

static unsigned char pat(off_t at)
{
	return (unsigned char)((at * 7 + (at >> 9) * 13 + 1) & 0xff);
}

static void fill(unsigned char *buf, size_t n, off_t at)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = pat(at + (off_t)i);
}

static int matches(const unsigned char *buf, size_t n, off_t at)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != pat(at + (off_t)i))
			return 0;
	return 1;
}

int main(void)
{
	const char *dev = "/dev/ram0";
	struct stat st;
	uint64_t size64 = 0;
	unsigned long sectors = 0;
	int ssz = 0, ro = -1;
	static unsigned char buf[3 * 4096 + 1000], back[sizeof buf];
	int fd;

	if (stat(dev, &st) != 0)
		SKIP("no %s (Linux host without brd)", dev);
	if (geteuid() != 0)
		SKIP("not root");
	fd = open(dev, O_RDWR);
	if (fd < 0)
		SKIP("cannot open %s: %s", dev, strerror(errno));

	CHECK(S_ISBLK(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 1u);
	CHECK_EQ(st.st_size, 0);

	CHECK_EQ(ioctl(fd, BLKGETSIZE64, &size64), 0);
	CHECK_EQ(ioctl(fd, BLKGETSIZE, &sectors), 0);
	CHECK_EQ(ioctl(fd, BLKSSZGET, &ssz), 0);
	CHECK_EQ(ioctl(fd, BLKROGET, &ro), 0);
	CHECK(size64 >= 4 * 1024 * 1024);
	CHECK_EQ((uint64_t)sectors * 512, size64);
	CHECK_EQ(ssz, 512);
	CHECK_EQ(ro, 0);
	if (t_is_trellis())
		CHECK_EQ(size64, 16u * 1024 * 1024);
	/* Bad requests and bad pointers. */
	CHECK_ERR(ioctl(fd, 0x12ff, 0), ENOTTY);
	CHECK_ERR(ioctl(fd, _IO('T', 0x99), 0), ENOTTY);
	CHECK_ERR(ioctl(fd, BLKGETSIZE64, BAD_PTR), EFAULT);
	CHECK_ERR(ioctl(fd, BLKSSZGET, BAD_PTR2), EFAULT);

	/* BLKROSET: a read-only device refuses writes (EPERM) and says so
	 * in sysfs; BLKROGET reads it back. */
	{
		int one = 1, zero = 0, got = -1;
		CHECK_EQ(ioctl(fd, BLKROSET, &one), 0);
		CHECK_EQ(ioctl(fd, BLKROGET, &got), 0);
		CHECK_EQ(got, 1);
		CHECK_ERR(pwrite(fd, "x", 1, 0), EPERM);
		if (t_is_trellis()) {
			char ro[8] = { 0 };
			int s = open("/sys/block/ram0/ro", O_RDONLY);
			CHECK(s >= 0 && read(s, ro, sizeof ro - 1) > 0);
			CHECK(ro[0] == '1');
			if (s >= 0)
				close(s);
		}
		CHECK_EQ(ioctl(fd, BLKROSET, &zero), 0);
		CHECK_EQ(ioctl(fd, BLKROGET, &got), 0);
		CHECK_EQ(got, 0);
		CHECK_ERR(ioctl(fd, BLKROSET, BAD_PTR), EFAULT);
	}

	/* lseek: SEEK_END is the device size. */
	CHECK_EQ(lseek(fd, 0, SEEK_END), (off_t)size64);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);

	/* A misaligned write spanning pages, read back whole and in pieces. */
	off_t at = 4096 * 5 + 777;
	fill(buf, sizeof buf, at);
	CHECK_EQ(pwrite(fd, buf, sizeof buf, at), (ssize_t)sizeof buf);
	memset(back, 0, sizeof back);
	CHECK_EQ(pread(fd, back, sizeof back, at), (ssize_t)sizeof back);
	CHECK(matches(back, sizeof back, at));
	CHECK_EQ(pread(fd, back, 3, at + 4000), 3);
	CHECK(matches(back, 3, at + 4000));
	/* Bytes around the write are untouched (zero on a fresh RAM disk
	 * only on Trellis, where nothing else wrote it). */
	CHECK_EQ(lseek(fd, at, SEEK_SET), at);
	CHECK_EQ(read(fd, back, 1), 1);
	CHECK_EQ(back[0], pat(at));
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), at + 1);

	/* The end of the device. */
	off_t end = (off_t)size64;
	CHECK_EQ(pread(fd, back, 100, end), 0);
	CHECK_EQ(pread(fd, back, 100, end + 12345), 0);
	CHECK_EQ(pread(fd, back, 100, end - 10), 10);
	CHECK_ERR(pwrite(fd, buf, 10, end), ENOSPC);
	CHECK_ERR(pwrite(fd, buf, 10, end + 4096), ENOSPC);
	fill(buf, 100, end - 30);
	CHECK_EQ(pwrite(fd, buf, 100, end - 30), 30);
	CHECK_EQ(pread(fd, back, 100, end - 30), 30);
	CHECK(matches(back, 30, end - 30));
	CHECK_ERR(pread(fd, back, 10, -1), EINVAL);
	/* A huge length stops at the end of the device. */
	CHECK_EQ(lseek(fd, end - 5, SEEK_SET), end - 5);
	CHECK_EQ(read(fd, back, sizeof back), 5);
	CHECK_ERR(pread(fd, BAD_PTR2, 4096, 0), EFAULT);

	/* fsync, then BLKFLSBUF drops the cache: the data came from the
	 * device afterwards. */
	CHECK_EQ(fsync(fd), 0);
	CHECK_EQ(fdatasync(fd), 0);
	CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
	memset(back, 0, sizeof back);
	CHECK_EQ(pread(fd, back, sizeof back, at), (ssize_t)sizeof back);
	CHECK(matches(back, sizeof back, at));

	/* MAP_SHARED: stores by a child, seen by pread in the parent and
	 * on the device after msync + BLKFLSBUF. */
	size_t mlen = 4 * 4096;
	off_t moff = 64 * 4096;
	unsigned char *m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, moff);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		pid_t pid = fork();
		if (pid == 0) {
			fill(m, mlen, moff);
			CHILD_DONE();
		}
		t_wait_ok(pid);
		memset(back, 0, sizeof back);
		CHECK_EQ(pread(fd, back, 4096, moff + 4096), 4096);
		CHECK(matches(back, 4096, moff + 4096));
		CHECK_EQ(msync(m, mlen, MS_SYNC), 0);
		CHECK_EQ(munmap(m, mlen), 0);
		CHECK_EQ(ioctl(fd, BLKFLSBUF, 0), 0);
		int fd2 = open(dev, O_RDONLY);
		CHECK(fd2 >= 0);
		memset(back, 0, sizeof back);
		CHECK_EQ(pread(fd2, back, 4096, moff + 3 * 4096), 4096);
		CHECK(matches(back, 4096, moff + 3 * 4096));
		/* A private mapping sees the data; its stores stay private. */
		unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd2, moff);
		CHECK(p != MAP_FAILED);
		if (p != MAP_FAILED) {
			CHECK(matches(p, 4096, moff));
			p[0] ^= 0xff;
			CHECK_EQ(pread(fd, back, 1, moff), 1);
			CHECK_EQ(back[0], pat(moff));
			munmap(p, 4096);
		}
		/* A read-only descriptor cannot map shared writable. */
		CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0) == MAP_FAILED);
		CHECK_ERR(write(fd2, buf, 1), EBADF);
		close(fd2);
	}

	/* sendfile reads the device through the same cache. */
	{
		int pfd[2];
		CHECK_EQ(pipe(pfd), 0);
		off_t from = at;
		CHECK_EQ(sendfile(pfd[1], fd, &from, 3000), 3000);
		CHECK_EQ(from, at + 3000);
		memset(back, 0, sizeof back);
		CHECK_EQ(read(pfd[0], back, 3000), 3000);
		CHECK(matches(back, 3000, at));
		close(pfd[0]);
		close(pfd[1]);
	}

	/* Background write-back: dirty data written without fsync reaches
	 * the device on its own (Trellis: within its 5 s expiry; polled for
	 * up to a minute so a loaded machine cannot make it flake). */
	if (t_is_trellis()) {
		fill(buf, sizeof buf, 100 * 4096);
		CHECK_EQ(pwrite(fd, buf, sizeof buf, 100 * 4096), (ssize_t)sizeof buf);
		long dirty = -1;
		for (int i = 0; i < 600; i++) {
			char mi[4096];
			int m = open("/proc/meminfo", O_RDONLY);
			ssize_t n = m >= 0 ? read(m, mi, sizeof mi - 1) : -1;
			if (m >= 0)
				close(m);
			if (n <= 0)
				break;
			mi[n] = 0;
			char *d = strstr(mi, "Dirty:");
			dirty = d ? strtol(d + 6, NULL, 10) : -1;
			if (i == 0)
				CHECK(dirty > 0);
			if (dirty == 0)
				break;
			usleep(100000);
		}
		CHECK_EQ(dirty, 0);
	}

	/* Another user may not open root's 0600 device node. */
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		CHECK_ERR(open(dev, O_RDONLY), EACCES);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	close(fd);
	DONE();
}
