/* getrandom: fills buffers with differing data; flags; EFAULT/EINVAL. */
#include "t.h"
#include <sys/random.h>

#define X_GRND_NONBLOCK 1

static long gr_raw(void *b, size_t n, unsigned f)
{
	return syscall(SYS_getrandom, b, n, f);
}

int main(void)
{
	unsigned char a[64], b[64], big[4096];
	int i, zeros, diff;

	/* Fills the whole (small) buffer. */
	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	CHECK_EQ(gr_raw(a, sizeof a, 0), (long)sizeof a);
	CHECK_EQ(gr_raw(b, sizeof b, 0), (long)sizeof b);

	/* Two calls differ; the data is not all zero. */
	CHECK(memcmp(a, b, sizeof a) != 0);
	zeros = 0;
	for (i = 0; i < (int)sizeof a; i++)
		zeros += a[i] == 0;
	CHECK(zeros < (int)sizeof a);

	/* Partial fill: bytes past the requested length stay untouched. */
	memset(a, 0xee, sizeof a);
	CHECK_EQ(gr_raw(a, 16, 0), 16);
	diff = 0;
	for (i = 16; i < (int)sizeof a; i++)
		diff += a[i] != 0xee;
	CHECK_EQ(diff, 0);

	/* Larger buffer and the GRND_NONBLOCK flag. */
	CHECK_EQ(gr_raw(big, sizeof big, X_GRND_NONBLOCK), (long)sizeof big);
	CHECK_EQ(getrandom(big, 256, 0), 256);

	/* Zero length returns 0. */
	CHECK_EQ(gr_raw(a, 0, 0), 0);

	/* A child gets different bytes from its parent. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			unsigned char c[32];
			if (gr_raw(c, sizeof c, 0) != 32)
				_exit(2);
			_exit(memcmp(c, b, 32) != 0 ? 0 : 1);
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
	}

	/* EFAULT: bad buffer. */
	CHECK_ERR(gr_raw(BAD_PTR, 16, 0), EFAULT);
	CHECK_ERR(gr_raw(BAD_PTR2, 16, 0), EFAULT);

	/* EINVAL: unknown flags. */
	CHECK_ERR(gr_raw(a, 16, 0x100), EINVAL);
	CHECK_ERR(gr_raw(a, 16, 0xffffffffU), EINVAL);

	DONE();
}
