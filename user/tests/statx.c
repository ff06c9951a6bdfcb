/* statx (raw syscall, own struct): basic fields, AT_EMPTY_PATH, errors. */
#include "t.h"
#include <sys/sysmacros.h>

struct x_timestamp {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t reserved;
};

struct x_statx {
	uint32_t stx_mask;
	uint32_t stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink;
	uint32_t stx_uid;
	uint32_t stx_gid;
	uint16_t stx_mode;
	uint16_t spare0;
	uint64_t stx_ino;
	uint64_t stx_size;
	uint64_t stx_blocks;
	uint64_t stx_attributes_mask;
	struct x_timestamp stx_atime, stx_btime, stx_ctime, stx_mtime;
	uint32_t stx_rdev_major, stx_rdev_minor;
	uint32_t stx_dev_major, stx_dev_minor;
	uint64_t spare[14];
};

#define X_STATX_TYPE 0x1U
#define X_STATX_MODE 0x2U
#define X_STATX_NLINK 0x4U
#define X_STATX_UID 0x8U
#define X_STATX_GID 0x10U
#define X_STATX_INO 0x100U
#define X_STATX_SIZE 0x200U
#define X_STATX_BASIC_STATS 0x7ffU
#define X_STATX__RESERVED 0x80000000U
#define X_AT_STATX_FORCE_SYNC 0x2000
#define X_AT_STATX_DONT_SYNC 0x4000

static long statx_raw(int dfd, const char *p, int flags, unsigned mask,
		      struct x_statx *b)
{
	return syscall(SYS_statx, dfd, p, flags, mask, b);
}

int main(void)
{
	char dir[128], path[256];
	struct x_statx sx;
	struct stat st;
	int dfd, fd;
	const unsigned need = X_STATX_TYPE | X_STATX_MODE | X_STATX_NLINK |
			      X_STATX_UID | X_STATX_GID | X_STATX_INO |
			      X_STATX_SIZE;

	CHECK_EQ(sizeof(struct x_statx), 256);
	if (t_mktmp("statx", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "abcdefgh", 8, 0640), 0);
	CHECK_EQ(stat(path, &st), 0);

	/* Absolute path, basic stats; fields agree with stat(). */
	memset(&sx, 0xff, sizeof sx);
	CHECK_EQ(statx_raw(AT_FDCWD, path, 0, X_STATX_BASIC_STATS, &sx), 0);
	CHECK_EQ(sx.stx_mask & need, need);
	CHECK(S_ISREG(sx.stx_mode));
	CHECK_EQ(sx.stx_mode, st.st_mode);
	CHECK_EQ(sx.stx_size, 8);
	CHECK_EQ(sx.stx_ino, st.st_ino);
	CHECK_EQ(sx.stx_nlink, 1);
	CHECK_EQ(sx.stx_uid, st.st_uid);
	CHECK_EQ(sx.stx_gid, st.st_gid);
	CHECK_EQ(sx.stx_dev_major, major(st.st_dev));
	CHECK_EQ(sx.stx_dev_minor, minor(st.st_dev));
	CHECK_EQ(sx.stx_blksize, st.st_blksize);
	CHECK_EQ(sx.stx_mtime.tv_sec, st.st_mtime);

	/* Relative to a directory fd. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	memset(&sx, 0, sizeof sx);
	CHECK_EQ(statx_raw(dfd, "f", 0, X_STATX_BASIC_STATS, &sx), 0);
	CHECK_EQ(sx.stx_ino, st.st_ino);

	/* AT_EMPTY_PATH on an open fd; directory type reported. */
	memset(&sx, 0, sizeof sx);
	CHECK_EQ(statx_raw(dfd, "", AT_EMPTY_PATH, X_STATX_BASIC_STATS, &sx), 0);
	CHECK(S_ISDIR(sx.stx_mode));
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	memset(&sx, 0, sizeof sx);
	CHECK_EQ(statx_raw(fd, "", AT_EMPTY_PATH, X_STATX_BASIC_STATS, &sx), 0);
	CHECK_EQ(sx.stx_ino, st.st_ino);

	/* mask 0 is valid. */
	CHECK_EQ(statx_raw(AT_FDCWD, path, 0, 0, &sx), 0);

	/* ENOENT, ENOTDIR. */
	CHECK_ERR(statx_raw(dfd, "missing", 0, X_STATX_BASIC_STATS, &sx), ENOENT);
	CHECK_ERR(statx_raw(dfd, "", 0, X_STATX_BASIC_STATS, &sx), ENOENT);
	CHECK_ERR(statx_raw(dfd, "f/x", 0, X_STATX_BASIC_STATS, &sx), ENOTDIR);
	CHECK_ERR(statx_raw(fd, "x", 0, X_STATX_BASIC_STATS, &sx), ENOTDIR);

	/* EBADF: relative path with an invalid dirfd. */
	CHECK_ERR(statx_raw(-1, "f", 0, X_STATX_BASIC_STATS, &sx), EBADF);
	CHECK_ERR(statx_raw(999, "f", 0, X_STATX_BASIC_STATS, &sx), EBADF);

	/* EINVAL: reserved mask bit, bad flags, conflicting sync flags. */
	CHECK_ERR(statx_raw(dfd, "f", 0, X_STATX__RESERVED, &sx), EINVAL);
	CHECK_ERR(statx_raw(dfd, "f", 0x40000000, X_STATX_BASIC_STATS, &sx),
		  EINVAL);
	CHECK_ERR(statx_raw(dfd, "f", X_AT_STATX_FORCE_SYNC | X_AT_STATX_DONT_SYNC,
			    X_STATX_BASIC_STATS, &sx), EINVAL);

	/* EFAULT: bad path, bad buffer. */
	CHECK_ERR(statx_raw(dfd, BAD_PTR, 0, X_STATX_BASIC_STATS, &sx), EFAULT);
	CHECK_ERR(statx_raw(dfd, "f", 0, X_STATX_BASIC_STATS, BAD_PTR2), EFAULT);

	CHECK_EQ(close(fd), 0);
	CHECK_EQ(close(dfd), 0);
	t_rmtree(dir);
	DONE();
}
