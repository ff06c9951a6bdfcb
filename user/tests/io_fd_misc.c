/* The old getdents(2), close_range(2), and the page-cache hints
 * fadvise64(2), readahead(2) and sync_file_range(2) with Linux's errors. */
#include "next.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct old_dirent {
	unsigned long d_ino;
	unsigned long d_off;
	unsigned short d_reclen;
	char d_name[];
};

static void test_getdents(const char *dir)
{
	char path[PATH_MAX], buf[4096];
	int fd, seen_f = 0, seen_d = 0, seen_dot = 0;
	long n;
	struct stat st;

	t_join(path, sizeof path, dir, "file");
	CHECK_EQ(t_write_file(path, "x", 1, 0644), 0);
	t_join(path, sizeof path, dir, "sub");
	CHECK_EQ(mkdir(path, 0755), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	while ((n = syscall(SYS_getdents, fd, buf, sizeof buf)) > 0) {
		for (long pos = 0; pos < n;) {
			struct old_dirent *d = (void *)(buf + pos);
			unsigned char type = buf[pos + d->d_reclen - 1];
			CHECK(d->d_reclen % 8 == 0);
			CHECK(d->d_reclen >= 18 + strlen(d->d_name) + 2);
			if (!strcmp(d->d_name, "file")) {
				seen_f++;
				CHECK_EQ(type, DT_REG);
				t_join(path, sizeof path, dir, "file");
				CHECK_EQ(stat(path, &st), 0);
				CHECK_EQ(d->d_ino, st.st_ino);
			} else if (!strcmp(d->d_name, "sub")) {
				seen_d++;
				CHECK_EQ(type, DT_DIR);
			} else if (!strcmp(d->d_name, ".")) {
				seen_dot++;
				CHECK_EQ(type, DT_DIR);
			}
			pos += d->d_reclen;
		}
	}
	CHECK_EQ(n, 0);
	CHECK_EQ(seen_f, 1);
	CHECK_EQ(seen_d, 1);
	CHECK_EQ(seen_dot, 1);
	/* d_off continues the listing: rewind and step one record. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	n = syscall(SYS_getdents, fd, buf, 24);
	CHECK_EQ(n, 24); /* "." */
	/* Errors: a buffer too small for one entry, not a directory, bad fd,
	 * bad buffer. */
	CHECK_ERR(syscall(SYS_getdents, fd, buf, 10), EINVAL);
	CHECK_ERR(syscall(SYS_getdents, fd, BAD_PTR2, sizeof buf), EFAULT);
	CHECK_ERR(syscall(SYS_getdents, -1, buf, sizeof buf), EBADF);
	close(fd);
	t_join(path, sizeof path, dir, "file");
	fd = open(path, O_RDONLY);
	CHECK_ERR(syscall(SYS_getdents, fd, buf, sizeof buf), ENOTDIR);
	close(fd);
}

static int is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static void test_close_range(void)
{
	int base = 40;

	for (int i = 0; i < 5; i++)
		CHECK_EQ(dup2(0, base + i), base + i);
	/* Closes what is open in [first, last]; gaps are fine. */
	CHECK_EQ(syscall(SYS_close_range, base + 1, base + 2, 0), 0);
	CHECK(is_open(base) && !is_open(base + 1) && !is_open(base + 2) && is_open(base + 3));
	CHECK_EQ(syscall(SYS_close_range, base + 1, base + 2, 0), 0);
	/* CLOEXEC marks instead of closing. */
	CHECK_EQ(fcntl(base + 3, F_GETFD), 0);
	CHECK_EQ(syscall(SYS_close_range, base + 3, ~0U, CLOSE_RANGE_CLOEXEC), 0);
	CHECK(is_open(base + 3) && is_open(base + 4));
	CHECK_EQ(fcntl(base + 3, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(base + 4, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(base, F_GETFD), 0);
	/* Up to ~0U closes everything from first. */
	CHECK_EQ(syscall(SYS_close_range, base, ~0U, 0), 0);
	CHECK(!is_open(base) && !is_open(base + 3) && !is_open(base + 4));
	CHECK(is_open(0) && is_open(1));
	/* Errors. */
	CHECK_ERR(syscall(SYS_close_range, 5, 4, 0), EINVAL);
	CHECK_ERR(syscall(SYS_close_range, 3, 4, 1), EINVAL);
	CHECK_ERR(syscall(SYS_close_range, 3, 4, 8), EINVAL);
	CHECK_EQ(syscall(SYS_close_range, 1000, 2000, 0), 0);

	/* CLOSE_RANGE_UNSHARE: a CLONE_FILES child closing in its own copy
	 * leaves the parent's descriptors alone; without it they go. */
	for (int unshare = 0; unshare < 2; unshare++) {
		CHECK_EQ(dup2(0, base), base);
		long pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
		if (pid == 0) {
			long r = syscall(SYS_close_range, base, base,
					 unshare ? CLOSE_RANGE_UNSHARE : 0);
			_exit(r == 0 && !is_open(base) ? 0 : 1);
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
		CHECK_EQ(is_open(base), unshare);
		close(base);
	}
	/* After unsharing, new descriptors are private too. */
	{
		long pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
		if (pid == 0) {
			if (syscall(SYS_close_range, ~0U, ~0U, CLOSE_RANGE_UNSHARE) != 0)
				_exit(1);
			_exit(dup2(0, base) == base ? 0 : 1);
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
		CHECK(!is_open(base));
	}
}

static void test_hints(const char *dir)
{
	char path[PATH_MAX];
	int fd, ro, wo, d, op, p[2], n;

	t_join(path, sizeof path, dir, "hint");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);
	fd = open(path, O_RDWR);
	ro = open(path, O_RDONLY);
	wo = open(path, O_WRONLY);
	op = open(path, O_PATH);
	d = open(dir, O_RDONLY | O_DIRECTORY);
	n = open("/dev/null", O_RDWR);
	CHECK(fd >= 0 && ro >= 0 && wo >= 0 && op >= 0 && d >= 0 && n >= 0);
	CHECK_EQ(pipe(p), 0);

	/* fadvise64: any advice 0..5 on anything but a pipe; a negative
	 * offset is fine, a negative length is not. */
	for (int adv = 0; adv <= 5; adv++)
		CHECK_EQ(syscall(SYS_fadvise64, fd, 0L, 0L, adv), 0);
	CHECK_EQ(syscall(SYS_fadvise64, fd, -1L, 100L, POSIX_FADV_WILLNEED), 0);
	CHECK_EQ(syscall(SYS_fadvise64, wo, 0L, 0L, POSIX_FADV_DONTNEED), 0);
	CHECK_EQ(syscall(SYS_fadvise64, d, 0L, 0L, POSIX_FADV_RANDOM), 0);
	CHECK_EQ(syscall(SYS_fadvise64, n, 0L, 0L, POSIX_FADV_NORMAL), 0);
	CHECK_ERR(syscall(SYS_fadvise64, fd, 0L, -1L, POSIX_FADV_NORMAL), EINVAL);
	CHECK_ERR(syscall(SYS_fadvise64, fd, 0L, 0L, 6), EINVAL);
	CHECK_ERR(syscall(SYS_fadvise64, fd, 0L, 0L, -1), EINVAL);
	CHECK_ERR(syscall(SYS_fadvise64, p[0], 0L, 0L, POSIX_FADV_NORMAL), ESPIPE);
	CHECK_ERR(syscall(SYS_fadvise64, p[1], 0L, 0L, 99), ESPIPE);
	CHECK_ERR(syscall(SYS_fadvise64, -1, 0L, 0L, 99), EBADF);
	CHECK_ERR(syscall(SYS_fadvise64, op, 0L, 0L, 0), EBADF);
	CHECK_EQ(posix_fadvise(fd, 0, 10, POSIX_FADV_SEQUENTIAL), 0);
	CHECK_EQ(posix_fadvise(p[0], 0, 10, POSIX_FADV_SEQUENTIAL), ESPIPE);

	/* readahead: regular files open for reading only. */
	CHECK_EQ(readahead(fd, 0, 4096), 0);
	CHECK_EQ(readahead(ro, 100, 1), 0);
	CHECK_EQ(readahead(ro, -1, 1), 0);
	CHECK_ERR(readahead(wo, 0, 10), EBADF);
	CHECK_ERR(readahead(op, 0, 10), EBADF);
	CHECK_ERR(readahead(-1, 0, 10), EBADF);
	CHECK_ERR(readahead(p[0], 0, 10), EINVAL);
	CHECK_ERR(readahead(d, 0, 10), EINVAL);
	CHECK_ERR(readahead(n, 0, 10), EINVAL);

	/* sync_file_range: EBADF first, then flags and range, then type. */
	CHECK_EQ(sync_file_range(fd, 0, 0, 0), 0);
	CHECK_EQ(sync_file_range(wo, 0, 10, SYNC_FILE_RANGE_WAIT_BEFORE |
				 SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER), 0);
	CHECK_EQ(sync_file_range(ro, 5, 100, SYNC_FILE_RANGE_WRITE), 0);
	CHECK_EQ(sync_file_range(d, 0, 0, 0), 0);
	CHECK_ERR(sync_file_range(-1, -1, 0, 8), EBADF);
	CHECK_ERR(sync_file_range(op, 0, 0, 0), EBADF);
	CHECK_ERR(sync_file_range(fd, 0, 0, 8), EINVAL);
	CHECK_ERR(sync_file_range(fd, -1, 0, 0), EINVAL);
	CHECK_ERR(sync_file_range(fd, 0, -1, 0), EINVAL);
	CHECK_ERR(sync_file_range(fd, 1, 0x7fffffffffffffffL, 0), EINVAL);
	CHECK_ERR(sync_file_range(p[0], 0, 0, 8), EINVAL);
	CHECK_ERR(sync_file_range(p[0], 0, 0, 0), ESPIPE);
	CHECK_ERR(sync_file_range(n, 0, 0, 0), ESPIPE);

	close(fd);
	close(ro);
	close(wo);
	close(op);
	close(d);
	close(n);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	char dir[PATH_MAX];

	if (t_mktmp("io_fd_misc", dir, sizeof dir))
		DONE();
	test_getdents(dir);
	test_close_range();
	test_hints(dir);
	t_rmtree(dir);
	DONE();
}
