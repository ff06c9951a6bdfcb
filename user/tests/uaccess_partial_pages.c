/*
 * uaccess_partial_pages: system-call buffers that start in a mapped page and
 * run into an unmapped one, or into a read-only one (for calls that write
 * user memory).  The kernel copies up to the first byte it cannot reach:
 * read(2) from /dev/zero and from a file returns the bytes before it (a
 * partial count), write(2) to a file writes the bytes before it, and a call
 * that copies a whole structure (stat, rt_sigaction, pipe2's fds) fails with
 * EFAULT.  The counts are exact to the byte whatever the alignment of the
 * buffer; every expectation was checked on the host Linux (the `linux`
 * layer runs this same program there).
 */
#include "next.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* Four pages: read-write, a hole, read-write, read-only. */
static char *map_layout(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xaa, 4 * PAGE);
	if (munmap(p + PAGE, PAGE) != 0 ||
	    mprotect(p + 3 * PAGE, PAGE, PROT_READ) != 0)
		return NULL;
	return p;
}

static int all(const char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] != v)
			return 0;
	return 1;
}

/* A raw syscall's result as Linux returns it: a value, or -errno. */
#define RAW(...) raw_result(syscall(__VA_ARGS__))
static long raw_result(long r)
{
	return r == -1 ? -errno : r;
}

static void reads(char *p, const char *file)
{
	char *hole = p + PAGE, *ro = p + 3 * PAGE;
	int z = open("/dev/zero", O_RDONLY);
	int f = open(file, O_RDONLY);
	CHECK(z >= 0 && f >= 0);

	/* /dev/zero into the hole, from 253 bytes before it (unaligned). */
	CHECK_EQ(read(z, hole - 253, 300), 253);
	CHECK(all(hole - 253, 253, 0));
	CHECK(all(hole - 254, 1, 0xaa));
	/* Into the read-only page, 77 bytes before it: nothing lands in it. */
	CHECK_EQ(read(z, ro - 77, 200), 77);
	CHECK(all(ro - 77, 77, 0));
	CHECK(all(ro - 78, 1, 0xaa));
	CHECK(all(ro, PAGE, 0xaa));
	/* Starting in the hole or in the read-only page: nothing, EFAULT. */
	CHECK_ERR(read(z, hole + 8, 16), EFAULT);
	CHECK_ERR(read(z, ro + 1, 1), EFAULT);

	/* A file: the bytes before the hole. */
	memset(hole - 4000, 0xaa, 4000);
	CHECK_EQ(pread(f, hole - 1001, 3000, 0), 1001);
	for (int i = 0; i < 1001; i++)
		if ((unsigned char)hole[-1001 + i] != (unsigned char)(i * 7 + 1)) {
			CHECK(!"file bytes before the hole");
			break;
		}
	CHECK(all(hole - 1002, 1, 0xaa));
	CHECK_EQ(pread(f, ro - 3, 100, 1001), 3);
	CHECK_EQ((unsigned char)ro[-3], (unsigned char)(1001 * 7 + 1));
	CHECK(all(ro, PAGE, 0xaa));
	/* Nothing copied: EFAULT, and read(2) leaves the offset alone. */
	CHECK_ERR(read(f, ro, 100), EFAULT);
	CHECK_ERR(read(f, hole, 100), EFAULT);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 0);
	/* A buffer ending exactly at the hole is read whole. */
	CHECK_EQ(read(f, hole - 100, 100), 100);
	CHECK_EQ((unsigned char)hole[-1], (unsigned char)(99 * 7 + 1));
	/* A short read(2) moves the offset by the bytes it returned. */
	CHECK_EQ(read(f, hole - 10, 100), 10);
	CHECK_EQ((unsigned char)hole[-10], (unsigned char)(100 * 7 + 1));
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 110);
	/* readv(2): the bytes of the first vector, then the hole. */
	{
		struct iovec v[2] = { { p + 5, 5 }, { hole - 7, 20 } };
		CHECK_EQ(readv(f, v, 2), 12);
		CHECK_EQ((unsigned char)p[5], (unsigned char)(110 * 7 + 1));
		CHECK_EQ((unsigned char)hole[-1], (unsigned char)(121 * 7 + 1));
		CHECK_EQ(lseek(f, 0, SEEK_CUR), 122);
	}
	close(z);
	close(f);
}

static void writes(char *p, const char *file)
{
	char *hole = p + PAGE, *ro = p + 3 * PAGE;
	struct stat st;
	int f = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(f >= 0);

	/* From 117 bytes before the hole: the 117 bytes are written. */
	memset(hole - 117, 0x42, 117);
	CHECK_EQ(write(f, hole - 117, 500), 117);
	CHECK(fstat(f, &st) == 0);
	CHECK_EQ(st.st_size, 117);
	CHECK_ERR(write(f, hole, 1), EFAULT);
	/* Reading user memory in a read-only page is fine. */
	CHECK_EQ(write(f, ro - 5, 105), 105);
	CHECK(fstat(f, &st) == 0);
	CHECK_EQ(st.st_size, 222);
	close(f);
}

static void structs(char *p, const char *file)
{
	char *hole = p + PAGE, *ro = p + 3 * PAGE;
	struct sigaction sa, old;
	int fds[2];

	/* stat(2) and fstat(2) into a struct that runs into the hole or the
	 * read-only page, or lies in it. */
	/* (Raw system calls: a C library may convert a kernel struct into
	 * the caller's buffer itself, and fault in user mode.) */
	int f = open(file, O_RDONLY);
	CHECK(f >= 0);
	CHECK_EQ(RAW(SYS_stat, file, hole - 20), -EFAULT);
	CHECK_EQ(RAW(SYS_stat, file, ro - 20), -EFAULT);
	CHECK_EQ(RAW(SYS_stat, file, ro), -EFAULT);
	CHECK_EQ(RAW(SYS_fstat, f, hole - 8), -EFAULT);
	CHECK_EQ(RAW(SYS_newfstatat, AT_FDCWD, file, hole - 100, 0), -EFAULT);
	CHECK(all(ro, PAGE, 0xaa));
	/* A whole struct ending exactly at the hole is fine. */
	CHECK_EQ(RAW(SYS_stat, file, hole - sizeof(struct stat)), 0);
	CHECK_EQ(((struct stat *)(hole - sizeof(struct stat)))->st_size, 8192);
	CHECK_EQ(RAW(SYS_fstat, f, hole - sizeof(struct stat) - 3), 0);
	close(f);

	/* rt_sigaction: the new action read across the hole, the old one
	 * written into the hole or the read-only page. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, hole - 8, NULL, 8), -EFAULT);
	/* The kernel's struct (handler, flags, restorer, mask: 32 bytes)
	 * ending exactly at the hole is read whole. */
	memset(hole - 32, 0, 32);
	*(unsigned long *)(hole - 32) = (unsigned long)SIG_IGN;
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, hole - 32, NULL, 8), 0);
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, hole - 31, NULL, 8), -EFAULT);
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, &sa, ro - 8, 8), -EFAULT);
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, NULL, hole - 8, 8), -EFAULT);
	CHECK(sigaction(SIGUSR1, NULL, &old) == 0);
	CHECK(old.sa_handler == SIG_IGN);

	/* pipe2: the two fds straddling the hole. */
	CHECK_EQ(RAW(SYS_pipe2, hole - 4, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_pipe2, ro - 4, 0), -EFAULT);
	CHECK(pipe(fds) == 0);
}

int main(void)
{
	char dir[256], path[320];
	static char data[8192];
	char *p = map_layout();
	CHECK(p != NULL);
	if (!p || t_mktmp("uaccess_partial_pages", dir, sizeof dir) < 0)
		DONE();
	t_join(path, sizeof path, dir, "f");
	for (int i = 0; i < (int)sizeof data; i++)
		data[i] = (char)(i * 7 + 1);
	CHECK(t_write_file(path, data, sizeof data, 0600) == 0);
	reads(p, path);
	structs(p, path);
	writes(p, path);
	t_rmtree(dir);
	DONE();
}
