/*
 * uaccess_user_space_end: user buffers that end exactly at, one byte past,
 * and far past the end of user space (0x7ffffffff000, Linux's TASK_SIZE and
 * Trellis's USER_SPACE_END), for every family of system calls that takes a
 * buffer, in both copy directions.
 *
 * The last page below the end is mapped (MAP_FIXED_NOREPLACE), so a
 * buffer that starts in mapped memory runs straight off the end of user
 * space.  Issue 11: such a read/write/pread64/pwrite64 hung Trellis for
 * good (the copy reported its fault at the mapped start address, which the
 * kernel "resolved" again and again).  Linux refuses every range that leaves
 * user space with EFAULT (access_ok) before it transfers anything, so a
 * pipe keeps its data, a file its offset, and nothing is written; a buffer
 * that ends exactly at the end is fine.  Calls that copy only as many bytes
 * as they produce (getcwd, readlink) succeed with a large size as long as
 * what they write fits.
 *
 * Every expectation was checked on the host kernel (the `linux` layer runs
 * this same program there).
 */
#include "next.h"
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#define END 0x7ffffffff000UL
#define KERNEL_ADDR 0xffff800000000000UL

static char *const top = (char *)(END - PAGE); /* the last page */

/* A raw syscall's result as Linux returns it: a value, or -errno. */
#define RAW(...) raw_result(syscall(__VA_ARGS__))
static long raw_result(long r)
{
	return r == -1 ? -errno : r;
}

/* Buffer of `len` bytes ending `past` bytes after the end of user space
 * (past = 0: exactly at the end). */
static char *ending(size_t len, long past)
{
	return (char *)(END - len + past);
}

static int pipe_fill(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n) != 0)
		return -1;
	return n;
}

static void byte_buffers(const char *dir)
{
	char path[256], tmp[0x3000];
	int p[2], fd;
	long n;

	CHECK_EQ(pipe(p), 0);
	memset(tmp, 'q', sizeof tmp);

	/* write(2), from user memory: exact end, one past, far past, the
	 * issue's 0x1020 bytes from the last 0x20 of a page, outside. */
	CHECK_EQ(RAW(SYS_write, p[1], ending(16, 0), 16), 16);
	CHECK_EQ(pipe_fill(p[0]), 16);
	CHECK_EQ(RAW(SYS_write, p[1], ending(16, 1), 16), -EFAULT);
	CHECK_EQ(RAW(SYS_write, p[1], END - 0x20, 0x1020), -EFAULT);
	/* (On Trellis the stack ends right below the last page: this one
	 * starts in the stack, the reproducer.) */
	CHECK_EQ(RAW(SYS_write, p[1], END - PAGE - 0x10, 0x1020), -EFAULT);
	CHECK_EQ(RAW(SYS_pwrite64, p[1], END - PAGE - 0x10, 0x1020, 0), -ESPIPE);
	CHECK_EQ(RAW(SYS_write, p[1], top, 0x100000), -EFAULT);
	CHECK_EQ(RAW(SYS_write, p[1], END - 0x10, (size_t)-1 >> 1), -EFAULT);
	CHECK_EQ(RAW(SYS_write, p[1], END - 0x10, (size_t)-1), -EFAULT);
	CHECK_EQ(RAW(SYS_write, p[1], END, 1), -EFAULT);
	CHECK_EQ(RAW(SYS_write, p[1], KERNEL_ADDR, 1), -EFAULT);
	CHECK_EQ(pipe_fill(p[0]), 16); /* nothing more went in */

	/* read(2), into user memory: the pipe keeps its data on EFAULT. */
	CHECK_EQ(RAW(SYS_read, p[0], ending(16, 1), 16), -EFAULT);
	CHECK_EQ(RAW(SYS_read, p[0], END - 0x20, 0x1020), -EFAULT);
	CHECK_EQ(RAW(SYS_read, p[0], top, 0x100000), -EFAULT);
	CHECK_EQ(RAW(SYS_read, p[0], END, 16), -EFAULT);
	CHECK_EQ(pipe_fill(p[0]), 16);
	CHECK_EQ(RAW(SYS_read, p[0], ending(16, 0), 16), 16);
	CHECK_EQ(pipe_fill(p[0]), 0);

	/* A regular file: reads and writes that span both mapped pages. */
	t_join(path, sizeof path, dir, "f");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, tmp, sizeof tmp), (long)sizeof tmp);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(RAW(SYS_read, fd, ending(0x1000, 0), 0x1000), 0x1000);
	CHECK_EQ(top[PAGE - 1], 'q');
	CHECK_EQ(RAW(SYS_read, fd, ending(0x1000, 1), 0x1000), -EFAULT);
	CHECK_EQ(RAW(SYS_read, fd, END - 0x20, 0x1020), -EFAULT);
	CHECK_EQ(RAW(SYS_read, fd, END - PAGE - 0x10, 0x1020), -EFAULT);
	CHECK_EQ(RAW(SYS_pread64, fd, END - PAGE - 0x10, 0x1020, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_read, fd, top, 0x100000), -EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0x1000); /* the offset did not move */
	memset(top, 'w', PAGE);
	CHECK_EQ(RAW(SYS_write, fd, ending(0x1000, 1), 0x1000), -EFAULT);
	CHECK_EQ(RAW(SYS_write, fd, END - 0x20, 0x1020), -EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0x1000);
	CHECK_EQ(RAW(SYS_write, fd, ending(0x1000, 0), 0x1000), 0x1000);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0x2000);

	/* pread64/pwrite64 (the file is 0x3000 bytes). */
	CHECK_EQ(RAW(SYS_pread64, fd, ending(0x1000, 0), 0x1000, 0x10), 0x1000);
	CHECK_EQ(RAW(SYS_pread64, fd, ending(0x1000, 1), 0x1000, 0x10), -EFAULT);
	CHECK_EQ(RAW(SYS_pread64, fd, END - 0x20, 0x1020, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_pread64, fd, top, 0x100000, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_pread64, fd, END, 1, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_pwrite64, fd, ending(0x1000, 0), 0x1000, 0), 0x1000);
	CHECK_EQ(RAW(SYS_pwrite64, fd, ending(0x1000, 1), 0x1000, 0x2ff0), -EFAULT);
	CHECK_EQ(RAW(SYS_pwrite64, fd, END - 0x20, 0x1020, 0x2ff0), -EFAULT);
	CHECK_EQ(RAW(SYS_pwrite64, fd, top, 0x100000, 0x2ff0), -EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 0x3000); /* no byte went past 0x3000 */

	/* Special files: /dev/null and /dev/zero check the range too. */
	n = open("/dev/null", O_RDWR);
	CHECK(n >= 0);
	CHECK_EQ(RAW(SYS_write, n, ending(16, 0), 16), 16);
	CHECK_EQ(RAW(SYS_write, n, ending(16, 1), 16), -EFAULT);
	CHECK_EQ(RAW(SYS_write, n, top, 0x100000), -EFAULT);
	close(n);
	n = open("/dev/zero", O_RDONLY);
	CHECK(n >= 0);
	CHECK_EQ(RAW(SYS_read, n, ending(0x1000, 0), 0x1000), 0x1000);
	CHECK_EQ(RAW(SYS_read, n, ending(0x1000, 1), 0x1000), -EFAULT);
	CHECK_EQ(RAW(SYS_read, n, END - 0x20, 0x1020), -EFAULT);
	close(n);

	close(fd);
	close(p[0]);
	close(p[1]);
}

static void vectors(const char *dir)
{
	struct iovec *iov_end = (struct iovec *)(END - sizeof(struct iovec));
	struct iovec iov[2];
	char path[256];
	int p[2], fd;

	CHECK_EQ(pipe(p), 0);
	/* The iovec's buffer ends at / past the end. */
	iov[0].iov_base = ending(16, 0);
	iov[0].iov_len = 16;
	CHECK_EQ(RAW(SYS_writev, p[1], iov, 1), 16);
	iov[0].iov_base = ending(16, 1);
	CHECK_EQ(RAW(SYS_writev, p[1], iov, 1), -EFAULT);
	iov[0].iov_base = (void *)(END - 0x20);
	iov[0].iov_len = 0x1020;
	CHECK_EQ(RAW(SYS_writev, p[1], iov, 1), -EFAULT);
	/* A good first vector does not make a bad second one partial. */
	iov[0].iov_base = top;
	iov[0].iov_len = 8;
	iov[1].iov_base = ending(8, 1);
	iov[1].iov_len = 8;
	CHECK_EQ(RAW(SYS_writev, p[1], iov, 2), -EFAULT);
	CHECK_EQ(RAW(SYS_readv, p[0], iov, 2), -EFAULT);
	CHECK_EQ(pipe_fill(p[0]), 16);
	iov[0].iov_base = ending(16, 1);
	iov[0].iov_len = 16;
	CHECK_EQ(RAW(SYS_readv, p[0], iov, 1), -EFAULT);
	iov[0].iov_base = ending(16, 0);
	CHECK_EQ(RAW(SYS_readv, p[0], iov, 1), 16);
	/* The iovec array itself at / past the end. */
	iov_end->iov_base = top;
	iov_end->iov_len = 4;
	CHECK_EQ(RAW(SYS_writev, p[1], iov_end, 1), 4);
	CHECK_EQ(RAW(SYS_writev, p[1], (char *)iov_end + 1, 1), -EFAULT);
	CHECK_EQ(RAW(SYS_writev, p[1], iov_end, 2), -EFAULT);
	CHECK_EQ(RAW(SYS_readv, p[0], iov_end, 1), 4);

	/* preadv/pwritev on a file. */
	t_join(path, sizeof path, dir, "v");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	iov[0].iov_base = ending(0x1000, 0);
	iov[0].iov_len = 0x1000;
	CHECK_EQ(RAW(SYS_pwritev, fd, iov, 1, 0, 0), 0x1000);
	CHECK_EQ(RAW(SYS_preadv, fd, iov, 1, 0, 0), 0x1000);
	iov[0].iov_base = ending(0x1000, 1);
	CHECK_EQ(RAW(SYS_pwritev, fd, iov, 1, 0x1000, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_preadv, fd, iov, 1, 0, 0), -EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 0x1000);
	close(fd);

	/* vmsplice(2) gathers from user memory into a pipe. */
	iov[0].iov_base = ending(16, 0);
	iov[0].iov_len = 16;
	CHECK_EQ(RAW(SYS_vmsplice, p[1], iov, 1, 0), 16);
	iov[0].iov_base = ending(16, 1);
	CHECK_EQ(RAW(SYS_vmsplice, p[1], iov, 1, 0), -EFAULT);
	iov[0].iov_base = (void *)(END - 0x20);
	iov[0].iov_len = 0x1020;
	CHECK_EQ(RAW(SYS_vmsplice, p[1], iov, 1, 0), -EFAULT);
	CHECK_EQ(pipe_fill(p[0]), 16);
	close(p[0]);
	close(p[1]);
}

static void splice_offsets(const char *dir)
{
	loff_t *off_end = (loff_t *)(END - sizeof(loff_t));
	char path[256];
	int p[2], fd;

	CHECK_EQ(pipe(p), 0);
	t_join(path, sizeof path, dir, "s");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	/* splice(2) reads and writes back the offset through the pointer. */
	*off_end = 2;
	CHECK_EQ(RAW(SYS_splice, fd, off_end, p[1], NULL, 4, 0), 4);
	CHECK_EQ(*off_end, 6);
	CHECK_EQ(RAW(SYS_splice, fd, (char *)off_end + 1, p[1], NULL, 4, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_splice, fd, END, p[1], NULL, 4, 0), -EFAULT);
	CHECK_EQ(pipe_fill(p[0]), 4);
	*off_end = 0;
	CHECK_EQ(RAW(SYS_splice, p[0], NULL, fd, (char *)off_end + 1, 4, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_splice, p[0], NULL, fd, off_end, 4, 0), 4);
	CHECK_EQ(*off_end, 4);
	/* sendfile(2)'s offset pointer likewise. */
	*off_end = 0;
	CHECK_EQ(RAW(SYS_sendfile, p[1], fd, off_end, 3), 3);
	CHECK_EQ(*off_end, 3);
	CHECK_EQ(RAW(SYS_sendfile, p[1], fd, (char *)off_end + 1, 3), -EFAULT);
	CHECK_EQ(pipe_fill(p[0]), 3);
	close(fd);
	close(p[0]);
	close(p[1]);
}

/* A fixed-size structure written (or read) by the kernel: at the very end
 * it fits; one byte further, or starting at the end, it does not. */
#define STRUCT_CASES(size, call_at)                                        \
	do {                                                               \
		CHECK_EQ(call_at(END - (size)), 0);                        \
		CHECK_EQ(call_at(END - (size) + 1), -EFAULT);              \
		CHECK_EQ(call_at(END - 1), -EFAULT);                       \
		CHECK_EQ(call_at(END), -EFAULT);                           \
		CHECK_EQ(call_at(KERNEL_ADDR), -EFAULT);                   \
	} while (0)

static const char *g_file;
static int g_fd;

#define STAT_AT(a) RAW(SYS_stat, g_file, (a))
#define LSTAT_AT(a) RAW(SYS_lstat, g_file, (a))
#define FSTAT_AT(a) RAW(SYS_fstat, g_fd, (a))
#define FSTATAT_AT(a) RAW(SYS_newfstatat, AT_FDCWD, g_file, (a), 0)
#define STATX_AT(a) RAW(SYS_statx, AT_FDCWD, g_file, 0, 0x7ff, (a))
#define UNAME_AT(a) RAW(SYS_uname, (a))
#define CLOCK_AT(a) RAW(SYS_clock_gettime, CLOCK_MONOTONIC, (a))
#define GETRES_AT(a) RAW(SYS_clock_getres, CLOCK_MONOTONIC, (a))
#define TOD_AT(a) RAW(SYS_gettimeofday, (a), NULL)
#define SYSINFO_AT(a) RAW(SYS_sysinfo, (a))
#define RUSAGE_AT(a) RAW(SYS_getrusage, RUSAGE_SELF, (a))
#define OLDACT_AT(a) RAW(SYS_rt_sigaction, SIGUSR1, NULL, (a), 8)
#define OLDSS_AT(a) RAW(SYS_sigaltstack, NULL, (a))
#define PIPE2_AT(a) pipe2_at(a)
#define FIONREAD_AT(a) RAW(SYS_ioctl, g_fd, FIONREAD, (a))
#define GETRLIMIT_AT(a) RAW(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, (a))

static long pipe2_at(unsigned long a)
{
	long r = RAW(SYS_pipe2, a, 0);

	if (r == 0) {
		close(((int *)a)[0]);
		close(((int *)a)[1]);
	}
	return r;
}

/* Structures the kernel writes to user memory. */
static void struct_out(const char *dir)
{
	char path[256];
	int p[2];

	t_join(path, sizeof path, dir, "f");
	g_file = path;
	g_fd = open(path, O_RDONLY);
	CHECK(g_fd >= 0);
	STRUCT_CASES(144, STAT_AT);
	STRUCT_CASES(144, LSTAT_AT);
	STRUCT_CASES(144, FSTAT_AT);
	STRUCT_CASES(144, FSTATAT_AT);
	STRUCT_CASES(256, STATX_AT);
	STRUCT_CASES(390, UNAME_AT);
	STRUCT_CASES(16, CLOCK_AT);
	STRUCT_CASES(16, GETRES_AT);
	STRUCT_CASES(16, TOD_AT);
	STRUCT_CASES(112, SYSINFO_AT);
	STRUCT_CASES(144, RUSAGE_AT);
	STRUCT_CASES(32, OLDACT_AT);
	STRUCT_CASES(24, OLDSS_AT);
	STRUCT_CASES(8, PIPE2_AT);
	STRUCT_CASES(16, GETRLIMIT_AT);
	close(g_fd);
	CHECK_EQ(pipe(p), 0);
	g_fd = p[0];
	STRUCT_CASES(4, FIONREAD_AT);
	close(p[0]);
	close(p[1]);
}

/* Structures the kernel reads from user memory. */
static void struct_in(void)
{
	struct timespec *ts = (struct timespec *)(END - sizeof *ts);
	stack_t *ss = (stack_t *)(END - sizeof *ss);
	char *act = (char *)(END - 32);
	struct pollfd *pfd = (struct pollfd *)(END - sizeof *pfd);
	struct timeval *tv = (struct timeval *)(END - sizeof *tv);
	unsigned long *fds = (unsigned long *)(END - 8);

	memset(act, 0, 32); /* SIG_DFL, no flags, empty mask */
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, act, NULL, 8), 0);
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, act + 1, NULL, 8), -EFAULT);
	CHECK_EQ(RAW(SYS_rt_sigaction, SIGUSR1, END, NULL, 8), -EFAULT);

	memset(ss, 0, sizeof *ss);
	ss->ss_flags = SS_DISABLE;
	CHECK_EQ(RAW(SYS_sigaltstack, ss, NULL), 0);
	CHECK_EQ(RAW(SYS_sigaltstack, (char *)ss + 1, NULL), -EFAULT);
	CHECK_EQ(RAW(SYS_sigaltstack, END, NULL), -EFAULT);

	ts->tv_sec = 0;
	ts->tv_nsec = 1;
	CHECK_EQ(RAW(SYS_nanosleep, ts, NULL), 0);
	CHECK_EQ(RAW(SYS_nanosleep, (char *)ts + 1, NULL), -EFAULT);
	CHECK_EQ(RAW(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, ts, NULL), 0);
	CHECK_EQ(RAW(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (char *)ts + 1, NULL),
		 -EFAULT);

	/* poll(2): the array is read and revents written back. */
	pfd->fd = -1;
	pfd->events = POLLIN;
	pfd->revents = 7;
	CHECK_EQ(RAW(SYS_poll, pfd, 1, 0), 0);
	CHECK_EQ(pfd->revents, 0);
	CHECK_EQ(RAW(SYS_poll, (char *)pfd + 1, 1, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_poll, pfd, 2, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_poll, (char *)pfd - 0x1000, 0x202, 0), -EFAULT);
	ts->tv_sec = 0;
	ts->tv_nsec = 0;
	CHECK_EQ(RAW(SYS_ppoll, top, 0, ts, NULL, 8), 0);
	CHECK_EQ(RAW(SYS_ppoll, top, 0, (char *)ts + 1, NULL, 8), -EFAULT);

	/* select(2): nfds decides how many fd_set bytes are touched (up to
	 * the size of the descriptor table, which fd 100 makes at least 128
	 * wherever we run). */
	CHECK_EQ(dup2(0, 100), 100);
	*fds = 0;
	tv->tv_sec = 0;
	tv->tv_usec = 0;
	CHECK_EQ(RAW(SYS_select, 64, fds, NULL, NULL, tv), 0);
	CHECK_EQ(RAW(SYS_select, 64, (char *)fds + 1, NULL, NULL, tv), -EFAULT);
	CHECK_EQ(RAW(SYS_select, 65, fds, NULL, NULL, tv), -EFAULT);
	CHECK_EQ(RAW(SYS_select, 64, NULL, fds, NULL, tv), 0);
	CHECK_EQ(RAW(SYS_select, 65, NULL, NULL, fds, tv), -EFAULT);
	CHECK_EQ(RAW(SYS_select, 0, NULL, NULL, NULL, (char *)tv + 1), -EFAULT);
	close(100);
}

static void strings(const char *dir)
{
	char link[256], *p;

	/* getcwd copies only the path: a large size is fine if it fits. */
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(RAW(SYS_getcwd, ending(2, 0), 2), 2);
	CHECK_EQ(*(char *)(END - 1), 0);
	CHECK_EQ(RAW(SYS_getcwd, ending(2, 0), 0x1000), 2);
	CHECK_EQ(RAW(SYS_getcwd, ending(2, 1), 2), -EFAULT);
	CHECK_EQ(RAW(SYS_getcwd, END, 2), -EFAULT);

	/* readlink likewise copies only the target (no NUL). */
	t_join(link, sizeof link, dir, "l");
	CHECK_EQ(symlink("abcd", link), 0);
	CHECK_EQ(RAW(SYS_readlink, link, ending(4, 0), 4), 4);
	CHECK(memcmp((char *)(END - 4), "abcd", 4) == 0);
	CHECK_EQ(RAW(SYS_readlink, link, ending(4, 0), 0x1000), 4);
	CHECK_EQ(RAW(SYS_readlink, link, ending(4, 1), 4), -EFAULT);
	CHECK_EQ(RAW(SYS_readlink, link, END, 4), -EFAULT);

	/* A path that ends exactly at the end (NUL is the last byte), and
	 * one whose NUL would be past it. */
	p = ending(2, 0);
	p[0] = '/';
	p[1] = 0;
	CHECK_EQ(RAW(SYS_access, p, F_OK), 0);
	p[1] = '/';
	CHECK_EQ(RAW(SYS_access, p, F_OK), -EFAULT);
	memset(ending(100, 0), '/', 100);
	CHECK_EQ(RAW(SYS_access, ending(100, 0), F_OK), -EFAULT);
	CHECK_EQ(RAW(SYS_chdir, END - 1, F_OK), -EFAULT);
}

static void futexes(void)
{
	int *word = (int *)(END - 4);

	*word = 5;
	CHECK_EQ(RAW(SYS_futex, word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0), -EAGAIN);
	CHECK_EQ(RAW(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 0);
	CHECK_EQ(RAW(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0), 0);
	CHECK_EQ(RAW(SYS_futex, END, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0), -EFAULT);
	/* (A private wake at exactly END reads nothing; Linux 6.x's
	 * access_ok() for small sizes lets it return 0, older kernels give
	 * EFAULT: one page further is outside for both.) */
	CHECK_EQ(RAW(SYS_futex, END + PAGE, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0),
		 -EFAULT);
	CHECK_EQ(RAW(SYS_futex, END, FUTEX_WAKE, 1, NULL, NULL, 0), -EFAULT);
	CHECK_EQ(RAW(SYS_futex, END - 3, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), -EINVAL);
	CHECK_EQ(RAW(SYS_futex, KERNEL_ADDR, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0), -EFAULT);
}

static void directory_listing(const char *dir)
{
	char sub[256];
	int fd;

	/* An empty directory lists "." and ".." (24 bytes each).  Linux
	 * checks each record as it writes it (no check of the whole count up
	 * front): records that fit are returned, the first one that would
	 * leave user space ends the listing, and it is EFAULT only if no
	 * record fitted. */
	t_join(sub, sizeof sub, dir, "d");
	CHECK_EQ(mkdir(sub, 0755), 0);
	fd = open(sub, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_EQ(RAW(SYS_getdents64, fd, ending(48, 0), 48), 48);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(RAW(SYS_getdents64, fd, END - 0x100, 0x1000), 48);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(RAW(SYS_getdents64, fd, END - 0x20, 0x1000), 24);
	CHECK_EQ(((unsigned short *)(END - 0x20 + 16))[0], 24); /* d_reclen */
	CHECK_EQ(RAW(SYS_getdents64, fd, END - 0x20, 0x1000), 24); /* ".." */
	CHECK_EQ(RAW(SYS_getdents64, fd, END - 0x20, 0x1000), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(RAW(SYS_getdents64, fd, END - 0x10, 0x1000), -EFAULT);
	CHECK_EQ(RAW(SYS_getdents64, fd, END, 0x100), -EFAULT);
	CHECK_EQ(RAW(SYS_getdents64, fd, KERNEL_ADDR, 0x100), -EFAULT);
	CHECK_EQ(RAW(SYS_getdents64, fd, ending(48, 0), 48), 48);
	close(fd);
}

static void terminal(void)
{
	char name[64];
	int m, s;

	if (t_openpty(&m, &s, name, sizeof name) != 0) {
		t_note("no pseudo-terminals: TCGETS/TCSETS cases skipped");
		return;
	}
	/* The kernel's struct termios is 36 bytes. */
	CHECK_EQ(RAW(SYS_ioctl, s, TCGETS, END - 36), 0);
	CHECK_EQ(RAW(SYS_ioctl, s, TCGETS, END - 35), -EFAULT);
	CHECK_EQ(RAW(SYS_ioctl, s, TCGETS, END), -EFAULT);
	CHECK_EQ(RAW(SYS_ioctl, s, TCSETS, END - 36), 0);
	CHECK_EQ(RAW(SYS_ioctl, s, TCSETS, END - 35), -EFAULT);
	CHECK_EQ(RAW(SYS_ioctl, s, TIOCGWINSZ, END - 8), 0);
	CHECK_EQ(RAW(SYS_ioctl, s, TIOCGWINSZ, END - 7), -EFAULT);
	close(s);
	close(m);
}

int main(void)
{
	char dir[256];
	void *m;

	m = mmap(top, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED && errno == EEXIST)
		SKIP("the last page of user space is in use");
	CHECK(m == top);
	if (m != top)
		DONE();
	memset(top, 'x', PAGE);
	if (t_mktmp("uaccess_end", dir, sizeof dir) != 0)
		DONE();

	byte_buffers(dir);
	vectors(dir);
	splice_offsets(dir);
	struct_out(dir);
	struct_in();
	strings(dir);
	futexes();
	directory_listing(dir);
	terminal();

	t_rmtree(dir);
	DONE();
}
