/*
 * ext2 read-write workload on a disk holding an ext2 file system (made on
 * the host with mke2fs): 300 files, a 16 MiB pseudo-random file with its
 * checksum, a directory of 2000 entries, hard links, fast and slow
 * symlinks, device nodes and a FIFO, renames across directories, deletes,
 * truncates, MAP_SHARED and MAP_PRIVATE mappings, attributes, statfs, a
 * read-only remount and the nosuid/nodev/noexec mount flags; then a clean
 * umount, after which the host's e2fsck -fn must find the image clean.
 *
 *   ext2_workload [write|verify] [DEV]
 *
 * "verify" (after a reboot) mounts read-only and checks that everything
 * "write" left reads back byte for byte. Without DEV the first of
 * /dev/vda.. /dev/ram0.. with an ext2 superblock is used; without one (or
 * without root) the test is skipped.
 */
#include "next.h"
#include <dirent.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "write_own_mapping.h"

#define MNT "/mnt-ext2"
#define BIG_SIZE (16 << 20)

static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static unsigned char file_byte(int i, size_t at)
{
	return (unsigned char)(i * 31 + at * 7 + (at >> 8));
}

static size_t file_len(int i)
{
	return (size_t)(i * 197) % 9000;
}

/* An ext2 superblock without a journal or ext4-only features (the same
 * magic marks ext3 and ext4, which this test must never touch). */
static int is_ext2(const char *dev)
{
	unsigned char sb[1024];
	int fd = open(dev, O_RDONLY);
	if (fd < 0)
		return 0;
	int ok = pread(fd, sb, sizeof sb, 1024) == (ssize_t)sizeof sb && sb[56] == 0x53 && sb[57] == 0xef;
	close(fd);
	uint32_t compat, incompat;
	memcpy(&compat, sb + 92, 4);
	memcpy(&incompat, sb + 96, 4);
	return ok && !(compat & 4) && (incompat & ~2u) == 0;
}

static const char *find_dev(void)
{
	static const char *cands[] = { "/dev/vda", "/dev/vdb", "/dev/vdc", "/dev/ram0", "/dev/ram1" };
	for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
		if (is_ext2(cands[i]))
			return cands[i];
	return NULL;
}

static void write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, data, n), (long)n);
	CHECK_EQ(close(fd), 0);
}

static ssize_t read_file(const char *path, void *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	return got;
}

/* Checksum of the 16 MiB file as written (seeded generator). */
static uint64_t big_sum(void)
{
	static unsigned char chunk[65536];
	uint64_t h = 0xcbf29ce484222325ULL;
	rng_state = 0x1234567;
	for (size_t off = 0; off < BIG_SIZE; off += sizeof chunk) {
		for (size_t i = 0; i < sizeof chunk; i += 8) {
			uint64_t v = rng();
			memcpy(chunk + i, &v, 8);
		}
		h = fnv(h, chunk, sizeof chunk);
	}
	return h;
}

static uint64_t file_sum(const char *path, size_t *len)
{
	static unsigned char chunk[65536];
	uint64_t h = 0xcbf29ce484222325ULL;
	*len = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t r;
	while ((r = read(fd, chunk, sizeof chunk)) > 0) {
		h = fnv(h, chunk, r);
		*len += r;
	}
	close(fd);
	return h;
}

static sigjmp_buf bus_env;

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_env, 1);
}

/* Whether reading p[at] raises SIGBUS. */
static int bus_at(volatile char *p, size_t at)
{
	if (sigsetjmp(bus_env, 1) == 0) {
		(void)p[at];
		return 0;
	}
	return 1;
}

#define FA_PAGE 4096
#define FA_PAGES 20

/*
 * Mappings of cached file pages (a kernel may map cached neighbours of a
 * faulting page ahead of use, as Linux's fault-around does): a store
 * through a page nobody touched before reaches the file and the disk; a
 * store through a private mapping does not; after the file shrinks, a
 * fault maps nothing past its last page (SIGBUS beyond it), and the
 * last page's tail reads as zeros.
 */
static void fault_around(void)
{
	static char data[FA_PAGES * FA_PAGE];
	char buf[8];
	int fd = open(MNT "/faultaround", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('a' + i / FA_PAGE);
	CHECK_EQ(write(fd, data, sizeof data), (long)sizeof data);
	CHECK_EQ(fsync(fd), 0);
	/* Every page cached. */
	CHECK_EQ(pread(fd, data, sizeof data, 0), (long)sizeof data);

	/* Shared: a read fault, then stores to pages not touched before. */
	volatile char *p = mmap(NULL, 32 * FA_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	CHECK_EQ(p[0], 'a');
	p[FA_PAGE + 5] = 'Z';
	p[15 * FA_PAGE + 7] = 'Y';
	CHECK_EQ(p[FA_PAGE + 6], 'b');
	CHECK_EQ(pread(fd, buf, 1, FA_PAGE + 5), 1);
	CHECK_EQ(buf[0], 'Z');
	/* Made read-only and writable again, a page only read so far is
	 * still written back once stored to. */
	CHECK_EQ(mprotect((void *)p, 32 * FA_PAGE, PROT_READ), 0);
	CHECK_EQ(mprotect((void *)p, 32 * FA_PAGE, PROT_READ | PROT_WRITE), 0);
	p[2 * FA_PAGE + 9] = 'M';

	/* Private: reads see the file; a store stays in the mapping. */
	volatile char *q = mmap(NULL, FA_PAGES * FA_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(q != MAP_FAILED);
	if (q != MAP_FAILED) {
		CHECK_EQ(q[2 * FA_PAGE], 'c');
		CHECK_EQ(q[FA_PAGE + 5], 'Z');
		q[3 * FA_PAGE] = 'P';
		CHECK_EQ(q[3 * FA_PAGE], 'P');
		CHECK_EQ(p[3 * FA_PAGE], 'd');
		CHECK_EQ(pread(fd, buf, 1, 3 * FA_PAGE), 1);
		CHECK_EQ(buf[0], 'd');
		/* A store through the shared mapping reaches a private page the
		 * private mapping has only read, not one it copied. */
		p[4 * FA_PAGE] = 'S';
		CHECK_EQ(q[4 * FA_PAGE], 'S');
		CHECK_EQ(q[3 * FA_PAGE], 'P');
		munmap((void *)q, FA_PAGES * FA_PAGE);
	}
	CHECK_EQ(munmap((void *)p, 32 * FA_PAGE), 0);

	/* Shrink to 5 pages and 100 bytes, then map and fault. */
	CHECK_EQ(ftruncate(fd, 5 * FA_PAGE + 100), 0);
	struct sigaction sa = { 0 }, old;
	sa.sa_handler = on_bus;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGBUS, &sa, &old), 0);
	p = mmap(NULL, 32 * FA_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	q = mmap(NULL, 32 * FA_PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(q != MAP_FAILED);
	if (p != MAP_FAILED && q != MAP_FAILED) {
		CHECK_EQ(p[0], 'a');
		CHECK_EQ(q[0], 'a');
		CHECK_EQ(p[5 * FA_PAGE + 99], 'f');
		CHECK_EQ(p[5 * FA_PAGE + 100], 0);
		CHECK_EQ(q[5 * FA_PAGE + 100], 0);
		for (int i = 6; i < 32; i++) {
			CHECK_EQ(bus_at(p, (size_t)i * FA_PAGE), 1);
			CHECK_EQ(bus_at(q, (size_t)i * FA_PAGE + 1), 1);
		}
		/* The file grows again: the new page reads as zeros. */
		CHECK_EQ(ftruncate(fd, 8 * FA_PAGE), 0);
		CHECK_EQ(bus_at(p, 6 * FA_PAGE), 0);
		CHECK_EQ(p[6 * FA_PAGE], 0);
		CHECK_EQ(bus_at(p, 8 * FA_PAGE), 1);
	}
	if (p != MAP_FAILED)
		munmap((void *)p, 32 * FA_PAGE);
	if (q != MAP_FAILED)
		munmap((void *)q, 32 * FA_PAGE);
	CHECK_EQ(sigaction(SIGBUS, &old, NULL), 0);
	close(fd);
}

/*
 * read(2) and write(2) copy straight between the page cache and the
 * caller's memory: a fault part way is a short count of the bytes moved
 * (not EFAULT, not more), reads stop at EOF, holes read as zeros, O_APPEND
 * writes at the end, and a write is seen at once through a MAP_SHARED
 * mapping made before it (and a store through it by read).
 */
#define PC_PAGE 4096
static void page_copy_edges(void)
{
	int fd = open(MNT "/pcopy", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	static unsigned char data[3 * PC_PAGE];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 13 + 5);
	CHECK_EQ(write(fd, data, sizeof data), (ssize_t)sizeof data);
	/* Two pages of buffer, the second one gone. */
	unsigned char *b = mmap(NULL, 2 * PC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(b != MAP_FAILED);
	if (b == MAP_FAILED) {
		close(fd);
		return;
	}
	CHECK_EQ(munmap(b + PC_PAGE, PC_PAGE), 0);
	/* A read whose buffer ends in the hole: the bytes before it. */
	CHECK_EQ(pread(fd, b + PC_PAGE - 100, 300, 0), 100);
	CHECK(memcmp(b + PC_PAGE - 100, data, 100) == 0);
	CHECK_EQ(pread(fd, b + PC_PAGE - 1000, 3000, 50), 1000);
	CHECK(memcmp(b + PC_PAGE - 1000, data + 50, 1000) == 0);
	/* The file position moves by what was copied. */
	CHECK_EQ(lseek(fd, PC_PAGE + 7, SEEK_SET), PC_PAGE + 7);
	CHECK_EQ(read(fd, b + PC_PAGE - 10, 20), 10);
	CHECK(memcmp(b + PC_PAGE - 10, data + PC_PAGE + 7, 10) == 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), PC_PAGE + 17);
	/* Wholly in the hole: EFAULT, nothing moves. */
	CHECK_ERR(read(fd, b + PC_PAGE, 10), EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), PC_PAGE + 17);
	/* A write whose source runs into the hole: a short count, the file
	 * holds exactly those bytes and grows by no more. */
	memset(b, 0x5a, PC_PAGE);
	ssize_t w = pwrite(fd, b + PC_PAGE - 1024, 4096, sizeof data);
	CHECK(w > 0 && w <= 1024);
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	if (w > 0) {
		CHECK_EQ(st.st_size, (off_t)sizeof data + w);
		unsigned char back[1024];
		CHECK_EQ(pread(fd, back, (size_t)w, sizeof data), w);
		for (ssize_t i = 0; i < w; i++)
			if (back[i] != 0x5a) {
				CHECK(back[i] == 0x5a);
				break;
			}
	}
	CHECK_ERR(pwrite(fd, b + PC_PAGE, 10, 0), EFAULT);
	CHECK_EQ(pread(fd, b, 10, 0), 10);
	CHECK(memcmp(b, data, 10) == 0);
	/* Short read at EOF, nothing past it. */
	CHECK_EQ(pread(fd, b, PC_PAGE, st.st_size - 5), 5);
	CHECK_EQ(pread(fd, b, PC_PAGE, st.st_size), 0);
	/* A hole reads as zeros, across a page boundary. */
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(pwrite(fd, "end", 3, 5 * PC_PAGE), 3);
	memset(b, 1, PC_PAGE);
	CHECK_EQ(pread(fd, b, PC_PAGE, 2 * PC_PAGE - 100), PC_PAGE);
	int zeros = 1;
	for (int i = 0; i < PC_PAGE; i++)
		zeros &= b[i] == 0;
	CHECK(zeros);
	/* O_APPEND: at the end whatever the position. */
	int afd = open(MNT "/pcopy", O_WRONLY | O_APPEND);
	CHECK(afd >= 0);
	CHECK_EQ(lseek(afd, 0, SEEK_SET), 0);
	CHECK_EQ(write(afd, "tail", 4), 4);
	CHECK_EQ(lseek(afd, 0, SEEK_CUR), 5 * PC_PAGE + 7);
	close(afd);
	CHECK_EQ(pread(fd, b, 7, 5 * PC_PAGE), 7);
	CHECK(memcmp(b, "endtail", 7) == 0);
	/* A MAP_SHARED mapping made before: sees write(2), and read(2) sees
	 * its stores. */
	unsigned char *m = mmap(NULL, 2 * PC_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		CHECK(m[PC_PAGE + 1] == 0);
		CHECK_EQ(pwrite(fd, "via-write", 9, PC_PAGE - 4), 9);
		CHECK(memcmp(m + PC_PAGE - 4, "via-write", 9) == 0);
		memcpy(m + 100, "via-store", 9);
		CHECK_EQ(pread(fd, b, 9, 100), 9);
		CHECK(memcmp(b, "via-store", 9) == 0);
		/* A read into the mapping of the same file. */
		CHECK_EQ(pread(fd, m + 2000, 9, 100), 9);
		CHECK(memcmp(m + 2000, "via-store", 9) == 0);
		munmap(m, 2 * PC_PAGE);
	}
	munmap(b, PC_PAGE);
	close(fd);
	CHECK_EQ(unlink(MNT "/pcopy"), 0);
}


static void workload(void)
{
	static unsigned char buf[65536];
	char path[256];
	struct stat st;
	struct statfs sf;

	CHECK_EQ(statfs(MNT, &sf), 0);
	CHECK_EQ(sf.f_type, 0xEF53);
	CHECK(sf.f_bsize == 1024 || sf.f_bsize == 4096);
	unsigned long free0 = sf.f_bfree;

	/* 300 files. */
	CHECK_EQ(mkdir(MNT "/many", 0755), 0);
	for (int i = 0; i < 300; i++) {
		size_t n = file_len(i);
		for (size_t k = 0; k < n; k++)
			buf[k] = file_byte(i, k);
		snprintf(path, sizeof path, MNT "/many/f%03d", i);
		write_file(path, buf, n);
	}
	/* 16 MiB pseudo-random file, fsync'ed. */
	{
		int fd = open(MNT "/big", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0);
		rng_state = 0x1234567;
		for (size_t off = 0; off < BIG_SIZE; off += sizeof buf) {
			for (size_t i = 0; i < sizeof buf; i += 8) {
				uint64_t v = rng();
				memcpy(buf + i, &v, 8);
			}
			CHECK_EQ(write(fd, buf, sizeof buf), (long)sizeof buf);
		}
		CHECK_EQ(fsync(fd), 0);
		CHECK_EQ(close(fd), 0);
		size_t len;
		CHECK(file_sum(MNT "/big", &len) == big_sum());
		CHECK_EQ(len, BIG_SIZE);
	}
	CHECK_EQ(statfs(MNT, &sf), 0);
	CHECK(sf.f_bfree < free0 - BIG_SIZE / sf.f_bsize);

	/* A directory of 2000 entries, half removed. */
	CHECK_EQ(mkdir(MNT "/bigdir", 0755), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(path, sizeof path, MNT "/bigdir/entry-number-%d", i);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		CHECK(fd >= 0);
		close(fd);
	}
	for (int i = 0; i < 2000; i += 2) {
		snprintf(path, sizeof path, MNT "/bigdir/entry-number-%d", i);
		CHECK_EQ(unlink(path), 0);
	}
	{
		DIR *d = opendir(MNT "/bigdir");
		int n = 0;
		struct dirent *e;
		while (d && (e = readdir(d)))
			n++;
		if (d)
			closedir(d);
		CHECK_EQ(n, 1000 + 2);
	}

	/* Hard links. */
	CHECK_EQ(link(MNT "/many/f001", MNT "/hard"), 0);
	CHECK_EQ(stat(MNT "/hard", &st), 0);
	CHECK_EQ(st.st_nlink, 2);
	CHECK_EQ(link(MNT "/many/f002", MNT "/many/f002-too"), 0);
	CHECK_EQ(unlink(MNT "/many/f002"), 0);
	CHECK_EQ(stat(MNT "/many/f002-too", &st), 0);
	CHECK_EQ(st.st_nlink, 1);

	/* Symlinks: fast (< 60 bytes) and slow. */
	CHECK_EQ(symlink("many/f003", MNT "/fast-link"), 0);
	char longt[201];
	memset(longt, 'L', 200);
	longt[200] = 0;
	CHECK_EQ(symlink(longt, MNT "/slow-link"), 0);
	char got[256] = { 0 };
	CHECK_EQ(readlink(MNT "/fast-link", got, sizeof got), 9);
	CHECK(memcmp(got, "many/f003", 9) == 0);
	CHECK_EQ(readlink(MNT "/slow-link", got, sizeof got), 200);
	CHECK_EQ(stat(MNT "/fast-link", &st), 0);
	CHECK_EQ(st.st_size, (long)file_len(3));

	/* Device nodes and a FIFO. */
	CHECK_EQ(mknod(MNT "/null", S_IFCHR | 0666, makedev(1, 3)), 0);
	CHECK_EQ(mknod(MNT "/bigdev", S_IFBLK | 0600, makedev(259, 70000)), 0);
	CHECK_EQ(mkfifo(MNT "/fifo", 0644), 0);
	CHECK_EQ(stat(MNT "/bigdev", &st), 0);
	CHECK_EQ(major(st.st_rdev), 259);
	CHECK_EQ(minor(st.st_rdev), 70000);

	/* Renames: a directory across parents (its ".." follows), a file
	 * over another. */
	CHECK_EQ(mkdir(MNT "/a", 0755), 0);
	CHECK_EQ(mkdir(MNT "/b", 0755), 0);
	CHECK_EQ(mkdir(MNT "/a/moving", 0755), 0);
	write_file(MNT "/a/moving/inside", "x", 1);
	CHECK_EQ(rename(MNT "/a/moving", MNT "/b/moved"), 0);
	struct stat sb, sdd;
	CHECK_EQ(stat(MNT "/b", &sb), 0);
	CHECK_EQ(stat(MNT "/b/moved/..", &sdd), 0);
	CHECK_EQ(sdd.st_ino, sb.st_ino);
	CHECK_EQ(sb.st_nlink, 3);
	CHECK_EQ(stat(MNT "/a", &st), 0);
	CHECK_EQ(st.st_nlink, 2);
	CHECK_EQ(rename(MNT "/many/f004", MNT "/many/f005"), 0);
	CHECK_ERR(stat(MNT "/many/f004", &st), ENOENT);
	CHECK_EQ(stat(MNT "/many/f005", &st), 0);
	CHECK_EQ(st.st_size, (long)file_len(4));
	CHECK_ERR(rmdir(MNT "/b"), ENOTEMPTY);

	/* Deletes. */
	for (int i = 200; i < 300; i++) {
		snprintf(path, sizeof path, MNT "/many/f%03d", i);
		CHECK_EQ(unlink(path), 0);
	}
	/* An unlinked file stays readable while open. */
	{
		int fd = open(MNT "/many/f010", O_RDONLY);
		CHECK(fd >= 0);
		CHECK_EQ(unlink(MNT "/many/f010"), 0);
		CHECK_EQ(read(fd, buf, 10), 10);
		CHECK_EQ(buf[9], file_byte(10, 9));
		close(fd);
	}

	/* Truncates: shrink (the tail reads back as zeros after regrowth). */
	{
		CHECK_EQ(truncate(MNT "/many/f100", 100), 0);
		CHECK_EQ(truncate(MNT "/many/f100", 5000), 0);
		CHECK_EQ(read_file(MNT "/many/f100", buf, sizeof buf), 5000);
		int ok = 1;
		for (int k = 0; k < 100; k++)
			ok &= buf[k] == file_byte(100, k);
		for (int k = 100; k < 5000; k++)
			ok &= buf[k] == 0;
		CHECK(ok);
		CHECK_EQ(truncate(MNT "/many/f101", 0), 0);
		/* A sparse file far past its data. */
		int fd = open(MNT "/sparse", O_RDWR | O_CREAT, 0644);
		CHECK_EQ(pwrite(fd, "end", 3, (off_t)(40 << 20)), 3);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK(st.st_blocks < 64);
		CHECK_EQ(pread(fd, buf, 4, (off_t)(20 << 20)), 4);
		CHECK(buf[0] == 0 && buf[3] == 0);
		close(fd);
	}

	/* mmap: MAP_SHARED stores reach the file, MAP_PRIVATE ones do not. */
	{
		int fd = open(MNT "/mapped", O_RDWR | O_CREAT, 0644);
		CHECK_EQ(ftruncate(fd, 8192), 0);
		char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CHECK(p != MAP_FAILED);
		if (p != MAP_FAILED) {
			memcpy(p + 4000, "shared-store", 12);
			CHECK_EQ(msync(p, 8192, MS_SYNC), 0);
			munmap(p, 8192);
		}
		char *q = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		CHECK(q != MAP_FAILED);
		if (q != MAP_FAILED) {
			CHECK(memcmp(q + 4000, "shared-store", 12) == 0);
			memcpy(q, "private", 7);
			munmap(q, 8192);
		}
		CHECK_EQ(pread(fd, buf, 12, 4000), 12);
		CHECK(memcmp(buf, "shared-store", 12) == 0);
		CHECK_EQ(pread(fd, buf, 7, 0), 7);
		CHECK(buf[0] == 0);
		close(fd);
	}

	fault_around();
	page_copy_edges();
	write_own_mapping(MNT "/own-mapping");

	/* Attributes. */
	CHECK_EQ(chown(MNT "/many/f006", 70000, 80000), 0);
	CHECK_EQ(chmod(MNT "/many/f006", 04751), 0);
	struct timespec times[2] = { { 1000000000, 0 }, { 1100000000, 0 } };
	CHECK_EQ(utimensat(AT_FDCWD, MNT "/many/f006", times, 0), 0);
	CHECK_EQ(stat(MNT "/many/f006", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 04751);
	CHECK_EQ(st.st_uid, 70000);
	CHECK_EQ(st.st_gid, 80000);
	CHECK_EQ(st.st_mtime, 1100000000);
	CHECK_EQ(st.st_atime, 1000000000);

	/* The last operation before the umount: a file unlinked while open,
	 * then closed. The umount frees it (once: it must not read the freed
	 * inode as damage and record an error in the superblock). */
	{
		int fd = open(MNT "/last-open", O_RDWR | O_CREAT, 0644);
		CHECK(fd >= 0);
		CHECK_EQ(write(fd, "gone", 4), 4);
		CHECK_EQ(unlink(MNT "/last-open"), 0);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK_EQ(st.st_nlink, 0);
		close(fd);
	}
}

/* s_state of the superblock: bit 1 valid (clean), bit 2 errors found. */
static int fs_state(const char *dev)
{
	unsigned char sb[1024];
	int fd = open(dev, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, sb, sizeof sb, 1024);
	close(fd);
	if (n != (ssize_t)sizeof sb)
		return -1;
	return sb[58] | sb[59] << 8;
}

/* After a clean umount and a new mount (or a reboot): the data is there. */
static void verify(void)
{
	static unsigned char buf[65536];
	char path[256];
	size_t len;
	struct stat st;

	CHECK(file_sum(MNT "/big", &len) == big_sum());
	CHECK_EQ(len, BIG_SIZE);
	for (int i = 0; i < 200; i++) {
		if (i == 2 || i == 4 || i == 10 || i == 100 || i == 101)
			continue;
		snprintf(path, sizeof path, MNT "/many/f%03d", i == 5 ? 4 : i);
		ssize_t n = read_file(i == 5 ? MNT "/many/f005" : path, buf, sizeof buf);
		size_t want = file_len(i == 5 ? 4 : i);
		CHECK_EQ(n, (long)want);
		int ok = 1;
		for (size_t k = 0; k < want && n == (ssize_t)want; k++)
			ok &= buf[k] == file_byte(i == 5 ? 4 : i, k);
		if (!ok)
			t_printf("  many/f%03d differs\n", i);
		CHECK(ok);
	}
	CHECK_ERR(stat(MNT "/many/f250", &st), ENOENT);
	CHECK_EQ(stat(MNT "/hard", &st), 0);
	CHECK_EQ(st.st_nlink, 2);
	CHECK_EQ(readlink(MNT "/slow-link", (char *)buf, sizeof buf), 200);
	CHECK_EQ(stat(MNT "/b/moved/inside", &st), 0);
	CHECK_EQ(read_file(MNT "/mapped", buf, sizeof buf), 8192);
	CHECK(memcmp(buf + 4000, "shared-store", 12) == 0);
	/* Stores through pages mapped ahead of use reached the disk. */
	CHECK_EQ(read_file(MNT "/faultaround", buf, sizeof buf), 8 * FA_PAGE);
	CHECK_EQ(buf[FA_PAGE + 5], 'Z');
	CHECK_EQ(buf[FA_PAGE + 6], 'b');
	CHECK_EQ(buf[2 * FA_PAGE + 9], 'M');
	CHECK_EQ(buf[3 * FA_PAGE], 'd');
	CHECK_EQ(buf[4 * FA_PAGE], 'S');
	CHECK_EQ(buf[5 * FA_PAGE + 100], 0);
	CHECK_EQ(buf[6 * FA_PAGE], 0);
	CHECK_EQ(stat(MNT "/sparse", &st), 0);
	CHECK_EQ(st.st_size, (40 << 20) + 3);
}

/* ro, nodev, noexec, nosuid are honoured. */
static void flags(const char *dev)
{
	struct stat st;
	CHECK_EQ(mount(dev, MNT, "ext2", MS_RDONLY | MS_NODEV | MS_NOEXEC | MS_NOSUID, ""), 0);
	CHECK_ERR(open(MNT "/newfile", O_WRONLY | O_CREAT, 0644), EROFS);
	CHECK_ERR(mkdir(MNT "/newdir", 0755), EROFS);
	CHECK_ERR(open(MNT "/null", O_RDONLY), EACCES);
	CHECK_EQ(stat(MNT "/many/f006", &st), 0);
	CHECK_ERR(access(MNT "/many/f006", X_OK), EACCES);
	struct statfs sf;
	CHECK_EQ(statfs(MNT, &sf), 0);
	CHECK((sf.f_flags & (ST_RDONLY | ST_NODEV | ST_NOEXEC | ST_NOSUID)) ==
	      (ST_RDONLY | ST_NODEV | ST_NOEXEC | ST_NOSUID));
	/* Remount read-write, then back. */
	CHECK_EQ(mount(dev, MNT, "ext2", MS_REMOUNT, ""), 0);
	int fd = open(MNT "/after-remount", O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "rw", 2), 2);
	close(fd);
	CHECK_EQ(unlink(MNT "/after-remount"), 0);
	CHECK_EQ(mount(dev, MNT, "ext2", MS_REMOUNT | MS_RDONLY, ""), 0);
	CHECK_ERR(unlink(MNT "/hard"), EROFS);
	CHECK_EQ(umount(MNT), 0);
	int null = -1;
	CHECK_EQ(mount(dev, MNT, "ext2", 0, ""), 0);
	null = open(MNT "/null", O_RDONLY);
	CHECK(null >= 0);
	close(null);
	CHECK_EQ(umount(MNT), 0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "write";
	/* On a Linux host only a device named on the command line is used:
	 * the disks found there are not the test's. */
	const char *dev = argc > 2 ? argv[2] : t_is_trellis() ? find_dev() : NULL;

	if (geteuid() != 0)
		SKIP("not root");
	if (!dev || !is_ext2(dev))
		SKIP("no ext2 disk attached");
	mkdir(MNT, 0755);
	if (strcmp(mode, "verify") == 0) {
		CHECK_EQ(mount(dev, MNT, "ext2", MS_RDONLY, ""), 0);
		verify();
		CHECK_EQ(umount(MNT), 0);
		DONE();
	}
	CHECK_ERR(mount(dev, MNT, "ext2", 0, "errors=bogus"), EINVAL);
	CHECK_EQ(mount(dev, MNT, "ext2", 0, "errors=remount-ro"), 0);
	workload();
	CHECK_EQ(umount(MNT), 0);
	/* Clean, and no damage recorded (errors=remount-ro would have
	 * recorded it). */
	CHECK_EQ(fs_state(dev), 1);
	/* Everything is back after a new mount. */
	CHECK_EQ(mount(dev, MNT, "ext2", 0, ""), 0);
	verify();
	CHECK_EQ(umount(MNT), 0);
	flags(dev);
	DONE();
}
