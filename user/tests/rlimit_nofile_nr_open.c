/* RLIMIT_NOFILE up to fs.nr_open (1048576): a hard limit above nr_open
 * is EPERM, even for root; up to it, descriptors just below the limit
 * work (dup2, F_DUPFD, across fork), the limit itself does not (EBADF,
 * EINVAL), and a table filled one descriptor at a time reaches EMFILE
 * exactly at the limit. Where root cannot raise its hard limit (no
 * CAP_SYS_RESOURCE in a container) the part above it is noted. */
#include "next.h"
#include <sys/resource.h>

static long nr_open(void)
{
	char buf[32];

	if (t_read_file("/proc/sys/fs/nr_open", buf, sizeof buf) <= 0)
		return -1;
	return atol(buf);
}

/* Opens descriptors until EMFILE; returns how many, and closes them. */
static long fill(void)
{
	long n = 0, first = -1, fd, last = -1;

	for (;;) {
		fd = dup(0);
		if (fd < 0)
			break;
		if (first < 0)
			first = fd;
		/* Always the lowest free one. */
		if (last >= 0 && fd != last + 1) {
			CHECK_EQ(fd, last + 1);
			break;
		}
		last = fd;
		n++;
	}
	CHECK_EQ(errno, EMFILE);
	if (first >= 0)
		syscall(SYS_close_range, first, ~0U, 0);
	return n;
}

int main(void)
{
	struct rlimit orig, rl;
	long nr = nr_open(), lim;
	pid_t pid;

	CHECK(nr >= 1024);
	if (t_is_trellis())
		CHECK_EQ(nr, 1048576);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &orig), 0);

	rl.rlim_cur = rl.rlim_max = nr + 1;
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &rl), EPERM);
	rl.rlim_cur = nr + 1;
	rl.rlim_max = orig.rlim_max;
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &rl), EINVAL);

	rl.rlim_cur = rl.rlim_max = nr;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		CHECK_EQ(errno, EPERM);
		if (t_is_trellis() || !t_is_root())
			CHECK(0);
		t_note("hard limit %ld cannot be raised here", (long)orig.rlim_max);
		lim = orig.rlim_max;
		rl.rlim_cur = rl.rlim_max = lim;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	} else {
		lim = nr;
	}

	/* The last descriptor below the limit. */
	CHECK_EQ(dup2(0, lim - 1), lim - 1);
	CHECK_ERR(dup2(0, lim), EBADF);
	CHECK_ERR(fcntl(0, F_DUPFD, lim), EINVAL);
	CHECK_ERR(fcntl(0, F_DUPFD, lim - 1), EMFILE);
	CHECK_EQ(fcntl(lim - 1, F_GETFD), 0);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(fcntl(lim - 1, F_GETFD), 0);
		CHECK_EQ(close(lim - 1), 0);
		CHECK_EQ(fcntl(0, F_DUPFD_CLOEXEC, lim - 1), lim - 1);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	CHECK_EQ(close(lim - 1), 0);
	CHECK_EQ(fcntl(0, F_DUPFD, lim - 10), lim - 10);
	CHECK_EQ(close(lim - 10), 0);

	/* Fill a table of more than the old 65536 bound. */
	rl.rlim_cur = lim < 70000 ? lim : 70000;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	{
		long open_now = 0, fd;

		/* Only 0, 1 and 2 (whatever else was inherited goes). */
		syscall(SYS_close_range, 3, ~0U, 0);
		for (fd = 0; fd < 3; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				open_now++;
		CHECK_EQ(fill(), (long)rl.rlim_cur - open_now);
	}

	/* Lowering nr_open lowers what may be set (only here: not the host's). */
	if (t_is_trellis()) {
		CHECK_EQ(t_write_file("/proc/sys/fs/nr_open", "100000\n", 7, 0644), 0);
		rl.rlim_cur = rl.rlim_max = 200000;
		CHECK_ERR(setrlimit(RLIMIT_NOFILE, &rl), EPERM);
		rl.rlim_cur = rl.rlim_max = 100000;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
		CHECK_ERR(t_write_file("/proc/sys/fs/nr_open", "2000000\n", 8, 0644), EINVAL);
		CHECK_EQ(t_write_file("/proc/sys/fs/nr_open", "1048576\n", 8, 0644), 0);
		CHECK_EQ(nr_open(), 1048576);
	}
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &orig), 0);
	DONE();
}
