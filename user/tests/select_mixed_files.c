/* select(2) and poll(2) over every kind of file at once: regular files,
 * pipes (empty, with data, with no writer), an eventfd, a signalfd with a
 * pending signal, a pidfd of an exited child, an epoll instance watching a
 * ready pipe and /dev/null (and, in poll(2) only, an O_PATH descriptor).
 * Each kind reports its own readiness in the right set, whatever kinds
 * surround it in the walk;
 * a descriptor closed in the middle of the sets is EBADF; a select with no
 * timeout, blocked on a signalfd and a pipe, wakes when the signal comes. */
#define _GNU_SOURCE
#include "next.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define IS(set, fd) (FD_ISSET((fd), &(set)) ? 1 : 0)

int main(void)
{
	int empty[2], full[2], hup[2], inner[2];
	fd_set rs, ws, es;
	struct timeval tv;

	int file = open("/proc/self/exe", O_RDONLY);
	CHECK(file >= 0);
	CHECK_EQ(pipe(empty), 0);
	CHECK_EQ(pipe(full), 0);
	CHECK_EQ(write(full[1], "x", 1), 1);
	CHECK_EQ(pipe(hup), 0);
	close(hup[1]);
	CHECK_EQ(pipe(inner), 0);
	CHECK_EQ(write(inner[1], "y", 1), 1);

	int efd = eventfd(0, 0);
	CHECK(efd >= 0);

	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
	int sfd = signalfd(-1, &usr1, 0);
	CHECK(sfd >= 0);
	int quiet_sfd = signalfd(-1, &usr1, 0);
	CHECK(quiet_sfd >= 0);

	pid_t child = fork();
	if (child == 0)
		_exit(0);
	CHECK(child > 0);
	int pfd = (int)syscall(SYS_pidfd_open, child, 0);
	CHECK(pfd >= 0);
	/* Wait for the exit without reaping: the pidfd becomes readable. */
	siginfo_t si;
	CHECK_EQ(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);

	int ep = epoll_create1(0);
	CHECK(ep >= 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 };
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, inner[0], &ev), 0);
	int quiet_ep = epoll_create1(0);
	CHECK(quiet_ep >= 0);
	ev.data.u64 = 8;
	CHECK_EQ(epoll_ctl(quiet_ep, EPOLL_CTL_ADD, empty[0], &ev), 0);

	int null = open("/dev/null", O_WRONLY);
	CHECK(null >= 0);
	int path = open("/", O_PATH);
	CHECK(path >= 0);

	/* path is last: select leaves it out (Linux 6.18 reports an O_PATH
	 * descriptor ready in every set, older kernels in none). */
	int fds[] = { file, empty[0], empty[1], full[0], hup[0], efd, sfd,
		      pfd, ep, quiet_ep, null, quiet_sfd, path };
	int n = (int)(sizeof fds / sizeof fds[0]) - 1, maxfd = 0;
	for (int i = 0; i < n; i++)
		if (fds[i] > maxfd)
			maxfd = fds[i];
	/* SIGUSR1 pending (blocked): both signalfds are readable until it is
	 * read from one of them. */
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);

	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_ZERO(&es);
	for (int i = 0; i < n; i++) {
		FD_SET(fds[i], &rs);
		FD_SET(fds[i], &ws);
		FD_SET(fds[i], &es);
	}
	tv.tv_sec = tv.tv_usec = 0;
	/* Readable: file, full[0], hup[0] (end of file), sfd and quiet_sfd
	 * (SIGUSR1 pending), pfd, ep (inner pipe ready) and null (a device
	 * without a poll of its own reports both ways, whatever the open
	 * mode): 8. Writable: file, empty[1], efd, null: 4. */
	int r = (int)syscall(SYS_select, maxfd + 1, &rs, &ws, &es, &tv);
	CHECK_EQ(r, 12);
	CHECK_EQ(IS(rs, file), 1);
	CHECK_EQ(IS(ws, file), 1);
	CHECK_EQ(IS(rs, empty[0]), 0);
	CHECK_EQ(IS(ws, empty[0]), 0);
	CHECK_EQ(IS(rs, empty[1]), 0);
	CHECK_EQ(IS(ws, empty[1]), 1);
	CHECK_EQ(IS(rs, full[0]), 1);
	CHECK_EQ(IS(rs, hup[0]), 1);
	CHECK_EQ(IS(rs, efd), 0);
	CHECK_EQ(IS(ws, efd), 1);
	CHECK_EQ(IS(rs, sfd), 1);
	CHECK_EQ(IS(rs, quiet_sfd), 1);
	CHECK_EQ(IS(rs, pfd), 1);
	CHECK_EQ(IS(rs, ep), 1);
	CHECK_EQ(IS(rs, quiet_ep), 0);
	CHECK_EQ(IS(rs, null), 1);
	CHECK_EQ(IS(ws, null), 1);
	for (int i = 0; i < n; i++)
		CHECK_EQ(IS(es, fds[i]), 0);

	/* The same through poll(2), which reports POLLNVAL for O_PATH. */
	struct pollfd pfds[16];
	for (int i = 0; i <= n; i++) {
		pfds[i].fd = fds[i];
		pfds[i].events = POLLIN | POLLOUT;
		pfds[i].revents = 0;
	}
	CHECK_EQ(poll(pfds, (nfds_t)n + 1, 0), 11);
	CHECK_EQ(pfds[0].revents, POLLIN | POLLOUT);
	CHECK_EQ(pfds[1].revents, 0);
	CHECK_EQ(pfds[2].revents, POLLOUT);
	CHECK_EQ(pfds[3].revents, POLLIN);
	CHECK_EQ(pfds[4].revents, POLLHUP);
	CHECK_EQ(pfds[5].revents, POLLOUT);
	CHECK_EQ(pfds[6].revents, POLLIN);
	CHECK_EQ(pfds[7].revents, POLLIN);
	CHECK_EQ(pfds[8].revents, POLLIN);
	CHECK_EQ(pfds[9].revents, 0);
	CHECK_EQ(pfds[10].revents, POLLIN | POLLOUT);
	CHECK_EQ(pfds[11].revents, POLLIN);
	CHECK_EQ(pfds[12].revents, POLLNVAL);

	/* Consume the signal: neither signalfd is readable now. */
	struct signalfd_siginfo ssi;
	CHECK_EQ(read(sfd, &ssi, sizeof ssi), (long)sizeof ssi);
	CHECK_EQ(ssi.ssi_signo, SIGUSR1);
	FD_ZERO(&rs);
	FD_SET(sfd, &rs);
	FD_SET(quiet_sfd, &rs);
	FD_SET(empty[0], &rs);
	FD_SET(pfd, &rs);
	tv.tv_sec = tv.tv_usec = 0;
	CHECK_EQ(select(maxfd + 1, &rs, NULL, NULL, &tv), 1);
	CHECK_EQ(IS(rs, sfd), 0);
	CHECK_EQ(IS(rs, quiet_sfd), 0);
	CHECK_EQ(IS(rs, pfd), 1);

	/* A closed descriptor between open ones of every kind: EBADF, and the
	 * sets are left as they were. */
	int gap = dup(file);
	CHECK(gap >= 0);
	close(gap);
	FD_ZERO(&rs);
	for (int i = 0; i < n; i++)
		FD_SET(fds[i], &rs);
	FD_SET(gap, &rs);
	fd_set before = rs;
	int top = gap > maxfd ? gap : maxfd;
	tv.tv_sec = tv.tv_usec = 0;
	CHECK_ERR(syscall(SYS_select, top + 1, &rs, NULL, NULL, &tv), EBADF);
	CHECK(memcmp(&rs, &before, sizeof rs) == 0);

	/* Blocked with no timeout on a signalfd and an empty pipe; a child
	 * sends SIGUSR1 to the parent: the select wakes with the signalfd
	 * readable. (A lost wake-up hangs here and the runner fails it.) */
	pid_t waker = fork();
	if (waker == 0) {
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	CHECK(waker > 0);
	FD_ZERO(&rs);
	FD_SET(sfd, &rs);
	FD_SET(empty[0], &rs);
	CHECK_EQ(select(maxfd + 1, &rs, NULL, NULL, NULL), 1);
	CHECK_EQ(IS(rs, sfd), 1);
	CHECK_EQ(IS(rs, empty[0]), 0);
	int st;
	CHECK_EQ(waitpid(waker, &st, 0), waker);
	CHECK_EQ(read(sfd, &ssi, sizeof ssi), (long)sizeof ssi);

	CHECK_EQ(waitpid(child, &st, 0), child);
	DONE();
}
