/* getdents64 (raw syscall): parse linux_dirent64 records, errors. */
#include "t.h"

struct x_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	uint16_t d_reclen;
	uint8_t d_type;
	char d_name[];
};

#define X_DT_DIR 4
#define X_DT_REG 8

struct seen {
	int dot, dotdot, alpha, beta, gamma, other;
	uint64_t alpha_ino;
	int alpha_type, gamma_type, dot_type;
	int bad_record;
};

/* Parse one buffer of records; returns number of records. */
static int parse(char *buf, long n, struct seen *s)
{
	long pos = 0;
	int count = 0;

	while (pos < n) {
		struct x_dirent64 *d = (struct x_dirent64 *)(buf + pos);
		size_t namelen = strlen(d->d_name);

		if (d->d_reclen == 0 || d->d_reclen % 8 != 0 ||
		    d->d_reclen < offsetof(struct x_dirent64, d_name) + namelen + 1 ||
		    pos + d->d_reclen > n) {
			s->bad_record++;
			break;
		}
		if (!strcmp(d->d_name, ".")) {
			s->dot++;
			s->dot_type = d->d_type;
		} else if (!strcmp(d->d_name, "..")) {
			s->dotdot++;
		} else if (!strcmp(d->d_name, "alpha")) {
			s->alpha++;
			s->alpha_ino = d->d_ino;
			s->alpha_type = d->d_type;
		} else if (!strcmp(d->d_name, "beta")) {
			s->beta++;
		} else if (!strcmp(d->d_name, "gamma")) {
			s->gamma++;
			s->gamma_type = d->d_type;
		} else {
			s->other++;
		}
		pos += d->d_reclen;
		count++;
	}
	return count;
}

int main(void)
{
	char dir[128], path[256];
	char buf[4096] __attribute__((aligned(8)));
	char small[48] __attribute__((aligned(8)));
	struct seen s;
	struct stat st;
	long n;
	int fd, ffd, total, calls;

	if (t_mktmp("getdents64", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "alpha");
	CHECK_EQ(t_write_file(path, "a", 1, 0644), 0);
	CHECK_EQ(stat(path, &st), 0);
	t_join(path, sizeof path, dir, "beta");
	CHECK_EQ(t_write_file(path, "b", 1, 0644), 0);
	t_join(path, sizeof path, dir, "gamma");
	CHECK_EQ(mkdir(path, 0755), 0);

	fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);

	/* Read everything with a large buffer. */
	memset(&s, 0, sizeof s);
	total = 0;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		total += parse(buf, n, &s);
	CHECK_EQ(n, 0);
	CHECK_EQ(total, 5);
	CHECK_EQ(s.bad_record, 0);
	CHECK_EQ(s.dot, 1);
	CHECK_EQ(s.dotdot, 1);
	CHECK_EQ(s.alpha, 1);
	CHECK_EQ(s.beta, 1);
	CHECK_EQ(s.gamma, 1);
	CHECK_EQ(s.other, 0);
	CHECK_EQ(s.alpha_ino, st.st_ino);
	CHECK_EQ(s.alpha_type, X_DT_REG);
	CHECK_EQ(s.gamma_type, X_DT_DIR);
	CHECK_EQ(s.dot_type, X_DT_DIR);

	/* At the end, further calls keep returning 0. */
	CHECK_EQ(syscall(SYS_getdents64, fd, buf, sizeof buf), 0);

	/* Rewinding with lseek restarts the listing. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	memset(&s, 0, sizeof s);
	total = 0;
	calls = 0;
	/* A small buffer returns a few entries per call; none lost or repeated. */
	while ((n = syscall(SYS_getdents64, fd, small, sizeof small)) > 0) {
		total += parse(small, n, &s);
		calls++;
	}
	CHECK_EQ(n, 0);
	CHECK_EQ(total, 5);
	CHECK(calls >= 3);
	CHECK_EQ(s.bad_record, 0);
	CHECK_EQ(s.dot + s.dotdot + s.alpha + s.beta + s.gamma, 5);

	/* A removed entry disappears from a fresh listing. */
	t_join(path, sizeof path, dir, "beta");
	CHECK_EQ(unlink(path), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	memset(&s, 0, sizeof s);
	total = 0;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		total += parse(buf, n, &s);
	CHECK_EQ(total, 4);
	CHECK_EQ(s.beta, 0);

	/* EINVAL: buffer too small for even one record. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(syscall(SYS_getdents64, fd, small, 1), EINVAL);

	/* EFAULT: buffer outside the address space. */
	CHECK_ERR(syscall(SYS_getdents64, fd, BAD_PTR2, 4096), EFAULT);

	/* EBADF. */
	CHECK_ERR(syscall(SYS_getdents64, -1, buf, sizeof buf), EBADF);
	CHECK_ERR(syscall(SYS_getdents64, 999, buf, sizeof buf), EBADF);

	/* ENOTDIR: a regular file. */
	t_join(path, sizeof path, dir, "alpha");
	ffd = open(path, O_RDONLY);
	CHECK(ffd >= 0);
	CHECK_ERR(syscall(SYS_getdents64, ffd, buf, sizeof buf), ENOTDIR);
	CHECK_EQ(close(ffd), 0);

	/* readdir(3) from libc sees the same entries (uses getdents64). */
	{
		DIR *d = opendir(dir);
		struct dirent *de;
		int cnt = 0;

		CHECK(d != NULL);
		while (d && (de = readdir(d)) != NULL)
			cnt++;
		CHECK_EQ(cnt, 4);
		if (d)
			closedir(d);
	}

	CHECK_EQ(close(fd), 0);
	t_rmtree(dir);
	DONE();
}
