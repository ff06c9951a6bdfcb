/* Process file descriptors: pidfd_open(2) (flags, ESRCH, threads),
 * what the file is (anon_inode:[pidfd], close-on-exec, no read/write,
 * fdinfo's Pid:), poll/epoll readiness when the process exits,
 * pidfd_send_signal(2) (NULL and explicit siginfo, scopes, zombies,
 * ESRCH once reaped, EPERM), waitid(P_PIDFD) (also non-blocking),
 * pidfd_getfd(2) and clone's CLONE_PIDFD. */
#include "next.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x1000
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#define PIDFD_NONBLOCK_ O_NONBLOCK
#define PIDFD_SIGNAL_THREAD_ 1
#define PIDFD_SIGNAL_THREAD_GROUP_ 2
#define PIDFD_SIGNAL_PROCESS_GROUP_ 4

static int pidfd_open_(pid_t pid, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static int send_(int fd, int sig, siginfo_t *info, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static int getfd_(int fd, int target, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_getfd, fd, target, flags);
}

/* poll revents of fd, without waiting (timeout_ms 0) or waiting. */
static int revents(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };

	if (poll(&p, 1, timeout_ms) < 0)
		return -errno;
	return p.revents;
}

/* The "Pid:" value of fd's /proc/self/fdinfo entry (-2 if absent). */
static long fdinfo_pid(int fd)
{
	char path[64], buf[512];
	char *p;

	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	if (t_read_file(path, buf, sizeof buf) <= 0)
		return -2;
	p = strstr(buf, "\nPid:\t");
	if (!p)
		return -2;
	return strtol(p + 6, NULL, 10);
}

/* A child that sleeps until killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void *thread_sleep(void *arg)
{
	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

static void open_rules(void)
{
	pthread_t th;
	volatile pid_t tid = 0;
	int fd, nb;
	char buf[64], path[64];
	ssize_t n;

	CHECK_ERR(pidfd_open_(getpid(), 1), EINVAL);
	CHECK_ERR(pidfd_open_(getpid(), O_CLOEXEC), EINVAL);
	CHECK_ERR(pidfd_open_(getpid(), 0x80000000u), EINVAL);
	CHECK_ERR(pidfd_open_(0, 0), EINVAL);
	CHECK_ERR(pidfd_open_(-1, 0), EINVAL);
	CHECK_ERR(pidfd_open_(99999999, 0), ESRCH);

	/* A thread that is not the group leader: ENOENT (Linux 6.9 on,
	 * EINVAL before). */
	CHECK_EQ(pthread_create(&th, NULL, thread_sleep, (void *)&tid), 0);
	while (tid == 0)
		t_sleep_ns(1000000L);
	errno = 0;
	CHECK_EQ(pidfd_open_(tid, 0), -1);
	CHECK(errno == ENOENT || errno == EINVAL);

	/* The file: O_RDWR, close-on-exec, anon_inode:[pidfd]. */
	fd = pidfd_open_(getpid(), 0);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDWR);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	n = readlink(path, buf, sizeof buf - 1);
	CHECK(n > 0);
	if (n > 0) {
		buf[n] = 0;
		CHECK(!strcmp(buf, "anon_inode:[pidfd]"));
	}
	CHECK_EQ(fdinfo_pid(fd), getpid());
	CHECK_ERR(read(fd, buf, 8), EINVAL);
	CHECK_ERR(write(fd, buf, 8), EINVAL);
	CHECK_ERR(lseek(fd, 0, SEEK_SET), ESPIPE);
	/* A live process is not readable. */
	CHECK_EQ(revents(fd, 0), 0);
	nb = pidfd_open_(getpid(), PIDFD_NONBLOCK_);
	CHECK(nb >= 0);
	CHECK_EQ(fcntl(nb, F_GETFL) & (O_ACCMODE | O_NONBLOCK),
		 O_RDWR | O_NONBLOCK);
	close(nb);
	close(fd);
}

static void readiness(void)
{
	int fd, ep, st;
	pid_t pid;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 };

	/* poll wakes when the child exits; it stays readable while a
	 * zombie and after it is reaped. */
	pid = fork();
	if (pid == 0) {
		t_sleep_ns(100000000L);
		_exit(4);
	}
	fd = pidfd_open_(pid, 0);
	CHECK(fd >= 0);
	CHECK_EQ(revents(fd, 0), 0);
	CHECK_EQ(revents(fd, 10000) & POLLIN, POLLIN);
	CHECK_EQ(fdinfo_pid(fd), pid);
	CHECK_EQ(t_wait(pid), 4 << 8);
	CHECK_EQ(revents(fd, 0) & POLLIN, POLLIN);
	CHECK_EQ(fdinfo_pid(fd), -1);
	close(fd);

	/* epoll: nothing while it runs, EPOLLIN once it exits. */
	pid = sleeper();
	fd = pidfd_open_(pid, 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(fd >= 0 && ep >= 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	memset(&ev, 0, sizeof ev);
	CHECK_EQ(epoll_wait(ep, &ev, 1, 10000), 1);
	CHECK(ev.events & EPOLLIN);
	CHECK_EQ(ev.data.u64, 7);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(ep);
	close(fd);
}

static void signals(void)
{
	int fd, efd, st;
	pid_t pid, me = getpid();
	siginfo_t in, si;
	sigset_t set, old;
	int sync[2];
	char c;
	char path[PATH_MAX], dir[PATH_MAX];

	/* Signal 0 checks; a signal kills. */
	pid = sleeper();
	fd = pidfd_open_(pid, 0);
	CHECK(fd >= 0);
	CHECK_EQ(send_(fd, 0, NULL, 0), 0);
	CHECK_ERR(send_(fd, 65, NULL, 0), EINVAL);
	CHECK_ERR(send_(fd, -1, NULL, 0), EINVAL);
	CHECK_ERR(send_(fd, 0, NULL, 8), EINVAL);
	CHECK_ERR(send_(fd, 0, NULL,
			PIDFD_SIGNAL_THREAD_ | PIDFD_SIGNAL_THREAD_GROUP_),
		  EINVAL);
	CHECK_ERR(send_(fd, SIGTERM, (siginfo_t *)BAD_PTR, 0), EFAULT);
	CHECK_EQ(send_(fd, SIGTERM, NULL, 0), 0);
	/* Wait for the zombie without reaping it. */
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PIDFD, fd, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGTERM);
	/* A zombie takes signals in vain; once reaped: ESRCH. */
	CHECK_EQ(send_(fd, 0, NULL, 0), 0);
	CHECK_EQ(send_(fd, SIGTERM, NULL, 0), 0);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	CHECK_ERR(send_(fd, 0, NULL, 0), ESRCH);
	CHECK_ERR(send_(fd, SIGTERM, NULL, 0), ESRCH);
	close(fd);

	/* Descriptors that are not pidfds. */
	CHECK_ERR(send_(999, 0, NULL, 0), EBADF);
	CHECK_ERR(send_(-1, 0, NULL, 0), EBADF);
	efd = eventfd(0, EFD_CLOEXEC);
	CHECK_ERR(send_(efd, 0, NULL, 0), EBADF);
	if (t_mktmp("pidfd_basic", dir, sizeof dir) == 0) {
		int rfd;

		t_join(path, sizeof path, dir, "f");
		rfd = open(path, O_CREAT | O_RDWR, 0644);
		CHECK(rfd >= 0);
		CHECK_ERR(send_(rfd, 0, NULL, 0), EBADF);
		close(rfd);
		t_rmtree(dir);
	}

	/* What the receiver sees: SI_USER from us without siginfo, our
	 * siginfo (SI_QUEUE) with it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	CHECK_EQ(pipe(sync), 0);
	pid = fork();
	if (pid == 0) {
		memset(&si, 0, sizeof si);
		CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR1);
		CHECK_EQ(si.si_code, SI_USER);
		CHECK_EQ(si.si_pid, me);
		CHECK_EQ(si.si_uid, getuid());
		if (write(sync[1], "s", 1) != 1)
			_exit(1);
		memset(&si, 0, sizeof si);
		CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR1);
		CHECK_EQ(si.si_code, SI_QUEUE);
		CHECK_EQ(si.si_pid, 1234);
		CHECK_EQ(si.si_value.sival_int, 99);
		CHILD_DONE();
	}
	fd = pidfd_open_(pid, 0);
	CHECK(fd >= 0);
	CHECK_EQ(send_(fd, SIGUSR1, NULL, 0), 0);
	memset(&in, 0, sizeof in);
	in.si_signo = SIGUSR1;
	in.si_code = SI_QUEUE;
	in.si_pid = 1234;
	in.si_uid = getuid();
	in.si_value.sival_int = 99;
	/* si_signo must match; si_code >= 0 only to oneself. */
	CHECK_ERR(send_(fd, SIGUSR2, &in, 0), EINVAL);
	in.si_code = SI_USER;
	CHECK_ERR(send_(fd, SIGUSR1, &in, 0), EPERM);
	in.si_code = SI_TKILL;
	CHECK_ERR(send_(fd, SIGUSR1, &in, 0), EPERM);
	in.si_code = SI_QUEUE;
	/* Wait until the first one has been taken (standard signals do
	 * not queue). */
	CHECK_EQ(read(sync[0], &c, 1), 1);
	CHECK_EQ(send_(fd, SIGUSR1, &in, 0), 0);
	t_wait_ok(pid);
	close(fd);
	close(sync[0]);
	close(sync[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* To oneself any si_code is fine, in every scope but the group. */
	signal(SIGUSR2, SIG_IGN);
	fd = pidfd_open_(getpid(), 0);
	CHECK(fd >= 0);
	memset(&in, 0, sizeof in);
	in.si_signo = SIGUSR2;
	in.si_code = SI_USER;
	CHECK_EQ(send_(fd, SIGUSR2, &in, 0), 0);
	CHECK_EQ(send_(fd, SIGUSR2, &in, PIDFD_SIGNAL_THREAD_), 0);
	CHECK_EQ(send_(fd, SIGUSR2, NULL, PIDFD_SIGNAL_THREAD_GROUP_), 0);
	close(fd);
	signal(SIGUSR2, SIG_DFL);

	/* PIDFD_SIGNAL_PROCESS_GROUP: the group whose id is the pid (a
	 * child and its own child). */
	CHECK_EQ(pipe(sync), 0);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (fork() == 0) {
			if (write(sync[1], "g", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	fd = pidfd_open_(pid, 0);
	CHECK(fd >= 0);
	CHECK_EQ(read(sync[0], &c, 1), 1);
	close(sync[1]);
	CHECK_EQ(send_(fd, SIGKILL, NULL, PIDFD_SIGNAL_PROCESS_GROUP_), 0);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* The grandchild died too: its end of the pipe is closed. */
	CHECK_EQ(read(sync[0], &c, 1), 0);
	close(sync[0]);
	close(fd);
	/* Not a group leader: no such group. */
	pid = sleeper();
	fd = pidfd_open_(pid, 0);
	CHECK_ERR(send_(fd, 0, NULL, PIDFD_SIGNAL_PROCESS_GROUP_), ESRCH);
	CHECK_EQ(send_(fd, SIGKILL, NULL, PIDFD_SIGNAL_THREAD_), 0);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(fd);
	close(efd);
}

static void waiting(void)
{
	siginfo_t si;
	int fd, nb, efd;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		t_sleep_ns(100000000L);
		_exit(5);
	}
	fd = pidfd_open_(pid, 0);
	nb = pidfd_open_(pid, PIDFD_NONBLOCK_);
	CHECK(fd >= 0 && nb >= 0);
	/* Non-blocking: EAGAIN, or 0 with WNOHANG. */
	CHECK_ERR(waitid(P_PIDFD, nb, &si, WEXITED), EAGAIN);
	memset(&si, 0xff, sizeof si);
	CHECK_EQ(waitid(P_PIDFD, nb, &si, WEXITED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, 0);
	CHECK_ERR(waitid(P_PIDFD, fd, &si, 0), EINVAL);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PIDFD, fd, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 5);
	CHECK_ERR(waitid(P_PIDFD, fd, &si, WEXITED), ECHILD);
	CHECK_ERR(waitid(P_PIDFD, nb, &si, WEXITED | WNOHANG), ECHILD);
	close(fd);
	close(nb);

	CHECK_ERR(waitid(P_PIDFD, 999, &si, WEXITED), EBADF);
	CHECK_ERR(waitid(P_PIDFD, -1, &si, WEXITED), EINVAL);
	efd = eventfd(0, 0);
	CHECK_ERR(waitid(P_PIDFD, efd, &si, WEXITED), EBADF);
	close(efd);
	/* Only one's own children. */
	fd = pidfd_open_(getpid(), 0);
	CHECK_ERR(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG), ECHILD);
	close(fd);
}

static void getfd(void)
{
	int p[2], fd, got, st;
	pid_t pid, victim;
	char buf[8];

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (dup2(p[1], 42) != 42)
			_exit(1);
		close(p[1]);
		if (write(42, "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK_EQ(read(p[0], buf, 1), 1);
	fd = pidfd_open_(pid, 0);
	CHECK(fd >= 0);
	got = getfd_(fd, 42, 0);
	CHECK(got >= 0);
	CHECK_EQ(fcntl(got, F_GETFD), FD_CLOEXEC);
	/* The same pipe: what we write through it comes out of p[0]. */
	CHECK_EQ(write(got, "x", 1), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(buf[0], 'x');
	close(got);
	CHECK_ERR(getfd_(fd, 43, 0), EBADF);
	CHECK_ERR(getfd_(fd, -1, 0), EBADF);
	CHECK_ERR(getfd_(fd, 42, 1), EINVAL);
	CHECK_ERR(getfd_(999, 42, 0), EBADF);
	CHECK_ERR(getfd_(p[0], 42, 0), EBADF);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(revents(fd, 10000) & POLLIN, POLLIN);
	/* An exited process has no descriptors to give. */
	CHECK_ERR(getfd_(fd, 42, 0), ESRCH);
	st = t_wait(pid);
	CHECK(WIFSIGNALED(st));
	CHECK_ERR(getfd_(fd, 42, 0), ESRCH);
	close(fd);
	close(p[0]);

	/* Our own descriptors. */
	fd = pidfd_open_(getpid(), 0);
	got = getfd_(fd, 1, 0);
	CHECK(got >= 0);
	close(got);
	close(fd);

	/* Unprivileged: another user's process is off limits. */
	if (!t_is_root())
		return;
	victim = sleeper();
	fd = pidfd_open_(victim, 0);
	pid = fork();
	if (pid == 0) {
		int own;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		CHECK_ERR(send_(fd, 0, NULL, 0), EPERM);
		CHECK_ERR(send_(fd, SIGKILL, NULL, 0), EPERM);
		CHECK_ERR(getfd_(fd, 1, 0), EPERM);
		/* ... but a pidfd of it can be opened, and one's own used. */
		own = pidfd_open_(victim, 0);
		CHECK(own >= 0);
		close(own);
		own = pidfd_open_(getpid(), 0);
		CHECK(own >= 0);
		got = getfd_(own, 1, 0);
		CHECK(got >= 0);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	kill(victim, SIGKILL);
	t_wait(victim);
	close(fd);
}

static void clone_pidfd(void)
{
	int pfd = -1, dummy = -1, st;
	long r;
	siginfo_t si;

	r = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pfd, 0, 0);
	if (r == 0) {
		/* The child got its table before the pidfd was added. */
		_exit(fcntl(pfd, F_GETFD) == -1 && errno == EBADF ? 9 : 1);
	}
	CHECK(r > 0);
	CHECK(pfd >= 0);
	CHECK_EQ(fcntl(pfd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fdinfo_pid(pfd), r);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PIDFD, pfd, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, r);
	CHECK_EQ(si.si_status, 9);
	close(pfd);

	CHECK_ERR(syscall(SYS_clone, CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD,
			  0, &dummy, 0, 0),
		  EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_PIDFD | CLONE_DETACHED | SIGCHLD, 0,
			  &dummy, 0, 0),
		  EINVAL);
	r = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, BAD_PTR, 0, 0);
	if (r == 0)
		_exit(0);
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EFAULT);
	/* No child was left behind. */
	CHECK_ERR(waitpid(-1, &st, WNOHANG), ECHILD);
}

int main(void)
{
	open_rules();
	readiness();
	signals();
	waiting();
	getfd();
	clone_pidfd();
	DONE();
}
