/*
 * Memory pressure evicts clean page-cache pages instead of killing: the
 * whole of /dev/ram0 is written and synced (16 MiB of clean cache), then
 * a child touches more anonymous memory than is free. It must not be
 * OOM-killed while clean cache remains; the cache shrinks, and reading
 * the device again (now from the device, through readahead) gives the
 * same bytes. Trellis only: a Linux host's memory is not ours to fill.
 */
#include "next.h"
#include <sys/ioctl.h>
#include <sys/mman.h>

#ifndef BLKGETSIZE64
#define BLKGETSIZE64 _IOR(0x12, 114, size_t)
#endif

static long meminfo_kb(const char *key)
{
	char buf[4096];
	int fd = open("/proc/meminfo", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strstr(buf, key);
	if (!p)
		return -1;
	return strtol(p + strlen(key) + 1, NULL, 10);
}

static unsigned char pat(uint64_t at)
{
	return (unsigned char)((at >> 12) * 37 + (at & 0xfff) * 3);
}

int main(void)
{
	static unsigned char buf[65536];
	uint64_t size = 0;
	int fd;

	if (!t_is_trellis())
		SKIP("fills memory: only on Trellis");
	if (geteuid() != 0)
		SKIP("not root");
	fd = open("/dev/ram0", O_RDWR);
	if (fd < 0)
		SKIP("no /dev/ram0: %s", strerror(errno));
	CHECK_EQ(ioctl(fd, BLKGETSIZE64, &size), 0);

	for (uint64_t at = 0; at < size; at += sizeof buf) {
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = pat(at + i);
		CHECK_EQ(pwrite(fd, buf, sizeof buf, (off_t)at), (ssize_t)sizeof buf);
	}
	CHECK_EQ(fsync(fd), 0);
	long cached0 = meminfo_kb("Cached:");
	CHECK(cached0 >= (long)(size / 1024));
	CHECK_EQ(meminfo_kb("Dirty:"), 0);

	pid_t pid = fork();
	if (pid == 0) {
		/* More than is free: the rest must come from the cache. */
		long free_kb = meminfo_kb("MemFree:");
		size_t len = ((size_t)free_kb + 4096) * 1024;
		unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(2);
		for (size_t off = 0; off < len; off += PAGE)
			m[off] = 1;
		_exit(0);
	}
	int status = 0;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	if (WIFSIGNALED(status))
		t_printf("  note: child killed by signal %d\n", WTERMSIG(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	long cached1 = meminfo_kb("Cached:");
	CHECK(cached1 < cached0);

	/* Everything reads back, from the device where it was evicted. */
	int bad = 0;
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	for (uint64_t at = 0; at < size; at += sizeof buf) {
		ssize_t n = read(fd, buf, sizeof buf);
		CHECK_EQ(n, (ssize_t)sizeof buf);
		for (size_t i = 0; n > 0 && i < sizeof buf; i++)
			if (buf[i] != pat(at + i))
				bad++;
	}
	CHECK_EQ(bad, 0);
	close(fd);
	DONE();
}
