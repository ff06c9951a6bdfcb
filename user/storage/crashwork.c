/*
 * crashwork - the crash layer's workload: ext2 over virtio-blk while the
 * virtio-blk driver is made to crash (drivers.crash=virtio-blk:1s).
 *
 *   crashwork run DEV DIR SECONDS
 *       mount DEV (ext2) on DIR; for SECONDS of guest time a writer (this
 *       process) writes files w/sN (256 KiB each, 200 slots reused round
 *       robin, a new seed each time) with an fsync after each, and a
 *       reader (a child) reads and checks the seed files seed/fK the host
 *       put in the image (cold: their reads reach the device), one every
 *       0.9 s. Then the writer checks every slot, writes w/manifest (slot
 *       and seed per line), fsyncs, unmounts.
 *   crashwork verify DEV DIR
 *       mount DEV read-only, check every slot the manifest names (cold
 *       reads: what the writer wrote reached the disk), unmount.
 *   crashwork fail DEV
 *       read DEV with the driver crashing at every point (the caller wrote
 *       /sys/kernel/debug/domains/virtio-blk/crash): the read must end with
 *       EIO, and so must the next one, without hanging.
 *
 * Content: byte-exact from splitmix64(seed << 40 ^ word index), little
 * endian (xtask/src/test_crash.rs makes the seed files the same way).
 * Prints `CRASHWORK <mode> OK ...` or `CRASHWORK <mode> FAIL ...`; every
 * failed system call is counted and printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "content.h"

#define SEED_FILES 64
#define SEED_SIZE (512 * 1024)
#define SLOTS 200
#define FILE_SIZE (256 * 1024)
#define CHUNK (16 * 1024)

static long failed_calls, mismatches;

static void failed(const char *what, const char *path)
{
	failed_calls++;
	printf("CRASHWORK syscall failed: %s %s: %s\n", what, path, strerror(errno));
	fflush(stdout);
}

/* Checks that `path` holds `size` bytes of `seed`'s content. */
static int check_file(const char *path, uint64_t seed, size_t size)
{
	static unsigned char got[CHUNK], want[CHUNK];
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		failed("open", path);
		return -1;
	}
	size_t off = 0;
	int bad = 0;
	while (off < size) {
		ssize_t n = read(fd, got, CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			failed("read", path);
			bad = 1;
			break;
		}
		if (n != CHUNK || off + CHUNK > size) {
			printf("CRASHWORK short read of %s at %zu: %zd\n", path, off, n);
			bad = 1;
			break;
		}
		fill(want, seed, off, CHUNK);
		if (memcmp(got, want, CHUNK) != 0) {
			printf("CRASHWORK checksum mismatch: %s at %zu (seed %llu)\n", path, off,
			       (unsigned long long)seed);
			bad = 1;
			break;
		}
		off += CHUNK;
	}
	if (close(fd) < 0)
		failed("close", path);
	if (bad)
		mismatches++;
	return bad ? -1 : 0;
}

static int write_file(const char *path, uint64_t seed, size_t size)
{
	static unsigned char buf[CHUNK];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		failed("open", path);
		return -1;
	}
	for (size_t off = 0; off < size; off += CHUNK) {
		fill(buf, seed, off, CHUNK);
		ssize_t n = write(fd, buf, CHUNK);
		if (n != CHUNK) {
			failed("write", path);
			close(fd);
			return -1;
		}
	}
	if (fsync(fd) < 0)
		failed("fsync", path);
	if (close(fd) < 0)
		failed("close", path);
	return 0;
}

static void reader(const char *dir, double end)
{
	char path[512];
	int ok = 0;
	for (int k = 0; k < SEED_FILES && now() < end; k++) {
		snprintf(path, sizeof path, "%s/seed/f%d", dir, k);
		if (check_file(path, (uint64_t)k + 1, SEED_SIZE) == 0)
			ok++;
		struct timespec ts = {0, 900 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	printf("CRASHWORK reader: %d seed files checked, %ld mismatches, %ld failed calls\n", ok,
	       mismatches, failed_calls);
	fflush(stdout);
	_exit(failed_calls || mismatches ? 1 : 0);
}

static int run(const char *dev, const char *dir, int seconds)
{
	char path[512];
	static uint64_t slot_seed[SLOTS];
	if (mount(dev, dir, "ext2", 0, NULL) < 0) {
		failed("mount", dev);
		goto out;
	}
	snprintf(path, sizeof path, "%s/w", dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		failed("mkdir", path);
	double end = now() + seconds;
	fflush(stdout);
	pid_t child = fork();
	if (child < 0) {
		failed("fork", "");
		goto out;
	}
	if (child == 0)
		reader(dir, end);
	long written = 0;
	while (now() < end) {
		int slot = written % SLOTS;
		uint64_t seed = 1000 + (uint64_t)written;
		snprintf(path, sizeof path, "%s/w/s%d", dir, slot);
		if (write_file(path, seed, FILE_SIZE) == 0)
			slot_seed[slot] = seed;
		written++;
	}
	int status = 0;
	if (waitpid(child, &status, 0) < 0)
		failed("waitpid", "");
	int reader_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	for (int s = 0; s < SLOTS; s++) {
		if (!slot_seed[s])
			continue;
		snprintf(path, sizeof path, "%s/w/s%d", dir, s);
		check_file(path, slot_seed[s], FILE_SIZE);
	}
	snprintf(path, sizeof path, "%s/w/manifest", dir);
	FILE *m = fopen(path, "w");
	if (!m) {
		failed("fopen", path);
	} else {
		for (int s = 0; s < SLOTS; s++)
			if (slot_seed[s])
				fprintf(m, "%d %llu\n", s, (unsigned long long)slot_seed[s]);
		if (fflush(m) != 0 || fsync(fileno(m)) < 0)
			failed("fsync", path);
		if (fclose(m) != 0)
			failed("fclose", path);
	}
	sync();
	if (umount(dir) < 0)
		failed("umount", dir);
	printf("CRASHWORK run: %ld files written (%ld KiB), reader %s\n", written,
	       written * (FILE_SIZE / 1024), reader_ok ? "ok" : "FAILED");
	if (!reader_ok)
		mismatches++;
out:
	if (failed_calls || mismatches) {
		printf("CRASHWORK run FAIL failed_calls=%ld mismatches=%ld\n", failed_calls, mismatches);
		return 1;
	}
	printf("CRASHWORK run OK failed_calls=0 mismatches=0\n");
	return 0;
}

static int verify(const char *dev, const char *dir)
{
	char path[512];
	int n = 0;
	if (mount(dev, dir, "ext2", MS_RDONLY, NULL) < 0) {
		failed("mount", dev);
		goto out;
	}
	snprintf(path, sizeof path, "%s/w/manifest", dir);
	FILE *m = fopen(path, "r");
	if (!m) {
		failed("fopen", path);
	} else {
		int slot;
		unsigned long long seed;
		while (fscanf(m, "%d %llu", &slot, &seed) == 2) {
			snprintf(path, sizeof path, "%s/w/s%d", dir, slot);
			check_file(path, seed, FILE_SIZE);
			n++;
		}
		fclose(m);
	}
	for (int k = 0; k < SEED_FILES; k++) {
		snprintf(path, sizeof path, "%s/seed/f%d", dir, k);
		check_file(path, (uint64_t)k + 1, SEED_SIZE);
	}
	if (umount(dir) < 0)
		failed("umount", dir);
out:
	if (failed_calls || mismatches || n == 0) {
		printf("CRASHWORK verify FAIL files=%d failed_calls=%ld mismatches=%ld\n", n,
		       failed_calls, mismatches);
		return 1;
	}
	printf("CRASHWORK verify OK files=%d\n", n);
	return 0;
}

/* Two reads of DEV at 4 and 8 MiB: sectors the kernel did not read at boot
 * (the partition table is at the start), so both reach the driver. */
static int fail_test(const char *dev)
{
	static char buf[65536];
	int fd = open(dev, O_RDONLY);
	if (fd < 0) {
		printf("CRASHWORK fail FAIL open %s: %s\n", dev, strerror(errno));
		return 1;
	}
	int eio = 0;
	for (int i = 0; i < 2; i++) {
		ssize_t n = pread(fd, buf, sizeof buf, (off_t)(i + 1) * (4 << 20));
		printf("CRASHWORK fail: read %d -> %zd (%s)\n", i, n, n < 0 ? strerror(errno) : "ok");
		if (n < 0 && errno == EIO)
			eio++;
	}
	close(fd);
	if (eio != 2) {
		printf("CRASHWORK fail FAIL: %d of 2 reads ended with EIO\n", eio);
		return 1;
	}
	printf("CRASHWORK fail OK\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "run") == 0)
		return run(argv[2], argv[3], atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "verify") == 0)
		return verify(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "fail") == 0)
		return fail_test(argv[2]);
	fprintf(stderr, "usage: crashwork run DEV DIR SECONDS | verify DEV DIR | fail DEV\n");
	return 2;
}
