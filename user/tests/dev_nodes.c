/*
 * /dev holds the character devices Linux's devtmpfs has, with their
 * device numbers and modes, plus the pts and shm directories; null, zero,
 * full and urandom behave as documented in null(4), zero(4), full(4),
 * random(4).
 */
#include "t.h"
#include <sys/sysmacros.h>

struct node {
	const char *path;
	unsigned maj, min;
	mode_t perm;
};

int main(void)
{
	static const struct node nodes[] = {
		{ "/dev/null", 1, 3, 0666 },   { "/dev/zero", 1, 5, 0666 },
		{ "/dev/full", 1, 7, 0666 },   { "/dev/random", 1, 8, 0666 },
		{ "/dev/urandom", 1, 9, 0666 }, { "/dev/tty", 5, 0, 0666 },
		{ "/dev/console", 5, 1, 0600 },
	};
	char buf[64];
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		CHECK_EQ(stat(nodes[i].path, &st), 0);
		CHECK(S_ISCHR(st.st_mode));
		CHECK_EQ(major(st.st_rdev), nodes[i].maj);
		CHECK_EQ(minor(st.st_rdev), nodes[i].min);
		if (nodes[i].maj == 1)
			CHECK_EQ(st.st_mode & 07777, nodes[i].perm);
	}
	CHECK_EQ(stat("/dev/pts", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(stat("/dev/shm", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 01777);

	fd = open("/dev/null", O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 0);
	CHECK_EQ(write(fd, "xyz", 3), 3);
	close(fd);

	fd = open("/dev/zero", O_RDONLY);
	CHECK(fd >= 0);
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(read(fd, buf, sizeof buf), (long)sizeof buf);
	for (i = 0; i < sizeof buf; i++)
		if (buf[i] != 0)
			break;
	CHECK_EQ(i, sizeof buf);
	close(fd);

	fd = open("/dev/full", O_RDWR);
	CHECK(fd >= 0);
	CHECK_ERR(write(fd, "x", 1), ENOSPC);
	CHECK_EQ(read(fd, buf, 8), 8);
	close(fd);

	fd = open("/dev/urandom", O_RDONLY);
	CHECK(fd >= 0);
	{
		char a[32], b[32];
		CHECK_EQ(read(fd, a, sizeof a), (long)sizeof a);
		CHECK_EQ(read(fd, b, sizeof b), (long)sizeof b);
		CHECK(memcmp(a, b, sizeof a) != 0);
	}
	close(fd);

	/* /dev/shm is a writable tmpfs. */
	{
		char path[64];
		snprintf(path, sizeof path, "/dev/shm/dev_nodes.%d", getpid());
		CHECK_EQ(t_write_file(path, "shm", 3, 0600), 0);
		CHECK_EQ(unlink(path), 0);
	}
	DONE();
}
