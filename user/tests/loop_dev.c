/*
 * loop_dev - the loop block device, loop(4): /dev/loop-control
 * (LOOP_CTL_GET_FREE, LOOP_CTL_ADD, LOOP_CTL_REMOVE) and /dev/loopN
 * (LOOP_SET_FD, LOOP_CLR_FD, LOOP_CONFIGURE, LOOP_GET_STATUS64,
 * LOOP_SET_STATUS64) with the errors the man page gives: EBUSY, ENXIO,
 * EINVAL, EBADF, ENODEV, EEXIST; data through the device lands in the file
 * at the configured offset; read-only bindings; AUTOCLEAR.
 *
 * Runs on the host too (as root, with its loop driver): it only uses a
 * device LOOP_CTL_GET_FREE hands out and one it adds itself, and unbinds
 * and removes what it made.
 */
#include "t.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define LOOP_SET_FD 0x4C00
#define LOOP_CLR_FD 0x4C01
#define LOOP_SET_STATUS64 0x4C04
#define LOOP_GET_STATUS64 0x4C05
#define LOOP_CONFIGURE 0x4C0A
#define LOOP_CTL_ADD 0x4C80
#define LOOP_CTL_REMOVE 0x4C81
#define LOOP_CTL_GET_FREE 0x4C82
#define LO_FLAGS_READ_ONLY 1
#define LO_FLAGS_AUTOCLEAR 4
#define BLKROGET 0x125e
#define BLKSSZGET 0x1268
#define BLKGETSIZE64 0x80081272

struct loop_info64 {
	uint64_t lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit;
	uint32_t lo_number, lo_encrypt_type, lo_encrypt_key_size, lo_flags;
	uint8_t lo_file_name[64], lo_crypt_name[64], lo_encrypt_key[32];
	uint64_t lo_init[2];
};

struct loop_config {
	uint32_t fd, block_size;
	struct loop_info64 info;
	uint64_t reserved[8];
};

#define FILE_SIZE (1024 * 1024)

static char scratch[256];

/* Opens /dev/loopN, making a node in the scratch directory if /dev has
 * none (yet). */
static int open_loop(int n, int flags)
{
	char path[300];
	snprintf(path, sizeof path, "/dev/loop%d", n);
	int fd = open(path, flags);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	snprintf(path, sizeof path, "%s/loop%d", scratch, n);
	unlink(path);
	if (mknod(path, S_IFBLK | 0600, makedev(7, n)) < 0)
		return -1;
	return open(path, flags);
}

static uint64_t dev_size(int fd)
{
	uint64_t size = 12345;
	CHECK(ioctl(fd, BLKGETSIZE64, &size) == 0);
	return size;
}

/* Byte i of the backing file. */
static char pattern(long i)
{
	return (char)(i * 7 + i / 4096);
}

/* Waits (a while) for LOOP_GET_STATUS64 to say ENXIO: AUTOCLEAR done. */
static int cleared(int n)
{
	for (int i = 0; i < 1000; i++) {
		int fd = open_loop(n, O_RDONLY);
		if (fd < 0) {
			/* Linux refuses opens while it tears the device down. */
			usleep(10000);
			continue;
		}
		struct loop_info64 info;
		int r = ioctl(fd, LOOP_GET_STATUS64, &info);
		int e = errno;
		close(fd);
		if (r < 0 && e == ENXIO)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Closes the device, waits until it is unbound, and opens it again. */
static int reopen(int fd, int n)
{
	close(fd);
	CHECK(cleared(n));
	fd = open_loop(n, O_RDWR);
	CHECK(fd >= 0);
	return fd;
}

int main(void)
{
	int ctl = open("/dev/loop-control", O_RDWR);
	if (ctl < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		SKIP("no loop driver (/dev/loop-control: %s)", strerror(errno));
	if (ctl < 0 && (errno == EACCES || errno == EPERM))
		SKIP("not root");
	CHECK(ctl >= 0);
	if (t_mktmp("loop_dev", scratch, sizeof scratch) < 0)
		DONE();

	/* The backing file: 1 MiB of a known pattern. */
	char file[300];
	t_join(file, sizeof file, scratch, "backing");
	static char data[FILE_SIZE];
	for (long i = 0; i < FILE_SIZE; i++)
		data[i] = pattern(i);
	CHECK(t_write_file(file, data, FILE_SIZE, 0644) == 0);
	int bf = open(file, O_RDWR);
	CHECK(bf >= 0);
	struct stat bst;
	CHECK(fstat(bf, &bst) == 0);

	int n = ioctl(ctl, LOOP_CTL_GET_FREE);
	CHECK(n >= 0);
	int lfd = open_loop(n, O_RDWR);
	CHECK(lfd >= 0);

	/* Unbound: ENXIO for status and clear; size 0. */
	struct loop_info64 info;
	CHECK_ERR(ioctl(lfd, LOOP_GET_STATUS64, &info), ENXIO);
	CHECK_ERR(ioctl(lfd, LOOP_CLR_FD, 0), ENXIO);
	memset(&info, 0, sizeof info);
	CHECK_ERR(ioctl(lfd, LOOP_SET_STATUS64, &info), ENXIO);
	CHECK_EQ(dev_size(lfd), 0);

	/* Bad files: EBADF, and EINVAL for a directory. */
	CHECK_ERR(ioctl(lfd, LOOP_SET_FD, 9999), EBADF);
	CHECK_ERR(ioctl(lfd, LOOP_SET_FD, -1), EBADF);
	int dirfd = open(scratch, O_RDONLY | O_DIRECTORY);
	CHECK_ERR(ioctl(lfd, LOOP_SET_FD, dirfd), EINVAL);
	close(dirfd);
	/* The device itself: EBADF (Linux's loop_validate_file). */
	CHECK_ERR(ioctl(lfd, LOOP_SET_FD, lfd), EBADF);

	/* Bind; a second bind is EBUSY. */
	CHECK(ioctl(lfd, LOOP_SET_FD, bf) == 0);
	CHECK_ERR(ioctl(lfd, LOOP_SET_FD, bf), EBUSY);
	CHECK_EQ(dev_size(lfd), FILE_SIZE);
	int ro = -1;
	CHECK(ioctl(lfd, BLKROGET, &ro) == 0);
	CHECK_EQ(ro, 0);
	memset(&info, 0xff, sizeof info);
	CHECK(ioctl(lfd, LOOP_GET_STATUS64, &info) == 0);
	CHECK_EQ(info.lo_number, (uint32_t)n);
	CHECK_EQ(info.lo_inode, (uint64_t)bst.st_ino);
	CHECK_EQ(info.lo_offset, 0);
	CHECK_EQ(info.lo_sizelimit, 0);
	CHECK_EQ(info.lo_flags & (LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR), 0);

	/* Reads see the file; writes reach it. */
	char buf[8192];
	CHECK_EQ(pread(lfd, buf, 4096, 8192), 4096);
	CHECK(memcmp(buf, data + 8192, 4096) == 0);
	memset(buf, 'W', 4096);
	CHECK_EQ(pwrite(lfd, buf, 4096, 65536), 4096);
	CHECK(fsync(lfd) == 0);
	char back[4096];
	CHECK_EQ(pread(bf, back, 4096, 65536), 4096);
	CHECK(memcmp(back, buf, 4096) == 0);
	memcpy(data + 65536, buf, 4096);

	/* Offset and size limit: the device is a window of the file. */
	memset(&info, 0, sizeof info);
	info.lo_offset = 4096;
	info.lo_sizelimit = 16384;
	strcpy((char *)info.lo_file_name, "window");
	CHECK(ioctl(lfd, LOOP_SET_STATUS64, &info) == 0);
	CHECK_EQ(dev_size(lfd), 16384);
	CHECK_EQ(pread(lfd, buf, 8192, 0), 8192);
	CHECK(memcmp(buf, data + 4096, 8192) == 0);
	CHECK_EQ(pread(lfd, buf, 8192, 16384), 0);
	memset(&info, 0, sizeof info);
	CHECK(ioctl(lfd, LOOP_GET_STATUS64, &info) == 0);
	CHECK_EQ(info.lo_offset, 4096);
	CHECK_EQ(info.lo_sizelimit, 16384);
	CHECK(strcmp((char *)info.lo_file_name, "window") == 0);
	/* Encryption is gone: EINVAL. */
	info.lo_encrypt_type = 1;
	CHECK_ERR(ioctl(lfd, LOOP_SET_STATUS64, &info), EINVAL);

	/* Unbind: at once, or (Linux 6.x) when this, the last opener,
	 * closes; no status either way. */
	CHECK(ioctl(lfd, LOOP_CLR_FD, 0) == 0);
	CHECK_ERR(ioctl(lfd, LOOP_GET_STATUS64, &info), ENXIO);
	lfd = reopen(lfd, n);
	CHECK_EQ(dev_size(lfd), 0);

	/* LOOP_CONFIGURE: bad block size or flags are EINVAL. */
	struct loop_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.fd = (uint32_t)bf;
	cfg.block_size = 1000;
	CHECK_ERR(ioctl(lfd, LOOP_CONFIGURE, &cfg), EINVAL);
	cfg.block_size = 0;
	cfg.info.lo_flags = 0x100;
	CHECK_ERR(ioctl(lfd, LOOP_CONFIGURE, &cfg), EINVAL);
	cfg.fd = 9999;
	cfg.info.lo_flags = 0;
	CHECK_ERR(ioctl(lfd, LOOP_CONFIGURE, &cfg), EBADF);

	/* Read-only with a 4 KiB block size: writes fail, flags say so. */
	cfg.fd = (uint32_t)bf;
	cfg.block_size = 4096;
	cfg.info.lo_flags = LO_FLAGS_READ_ONLY;
	cfg.info.lo_offset = 8192;
	CHECK(ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0);
	CHECK_EQ(dev_size(lfd), FILE_SIZE - 8192);
	int ssz = 0;
	CHECK(ioctl(lfd, BLKSSZGET, &ssz) == 0);
	CHECK_EQ(ssz, 4096);
	CHECK(ioctl(lfd, BLKROGET, &ro) == 0);
	CHECK_EQ(ro, 1);
	memset(&info, 0, sizeof info);
	CHECK(ioctl(lfd, LOOP_GET_STATUS64, &info) == 0);
	CHECK(info.lo_flags & LO_FLAGS_READ_ONLY);
	CHECK_ERR(pwrite(lfd, buf, 4096, 0), EPERM);
	CHECK_EQ(pread(lfd, buf, 4096, 65536 - 8192), 4096);
	CHECK(memcmp(buf, data + 65536, 4096) == 0);
	CHECK(ioctl(lfd, LOOP_CLR_FD, 0) == 0);
	lfd = reopen(lfd, n);

	/* A file opened read-only makes a read-only device. */
	int rof = open(file, O_RDONLY);
	CHECK(ioctl(lfd, LOOP_SET_FD, rof) == 0);
	CHECK(ioctl(lfd, BLKROGET, &ro) == 0);
	CHECK_EQ(ro, 1);
	CHECK(ioctl(lfd, LOOP_GET_STATUS64, &info) == 0);
	CHECK(info.lo_flags & LO_FLAGS_READ_ONLY);
	close(rof);
	/* Binding holds its own reference: the data still reads. */
	CHECK_EQ(pread(lfd, buf, 4096, 0), 4096);
	CHECK(memcmp(buf, data, 4096) == 0);

	/* loop-control: REMOVE of a bound device is EBUSY. */
	CHECK_ERR(ioctl(ctl, LOOP_CTL_REMOVE, n), EBUSY);
	CHECK_ERR(ioctl(ctl, LOOP_CTL_ADD, n), EEXIST);
	CHECK_ERR(ioctl(ctl, LOOP_CTL_REMOVE, -1), EINVAL);

	/* Clearing while another opener holds it: only AUTOCLEAR is set, the
	 * device unbinds when the last one closes. */
	int lfd2 = open_loop(n, O_RDONLY);
	CHECK(lfd2 >= 0);
	CHECK(ioctl(lfd, LOOP_CLR_FD, 0) == 0);
	memset(&info, 0, sizeof info);
	CHECK(ioctl(lfd, LOOP_GET_STATUS64, &info) == 0);
	CHECK(info.lo_flags & LO_FLAGS_AUTOCLEAR);
	close(lfd2);
	close(lfd);
	CHECK(cleared(n));

	/* AUTOCLEAR from LOOP_CONFIGURE: unbound after the last close. */
	lfd = open_loop(n, O_RDWR);
	CHECK(lfd >= 0);
	memset(&cfg, 0, sizeof cfg);
	cfg.fd = (uint32_t)bf;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	CHECK(ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0);
	CHECK_EQ(dev_size(lfd), FILE_SIZE);
	close(lfd);
	CHECK(cleared(n));

	/* ADD and REMOVE a device of our own number. */
	int m = -1;
	for (int k = 200; k < 260 && m < 0; k++) {
		int r = ioctl(ctl, LOOP_CTL_ADD, k);
		if (r >= 0)
			m = r;
		else
			CHECK_EQ(errno, EEXIST);
	}
	CHECK(m >= 200);
	if (m >= 0) {
		CHECK_ERR(ioctl(ctl, LOOP_CTL_ADD, m), EEXIST);
		int tries = 0, r;
		/* Linux may still hold the new disk a moment (udev probing). */
		while ((r = ioctl(ctl, LOOP_CTL_REMOVE, m)) < 0 && errno == EBUSY && tries++ < 500)
			usleep(10000);
		CHECK_EQ(r, 0);
		CHECK_ERR(ioctl(ctl, LOOP_CTL_REMOVE, m), ENODEV);
	}

	close(bf);
	close(ctl);
	t_rmtree(scratch);
	DONE();
}
