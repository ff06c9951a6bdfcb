/*
 * fs.h - storage benchmarks for lmb: an ext2 file system on the first
 * virtio-blk disk (/dev/vda, attached by `cargo xtask bench`), mounted at
 * FS_DIR.  Included by lmb.c.
 *
 * Rows:
 *   fs_seq_write_cold   a new 64 MiB file, written in 1 MiB writes, then
 *                       fsync (MB/s: the data reaches the disk)
 *   fs_seq_write_warm   the same 64 MiB overwritten while its pages are
 *                       cached, no fsync (MB/s: page-cache writes)
 *   fs_seq_read_cold    64 MiB read in 1 MiB reads just after a remount
 *                       (nothing cached: device and readahead)
 *   fs_seq_read_warm    the same read again, everything cached
 *   fs_rand_read_4k     after a remount, 4 KiB preads at 1024 offsets of the
 *                       64 MiB file from a fixed PRNG (ns per read)
 *   fs_create_0k/4k     lat_fs: create 500 files (0 or 4 KiB written) in a
 *                       fresh directory (ns per file)
 *   fs_delete_0k/4k     lat_fs: unlink those 500 files (ns per file)
 *   fs_create/delete_1k/10k   the same with 1 and 10 KiB files (lat_fs's
 *                       sizes are 0, 1, 4 and 10 KiB)
 *   tmpfs_create/delete_0k/1k/4k/10k   the same on a tmpfs at TMP_DIR
 *   fs_fsync            a 4 KiB pwrite to a 1 MiB file then fsync (ns per
 *                       pair)
 *
 * Each row's setup (remount, creating the file, dropping the last run's
 * files) is outside the timed part.  The timed part is repeated FS_REPS
 * times and the median is reported (once in smoke mode): a run is long
 * already (64 MiB, 500 files), and under -icount a guest that waits for
 * the disk idles until its next timer, so a kernel that waits for each
 * request in turn takes minutes per run.  A kernel that cannot mount the
 * disk reports `missing`.
 */
#ifndef TRELLIS_BENCH_FS_H
#define TRELLIS_BENCH_FS_H

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#define FS_DEV "/dev/vda"
#define FS_DIR "/fsb"
#define FS_TYPE "ext2"
#define FS_MAGIC 0xEF53
#define FS_BIG FS_DIR "/big"
#define FS_BIG_SIZE (64L << 20)
#define FS_IO (1L << 20)
#define FS_FILES 500
#define FS_RAND_READS 1024
#define FS_REPS 3

static char *fs_buf;
/* Operations in one timed run (for the profile's per-operation figures). */
static long fs_ops_per_run = 1;
/* Where the lat_fs rows create their files: FS_DIR, or TMP_DIR (tmpfs). */
static const char *fs_lat_root = FS_DIR;

#define TMP_DIR "/tmpb"
#define TMPFS_MAGIC 0x01021994

static int fs_buffer(void)
{
	if (!fs_buf) {
		fs_buf = malloc(FS_IO);
		if (!fs_buf)
			return b_fail(0, "malloc");
		for (long i = 0; i < FS_IO; i++)
			fs_buf[i] = (char)(i * 131 + 7);
	}
	return 0;
}

/* Mounts a tmpfs at TMP_DIR unless one is there already. */
static int tmp_ready(void)
{
	if (fs_buffer() < 0)
		return -1;
	struct statfs sf;
	mkdir(TMP_DIR, 0755);
	if (statfs(TMP_DIR, &sf) == 0 && sf.f_type == TMPFS_MAGIC)
		return 0;
	if (mount("tmpfs", TMP_DIR, "tmpfs", 0, NULL) < 0) {
		int e = errno;
		return b_fail(1, "mount tmpfs: %s", strerror(e));
	}
	return 0;
}

/* Mounts the disk unless an ext2 file system is already at FS_DIR. */
static int fs_ready(void)
{
	if (fs_buffer() < 0)
		return -1;
	if (strcmp(fs_lat_root, TMP_DIR) == 0)
		return tmp_ready();
	struct statfs sf;
	mkdir(FS_DIR, 0755);
	if (statfs(FS_DIR, &sf) == 0 && sf.f_type == FS_MAGIC)
		return 0;
	if (mount(FS_DEV, FS_DIR, FS_TYPE, 0, NULL) < 0) {
		int e = errno;
		return b_fail(1, "mount %s: %s", FS_DEV, strerror(e));
	}
	return 0;
}

/* Unmount and mount again: nothing of the file system stays cached. */
static int fs_remount(void)
{
	sync();
	if (umount(FS_DIR) < 0)
		return b_sysfail("umount");
	if (mount(FS_DEV, FS_DIR, FS_TYPE, 0, NULL) < 0)
		return b_sysfail("mount");
	return 0;
}

static int fs_write_all(int fd, long len)
{
	for (long off = 0; off < len; off += FS_IO) {
		long want = len - off < FS_IO ? len - off : FS_IO;
		ssize_t w = write(fd, fs_buf, (size_t)want);
		if (w != want)
			return w < 0 ? b_sysfail("write") : b_fail(0, "short write");
	}
	return 0;
}

static int fs_read_all(int fd, long len)
{
	long got = 0;
	for (;;) {
		ssize_t r = read(fd, fs_buf, FS_IO);
		if (r < 0)
			return b_sysfail("read");
		if (r == 0)
			break;
		got += r;
	}
	return got == len ? 0 : b_fail(0, "read %ld bytes of %ld", got, len);
}

/* Makes FS_BIG hold FS_BIG_SIZE bytes, on disk (fsync). */
static int fs_make_big(void)
{
	struct stat st;
	if (stat(FS_BIG, &st) == 0 && st.st_size == FS_BIG_SIZE)
		return 0;
	int fd = open(FS_BIG, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return b_sysfail("open " FS_BIG);
	int r = fs_write_all(fd, FS_BIG_SIZE);
	if (r == 0 && fsync(fd) < 0)
		r = b_sysfail("fsync");
	close(fd);
	return r;
}

/* One measured step: `setup` untimed, then `op` timed; ns of `op`. */
typedef int (*fs_step)(void);

static int fs_median(fs_step setup, fs_step op, int smoke, double *ns)
{
	if (fs_ready() < 0)
		return -1;
	int reps = smoke || b_profile ? 1 : FS_REPS;
	double per[FS_REPS];
	for (int i = 0; i < reps; i++) {
		if (setup && setup() < 0)
			return -1;
		if (!smoke)
			b_inner_on();
		double t0 = b_now_ns();
		int r = op();
		double t = b_now_ns() - t0;
		if (!smoke)
			b_inner_off(fs_ops_per_run);
		if (r < 0)
			return -1;
		per[i] = t > 0 ? t : 0.5;
	}
	qsort(per, (size_t)reps, sizeof per[0], b_cmp);
	*ns = per[reps / 2];
	return 0;
}

/* ---- sequential ------------------------------------------------------- */

static int fs_drop_big(void)
{
	if (unlink(FS_BIG) < 0 && errno != ENOENT)
		return b_sysfail("unlink " FS_BIG);
	return fs_remount();
}

static int fs_write_new(void)
{
	int fd = open(FS_BIG, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return b_sysfail("open " FS_BIG);
	int r = fs_write_all(fd, FS_BIG_SIZE);
	if (r == 0 && fsync(fd) < 0)
		r = b_sysfail("fsync");
	close(fd);
	return r;
}

static int fs_read_big(void)
{
	int fd = open(FS_BIG, O_RDONLY);
	if (fd < 0)
		return b_sysfail("open " FS_BIG);
	int r = fs_read_all(fd, FS_BIG_SIZE);
	close(fd);
	return r;
}

/* The file exists, is on disk, and every page of it is cached. */
static int fs_big_cached(void)
{
	if (fs_make_big() < 0)
		return -1;
	int fd = open(FS_BIG, O_RDWR);
	if (fd < 0)
		return b_sysfail("open " FS_BIG);
	int r = fsync(fd) < 0 ? b_sysfail("fsync") : 0;
	close(fd);
	return r < 0 ? r : fs_read_big();
}

static int fs_big_cold(void)
{
	if (fs_make_big() < 0)
		return -1;
	return fs_remount();
}

static int fs_overwrite(void)
{
	int fd = open(FS_BIG, O_WRONLY);
	if (fd < 0)
		return b_sysfail("open " FS_BIG);
	int r = fs_write_all(fd, FS_BIG_SIZE);
	close(fd);
	return r;
}

static int run_fs_seq_write_cold(int smoke, double *ns)
{
	return fs_median(fs_drop_big, fs_write_new, smoke, ns);
}

static int run_fs_seq_write_warm(int smoke, double *ns)
{
	return fs_median(fs_big_cached, fs_overwrite, smoke, ns);
}

static int run_fs_seq_read_cold(int smoke, double *ns)
{
	return fs_median(fs_big_cold, fs_read_big, smoke, ns);
}

static int run_fs_seq_read_warm(int smoke, double *ns)
{
	return fs_median(fs_big_cached, fs_read_big, smoke, ns);
}

/* ---- driver-domain crashes (Trellis only) ------------------------------ */

/*
 * The virtio-blk driver runs in a driver domain behind a shadow that
 * restarts it after a crash (docs/domains.md).  These rows turn on its
 * crash injection, one crash per guest second, for their own duration only
 * (the debug file period_ns), and compare with the rows without crashes:
 *   fs_seq_read_crash   fs_seq_read_cold with one crash per second
 *   fs_seq_write_crash  fs_seq_write_cold with one crash per second
 *   blk_recovery        ns from a crash to the first retried request that
 *                       completes (the shadow measures it: recovery_ns)
 * A pass of 64 MiB takes well under a second, so the crash rows repeat the
 * pass (its setup untimed, crashes still on) until the timed passes add up
 * to CRASH_TIMED_NS, and report bytes over timed time.  A kernel without
 * the debug files (Linux) reports `missing`.
 */
#define DOM_DIR "/sys/kernel/debug/domains/virtio-blk"
#define CRASH_PERIOD_NS 1000000000L
#define CRASH_TIMED_NS 5e9
#define CRASH_MAX_PASSES 64
#define RECOVERY_REPS 7

static int dom_write(const char *file, long value)
{
	char path[128], text[32];
	snprintf(path, sizeof path, DOM_DIR "/%s", file);
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return b_openfail(path);
	int n = snprintf(text, sizeof text, "%ld\n", value);
	int r = write(fd, text, (size_t)n) == n ? 0 : b_sysfail(path);
	close(fd);
	return r;
}

/* The value of `key` in the debug file recovery_ns ("key value" lines). */
static int dom_recovery(const char *key, long *value)
{
	char text[256];
	int fd = open(DOM_DIR "/recovery_ns", O_RDONLY);
	if (fd < 0)
		return b_openfail(DOM_DIR "/recovery_ns");
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return b_fail(0, "read recovery_ns");
	text[n] = 0;
	size_t k = strlen(key);
	for (char *line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, key, k) == 0 && line[k] == ' ') {
			*value = strtol(line + k + 1, NULL, 10);
			return 0;
		}
	}
	return b_fail(0, "no %s in recovery_ns", key);
}

/* sysfs at /sys (the debug files are in it). */
static int dom_ready(void)
{
	if (fs_ready() < 0)
		return -1;
	if (access(DOM_DIR, F_OK) != 0) {
		mkdir("/sys", 0755);
		mount("sysfs", "/sys", "sysfs", 0, NULL);
	}
	if (access(DOM_DIR "/period_ns", W_OK) != 0)
		return b_fail(1, "no driver domain crash injection (%s)",
			      DOM_DIR "/period_ns");
	return 0;
}

/* `setup` untimed then `op` timed, with one crash per second, until the
 * timed passes add up to CRASH_TIMED_NS; total timed ns per pass. */
static int fs_crash_passes(fs_step setup, fs_step op, int smoke, double *ns)
{
	if (dom_ready() < 0)
		return -1;
	long rec0 = 0, rec1 = 0;
	if (dom_recovery("recoveries", &rec0) < 0)
		return -1;
	if (dom_write("period_ns", CRASH_PERIOD_NS) < 0)
		return -1;
	double timed = 0;
	int passes = 0, r = 0;
	while (passes < (smoke ? 1 : CRASH_MAX_PASSES) &&
	       (passes == 0 || timed < CRASH_TIMED_NS)) {
		if (setup && (r = setup()) < 0)
			break;
		if (!smoke)
			b_inner_on();
		double t0 = b_now_ns();
		r = op();
		double t = b_now_ns() - t0;
		if (!smoke)
			b_inner_off(fs_ops_per_run);
		if (r < 0)
			break;
		timed += t;
		passes++;
	}
	if (dom_write("period_ns", 0) < 0 || r < 0)
		return -1;
	if (dom_recovery("recoveries", &rec1) < 0)
		return -1;
	b_printf("BENCH-NOTE crash row: %d passes, %.3f s timed, %ld recoveries\n",
		 passes, timed / 1e9, rec1 - rec0);
	*ns = timed / passes;
	return 0;
}

static int run_fs_seq_read_crash(int smoke, double *ns)
{
	return fs_crash_passes(fs_big_cold, fs_read_big, smoke, ns);
}

static int run_fs_seq_write_crash(int smoke, double *ns)
{
	return fs_crash_passes(fs_drop_big, fs_write_new, smoke, ns);
}

/* One forced crash, then a read of uncached data: the recovery time the
 * shadow measured for it (median of RECOVERY_REPS). */
static int run_blk_recovery(int smoke, double *ns)
{
	if (dom_ready() < 0 || fs_make_big() < 0)
		return -1;
	int reps = smoke || b_profile ? 1 : RECOVERY_REPS;
	double per[RECOVERY_REPS];
	for (int i = 0; i < reps; i++) {
		long before = 0, after = 0, last = 0;
		if (fs_remount() < 0 || dom_recovery("recoveries", &before) < 0)
			return -1;
		int fd = open(FS_BIG, O_RDONLY);
		if (fd < 0)
			return b_sysfail("open " FS_BIG);
		if (dom_write("crash", 1) < 0) {
			close(fd);
			return -1;
		}
		ssize_t n = pread(fd, fs_buf, 4096, (off_t)i * (8L << 20));
		close(fd);
		if (n != 4096)
			return n < 0 ? b_sysfail("pread") : b_fail(0, "short read");
		if (dom_recovery("recoveries", &after) < 0 ||
		    dom_recovery("last_ns", &last) < 0)
			return -1;
		if (after != before + 1)
			return b_fail(0, "%ld recoveries after one crash",
				      after - before);
		per[i] = (double)last;
	}
	qsort(per, (size_t)reps, sizeof per[0], b_cmp);
	*ns = per[reps / 2];
	return 0;
}

/* ---- random reads ----------------------------------------------------- */

static int fs_rand_reads(void)
{
	int fd = open(FS_BIG, O_RDONLY);
	if (fd < 0)
		return b_sysfail("open " FS_BIG);
	uint32_t x = 0x2545F491u;
	const long pages = FS_BIG_SIZE / PAGE;
	int r = 0;
	for (int i = 0; i < FS_RAND_READS && r == 0; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		off_t off = (off_t)(x % (uint32_t)pages) * PAGE;
		if (pread(fd, fs_buf, PAGE, off) != PAGE)
			r = b_sysfail("pread");
	}
	close(fd);
	return r;
}

static int run_fs_rand_read_4k(int smoke, double *ns)
{
	fs_ops_per_run = FS_RAND_READS;
	if (fs_median(fs_big_cold, fs_rand_reads, smoke, ns) < 0)
		return -1;
	*ns /= FS_RAND_READS;
	return 0;
}

/* ---- lat_fs: create and delete --------------------------------------- */

static long fs_file_size;
static int fs_file_count;

static void fs_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "%s/lat/%d", fs_lat_root, i);
}

static int fs_create_files(void)
{
	char name[64];
	for (int i = 0; i < FS_FILES; i++) {
		fs_name(name, sizeof name, i);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return b_sysfail("create");
		if (fs_file_size && write(fd, fs_buf, (size_t)fs_file_size) != fs_file_size) {
			close(fd);
			return b_sysfail("write");
		}
		close(fd);
		fs_file_count = i + 1;
	}
	return 0;
}

static int fs_delete_files(void)
{
	char name[64];
	for (int i = 0; i < fs_file_count; i++) {
		fs_name(name, sizeof name, i);
		if (unlink(name) < 0)
			return b_sysfail("unlink");
	}
	fs_file_count = 0;
	return 0;
}

/* A fresh, empty directory, with the last run's files gone and on disk. */
static int fs_fresh_dir(void)
{
	char dir[64];
	snprintf(dir, sizeof dir, "%s/lat", fs_lat_root);
	if (fs_delete_files() < 0)
		return -1;
	rmdir(dir);
	if (mkdir(dir, 0755) < 0)
		return b_sysfail("mkdir");
	sync();
	return 0;
}

/* The files exist (created untimed) and are on disk. */
static int fs_fresh_files(void)
{
	if (fs_fresh_dir() < 0 || fs_create_files() < 0)
		return -1;
	sync();
	return 0;
}

static int fs_lat(int create, long size, int smoke, double *ns)
{
	fs_file_size = size;
	fs_file_count = 0;
	fs_ops_per_run = FS_FILES;
	int r = create ? fs_median(fs_fresh_dir, fs_create_files, smoke, ns)
		       : fs_median(fs_fresh_files, fs_delete_files, smoke, ns);
	if (r < 0)
		return -1;
	*ns /= FS_FILES;
	fs_delete_files();
	return 0;
}

static int run_fs_create_0k(int smoke, double *ns)
{
	return fs_lat(1, 0, smoke, ns);
}

static int run_fs_delete_0k(int smoke, double *ns)
{
	return fs_lat(0, 0, smoke, ns);
}

static int run_fs_create_4k(int smoke, double *ns)
{
	return fs_lat(1, PAGE, smoke, ns);
}

static int run_fs_delete_4k(int smoke, double *ns)
{
	return fs_lat(0, PAGE, smoke, ns);
}

/* lat_fs's other sizes: 1 KiB and 10 KiB. */
static int run_fs_create_1k(int smoke, double *ns)
{
	return fs_lat(1, 1024, smoke, ns);
}

static int run_fs_delete_1k(int smoke, double *ns)
{
	return fs_lat(0, 1024, smoke, ns);
}

static int run_fs_create_10k(int smoke, double *ns)
{
	return fs_lat(1, 10240, smoke, ns);
}

static int run_fs_delete_10k(int smoke, double *ns)
{
	return fs_lat(0, 10240, smoke, ns);
}

/* The same on a tmpfs at TMP_DIR (no disk: the in-memory file system). */
static int tmp_lat(int create, long size, int smoke, double *ns)
{
	fs_lat_root = TMP_DIR;
	return fs_lat(create, size, smoke, ns);
}

static int run_tmpfs_create_0k(int smoke, double *ns)
{
	return tmp_lat(1, 0, smoke, ns);
}

static int run_tmpfs_delete_0k(int smoke, double *ns)
{
	return tmp_lat(0, 0, smoke, ns);
}

static int run_tmpfs_create_1k(int smoke, double *ns)
{
	return tmp_lat(1, 1024, smoke, ns);
}

static int run_tmpfs_delete_1k(int smoke, double *ns)
{
	return tmp_lat(0, 1024, smoke, ns);
}

static int run_tmpfs_create_4k(int smoke, double *ns)
{
	return tmp_lat(1, PAGE, smoke, ns);
}

static int run_tmpfs_delete_4k(int smoke, double *ns)
{
	return tmp_lat(0, PAGE, smoke, ns);
}

static int run_tmpfs_create_10k(int smoke, double *ns)
{
	return tmp_lat(1, 10240, smoke, ns);
}

static int run_tmpfs_delete_10k(int smoke, double *ns)
{
	return tmp_lat(0, 10240, smoke, ns);
}

/* ---- fsync ------------------------------------------------------------ */

#define FS_FSYNC_OPS 50
static int fs_sync_fd = -1;

static int fs_sync_file(void)
{
	if (fs_sync_fd >= 0)
		return 0;
	fs_sync_fd = open(FS_DIR "/syncme", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fs_sync_fd < 0)
		return b_sysfail("open syncme");
	if (fs_write_all(fs_sync_fd, FS_IO) < 0 || fsync(fs_sync_fd) < 0)
		return b_sysfail("fsync");
	return 0;
}

static int fs_fsyncs(void)
{
	for (int i = 0; i < FS_FSYNC_OPS; i++) {
		off_t off = (off_t)(i % (FS_IO / PAGE)) * PAGE;
		if (pwrite(fs_sync_fd, fs_buf, PAGE, off) != PAGE)
			return b_sysfail("pwrite");
		if (fsync(fs_sync_fd) < 0)
			return b_sysfail("fsync");
	}
	return 0;
}

static int run_fs_fsync(int smoke, double *ns)
{
	fs_ops_per_run = FS_FSYNC_OPS;
	if (fs_median(fs_sync_file, fs_fsyncs, smoke, ns) < 0)
		return -1;
	*ns /= FS_FSYNC_OPS;
	close(fs_sync_fd);
	unlink(FS_DIR "/syncme");
	return 0;
}

#endif
