/*
 * tmpfs files are sparse: a few pages written gigabytes apart cost a few
 * pages of memory, holes read as zeros, SEEK_DATA/SEEK_HOLE find the
 * written pages, and truncating to gigabytes allocates nothing.
 */
#include "t.h"

#define GIB (1024L * 1024 * 1024)

static long mem_free_kb(void)
{
	char buf[4096], *p;

	if (t_read_file("/proc/meminfo", buf, sizeof buf) <= 0)
		return -1;
	p = strstr(buf, "\nMemFree:");
	return p ? strtol(p + 9, NULL, 10) : -1;
}

int main(void)
{
	char path[128], buf[PAGE];
	struct stat st;
	long before, after;
	int fd, i;

	snprintf(path, sizeof path, "/dev/shm/tmpfs_sparse.%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	before = mem_free_kb();

	/* One page at 0, one at 3 GiB, one byte at 6 GiB. */
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(pwrite(fd, buf, PAGE, 0), (long)PAGE);
	CHECK_EQ(pwrite(fd, buf, PAGE, 3 * GIB), (long)PAGE);
	CHECK_EQ(pwrite(fd, "y", 1, 6 * GIB), 1);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 6 * GIB + 1);
	/* Three pages, in 512-byte blocks. */
	CHECK(st.st_blocks >= 3 * PAGE / 512);
	CHECK(st.st_blocks <= 8 * PAGE / 512);
	after = mem_free_kb();
	CHECK(before > 0 && after > 0);
	CHECK(before - after < 64 * 1024);

	/* Holes read as zeros. */
	memset(buf, 1, sizeof buf);
	CHECK_EQ(pread(fd, buf, PAGE, 2 * GIB), (long)PAGE);
	for (i = 0; i < (int)PAGE && buf[i] == 0; i++)
		;
	CHECK_EQ(i, (int)PAGE);
	CHECK_EQ(pread(fd, buf, 2, 6 * GIB - 1), 2);
	CHECK(buf[0] == 0 && buf[1] == 'y');

	/* SEEK_DATA / SEEK_HOLE. */
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), (long)PAGE);
	CHECK_EQ(lseek(fd, PAGE, SEEK_DATA), 3 * GIB);
	CHECK_EQ(lseek(fd, 3 * GIB + 10, SEEK_DATA), 3 * GIB + 10);
	CHECK_EQ(lseek(fd, 3 * GIB, SEEK_HOLE), 3 * GIB + PAGE);
	CHECK_EQ(lseek(fd, 4 * GIB, SEEK_DATA), 6 * GIB);
	CHECK_EQ(lseek(fd, 6 * GIB, SEEK_HOLE), 6 * GIB + 1);
	CHECK_ERR(lseek(fd, 6 * GIB + 1, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, 7 * GIB, SEEK_HOLE), ENXIO);

	/* Growing by truncation allocates nothing. */
	CHECK_EQ(ftruncate(fd, 40 * GIB), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 40 * GIB);
	CHECK(st.st_blocks <= 8 * PAGE / 512);
	CHECK_EQ(lseek(fd, 7 * GIB, SEEK_HOLE), 7 * GIB);
	CHECK_EQ(pread(fd, buf, 10, 39 * GIB), 10);
	/* Shrinking drops the pages past the end; the tail reads zeros when
	 * the file grows again. */
	CHECK_EQ(ftruncate(fd, 3 * GIB + 100), 0);
	CHECK_EQ(ftruncate(fd, 3 * GIB + PAGE), 0);
	CHECK_EQ(pread(fd, buf, 10, 3 * GIB + 100), 10);
	for (i = 0; i < 10 && buf[i] == 0; i++)
		;
	CHECK_EQ(i, 10);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(st.st_blocks <= 2 * PAGE / 512);

	close(fd);
	CHECK_EQ(unlink(path), 0);
	DONE();
}
