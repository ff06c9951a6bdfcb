/* select: read/write/except sets, timeout written back (Linux; raw
 * syscall, since musl's select() goes through pselect6 with a copy), EBADF
 * for a closed fd in a set, EINVAL for negative nfds or a bad timeout, fds
 * at or above nfds ignored. */
#include "next.h"
#include <sys/select.h>

int main(void)
{
	fd_set rs, ws, es;
	struct timeval tv;
	int p[2], q[2], closed;
	long long t0;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);

	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_ZERO(&es);
	FD_SET(p[0], &rs);
	FD_SET(q[0], &rs);
	FD_SET(p[1], &ws);
	FD_SET(p[0], &es);
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	/* Only p's write end is ready. */
	CHECK_EQ(select(q[0] + 1 > p[1] + 1 ? q[0] + 1 : p[1] + 1, &rs, &ws, &es, &tv), 1);
	CHECK(!FD_ISSET(p[0], &rs));
	CHECK(!FD_ISSET(q[0], &rs));
	CHECK(FD_ISSET(p[1], &ws));
	CHECK(!FD_ISSET(p[0], &es));

	/* Data on q. */
	CHECK_EQ(write(q[1], "d", 1), 1);
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	FD_SET(q[0], &rs);
	tv.tv_sec = 5;
	tv.tv_usec = 0;
	CHECK_EQ(syscall(SYS_select, 64, &rs, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(q[0], &rs));
	CHECK(!FD_ISSET(p[0], &rs));
	/* Linux writes back the time left. */
	CHECK(tv.tv_sec >= 4 && tv.tv_sec <= 5);

	/* Timeout: 0 after at least the time, set cleared, tv zeroed. */
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	tv.tv_sec = 0;
	tv.tv_usec = 30000;
	t0 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(syscall(SYS_select, p[0] + 1, &rs, NULL, NULL, &tv), 0);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
	CHECK(!FD_ISSET(p[0], &rs));
	CHECK_EQ(tv.tv_sec, 0);
	CHECK_EQ(tv.tv_usec, 0);

	/* EOF counts as readable. */
	close(p[1]);
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	tv.tv_sec = tv.tv_usec = 0;
	CHECK_EQ(select(p[0] + 1, &rs, NULL, NULL, &tv), 1);

	/* An fd at nfds or above is not looked at. */
	FD_ZERO(&rs);
	FD_SET(q[0], &rs);
	tv.tv_sec = tv.tv_usec = 0;
	CHECK_EQ(select(q[0], &rs, NULL, NULL, &tv), 0);

	/* Errors. */
	closed = dup(q[0]);
	close(closed);
	FD_ZERO(&rs);
	FD_SET(closed, &rs);
	tv.tv_sec = tv.tv_usec = 0;
	CHECK_ERR(select(closed + 1, &rs, NULL, NULL, &tv), EBADF);
	CHECK_ERR(select(-1, NULL, NULL, NULL, &tv), EINVAL);
	tv.tv_sec = -1;
	CHECK_ERR(syscall(SYS_select, 1, NULL, NULL, NULL, &tv), EINVAL);
	/* (tv_usec >= 1000000 is normalised by Linux, not rejected.) */
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	CHECK_ERR(syscall(SYS_select, 4, BAD_PTR2, NULL, NULL, &tv), EFAULT);
	/* select(0, ..., timeout) is a sleep. */
	tv.tv_sec = 0;
	tv.tv_usec = 1000;
	CHECK_EQ(select(0, NULL, NULL, NULL, &tv), 0);
	close(p[0]);
	close(q[0]);
	close(q[1]);
	DONE();
}
