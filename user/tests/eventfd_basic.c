/*
 * eventfd(2): counter semantics (read returns and resets it; with
 * EFD_SEMAPHORE returns 1 and decrements), EAGAIN on zero with
 * EFD_NONBLOCK, EINVAL for buffers under 8 bytes and for the value
 * 0xffffffffffffffff, EAGAIN when the sum would pass 0xfffffffffffffffe,
 * flags (EFD_CLOEXEC, EINVAL for unknown), poll readiness, and a reader
 * blocked on zero woken by a writer.
 */
#include "t.h"
#include <poll.h>
#include <sys/eventfd.h>

int main(void)
{
	int fd, st;
	uint64_t v;
	uint32_t small = 0;
	struct pollfd pf;
	pid_t pid;

	fd = eventfd(3, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK_EQ(v, 3);
	CHECK_ERR(read(fd, &v, sizeof v), EAGAIN);
	v = 5;
	CHECK_EQ(write(fd, &v, sizeof v), 8);
	v = 7;
	CHECK_EQ(write(fd, &v, sizeof v), 8);
	CHECK_ERR(read(fd, &small, sizeof small), EINVAL);
	CHECK_ERR(write(fd, &small, sizeof small), EINVAL);
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK_EQ(v, 12);

	/* Limits. */
	v = UINT64_MAX;
	CHECK_ERR(write(fd, &v, sizeof v), EINVAL);
	v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, sizeof v), 8);
	v = 1;
	CHECK_ERR(write(fd, &v, sizeof v), EAGAIN);
	pf.fd = fd;
	pf.events = POLLIN | POLLOUT;
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN);
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK_EQ(v, UINT64_MAX - 1);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	/* eventfd ignores lseek (noop_llseek). */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	close(fd);

	/* Semaphore mode. */
	fd = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK_EQ(v, 1);
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK_EQ(v, 1);
	CHECK_ERR(read(fd, &v, sizeof v), EAGAIN);
	close(fd);

	CHECK_ERR(eventfd(0, 0x1000), EINVAL);
	CHECK_ERR(syscall(SYS_eventfd2, 0, O_RDWR), EINVAL);

	/* A blocking reader sleeps until a write. */
	fd = eventfd(0, 0);
	CHECK(fd >= 0);
	pid = fork();
	if (pid == 0) {
		uint64_t got = 0;

		if (read(fd, &got, sizeof got) != 8)
			_exit(1);
		_exit(got == 9 ? 0 : 2);
	}
	t_sleep_ns(50 * 1000 * 1000);
	v = 9;
	CHECK_EQ(write(fd, &v, sizeof v), 8);
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* A blocking writer sleeps while the sum would overflow. */
	v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, sizeof v), 8);
	pid = fork();
	if (pid == 0) {
		uint64_t one = 1;

		_exit(write(fd, &one, sizeof one) == 8 ? 0 : 1);
	}
	t_sleep_ns(50 * 1000 * 1000);
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(read(fd, &v, sizeof v), 8);
	CHECK_EQ(v, 1);
	close(fd);
	DONE();
}
