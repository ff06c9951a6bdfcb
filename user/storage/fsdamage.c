/*
 * fsdamage - mounts damaged ext2 images and walks them (the storage
 * layer's damaged-image test).
 *
 *   fsdamage IMAGE COUNT FIRST_SEED [IMAGE COUNT FIRST_SEED ...]
 *
 * For each seed, a copy of IMAGE (a small, clean ext2 image) is damaged by
 * 1 to 4 mutations chosen by a PRNG from that seed: superblock fields,
 * group descriptors (bitmap and inode-table locations), inode bytes, block
 * pointers out of the device, into metadata or looping back to their own
 * indirect block, directory entries (record lengths, name lengths, inode
 * numbers, an entry pointing back at the root), link counts, bitmaps, and
 * random bytes in the metadata blocks. The copy is attached to a loop
 * device (LOOP_CONFIGURE), mounted as ext2 and, if that works, walked
 * (every directory listed, every entry stat'ed, every file read, every
 * symlink read, bounded depth and counts) and written to (create, write,
 * fsync, mkdir, rename, truncate, unlink), then unmounted.
 *
 * One `DMG` line per image with the mount's result and the errors the walk
 * and the writes met, then `FSDAMAGE DONE ...` with the totals. The kernel
 * must survive all of it: the caller counts panics and hangs.
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
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOOP_CLR_FD 0x4C01
#define LOOP_CONFIGURE 0x4C0A
#define LOOP_CTL_GET_FREE 0x4C82

struct loop_config {
	uint32_t fd, block_size;
	uint64_t info[29]; /* struct loop_info64: 232 bytes */
	uint64_t reserved[8];
};

#define MNT "/mnt/dmg"
#define WORK "/tmp/dmg.img"
#define MAX_DEPTH 12
#define MAX_ENTRIES 4000
#define MAX_ERRNO 140

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

/* ---- PRNG --------------------------------------------------------------- */

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(next() % n) : 0;
}

/* ---- the image ------------------------------------------------------------ */

static unsigned char *base, *img;
static size_t img_len;
static uint32_t bs, blocks, ipg, inode_size, first_data, groups;

static uint32_t rd32(size_t at)
{
	if (at + 4 > img_len)
		return 0;
	return (uint32_t)img[at] | (uint32_t)img[at + 1] << 8 | (uint32_t)img[at + 2] << 16 |
	       (uint32_t)img[at + 3] << 24;
}

static uint16_t rd16(size_t at)
{
	if (at + 2 > img_len)
		return 0;
	return (uint16_t)(img[at] | img[at + 1] << 8);
}

static void wr32(size_t at, uint32_t v)
{
	if (at + 4 > img_len)
		return;
	for (int i = 0; i < 4; i++)
		img[at + i] = (unsigned char)(v >> (8 * i));
}

static void wr16(size_t at, uint16_t v)
{
	if (at + 2 > img_len)
		return;
	img[at] = (unsigned char)v;
	img[at + 1] = (unsigned char)(v >> 8);
}

/* Geometry of the clean base image. */
static int parse_base(void)
{
	img = base;
	if (rd16(1024 + 56) != 0xEF53)
		return -1;
	bs = 1024u << rd32(1024 + 24);
	blocks = rd32(1024 + 4);
	ipg = rd32(1024 + 40);
	first_data = rd32(1024 + 20);
	inode_size = rd32(1024 + 76) ? rd16(1024 + 88) : 128;
	uint32_t bpg = rd32(1024 + 32);
	groups = bpg ? (blocks - first_data + bpg - 1) / bpg : 0;
	return bs >= 1024 && bs <= 65536 && ipg && groups ? 0 : -1;
}

static size_t gd_at(uint32_t g)
{
	return (size_t)(first_data + 1) * bs + (size_t)g * 32;
}

/* Byte offset of inode `n` (1-based) in the clean geometry. */
static size_t inode_at(uint32_t n)
{
	uint32_t g = (n - 1) / ipg, idx = (n - 1) % ipg;
	uint32_t table = rd32(gd_at(g) + 8);
	return (size_t)table * bs + (size_t)idx * inode_size;
}

static int inode_used(uint32_t n)
{
	size_t at = inode_at(n);
	return at + inode_size <= img_len && rd16(at) != 0 && rd16(at + 26) != 0;
}

/* A used inode among the first 64 (root, lost+found, the tree). */
static uint32_t used_inode(int want_dir)
{
	for (int tries = 0; tries < 200; tries++) {
		uint32_t n = 2 + below(62);
		if (n > ipg || (n > 2 && n < 11))
			continue;
		if (!inode_used(n))
			continue;
		if (want_dir && (rd16(inode_at(n)) & 0xF000) != 0x4000)
			continue;
		return n;
	}
	return 2;
}

/* ---- mutations ------------------------------------------------------------ */

static char muts[256];

static void note(const char *what)
{
	size_t l = strlen(muts);
	snprintf(muts + l, sizeof muts - l, "%s%s", l ? "," : "", what);
}

static uint32_t nasty(void)
{
	switch (below(7)) {
	case 0:
		return 0;
	case 1:
		return 0xffffffffu;
	case 2:
		return blocks + below(1000);
	case 3:
		return blocks - 1;
	case 4:
		return below(first_data + 3);
	case 5:
		return 1u << below(32);
	default:
		return (uint32_t)next();
	}
}

static void mutate_super(void)
{
	static const uint16_t fields[] = { 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 56, 58, 76, 84, 88, 92, 96, 100 };
	uint16_t f = fields[below(sizeof fields / sizeof fields[0])];
	size_t at = 1024 + f;
	if (f == 56 || f == 58 || f == 88)
		wr16(at, (uint16_t)nasty());
	else
		wr32(at, below(3) == 0 ? rd32(at) ^ (1u << below(32)) : nasty());
	note("sb");
}

static void mutate_gd(void)
{
	uint32_t g = below(groups);
	static const uint16_t fields[] = { 0, 4, 8, 12, 14, 16 };
	uint16_t f = fields[below(6)];
	if (f >= 12)
		wr16(gd_at(g) + f, (uint16_t)nasty());
	else if (below(3) == 0)
		wr32(gd_at(g) + f, rd32(gd_at(g) + (f + 4) % 12)); /* two tables overlap */
	else
		wr32(gd_at(g) + f, nasty());
	note("gd");
}

static void mutate_inode_bytes(void)
{
	size_t at = inode_at(used_inode(0));
	int n = 1 + (int)below(8);
	for (int i = 0; i < n && at + inode_size <= img_len; i++)
		img[at + below(inode_size)] ^= (unsigned char)(1 + below(255));
	note("ino");
}

static void mutate_pointer(void)
{
	uint32_t n = used_inode(0);
	size_t at = inode_at(n);
	uint32_t k = below(15);
	uint32_t ind = rd32(at + 40 + 12 * 4);
	if (below(3) == 0 && ind && ind < blocks) {
		/* The indirect block points at itself (or at the inode table). */
		uint32_t target = below(2) ? ind : rd32(gd_at(0) + 8);
		wr32((size_t)ind * bs + 4 * below(bs / 4), target);
		note("ptr-loop");
		return;
	}
	wr32(at + 40 + 4 * k, nasty());
	note("ptr");
}

static void mutate_dirent(void)
{
	uint32_t d = used_inode(1);
	uint32_t blk = rd32(inode_at(d) + 40);
	if (!blk || blk >= blocks) {
		note("dir-none");
		return;
	}
	size_t start = (size_t)blk * bs, at = start;
	/* Walk a few entries, then damage one. */
	int skip = (int)below(6);
	for (int i = 0; i < skip; i++) {
		uint16_t rec = rd16(at + 4);
		if (rec < 12 || at + rec >= start + bs)
			break;
		at += rec;
	}
	switch (below(6)) {
	case 0:
		wr16(at + 4, (uint16_t)(below(2) ? 0 : below(4) * 4 + 1));
		note("de-rec");
		break;
	case 1:
		wr16(at + 4, (uint16_t)(bs + 4 * below(64)));
		note("de-rec-big");
		break;
	case 2:
		img[at + 6] = (unsigned char)(200 + below(56));
		note("de-name");
		break;
	case 3:
		wr32(at, below(2) ? 0xfffffff0u : ipg * groups + 1 + below(100));
		note("de-ino");
		break;
	case 4:
		img[at + 7] = (unsigned char)below(256);
		note("de-type");
		break;
	default:
		/* An entry of a subdirectory names the root: a cycle. */
		wr32(at, 2);
		img[at + 7] = 2;
		note("de-cycle");
		break;
	}
}

static void mutate_links(void)
{
	static const uint16_t vals[] = { 0, 1, 2, 1000, 65535 };
	wr16(inode_at(used_inode(0)) + 26, vals[below(5)]);
	note("nlink");
}

static void mutate_bitmap(void)
{
	uint32_t g = below(groups);
	uint32_t blk = rd32(gd_at(g) + (below(2) ? 0 : 4));
	if (blk && blk < blocks)
		memset(img + (size_t)blk * bs, below(2) ? 0xff : 0, bs);
	note("bitmap");
}

static void mutate_random(void)
{
	size_t meta = (size_t)(first_data + 2) * bs + (size_t)ipg * inode_size + 8 * bs;
	if (meta > img_len)
		meta = img_len;
	int n = 1 + (int)below(32);
	for (int i = 0; i < n; i++)
		img[below((uint32_t)meta)] = (unsigned char)next();
	note("rand");
}

static void mutate(void)
{
	memcpy(img, base, img_len);
	muts[0] = 0;
	int n = 1 + (int)below(4);
	for (int i = 0; i < n; i++) {
		switch (below(9)) {
		case 0:
			mutate_super();
			break;
		case 1:
			mutate_gd();
			break;
		case 2:
			mutate_inode_bytes();
			break;
		case 3:
		case 4:
			mutate_pointer();
			break;
		case 5:
			mutate_dirent();
			break;
		case 6:
			mutate_links();
			break;
		case 7:
			mutate_bitmap();
			break;
		default:
			mutate_random();
			break;
		}
	}
}

/* ---- the walk ------------------------------------------------------------- */

static int errs[MAX_ERRNO + 1];
static int entries, files_read;
static long total_errs[MAX_ERRNO + 1];

static void err(int e)
{
	errs[e > 0 && e <= MAX_ERRNO ? e : 0]++;
}

static void walk(const char *dir, int depth)
{
	if (depth > MAX_DEPTH || entries > MAX_ENTRIES)
		return;
	DIR *d = opendir(dir);
	if (!d) {
		err(errno);
		return;
	}
	struct dirent *e;
	char path[1024];
	errno = 0;
	while (entries <= MAX_ENTRIES && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		entries++;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) < 0) {
			err(errno);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			walk(path, depth + 1);
		} else if (S_ISLNK(st.st_mode)) {
			char t[4096];
			if (readlink(path, t, sizeof t) < 0)
				err(errno);
		} else if (S_ISREG(st.st_mode)) {
			int fd = open(path, O_RDONLY);
			if (fd < 0) {
				err(errno);
				continue;
			}
			static char buf[65536];
			ssize_t r;
			long total = 0;
			while ((r = read(fd, buf, sizeof buf)) > 0 && total < (64L << 20))
				total += r;
			if (r < 0)
				err(errno);
			else
				files_read++;
			close(fd);
		}
		errno = 0;
	}
	if (errno)
		err(errno);
	closedir(d);
}

static void writes(void)
{
	static char buf[8192];
	memset(buf, 'x', sizeof buf);
	int fd = open(MNT "/newfile", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		err(errno);
	} else {
		if (write(fd, buf, sizeof buf) < 0)
			err(errno);
		if (fsync(fd) < 0)
			err(errno);
		close(fd);
	}
	if (mkdir(MNT "/newdir", 0755) < 0)
		err(errno);
	if (rename(MNT "/newfile", MNT "/newdir/nf") < 0)
		err(errno);
	if (truncate(MNT "/newdir/nf", 100) < 0)
		err(errno);
	if (unlink(MNT "/newdir/nf") < 0)
		err(errno);
	if (rmdir(MNT "/newdir") < 0)
		err(errno);
	/* Change what exists: the tree's first file and directory. */
	DIR *d = opendir(MNT);
	struct dirent *e;
	char path[512];
	int done = 0;
	while (d && done < 4 && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lost+found"))
			continue;
		snprintf(path, sizeof path, MNT "/%s", e->d_name);
		struct stat st;
		if (lstat(path, &st) < 0) {
			err(errno);
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			int f = open(path, O_WRONLY | O_APPEND);
			if (f < 0 || write(f, buf, 3000) < 0)
				err(errno);
			if (f >= 0)
				close(f);
			if (truncate(path, st.st_size / 2) < 0)
				err(errno);
		} else if (S_ISDIR(st.st_mode)) {
			char sub[600];
			snprintf(sub, sizeof sub, "%s/added", path);
			int f = open(sub, O_WRONLY | O_CREAT, 0600);
			if (f < 0)
				err(errno);
			else
				close(f);
			if (unlink(sub) < 0)
				err(errno);
		}
		done++;
	}
	if (d)
		closedir(d);
	sync();
}

static const char *ename(int e)
{
	switch (e) {
	case 0:
		return "other";
	case EIO:
		return "EIO";
	case EUCLEAN:
		return "EUCLEAN";
	case EINVAL:
		return "EINVAL";
	case EROFS:
		return "EROFS";
	case ENOSPC:
		return "ENOSPC";
	case ENOENT:
		return "ENOENT";
	case ENOTDIR:
		return "ENOTDIR";
	case EISDIR:
		return "EISDIR";
	case EFBIG:
		return "EFBIG";
	case ENOMEM:
		return "ENOMEM";
	case ELOOP:
		return "ELOOP";
	case EEXIST:
		return "EEXIST";
	case ENOTEMPTY:
		return "ENOTEMPTY";
	case EOVERFLOW:
		return "EOVERFLOW";
	case EMLINK:
		return "EMLINK";
	case ENAMETOOLONG:
		return "ENAMETOOLONG";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	default:
		return NULL;
	}
}

static void errlist(const int *counts, char *out, size_t n)
{
	out[0] = 0;
	for (int e = 0; e <= MAX_ERRNO; e++) {
		if (!counts[e])
			continue;
		size_t l = strlen(out);
		const char *name = ename(e);
		if (name)
			snprintf(out + l, n - l, "%s%s:%d", l ? "," : "", name, counts[e]);
		else
			snprintf(out + l, n - l, "%serrno%d:%d", l ? "," : "", e, counts[e]);
	}
	if (!out[0])
		snprintf(out, n, "none");
}

int main(int argc, char **argv)
{
	if (argc < 4 || (argc - 1) % 3) {
		say("usage: fsdamage IMAGE COUNT FIRST_SEED ...\n");
		return 2;
	}
	mkdir("/mnt", 0755);
	mkdir(MNT, 0755);
	int ctl = open("/dev/loop-control", O_RDWR);
	int n = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	char loopdev[32];
	snprintf(loopdev, sizeof loopdev, "/dev/loop%d", n);
	int lfd = n < 0 ? -1 : open(loopdev, O_RDWR);
	if (lfd < 0) {
		say("FSDAMAGE FAIL no loop device: %s\n", strerror(errno));
		return 1;
	}
	int images = 0, mounted = 0, refused = 0, refused_odd = 0, umount_fail = 0;
	int mount_errs[MAX_ERRNO + 1] = { 0 };
	for (int a = 1; a + 2 < argc; a += 3) {
		int in = open(argv[a], O_RDONLY);
		struct stat st;
		if (in < 0 || fstat(in, &st) < 0) {
			say("FSDAMAGE FAIL %s: %s\n", argv[a], strerror(errno));
			return 1;
		}
		img_len = (size_t)st.st_size;
		base = malloc(img_len);
		if (!base || read(in, base, img_len) != (ssize_t)img_len) {
			say("FSDAMAGE FAIL cannot read %s\n", argv[a]);
			return 1;
		}
		close(in);
		if (parse_base() < 0) {
			say("FSDAMAGE FAIL %s is not ext2\n", argv[a]);
			return 1;
		}
		img = malloc(img_len);
		if (!img) {
			say("FSDAMAGE FAIL out of memory\n");
			return 1;
		}
		long count = atol(argv[a + 1]);
		unsigned long long seed0 = strtoull(argv[a + 2], NULL, 0);
		for (long k = 0; k < count; k++) {
			unsigned long long seed = seed0 + (unsigned long long)k;
			rng = seed * 0x9E3779B97F4A7C15ULL + 1;
			mutate();
			int out = open(WORK, O_RDWR | O_CREAT | O_TRUNC, 0600);
			if (out < 0 || write(out, img, img_len) != (ssize_t)img_len) {
				say("FSDAMAGE FAIL write %s: %s\n", WORK, strerror(errno));
				return 1;
			}
			struct loop_config cfg;
			memset(&cfg, 0, sizeof cfg);
			cfg.fd = (uint32_t)out;
			if (ioctl(lfd, LOOP_CONFIGURE, &cfg) < 0) {
				say("FSDAMAGE FAIL LOOP_CONFIGURE: %s\n", strerror(errno));
				return 1;
			}
			close(out);
			images++;
			memset(errs, 0, sizeof errs);
			entries = files_read = 0;
			char result[32];
			if (mount(loopdev, MNT, "ext2", 0, NULL) < 0) {
				int e = errno;
				refused++;
				mount_errs[e > 0 && e <= MAX_ERRNO ? e : 0]++;
				if (e != EINVAL && e != EUCLEAN)
					refused_odd++;
				snprintf(result, sizeof result, "%s", ename(e) ? ename(e) : "odd");
			} else {
				mounted++;
				snprintf(result, sizeof result, "ok");
				walk(MNT, 0);
				writes();
				walk(MNT, 0);
				if (umount(MNT) < 0 && umount2(MNT, MNT_DETACH) < 0) {
					umount_fail++;
					err(errno);
				}
			}
			char el[512];
			errlist(errs, el, sizeof el);
			for (int e = 0; e <= MAX_ERRNO; e++)
				total_errs[e] += errs[e];
			say("DMG %ld bs=%u seed=%llu muts=%s mount=%s entries=%d files=%d errors=%s\n",
			    k, bs, seed, muts, result, entries, files_read, el);
			/* Unbound now, or (Linux 6.x) when this last opener closes. */
			if (ioctl(lfd, LOOP_CLR_FD, 0) < 0) {
				say("FSDAMAGE FAIL LOOP_CLR_FD: %s\n", strerror(errno));
				return 1;
			}
			close(lfd);
			lfd = open(loopdev, O_RDWR);
			if (lfd < 0) {
				say("FSDAMAGE FAIL reopen %s: %s\n", loopdev, strerror(errno));
				return 1;
			}
		}
		free(base);
		base = NULL;
		free(img);
		img = NULL;
	}
	char me[512], te[1024];
	errlist(mount_errs, me, sizeof me);
	int totals[MAX_ERRNO + 1];
	for (int e = 0; e <= MAX_ERRNO; e++)
		totals[e] = (int)total_errs[e];
	errlist(totals, te, sizeof te);
	say("FSDAMAGE DONE images=%d mounted=%d refused=%d refused-other-errno=%d "
	    "umount-failed=%d mount-errors=%s op-errors=%s\n",
	    images, mounted, refused, refused_odd, umount_fail, me, te);
	unlink(WORK);
	return 0;
}
