/*
 * t.h - minimal check helpers for the Trellis user-space test suite.
 *
 * Every test is a standalone static program.  Checks never abort: a failed
 * check prints one diagnostic line and is recorded; DONE() turns the record
 * into the exit status (0 = all checks passed, 1 = at least one failed).
 *
 * Output goes straight to fd 1 with write(2), so there is no stdio buffer
 * that could be duplicated by fork() or lost by _exit().
 *
 * Children created by a test should finish with CHILD_DONE(), which
 * _exit()s with the child's own check record; the parent then asserts on the
 * exit status (see t_wait_ok()).
 */
#ifndef TRELLIS_T_H
#define TRELLIS_T_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

/* Addresses that are never mapped in a normal process. */
#define BAD_PTR ((void *)1)
#define BAD_PTR2 ((void *)0xdead0000UL)

static int t_failures;

static inline void t_out(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

__attribute__((format(printf, 1, 2)))
static inline void t_printf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	t_out(buf, (size_t)n);
}

static inline void t_fail(const char *file, int line, const char *expr, int err)
{
	t_failures++;
	t_printf("  check failed: %s:%d: %s (errno=%d %s)\n", file, line, expr,
		 err, strerror(err));
}

static inline void t_fail_err(const char *file, int line, const char *expr,
			      long got, int got_errno, int want_errno)
{
	t_failures++;
	t_printf("  check failed: %s:%d: %s: got %ld errno=%d (%s), "
		 "expected -1 errno=%d (%s)\n",
		 file, line, expr, got, got_errno, strerror(got_errno),
		 want_errno, strerror(want_errno));
}

static inline void t_fail_eq(const char *file, int line, const char *a,
			     const char *b, long long va, long long vb)
{
	t_failures++;
	t_printf("  check failed: %s:%d: %s == %s: got %lld (0x%llx), "
		 "expected %lld (0x%llx)\n",
		 file, line, a, b, va, (unsigned long long)va, vb,
		 (unsigned long long)vb);
}

/* CHECK(cond): cond must be true. errno is reported as it was afterwards. */
#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			int t_e_ = errno;                                  \
			t_fail(__FILE__, __LINE__, #cond, t_e_);           \
		}                                                          \
	} while (0)

/* CHECK_ERR(call, E): call must return -1 (or MAP_FAILED) with errno == E. */
#define CHECK_ERR(call, want)                                              \
	do {                                                               \
		errno = 0;                                                 \
		long t_r_ = (long)(call);                                  \
		int t_e_ = errno;                                          \
		if (t_r_ != -1 || t_e_ != (want))                          \
			t_fail_err(__FILE__, __LINE__, #call, t_r_, t_e_,  \
				   (want));                                \
	} while (0)

/* CHECK_EQ(a, b): integer equality; both values are printed on failure. */
#define CHECK_EQ(a, b)                                                     \
	do {                                                               \
		long long t_a_ = (long long)(a);                           \
		long long t_b_ = (long long)(b);                           \
		if (t_a_ != t_b_)                                          \
			t_fail_eq(__FILE__, __LINE__, #a, #b, t_a_, t_b_); \
	} while (0)

/* End of main(): exit status 1 if any check failed, else 0. */
#define DONE() return t_failures ? 1 : 0

/* fcntl(2) record lock `cmd` (F_SETLK, F_SETLKW, F_OFD_*) of `type` over
 * [start, start+len) from the start of the file. */
static inline int t_lk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof fl);
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	return fcntl(fd, cmd, &fl);
}

/* F_GETLK for [start, start+len): the conflicting lock, or l_type F_UNLCK
 * (-1 if the call failed). */
static inline struct flock t_getlk(int fd, short type, off_t start, off_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof fl);
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	fl.l_pid = 12345;
	if (fcntl(fd, F_GETLK, &fl) != 0)
		fl.l_type = -1;
	return fl;
}

/* Exit status of a test that could not run here (the runner's SKIP). */
#define T_SKIP_STATUS 77

/* End main as skipped (or failed, if a check already failed): the reason
 * goes to the output as a note, the runner reports SKIP. */
#define SKIP(...)                                                          \
	do {                                                               \
		t_printf("  note: skipped: " __VA_ARGS__);                 \
		t_printf("\n");                                            \
		return t_failures ? 1 : T_SKIP_STATUS;                     \
	} while (0)

/* End of a forked child: report its own checks through the exit status. */
#define CHILD_DONE() _exit(t_failures ? 1 : 0)

/* ---- helpers ----------------------------------------------------------- */

/* Wait for pid; return the raw wait status, or -1 on error. */
static inline int t_wait(pid_t pid)
{
	int st = 0;
	pid_t r;

	do {
		r = wait4(pid, &st, 0, NULL);
	} while (r < 0 && errno == EINTR);
	if (r != pid)
		return -1;
	return st;
}

/* Wait for pid and check that it exited with status 0. Returns 1 if so. */
#define t_wait_ok(pid) t_wait_ok_at(__FILE__, __LINE__, (pid))
static inline int t_wait_ok_at(const char *file, int line, pid_t pid)
{
	int st = t_wait(pid);

	if (st == -1) {
		t_failures++;
		t_printf("  check failed: %s:%d: wait4(%d) failed (errno=%d %s)\n",
			 file, line, (int)pid, errno, strerror(errno));
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	t_failures++;
	if (WIFEXITED(st))
		t_printf("  check failed: %s:%d: child %d exited with status %d\n",
			 file, line, (int)pid, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		t_printf("  check failed: %s:%d: child %d killed by signal %d\n",
			 file, line, (int)pid, WTERMSIG(st));
	else
		t_printf("  check failed: %s:%d: child %d odd status 0x%x\n",
			 file, line, (int)pid, st);
	return 0;
}

/* buf = a + b + c, truncated to fit n bytes (always NUL-terminated). */
static inline char *t_cat3(char *buf, size_t n, const char *a, const char *b,
			   const char *c)
{
	const char *parts[3] = { a, b, c };
	size_t len = 0;
	int i;

	if (n == 0)
		return buf;
	for (i = 0; i < 3; i++) {
		size_t l = strlen(parts[i]);
		if (l > n - 1 - len)
			l = n - 1 - len;
		memcpy(buf + len, parts[i], l);
		len += l;
	}
	buf[len] = 0;
	return buf;
}

/* Remove a directory tree (no symlink following). Errors are ignored. */
static inline void t_rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char sub[PATH_MAX];

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	if (d) {
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			t_cat3(sub, sizeof sub, path, "/", de->d_name);
			t_rmtree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

/*
 * Create a fresh per-test scratch directory /tmp/<name>.<pid> and store its
 * path in out.  Returns 0 on success, -1 (after recording a failure) if the
 * directory could not be created.
 */
static inline int t_mktmp(const char *name, char *out, size_t n)
{
	mkdir("/tmp", 01777); /* normally exists already (EEXIST) */
	snprintf(out, n, "/tmp/%s.%d", name, (int)getpid());
	t_rmtree(out);
	if (mkdir(out, 0755) != 0) {
		t_fail(__FILE__, __LINE__, "mkdir(scratch dir)", errno);
		return -1;
	}
	return 0;
}

/* Join dir and name into buf (static-size helper). */
static inline const char *t_join(char *buf, size_t n, const char *dir,
				 const char *name)
{
	return t_cat3(buf, n, dir, "/", name);
}

/* Create (truncate) path with the given contents. Returns 0 on success. */
static inline int t_write_file(const char *path, const void *data, size_t len,
			       mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	const char *p = data;

	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return close(fd);
}

/* Read up to n-1 bytes of path into buf and NUL-terminate; returns length. */
static inline ssize_t t_read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got + 1 < n) {
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = 0;
	close(fd);
	return (ssize_t)got;
}

/* Absolute path of this program, from argv[0] (which the runner sets). */
static inline const char *t_self_path(const char *argv0, char *buf, size_t n)
{
	char cwd[PATH_MAX];

	if (argv0[0] == '/' || getcwd(cwd, sizeof cwd) == NULL)
		t_cat3(buf, n, argv0, "", "");
	else
		t_cat3(buf, n, cwd, "/", argv0);
	return buf;
}

/* Sleep with the nanosleep syscall itself (libc may use clock_nanosleep). */
static inline void t_sleep_ns(long ns)
{
	struct timespec ts;

	ts.tv_sec = ns / 1000000000L;
	ts.tv_nsec = ns % 1000000000L;
	syscall(SYS_nanosleep, &ts, NULL);
}

/*
 * Poll (1 ms naps) until path exists.  Used to sequence parent and child
 * without pipes or signals.  The bound only protects against a hang on a
 * broken kernel; it is not a timing expectation.  Returns 0 if found.
 */
static inline int t_wait_for_file(const char *path)
{
	long i;

	for (i = 0; i < 600000; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		t_sleep_ns(1000000L);
	}
	return -1;
}

/* Create an empty flag file. Returns 0 on success. */
static inline int t_touch(const char *path)
{
	return t_write_file(path, "", 0, 0644);
}

#endif /* TRELLIS_T_H */
