/*
 * exhaust_fd_emfile: open descriptors until EMFILE at a limit of 1M
 * (issue 11 item 7).  As root, a child raises RLIMIT_NOFILE to fs.nr_open
 * (1,048,576) and dups one descriptor until dup fails with EMFILE: exactly
 * 1,048,576 minus what was open must succeed, the highest descriptor is
 * 1,048,575, and the kernel still answers (a pipe round trip, fcntl on the
 * highest descriptor, a forked child of the full process).  close_range
 * then closes them all, the table is usable again from fd 3, and after
 * the child is gone the kernel's memory is back where it was and a second
 * program (fork + exec) runs.  Needs root (the hard limit is raised).
 */
#include "next.h"
#include "exhaust.h"

#define NR_OPEN 1048576

struct figures {
	long open_before; /* descriptors open when the dups started */
	long dups;        /* dups that succeeded */
	int err;          /* errno of the dup that failed */
	int highest;      /* the last descriptor dup returned */
	long long kb_full, kb_closed; /* MemFree when full, after close_range */
	long long ms;
};

static long count_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* MemFree through a descriptor opened beforehand (a full table cannot
 * open /proc/meminfo). */
static long long memfree(int fd)
{
	static char buf[4096];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	const char *v;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	v = t_find_line(buf, "MemFree:");
	return v ? strtoll(v, NULL, 10) : -1;
}

/* Returns 0 if the limit could not be raised. */
static int fill(int out)
{
	struct rlimit rl = { NR_OPEN, NR_OPEN };
	struct figures f;
	long long t0;
	int p[2], fd, mfd;
	char c = 'x';
	pid_t pid;

	memset(&f, 0, sizeof f);
	CHECK_EQ(t_proc_kv("/proc/sys/fs/nr_open", ""), NR_OPEN);
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		/* A host container without CAP_SYS_RESOURCE. */
		CHECK(!t_is_trellis());
		return 0;
	}
	/* Only 0-2, the report pipe (3), meminfo (4) and a pipe (5, 6). */
	CHECK_EQ(dup2(out, 3), 3);
	CHECK_EQ(syscall(SYS_close_range, 4, ~0U, 0), 0);
	out = 3;
	mfd = open("/proc/meminfo", O_RDONLY);
	CHECK_EQ(mfd, 4);
	CHECK_EQ(pipe(p), 0);
	CHECK(p[0] == 5 && p[1] == 6);
	f.open_before = count_open();
	CHECK_EQ(f.open_before, 7);
	t0 = t_now_ns(CLOCK_MONOTONIC);
	for (;;) {
		fd = dup(p[1]);
		if (fd < 0) {
			f.err = errno;
			break;
		}
		f.highest = fd;
		f.dups++;
	}
	f.ms = (t_now_ns(CLOCK_MONOTONIC) - t0) / 1000000;
	CHECK_EQ(f.err, EMFILE);
	CHECK_ERR(fcntl(p[0], F_DUPFD, 0), EMFILE);
	CHECK_ERR(open("/dev/null", O_RDONLY), EMFILE);
	/* The kernel still works: through the highest descriptor, ... */
	CHECK_EQ(fcntl(f.highest, F_GETFD), 0);
	CHECK_EQ(write(f.highest, &c, 1), 1);
	c = 0;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'x');
	/* ... and a fork, whose child has the whole table too. */
	pid = fork();
	if (pid == 0) {
		char d = 'y';

		_exit(write(f.highest, &d, 1) == 1 ? 0 : 1);
	}
	CHECK(pid > 0);
	if (pid > 0)
		CHECK(t_wait_ok(pid));
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'y');
	f.kb_full = memfree(mfd);
	/* Close every dup; the table works again from the bottom. */
	CHECK_EQ(syscall(SYS_close_range, 7, ~0U, 0), 0);
	f.kb_closed = memfree(mfd);
	CHECK_EQ(count_open(), f.open_before);
	CHECK_EQ(dup(p[0]), 7);
	CHECK_EQ(write(out, &f, sizeof f), sizeof f);
	return 1;
}

int main(int argc, char **argv)
{
	struct x_usage before, after;
	struct figures f;
	int p[2];
	pid_t pid;

	X_MAYBE_SECOND(argc, argv);
	if (!t_is_root())
		SKIP("raising RLIMIT_NOFILE to 1M needs root");
	CHECK_EQ(pipe(p), 0);
	x_settle(&after);
	x_read_usage(&before);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (!fill(p[1]))
			_exit(T_SKIP_STATUS);
		CHILD_DONE();
	}
	close(p[1]);
	memset(&f, 0, sizeof f);
	if (read(p[0], &f, sizeof f) != sizeof f && pid > 0 &&
	    t_wait(pid) == T_SKIP_STATUS << 8)
		SKIP("cannot raise RLIMIT_NOFILE to 1M (no CAP_SYS_RESOURCE "
		     "here)");
	CHECK(pid > 0 && t_wait_ok(pid));
	x_read_usage(&after);
	t_note("%ld open, %ld dups in %lld ms, then errno %d; highest fd %d; "
	       "MemFree %lld kB full, %lld kB after close_range",
	       f.open_before, f.dups, f.ms, f.err, f.highest, f.kb_full,
	       f.kb_closed);
	CHECK_EQ(f.dups, NR_OPEN - f.open_before);
	CHECK_EQ(f.highest, NR_OPEN - 1);
	x_check_usage("before and after the full table", &before, &after, 0);
	x_run_second();
	DONE();
}
