/*
 * Pipe readiness for poll(2) and select(2): POLLIN with data, POLLOUT
 * while there is room, POLLHUP on the read end once the writers are gone,
 * POLLERR on the write end once the readers are gone; a poll blocked on
 * an empty pipe wakes when a child writes; select reports the same.
 */
#include "t.h"
#include <poll.h>
#include <sys/select.h>

int main(void)
{
	int p[2];
	struct pollfd pf[2];
	fd_set rs, ws;
	struct timeval tv;
	pid_t pid;
	char c;

	CHECK_EQ(pipe(p), 0);
	pf[0].fd = p[0];
	pf[0].events = POLLIN;
	pf[1].fd = p[1];
	pf[1].events = POLLOUT;
	CHECK_EQ(poll(pf, 2, 0), 1);
	CHECK_EQ(pf[0].revents, 0);
	CHECK_EQ(pf[1].revents, POLLOUT);

	CHECK_EQ(write(p[1], "a", 1), 1);
	CHECK_EQ(poll(pf, 2, 0), 2);
	CHECK_EQ(pf[0].revents, POLLIN);

	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_SET(p[0], &rs);
	FD_SET(p[1], &ws);
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	CHECK_EQ(select(p[1] + 1, &rs, &ws, NULL, &tv), 2);
	CHECK(FD_ISSET(p[0], &rs));
	CHECK(FD_ISSET(p[1], &ws));
	CHECK_EQ(read(p[0], &c, 1), 1);

	/* Timeout on an empty pipe. */
	CHECK_EQ(poll(pf, 1, 20), 0);

	/* A blocked poll wakes when a child writes. */
	pid = fork();
	if (pid == 0) {
		t_sleep_ns(50 * 1000 * 1000);
		_exit(write(p[1], "b", 1) == 1 ? 0 : 1);
	}
	CHECK_EQ(poll(pf, 1, 10000), 1);
	CHECK_EQ(pf[0].revents, POLLIN);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(read(p[0], &c, 1), 1);

	/* select blocks the same way. */
	pid = fork();
	if (pid == 0) {
		t_sleep_ns(50 * 1000 * 1000);
		_exit(write(p[1], "c", 1) == 1 ? 0 : 1);
	}
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	CHECK_EQ(select(p[0] + 1, &rs, NULL, NULL, NULL), 1);
	CHECK(FD_ISSET(p[0], &rs));
	CHECK(t_wait_ok(pid));
	CHECK_EQ(read(p[0], &c, 1), 1);

	/* Writer gone: POLLHUP (with data: POLLIN too). */
	CHECK_EQ(write(p[1], "d", 1), 1);
	close(p[1]);
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLIN | POLLHUP);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLHUP);
	/* A hung-up pipe is readable for select (EOF). */
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	CHECK_EQ(select(p[0] + 1, &rs, NULL, NULL, NULL), 1);
	close(p[0]);

	/* Reader gone: POLLERR (and POLLOUT) on the write end. */
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	pf[1].fd = p[1];
	CHECK_EQ(poll(&pf[1], 1, 0), 1);
	CHECK_EQ(pf[1].revents, POLLOUT | POLLERR);
	close(p[1]);
	DONE();
}
