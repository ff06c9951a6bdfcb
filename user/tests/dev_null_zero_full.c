/* /dev/null, /dev/zero, /dev/full: device numbers, reads (EOF, zeros,
 * zeros), writes (swallowed, swallowed, ENOSPC), seeking, mmap of
 * /dev/zero, poll readiness. */
#include "next.h"

static void check_dev(const char *path, unsigned maj, unsigned min)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), maj);
	CHECK_EQ(minor(st.st_rdev), min);
	CHECK_EQ(st.st_mode & 0666, 0666);
}

int main(void)
{
	static char buf[100000];
	struct pollfd pf;
	int fd, i, bad;
	char *m;

	check_dev("/dev/null", 1, 3);
	check_dev("/dev/zero", 1, 5);
	check_dev("/dev/full", 1, 7);

	fd = open("/dev/null", O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 0);
	CHECK_EQ(write(fd, buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(lseek(fd, 12345, SEEK_SET), 0);
	CHECK_EQ(pwrite(fd, buf, 10, 1000), 10);
	pf.fd = fd;
	pf.events = POLLIN | POLLOUT;
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLOUT);
	close(fd);

	fd = open("/dev/zero", O_RDWR);
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(read(fd, buf, sizeof buf), (long)sizeof buf);
	for (i = 0, bad = 0; i < (int)sizeof buf; i++)
		bad += buf[i] != 0;
	CHECK_EQ(bad, 0);
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 0);
	/* A private mapping of /dev/zero is zeroed anonymous memory. */
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		CHECK_EQ(m[0], 0);
		CHECK_EQ(m[8191], 0);
		m[5] = 7;
		CHECK_EQ(m[5], 7);
		munmap(m, 8192);
	}
	close(fd);

	fd = open("/dev/full", O_RDWR);
	CHECK_ERR(write(fd, "a", 1), ENOSPC);
	memset(buf, 'x', 64);
	CHECK_EQ(read(fd, buf, 64), 64);
	CHECK_EQ(buf[0], 0);
	CHECK_EQ(buf[63], 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	close(fd);
	DONE();
}
