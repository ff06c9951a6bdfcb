/* /dev/random and /dev/urandom: device numbers, reads of any size return
 * data (not all zero, different each time), writes are accepted,
 * getrandom agrees in behaviour (GRND_NONBLOCK, GRND_RANDOM). */
#include "next.h"
#include <sys/random.h>

static int nonzero(const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 1;
	return 0;
}

int main(void)
{
	unsigned char a[512], b[512];
	struct stat st;
	int fd;

	CHECK_EQ(stat("/dev/random", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 1);
	CHECK_EQ(minor(st.st_rdev), 8);
	CHECK_EQ(stat("/dev/urandom", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 1);
	CHECK_EQ(minor(st.st_rdev), 9);

	fd = open("/dev/urandom", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, a, sizeof a), (long)sizeof a);
	CHECK_EQ(read(fd, b, sizeof b), (long)sizeof b);
	CHECK(nonzero(a, sizeof a));
	CHECK(memcmp(a, b, sizeof a) != 0);
	CHECK_EQ(read(fd, a, 1), 1);
	close(fd);

	fd = open("/dev/random", O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, a, 64), 64);
	CHECK(nonzero(a, 64));
	/* Writing mixes data in; allowed for anyone with write access. */
	CHECK_EQ(write(fd, "entropy?", 8), 8);
	close(fd);

	CHECK_EQ(getrandom(a, sizeof a, GRND_NONBLOCK), (long)sizeof a);
	CHECK_EQ(getrandom(b, 16, GRND_RANDOM), 16);
	CHECK(nonzero(a, sizeof a));
	DONE();
}
