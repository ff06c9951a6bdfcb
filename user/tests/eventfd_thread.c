/* eventfd2: counter semantics, EFD_SEMAPHORE, EFD_NONBLOCK (EAGAIN on
 * zero and on overflow), EFD_CLOEXEC, EINVAL for short buffers, the value
 * 2^64-1 and bad flags; poll readiness; blocking read woken by a write
 * from another thread. */
#include "next.h"
#include <sys/eventfd.h>

static int shared_efd;

static void *late_add(void *arg)
{
	uint64_t v = 5;

	(void)arg;
	t_msleep(20);
	(void)!write(shared_efd, &v, 8);
	return NULL;
}

int main(void)
{
	uint64_t v;
	int fd, sem;
	struct pollfd pf;
	pthread_t t;

	CHECK_ERR(syscall(SYS_eventfd2, 0, 0x1234), EINVAL);
	fd = eventfd(7, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);

	/* Read returns and clears the counter. */
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, 7);
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
	/* Writes add. */
	v = 2;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 40;
	CHECK_EQ(write(fd, &v, 8), 8);
	/* A larger buffer is fine (8 bytes used); a smaller one is not. */
	{
		char big[16];

		CHECK_ERR(read(fd, big, 7), EINVAL);
		CHECK_ERR(write(fd, big, 7), EINVAL);
		CHECK_EQ(read(fd, big, 16), 8);
		memcpy(&v, big, 8);
		CHECK_EQ(v, 42);
	}
	/* 2^64-1 cannot be written. */
	v = UINT64_MAX;
	CHECK_ERR(write(fd, &v, 8), EINVAL);
	/* The maximum is 2^64-2; any more is EAGAIN (non-blocking). */
	v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 1;
	CHECK_ERR(write(fd, &v, 8), EAGAIN);
	/* Poll: readable, not writable (no room for even 1). */
	pf.fd = fd;
	pf.events = POLLIN | POLLOUT;
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN);
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, UINT64_MAX - 1);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	/* Writing 0 is allowed and changes nothing. */
	v = 0;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
	CHECK_ERR(read(fd, BAD_PTR2, 8), EAGAIN); /* nothing to copy yet */
	v = 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_ERR(read(fd, BAD_PTR2, 8), EFAULT);
	CHECK_ERR(write(fd, BAD_PTR2, 8), EFAULT);
	close(fd);

	/* Semaphore mode: each read returns 1 and decrements. */
	sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	CHECK(sem >= 0);
	CHECK_EQ(read(sem, &v, 8), 8);
	CHECK_EQ(v, 1);
	CHECK_EQ(read(sem, &v, 8), 8);
	CHECK_EQ(v, 1);
	CHECK_EQ(read(sem, &v, 8), 8);
	CHECK_ERR(read(sem, &v, 8), EAGAIN);
	close(sem);

	/* Blocking read woken by another thread's write. */
	shared_efd = eventfd(0, 0);
	CHECK(shared_efd >= 0);
	CHECK_EQ(pthread_create(&t, NULL, late_add, NULL), 0);
	CHECK_EQ(read(shared_efd, &v, 8), 8);
	CHECK_EQ(v, 5);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/* eventfd (the old syscall) works too. */
	{
		int old = (int)syscall(SYS_eventfd, 9);

		CHECK(old >= 0);
		CHECK_EQ(read(old, &v, 8), 8);
		CHECK_EQ(v, 9);
		close(old);
	}
	close(shared_efd);
	DONE();
}
