/* signalfd(2): a blocked signal in the mask is read as a
 * signalfd_siginfo (signo, code, pid, uid; sigqueue's value; SIGCHLD's
 * pid/status) and is then no longer pending; several records per read;
 * reads need one whole record (EINVAL) and give EAGAIN when nothing is
 * pending with SFD_NONBLOCK; a blocking read waits for a signal from
 * another process; poll and epoll report POLLIN; the mask can be replaced
 * through signalfd(fd, ...); thread-directed signals are read by that
 * thread; /proc/self/fd names it; errors (EINVAL for sizes, flags and
 * non-signalfd descriptors, EBADF, EFAULT). */
#include "next.h"
#include <sys/epoll.h>
#include <sys/signalfd.h>

int main(void)
{
	struct signalfd_siginfo si[4];
	sigset_t mask, none;
	struct pollfd pfd;
	union sigval v;
	char link[64], path[64];
	pid_t pid;
	int fd, ep, st, p[2];

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGRTMIN + 3);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &mask, NULL), 0);

	fd = signalfd(-1, &mask, SFD_NONBLOCK);
	CHECK(fd >= 0);
	CHECK_ERR(read(fd, si, sizeof si[0]), EAGAIN);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK_EQ(poll(&pfd, 1, 0), 0);

	/* kill: SI_USER with our pid and uid. */
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK_ERR(read(fd, si, sizeof si[0] - 1), EINVAL);
	CHECK_EQ(read(fd, si, sizeof si), (long)sizeof si[0]);
	CHECK_EQ(si[0].ssi_signo, SIGUSR1);
	CHECK_EQ(si[0].ssi_code, SI_USER);
	CHECK_EQ(si[0].ssi_pid, getpid());
	CHECK_EQ(si[0].ssi_uid, getuid());
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	sigpending(&none);
	CHECK(!sigismember(&none, SIGUSR1));

	/* sigqueue: the value; two signals in one read. */
	v.sival_int = 4242;
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN + 3, v), 0);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(read(fd, si, sizeof si), 2 * (long)sizeof si[0]);
	/* Lowest number first. */
	CHECK_EQ(si[0].ssi_signo, SIGUSR2);
	CHECK_EQ(si[1].ssi_signo, SIGRTMIN + 3);
	CHECK_EQ(si[1].ssi_code, SI_QUEUE);
	CHECK_EQ(si[1].ssi_int, 4242);
	CHECK_EQ(si[1].ssi_pid, getpid());

	/* SIGCHLD from a child's exit. */
	pid = fork();
	if (pid == 0)
		_exit(7);
	{
		int fl = fcntl(fd, F_GETFL);

		CHECK_EQ(fcntl(fd, F_SETFL, fl & ~O_NONBLOCK), 0);
		CHECK_EQ(read(fd, si, sizeof si[0]), (long)sizeof si[0]);
		CHECK_EQ(fcntl(fd, F_SETFL, fl), 0);
	}
	CHECK_EQ(si[0].ssi_signo, SIGCHLD);
	CHECK_EQ(si[0].ssi_code, CLD_EXITED);
	CHECK_EQ(si[0].ssi_pid, pid);
	CHECK_EQ(si[0].ssi_status, 7);
	CHECK_EQ(waitpid(pid, &st, 0), pid);

	/* A blocking read woken by another process's kill. */
	{
		int bfd = signalfd(-1, &mask, 0);
		pid_t parent = getpid();

		pid = fork();
		if (pid == 0) {
			t_msleep(50);
			kill(parent, SIGUSR2);
			_exit(0);
		}
		CHECK_EQ(read(bfd, si, sizeof si[0]), (long)sizeof si[0]);
		CHECK_EQ(si[0].ssi_signo, SIGUSR2);
		CHECK_EQ(si[0].ssi_pid, pid);
		close(bfd);
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		/* Its SIGCHLD is pending now; drain it. */
		while (read(fd, si, sizeof si[0]) > 0)
			;
	}

	/* epoll. */
	ep = epoll_create1(0);
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 9 };
		struct epoll_event out;

		CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
		CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
		CHECK_EQ(kill(getpid(), SIGUSR1), 0);
		CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
		CHECK_EQ(out.data.u64, 9);
	}
	close(ep);

	/* Replacing the mask: SIGUSR1 (pending) is no longer readable. */
	sigemptyset(&none);
	sigaddset(&none, SIGUSR2);
	CHECK_EQ(signalfd(fd, &none, 0), fd);
	CHECK_ERR(read(fd, si, sizeof si[0]), EAGAIN);
	CHECK_EQ(signalfd(fd, &mask, 0), fd);
	CHECK_EQ(read(fd, si, sizeof si[0]), (long)sizeof si[0]);
	CHECK_EQ(si[0].ssi_signo, SIGUSR1);

	/* A thread-directed signal (tgkill: SI_TKILL) is read by that thread. */
	CHECK_EQ(t_tgkill(getpid(), t_gettid(), SIGUSR2), 0);
	CHECK_EQ(read(fd, si, sizeof si[0]), (long)sizeof si[0]);
	CHECK_EQ(si[0].ssi_signo, SIGUSR2);
	CHECK_EQ(si[0].ssi_code, SI_TKILL);

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	memset(link, 0, sizeof link);
	CHECK(readlink(path, link, sizeof link - 1) > 0);
	CHECK(strcmp(link, "anon_inode:[signalfd]") == 0);

	/* Errors. */
	CHECK_ERR(syscall(SYS_signalfd4, -1, &mask, 4, 0), EINVAL);
	CHECK_ERR(syscall(SYS_signalfd4, -1, &mask, 8, 0x10), EINVAL);
	CHECK_ERR(syscall(SYS_signalfd4, -1, (void *)8, 8, 0), EFAULT);
	CHECK_ERR(syscall(SYS_signalfd4, 9999, &mask, 8, 0), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(syscall(SYS_signalfd4, p[0], &mask, 8, 0), EINVAL);
	close(p[0]);
	close(p[1]);
	CHECK_ERR(write(fd, si, sizeof si[0]), EINVAL);
	{
		int cfd = signalfd(-1, &mask, SFD_CLOEXEC);

		CHECK_EQ(fcntl(cfd, F_GETFD), FD_CLOEXEC);
		close(cfd);
	}
	close(fd);
	DONE();
}
