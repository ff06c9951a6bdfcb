/*
 * fswork - the storage layer's workload on an ext2 file system.
 *
 *   fswork write DEV DIR    mount DEV (ext2) on DIR, build the tree below,
 *                           sync, unmount
 *   fswork verify DEV DIR   mount DEV read-only on DIR, check every name,
 *                           size, link count, symlink target and byte
 *                           against the same deterministic model, unmount
 *   fswork write-here DIR / verify-here DIR: the same on a mounted DIR
 *
 * The tree (under DIR/w): 300 files in many/ (sizes 0..12 KiB from a
 * PRNG), a 16 MiB random file big.bin with its FNV-1a checksum in big.sum,
 * 20 hard links (links/hN), 10 fast and 10 slow symlinks, 30 files renamed
 * into other/ and a directory renamed with its file, 45 files deleted, 10
 * truncated shorter and 5 extended (sparse) past their end.
 *
 * Prints `FSWORK <mode> OK <checks>` or `FSWORK <mode> FAIL ...` lines;
 * exit status 0 when everything held.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFILES 300
#define BIG_SIZE (16L << 20)
#define CHUNK (64 * 1024)
#define EXTEND 100000

static int failures, checks;
static char root[512];

static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 1)
		n = sizeof buf - 1;
	if (write(1, buf, (size_t)n) < 0)
		return;
}

#define FAIL(...)                                                          \
	do {                                                               \
		failures++;                                                \
		if (failures <= 30) {                                      \
			say("FSWORK FAIL %s:%d: ", __FILE__, __LINE__);     \
			say(__VA_ARGS__);                                  \
			say("\n");                                         \
		}                                                          \
	} while (0)

#define EXPECT(cond, ...)                                                  \
	do {                                                               \
		checks++;                                                  \
		if (!(cond))                                               \
			FAIL(__VA_ARGS__);                                 \
	} while (0)

/* ---- the model ---------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Byte `off` of the content stream `seed`. */
static void gen(uint64_t seed, uint64_t off, unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint64_t word = mix(seed * 0x9E3779B97F4A7C15ULL + (off + i) / 8);
		size_t at = (off + i) % 8;
		buf[i++] = (unsigned char)(word >> (8 * at));
	}
}

static long base_size(int i)
{
	if (i % 10 == 0)
		return 0;
	return (long)(mix((uint64_t)i + 77) % 12288);
}

static int linked(int i)
{
	return i % 7 == 0 && i < 140;
}

static int deleted(int i)
{
	return i >= 100 && i < 150 && !linked(i);
}

static int renamed(int i)
{
	return i >= 200 && i < 230;
}

static long final_size(int i)
{
	long sz = base_size(i);
	if (i >= 250 && i < 260)
		return sz / 3;
	if (i >= 260 && i < 265)
		return sz + EXTEND;
	return sz;
}

static void long_target(int i, char *buf, size_t n)
{
	/* 100..190 characters: a slow symlink (kept in a data block). */
	int len = 100 + 10 * i;
	snprintf(buf, n, "/very/long/symlink/target/number/%d/", i);
	size_t at = strlen(buf);
	while ((int)at < len && at + 1 < n) {
		buf[at] = (char)('a' + (at % 26));
		at++;
	}
	buf[at] = 0;
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_INIT 0xcbf29ce484222325ULL
#define BIG_SEED 0xB16B16ULL

static const char *P(const char *fmt, ...)
{
	static char bufs[4][768];
	static int k;
	char *b = bufs[k++ % 4];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(b, sizeof bufs[0], "%s/w/", root);
	vsnprintf(b + n, sizeof bufs[0] - (size_t)n, fmt, ap);
	va_end(ap);
	return b;
}

/* ---- write -------------------------------------------------------------- */

static int write_file(const char *path, uint64_t seed, long size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		FAIL("create %s: %s", path, strerror(errno));
		return -1;
	}
	static unsigned char buf[CHUNK];
	for (long off = 0; off < size; off += CHUNK) {
		size_t n = (size_t)(size - off < CHUNK ? size - off : CHUNK);
		gen(seed, (uint64_t)off, buf, n);
		if (write(fd, buf, n) != (ssize_t)n) {
			FAIL("write %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (close(fd) < 0)
		FAIL("close %s: %s", path, strerror(errno));
	return 0;
}

#define DO(call)                                                           \
	do {                                                               \
		checks++;                                                  \
		if ((call) < 0)                                            \
			FAIL("%s: %s", #call, strerror(errno));            \
	} while (0)

static void do_write(void)
{
	DO(mkdir(P(""), 0755));
	DO(mkdir(P("many"), 0755));
	DO(mkdir(P("other"), 0755));
	DO(mkdir(P("links"), 0750));
	for (int i = 0; i < NFILES; i++)
		write_file(P("many/f%03d", i), (uint64_t)i + 1, base_size(i));

	/* The big file, written in chunks, its checksum beside it. */
	int fd = open(P("big.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	uint64_t h = FNV_INIT;
	static unsigned char buf[CHUNK];
	for (long off = 0; fd >= 0 && off < BIG_SIZE; off += CHUNK) {
		gen(BIG_SEED, (uint64_t)off, buf, CHUNK);
		h = fnv(h, buf, CHUNK);
		if (write(fd, buf, CHUNK) != CHUNK) {
			FAIL("write big: %s", strerror(errno));
			break;
		}
	}
	DO(fsync(fd));
	DO(close(fd));
	char sum[32];
	snprintf(sum, sizeof sum, "%016llx\n", (unsigned long long)h);
	fd = open(P("big.sum"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	DO(write(fd, sum, strlen(sum)));
	DO(close(fd));

	for (int i = 0; i < NFILES; i++)
		if (linked(i))
			DO(link(P("many/f%03d", i), P("links/h%d", i / 7)));
	for (int i = 0; i < 10; i++) {
		char t[256];
		snprintf(t, sizeof t, "../many/f%03d", i);
		DO(symlink(t, P("links/s%d", i)));
		long_target(i, t, sizeof t);
		DO(symlink(t, P("links/long%d", i)));
	}
	for (int i = 0; i < NFILES; i++)
		if (renamed(i))
			DO(rename(P("many/f%03d", i), P("other/r%03d", i)));
	DO(mkdir(P("dA"), 0700));
	fd = open(P("dA/x"), O_WRONLY | O_CREAT | O_TRUNC, 0640);
	DO(write(fd, "moved\n", 6));
	DO(close(fd));
	DO(rename(P("dA"), P("other/dB")));
	for (int i = 0; i < NFILES; i++)
		if (deleted(i))
			DO(unlink(P("many/f%03d", i)));
	for (int i = 250; i < 265; i++)
		DO(truncate(P("many/f%03d", i), final_size(i)));
	sync();
}

/* ---- verify ------------------------------------------------------------- */

static void check_content(const char *path, uint64_t seed, long data, long size)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		FAIL("stat %s: %s", path, strerror(errno));
		return;
	}
	EXPECT(S_ISREG(st.st_mode), "%s: not a regular file", path);
	EXPECT(st.st_size == size, "%s: size %lld, want %ld", path, (long long)st.st_size,
	       size);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		FAIL("open %s: %s", path, strerror(errno));
		return;
	}
	static unsigned char got[CHUNK], want[CHUNK];
	long off = 0;
	for (;;) {
		ssize_t n = read(fd, got, CHUNK);
		if (n < 0) {
			FAIL("read %s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		long have = data - off;
		if (have < 0)
			have = 0;
		if (have > n)
			have = n;
		gen(seed, (uint64_t)off, want, (size_t)have);
		memset(want + have, 0, (size_t)(n - have));
		if (memcmp(got, want, (size_t)n) != 0) {
			FAIL("%s: content differs in [%ld, %ld)", path, off, off + n);
			break;
		}
		off += n;
	}
	checks++;
	EXPECT(off == size, "%s: read %ld bytes, want %ld", path, off, size);
	close(fd);
}

/* The names in `dir` must be exactly those `want(name)` accepts and there
 * must be `count` of them. */
static void check_names(const char *dir, int (*want)(const char *), int count)
{
	DIR *d = opendir(dir);
	if (!d) {
		FAIL("opendir %s: %s", dir, strerror(errno));
		return;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		EXPECT(want(e->d_name), "%s: unexpected entry %s", dir, e->d_name);
	}
	closedir(d);
	EXPECT(n == count, "%s: %d entries, want %d", dir, n, count);
}

static int num_after(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	if (strncmp(name, prefix, l) != 0 || !name[l])
		return -1;
	char *end;
	long v = strtol(name + l, &end, 10);
	return *end ? -1 : (int)v;
}

static int want_many(const char *name)
{
	int i = num_after(name, "f");
	return i >= 0 && i < NFILES && strlen(name) == 4 && !deleted(i) && !renamed(i);
}

static int want_other(const char *name)
{
	int i = num_after(name, "r");
	return !strcmp(name, "dB") || (i >= 0 && renamed(i) && strlen(name) == 4);
}

static int want_links(const char *name)
{
	int h = num_after(name, "h"), s = num_after(name, "s"), l = num_after(name, "long");
	return (h >= 0 && h < 20) || (s >= 0 && s < 10) || (l >= 0 && l < 10);
}

static int want_w(const char *name)
{
	return !strcmp(name, "many") || !strcmp(name, "other") || !strcmp(name, "links") ||
	       !strcmp(name, "big.bin") || !strcmp(name, "big.sum");
}

static void check_nlink(const char *path, nlink_t want)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		FAIL("lstat %s: %s", path, strerror(errno));
		return;
	}
	EXPECT(st.st_nlink == want, "%s: nlink %ld, want %ld", path, (long)st.st_nlink,
	       (long)want);
}

static void do_verify(void)
{
	int many = 0;
	for (int i = 0; i < NFILES; i++)
		many += !deleted(i) && !renamed(i);
	check_names(P(""), want_w, 5);
	check_names(P("many"), want_many, many);
	check_names(P("other"), want_other, 31);
	check_names(P("links"), want_links, 40);
	check_nlink(P(""), 5);
	check_nlink(P("other"), 3);
	check_nlink(P("other/dB"), 2);
	check_nlink(P("many"), 2);

	for (int i = 0; i < NFILES; i++) {
		if (deleted(i))
			continue;
		const char *path = renamed(i) ? P("other/r%03d", i) : P("many/f%03d", i);
		long data = base_size(i) < final_size(i) ? base_size(i) : final_size(i);
		check_content(path, (uint64_t)i + 1, data, final_size(i));
		check_nlink(path, linked(i) ? 2 : 1);
		if (linked(i)) {
			struct stat a, b;
			checks++;
			if (stat(path, &a) < 0 || stat(P("links/h%d", i / 7), &b) < 0)
				FAIL("stat link %d: %s", i, strerror(errno));
			else
				EXPECT(a.st_ino == b.st_ino, "links/h%d is not f%03d", i / 7, i);
		}
	}
	for (int i = 0; i < 10; i++) {
		char want[256], got[256];
		snprintf(want, sizeof want, "../many/f%03d", i);
		ssize_t n = readlink(P("links/s%d", i), got, sizeof got - 1);
		EXPECT(n == (ssize_t)strlen(want) && !memcmp(got, want, (size_t)n),
		       "links/s%d: wrong target", i);
		long_target(i, want, sizeof want);
		n = readlink(P("links/long%d", i), got, sizeof got - 1);
		EXPECT(n == (ssize_t)strlen(want) && !memcmp(got, want, (size_t)n),
		       "links/long%d: wrong target (%zd bytes)", i, n);
	}
	/* A fast symlink resolves through the file system. */
	check_content(P("links/s1"), 2, base_size(1), base_size(1));
	struct stat st;
	EXPECT(stat(P("links"), &st) == 0 && (st.st_mode & 07777) == 0750, "links: mode");
	EXPECT(stat(P("other/dB"), &st) == 0 && (st.st_mode & 07777) == 0700, "dB: mode");

	/* The big file: its bytes, and the checksum written beside it. */
	check_content(P("big.bin"), BIG_SEED, BIG_SIZE, BIG_SIZE);
	int fd = open(P("big.bin"), O_RDONLY);
	uint64_t h = FNV_INIT;
	static unsigned char buf[CHUNK];
	ssize_t n;
	while (fd >= 0 && (n = read(fd, buf, CHUNK)) > 0)
		h = fnv(h, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	char sum[64] = { 0 }, want[32];
	fd = open(P("big.sum"), O_RDONLY);
	n = fd >= 0 ? read(fd, sum, sizeof sum - 1) : -1;
	if (fd >= 0)
		close(fd);
	snprintf(want, sizeof want, "%016llx\n", (unsigned long long)h);
	EXPECT(n == 17 && !strcmp(sum, want), "big.sum %s, computed %s", sum, want);

	fd = open(P("other/dB/x"), O_RDONLY);
	char x[16] = { 0 };
	n = fd >= 0 ? read(fd, x, sizeof x - 1) : -1;
	if (fd >= 0)
		close(fd);
	EXPECT(n == 6 && !strcmp(x, "moved\n"), "other/dB/x: %s", x);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		say("usage: fswork write|verify DEV DIR | write-here|verify-here DIR\n");
		return 2;
	}
	const char *mode = argv[1];
	int here = argc == 3;
	snprintf(root, sizeof root, "%s", argv[argc - 1]);
	int verify = !strncmp(mode, "verify", 6);
	if (!here) {
		/* mkdir -p */
		for (char *p = root + 1; (p = strchr(p, '/')); p++) {
			*p = 0;
			mkdir(root, 0755);
			*p = '/';
		}
		mkdir(root, 0755);
		unsigned long flags = verify ? MS_RDONLY : 0;
		if (mount(argv[2], root, "ext2", flags, NULL) < 0) {
			say("FSWORK %s FAIL mount %s: %s\n", mode, argv[2], strerror(errno));
			return 1;
		}
	}
	if (verify)
		do_verify();
	else
		do_write();
	if (!here && umount(root) < 0)
		FAIL("umount %s: %s", root, strerror(errno));
	if (failures)
		say("FSWORK %s FAIL %d of %d checks failed\n", mode, failures, checks);
	else
		say("FSWORK %s OK %d checks\n", mode, checks);
	return failures ? 1 : 0;
}
