/* Record lock ranges: splitting by a partial unlock, merging, l_len 0 to
 * EOF (and beyond), negative l_len, SEEK_CUR/SEEK_END relative starts,
 * upgrade and downgrade within one process; seen through F_GETLK of
 * another process. */
#include "next.h"

static int lk(int fd, short type, short whence, off_t start, off_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof fl);
	fl.l_type = type;
	fl.l_whence = whence;
	fl.l_start = start;
	fl.l_len = len;
	return fcntl(fd, F_SETLK, &fl);
}

static char path[PATH_MAX];

/* In a child: the first lock conflicting with a write lock on [s, s+l). */
static struct flock probe(off_t s, off_t l)
{
	struct flock fl;
	int p[2];
	pid_t pid;

	memset(&fl, 0, sizeof fl);
	if (pipe(p) != 0)
		return fl;
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDWR);
		struct flock f;

		memset(&f, 0, sizeof f);
		f.l_type = F_WRLCK;
		f.l_whence = SEEK_SET;
		f.l_start = s;
		f.l_len = l;
		if (fcntl(fd, F_GETLK, &f) != 0)
			f.l_type = -1;
		(void)!write(p[1], &f, sizeof f);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &fl, sizeof fl) != sizeof fl)
		fl.l_type = -2;
	close(p[0]);
	t_wait(pid);
	return fl;
}

#define EXPECT(s, l, type, es, el)                                       \
	do {                                                             \
		struct flock f_ = probe((s), (l));                       \
		CHECK_EQ(f_.l_type, (type));                             \
		if ((type) != F_UNLCK) {                                 \
			CHECK_EQ(f_.l_start, (es));                      \
			CHECK_EQ(f_.l_len, (el));                        \
		}                                                        \
	} while (0)

int main(void)
{
	char dir[PATH_MAX];
	int fd;

	if (t_mktmp("lock_fcntl_ranges", dir, sizeof dir) != 0)
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);
	fd = open(path, O_RDWR);

	/* [0,100) then unlock [40,60): two pieces. */
	CHECK_EQ(lk(fd, F_WRLCK, SEEK_SET, 0, 100), 0);
	CHECK_EQ(lk(fd, F_UNLCK, SEEK_SET, 40, 20), 0);
	EXPECT(0, 0, F_WRLCK, 0, 40);
	EXPECT(40, 20, F_UNLCK, 0, 0);
	EXPECT(50, 100, F_WRLCK, 60, 40);
	/* Filling the hole merges them again. */
	CHECK_EQ(lk(fd, F_WRLCK, SEEK_SET, 40, 20), 0);
	EXPECT(30, 1, F_WRLCK, 0, 100);
	/* Downgrade the middle to a read lock: three pieces. */
	CHECK_EQ(lk(fd, F_RDLCK, SEEK_SET, 40, 20), 0);
	EXPECT(45, 1, F_RDLCK, 40, 20);
	EXPECT(0, 1, F_WRLCK, 0, 40);
	CHECK_EQ(lk(fd, F_UNLCK, SEEK_SET, 0, 0), 0);
	EXPECT(0, 0, F_UNLCK, 0, 0);

	/* l_len 0: to EOF and beyond (reported as length 0). */
	CHECK_EQ(lk(fd, F_WRLCK, SEEK_SET, 1000, 0), 0);
	EXPECT(5000000, 1, F_WRLCK, 1000, 0);
	EXPECT(0, 1000, F_UNLCK, 0, 0);
	CHECK_EQ(lk(fd, F_UNLCK, SEEK_SET, 0, 0), 0);

	/* Negative length: [start+len, start). */
	CHECK_EQ(lk(fd, F_WRLCK, SEEK_SET, 100, -30), 0);
	EXPECT(0, 0, F_WRLCK, 70, 30);
	CHECK_ERR(lk(fd, F_WRLCK, SEEK_SET, 10, -30), EINVAL);
	CHECK_EQ(lk(fd, F_UNLCK, SEEK_SET, 0, 0), 0);

	/* SEEK_CUR and SEEK_END. */
	CHECK_EQ(lseek(fd, 5, SEEK_SET), 5);
	CHECK_EQ(lk(fd, F_WRLCK, SEEK_CUR, 2, 3), 0);
	EXPECT(0, 0, F_WRLCK, 7, 3);
	CHECK_EQ(lk(fd, F_UNLCK, SEEK_SET, 0, 0), 0);
	CHECK_EQ(lk(fd, F_WRLCK, SEEK_END, -4, 2), 0);
	EXPECT(0, 0, F_WRLCK, 6, 2);
	CHECK_EQ(lk(fd, F_UNLCK, SEEK_SET, 0, 0), 0);

	/* Adjacent locks of the same type coalesce. */
	CHECK_EQ(lk(fd, F_RDLCK, SEEK_SET, 0, 10), 0);
	CHECK_EQ(lk(fd, F_RDLCK, SEEK_SET, 10, 10), 0);
	EXPECT(0, 0, F_RDLCK, 0, 20);
	close(fd);
	t_rmtree(dir);
	DONE();
}
