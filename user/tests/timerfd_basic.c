/* timerfd_create(2): a one-shot timer reads 1 once and then blocks or
 * gives EAGAIN; a periodic one counts every expiration between reads;
 * read needs 8 bytes; poll/epoll report POLLIN only with expirations
 * pending; TFD_TIMER_ABSTIME (also in the past); timerfd_gettime counts
 * down and shows the interval; settime returns the old value and drops
 * unread expirations; a blocking read sleeps until the expiration;
 * /proc/self/fd names it anon_inode:[timerfd]; TFD_CLOEXEC; errors
 * (EINVAL for bad clocks, flags, times and for a file that is no timerfd,
 * EBADF, EFAULT). */
#include "next.h"
#include <sys/epoll.h>
#include <sys/timerfd.h>

static int arm(int fd, int flags, long long val_ns, long long int_ns,
	       struct itimerspec *old)
{
	struct itimerspec its;

	its.it_value.tv_sec = val_ns / 1000000000LL;
	its.it_value.tv_nsec = val_ns % 1000000000LL;
	its.it_interval.tv_sec = int_ns / 1000000000LL;
	its.it_interval.tv_nsec = int_ns % 1000000000LL;
	return timerfd_settime(fd, flags, &its, old);
}

int main(void)
{
	struct itimerspec cur;
	struct pollfd pfd;
	uint64_t n;
	char link[64], path[64];
	long long t0, t1;
	int fd, ep, p[2];

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	CHECK(fd >= 0);
	CHECK_ERR(read(fd, &n, 8), EAGAIN);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);

	/* One-shot. */
	CHECK_EQ(arm(fd, 0, 20000000, 0, NULL), 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(poll(&pfd, 1, 5000), 1);
	CHECK(pfd.revents & POLLIN);
	CHECK_ERR(read(fd, &n, 7), EINVAL);
	CHECK_EQ(read(fd, &n, 8), 8);
	CHECK_EQ(n, 1);
	CHECK_ERR(read(fd, &n, 8), EAGAIN);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);

	/* Periodic: expirations accumulate between reads. */
	CHECK_EQ(arm(fd, 0, 10000000, 10000000, NULL), 0);
	t_msleep(100);
	CHECK_EQ(read(fd, &n, 8), 8);
	CHECK(n >= 5);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(cur.it_interval.tv_nsec, 10000000);
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
	      cur.it_value.tv_nsec <= 10000000);

	/* epoll sees it too. */
	ep = epoll_create1(0);
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 };
		struct epoll_event out;

		CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
		CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
		CHECK_EQ(out.data.u64, 7);
		CHECK(out.events & EPOLLIN);
	}
	close(ep);

	/* settime gives the old setting and drops unread expirations. */
	t_msleep(30);
	CHECK_EQ(arm(fd, 0, 5000000000LL, 0, &cur), 0);
	CHECK_EQ(cur.it_interval.tv_nsec, 10000000);
	CHECK_ERR(read(fd, &n, 8), EAGAIN);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK(cur.it_value.tv_sec >= 4 && cur.it_value.tv_sec <= 5);
	CHECK_EQ(cur.it_interval.tv_sec + cur.it_interval.tv_nsec, 0);
	CHECK_EQ(arm(fd, 0, 0, 0, NULL), 0);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);
	close(fd);

	/* Blocking read; absolute time on the realtime clock. */
	fd = timerfd_create(CLOCK_REALTIME, 0);
	CHECK(fd >= 0);
	t0 = t_now_ns(CLOCK_REALTIME);
	CHECK_EQ(arm(fd, TFD_TIMER_ABSTIME, t0 + 50000000LL, 0, NULL), 0);
	CHECK_EQ(read(fd, &n, 8), 8);
	t1 = t_now_ns(CLOCK_REALTIME);
	CHECK_EQ(n, 1);
	CHECK(t1 >= t0 + 50000000LL);
	/* An absolute time already past expires at once. */
	CHECK_EQ(arm(fd, TFD_TIMER_ABSTIME, 1000000000LL, 0, NULL), 0);
	CHECK_EQ(read(fd, &n, 8), 8);
	CHECK_EQ(n, 1);
	CHECK_ERR(write(fd, &n, 8), EINVAL);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	memset(link, 0, sizeof link);
	CHECK(readlink(path, link, sizeof link - 1) > 0);
	CHECK(strcmp(link, "anon_inode:[timerfd]") == 0);
	close(fd);

	/* Flags and errors. */
	fd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_ERR(arm(fd, 4, 1000, 0, NULL), EINVAL);
	{
		struct itimerspec bad = { { 0, 0 }, { 0, 1000000000L } };

		CHECK_ERR(timerfd_settime(fd, 0, &bad, NULL), EINVAL);
		CHECK_ERR(syscall(SYS_timerfd_settime, fd, 0, (void *)8, NULL),
			  EFAULT);
	}
	CHECK_ERR(timerfd_gettime(fd, (void *)8), EFAULT);
	close(fd);
	CHECK_ERR(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0), EINVAL);
	CHECK_ERR(timerfd_create(1234, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_MONOTONIC, 0x40), EINVAL);
	CHECK_ERR(timerfd_gettime(-1, &cur), EBADF);
	CHECK_ERR(arm(-1, 0, 1000, 0, NULL), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(timerfd_gettime(p[0], &cur), EINVAL);
	CHECK_ERR(arm(p[0], 0, 1000, 0, NULL), EINVAL);
	close(p[0]);
	close(p[1]);
	DONE();
}
