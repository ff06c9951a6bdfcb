/*
 * syscall_robustness: every syscall of the first Linux slice is called many
 * times with garbage arguments and must come back with an error or a value.
 *
 * Arguments are drawn by a deterministic PRNG from pools of bad values:
 * pointers are ONLY unmapped, kernel or non-canonical addresses (never a
 * valid buffer, so no real path is ever named and nothing on the host can
 * change); fds are bad (-1, 999999, INT_MAX, random) or two harmless fds of
 * our own (a read-only scratch file and its directory); flags are random;
 * lengths and offsets are huge or negative.
 *
 * Each syscall's batch runs in a forked child, calling the kernel with
 * inline-asm `syscall` (no libc, no errno, so no TLS).  munmap, mprotect,
 * madvise and mmap(MAP_FIXED) with garbage can legitimately unmap or protect
 * the child's own code; death of a child by a signal is accepted and
 * reported as a note, and the batch continues in a fresh child after the
 * call that killed it.  Progress and results go through a MAP_SHARED page.
 *
 * Checked: every call returns, with either a value or -errno for a real
 * errno (1..133, never a kernel-internal code such as ERESTARTSYS); the
 * parent survives; plus a handful of exact errnos (EFAULT, EBADF, ENOSYS,
 * EINVAL) on calls with one bad argument.
 *
 * Never passed (they could hurt the host even with bad pointers):
 * madvise MADV_HWPOISON/MADV_SOFT_OFFLINE (root can poison real pages),
 * mmap MAP_POPULATE/MAP_LOCKED (could commit gigabytes), arch_prctl
 * shadow-stack and CPUID codes.
 */
#include "t.h"
#include <sys/mman.h>

#define PER_SYSCALL 160
#define MAX_DEATHS 12
#define SEED 0x5eed7e11ULL

#define X_ARCH_SET_FS 0x1002
#define X_ARCH_GET_FS 0x1003

static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * Argument kinds:
 *   P pointer (always invalid)     F fd            I flags / int
 *   L length / offset (huge)       K pid           S signal number
 *   C clock id                     A arch_prctl code
 *   W wait4 options (WNOHANG|...)  M madvise advice  N mmap flags
 *   X fcntl arg (pointer or int)   R ioctl request
 */
struct sc {
	const char *name;
	long nr;
	const char *args;
};

static const struct sc table[] = {
	{ "read", SYS_read, "FPL" },
	{ "write", SYS_write, "FPL" },
	{ "open", SYS_open, "PII" },
	{ "close", SYS_close, "F" },
	{ "stat", SYS_stat, "PP" },
	{ "fstat", SYS_fstat, "FP" },
	{ "lstat", SYS_lstat, "PP" },
	{ "lseek", SYS_lseek, "FLI" },
	{ "mmap", SYS_mmap, "PLINFL" },
	{ "mprotect", SYS_mprotect, "PLI" },
	{ "munmap", SYS_munmap, "PL" },
	{ "brk", SYS_brk, "P" },
	{ "rt_sigaction", SYS_rt_sigaction, "SPPL" },
	{ "rt_sigprocmask", SYS_rt_sigprocmask, "IPPL" },
	{ "ioctl", SYS_ioctl, "FRX" },
	{ "pread64", SYS_pread64, "FPLL" },
	{ "pwrite64", SYS_pwrite64, "FPLL" },
	{ "readv", SYS_readv, "FPI" },
	{ "writev", SYS_writev, "FPI" },
	{ "access", SYS_access, "PI" },
	{ "dup", SYS_dup, "F" },
	{ "dup2", SYS_dup2, "FF" },
	{ "getpid", SYS_getpid, "" },
	{ "getppid", SYS_getppid, "" },
	{ "getpgid", SYS_getpgid, "K" },
	{ "setpgid", SYS_setpgid, "KK" },
	{ "uname", SYS_uname, "P" },
	{ "fcntl", SYS_fcntl, "FIX" },
	{ "getdents64", SYS_getdents64, "FPL" },
	{ "getcwd", SYS_getcwd, "PL" },
	{ "chdir", SYS_chdir, "P" },
	{ "fchdir", SYS_fchdir, "F" },
	{ "rename", SYS_rename, "PP" },
	{ "mkdir", SYS_mkdir, "PI" },
	{ "rmdir", SYS_rmdir, "P" },
	{ "unlink", SYS_unlink, "P" },
	{ "readlink", SYS_readlink, "PPL" },
	{ "umask", SYS_umask, "I" },
	{ "gettimeofday", SYS_gettimeofday, "PP" },
	{ "sysinfo", SYS_sysinfo, "P" },
	{ "getuid", SYS_getuid, "" },
	{ "geteuid", SYS_geteuid, "" },
	{ "getgid", SYS_getgid, "" },
	{ "getegid", SYS_getegid, "" },
	{ "arch_prctl", SYS_arch_prctl, "AP" },
	{ "set_tid_address", SYS_set_tid_address, "P" },
	{ "set_robust_list", SYS_set_robust_list, "PL" },
	{ "clock_gettime", SYS_clock_gettime, "CP" },
	{ "nanosleep", SYS_nanosleep, "PP" },
	{ "openat", SYS_openat, "FPII" },
	{ "newfstatat", SYS_newfstatat, "FPPI" },
	{ "faccessat", SYS_faccessat, "FPI" },
	{ "readlinkat", SYS_readlinkat, "FPPL" },
	{ "renameat2", SYS_renameat2, "FPFPI" },
	{ "statx", SYS_statx, "FPIIP" },
	{ "prlimit64", SYS_prlimit64, "KIPP" },
	{ "getrlimit", SYS_getrlimit, "IP" },
	{ "getrandom", SYS_getrandom, "PLI" },
	{ "madvise", SYS_madvise, "PLM" },
	{ "dup3", SYS_dup3, "FFI" },
	{ "wait4", SYS_wait4, "KPWP" },
	{ "time", SYS_time, "P" },
};
#define NSC (sizeof table / sizeof table[0])

static const unsigned long bad_ptrs[] = {
	0UL,
	1UL,
	0xdead0000UL,
	0x7fffffffffffUL,
	0xffff800000000000UL,
	0xffffffff80000000UL,
	0x8000000000000000UL,
	~0UL,
};

static const unsigned long lengths[] = {
	0UL,
	1UL,
	8UL,	/* sigsetsize */
	24UL,	/* robust list head */
	4096UL,
	0x7fffffffUL,
	0x80000000UL,
	1UL << 62,
	~0UL,		/* SIZE_MAX, -1 */
	(unsigned long)-4096L,
	0x8000000000000000UL, /* LONG_MIN */
	0x7ffffffff000UL,
};

/* Shared between the parent and the batch children. */
struct shared {
	volatile long current;	 /* iteration being run */
	volatile long calls;	 /* calls that returned */
	volatile long errors;	 /* ... with -errno */
	volatile long bad;	 /* returns outside the valid encodings */
	volatile long bad_ret, bad_iter;
};

static struct shared *sh;
static int good_file_fd = -1, good_dir_fd = -1;
static pid_t self_pid;

static unsigned long long rng_state;

static unsigned long long rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static unsigned long pick(const unsigned long *pool, size_t n)
{
	return pool[rnd() % n];
}

static long gen_fd(void)
{
	switch (rnd() % 8) {
	case 0: return -1;
	case 1: return 999999;
	case 2: return INT_MAX;
	case 3: return INT_MIN;
	case 4: return -100; /* AT_FDCWD */
	case 5: return good_file_fd;
	case 6: return good_dir_fd;
	default: return (long)(unsigned)rnd() | 0x1000; /* never 0..2 */
	}
}

static long gen_int(void)
{
	switch (rnd() % 6) {
	case 0: return 0;
	case 1: return -1;
	case 2: return (long)(rnd() % 64);
	case 3: return 1L << (rnd() % 32);
	case 4: return (long)(int)rnd();
	default: return (long)rnd();
	}
}

static long gen_arg(char kind)
{
	switch (kind) {
	case 'P':
		return (long)pick(bad_ptrs, sizeof bad_ptrs / sizeof bad_ptrs[0]);
	case 'F':
		return gen_fd();
	case 'I':
		return gen_int();
	case 'L':
		if (rnd() % 5 == 0)
			return (long)rnd();
		return (long)pick(lengths, sizeof lengths / sizeof lengths[0]);
	case 'K':
		switch (rnd() % 7) {
		case 0: return 0;
		case 1: return -1;
		case 2: return self_pid;
		case 3: return 999999;
		case 4: return INT_MAX;
		case 5: return INT_MIN;
		default: return (long)(int)rnd();
		}
	case 'S':
		return (long)(rnd() % 72) - 2;
	case 'C':
		if (rnd() % 3 == 0)
			return (long)(int)rnd();
		return (long)(rnd() % 16) - 2;
	case 'A': {
		static const long codes[] = { 0x1001, 0x1002, 0x1003, 0x1004,
					      0, -1, 0x1000, 0x1005 };
		if (rnd() % 4 == 0)
			return (long)(rnd() % 0x1000); /* unknown, below 0x1000 */
		return codes[rnd() % (sizeof codes / sizeof codes[0])];
	}
	case 'W':
		return 1 /* WNOHANG */ | (gen_int() & ~0x1L);
	case 'M': {
		long a = (long)(rnd() % 130) - 4;
		if (a == 100 || a == 101) /* MADV_HWPOISON, MADV_SOFT_OFFLINE */
			a = 4;
		return a;
	}
	case 'N':
		/* MAP_POPULATE (0x8000) and MAP_LOCKED (0x2000) could commit
		 * huge amounts of memory. */
		return gen_int() & ~0xa000L;
	case 'X':
		return rnd() % 2 ? gen_arg('P') : gen_int();
	case 'R':
		switch (rnd() % 4) {
		case 0: return 0x5401; /* TCGETS */
		case 1: return 0x5413; /* TIOCGWINSZ */
		case 2: return 0x541B; /* FIONREAD */
		default: return (long)(unsigned)rnd();
		}
	}
	return 0;
}

/* The iteration's arguments depend only on (syscall index, iteration). */
static void gen_args(size_t idx, long iter, long args[6])
{
	const char *k = table[idx].args;
	int i;

	rng_state = SEED ^ ((unsigned long long)(idx + 1) << 32) ^
		    (unsigned long long)(iter + 1) * 0x9E3779B97F4A7C15ULL;
	rnd();
	for (i = 0; i < 6; i++)
		args[i] = k[i] ? gen_arg(k[i]) : (long)rnd();
	/* Extra registers beyond the signature stay garbage too. */
	for (i = (int)strlen(k); i < 6; i++)
		args[i] = (long)rnd();
}

static int valid_return(long r)
{
	if (r >= 0)
		return 1;
	/* A negative value must encode a real errno. */
	return r <= -1 && r >= -133;
}

static void run_batch(size_t idx, long start)
{
	long saved_fs = 0;
	long i, args[6], r;

	raw6(SYS_arch_prctl, X_ARCH_GET_FS, (long)&saved_fs, 0, 0, 0, 0);
	for (i = start; i < PER_SYSCALL; i++) {
		sh->current = i;
		gen_args(idx, i, args);
		r = raw6(table[idx].nr, args[0], args[1], args[2], args[3],
			 args[4], args[5]);
		if (table[idx].nr == SYS_arch_prctl)
			raw6(SYS_arch_prctl, X_ARCH_SET_FS, saved_fs, 0, 0, 0, 0);
		sh->calls++;
		if (r < 0 && r >= -4095)
			sh->errors++;
		/* mmap/brk return addresses, which are never negative. */
		if (!valid_return(r)) {
			sh->bad++;
			sh->bad_ret = r;
			sh->bad_iter = i;
		}
	}
	raw6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
}

static void exact_errnos(const char *dir)
{
	char path[PATH_MAX], buf[16];
	struct stat st;
	struct timespec ts;
	int fd;

	t_join(path, sizeof path, dir, "content");
	CHECK_EQ(t_write_file(path, "0123456789abcdef", 16, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);

	CHECK_ERR(read(fd, BAD_PTR2, 10), EFAULT);
	CHECK_ERR(read(fd, BAD_PTR, 10), EFAULT);
	CHECK_ERR(syscall(SYS_read, fd, 0xffff800000000000UL, 10), EFAULT);
	CHECK_ERR(syscall(SYS_read, fd, 0x8000000000000000UL, 10), EFAULT);
	CHECK_ERR(pread(fd, BAD_PTR2, 10, 0), EFAULT);
	CHECK_ERR(write(fd, BAD_PTR2, 10), EFAULT);
	CHECK_ERR(syscall(SYS_write, fd, 0xffffffff80000000UL, 10), EFAULT);
	CHECK_ERR(read(999999, buf, 1), EBADF);
	CHECK_ERR(read(-1, buf, 1), EBADF);
	CHECK_ERR(write(INT_MAX, buf, 1), EBADF);
	CHECK_ERR(close(999999), EBADF);
	CHECK_ERR(fstat(999999, &st), EBADF);
	CHECK_ERR(syscall(SYS_fstat, fd, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_open, BAD_PTR2, O_RDONLY), EFAULT);
	CHECK_ERR(syscall(SYS_open, NULL, O_RDONLY), EFAULT);
	CHECK_ERR(syscall(SYS_stat, 0xffff800000000000UL, &st), EFAULT);
	CHECK_ERR(syscall(SYS_uname, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_getcwd, BAD_PTR2, 4096), EFAULT);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, BAD_PTR2), EFAULT);
	CHECK_ERR(syscall(SYS_dup2, 999999, 100), EBADF);
	CHECK_ERR(syscall(SYS_mmap, 0, 0, PROT_READ, 0x22, -1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_munmap, 1, 4096), EINVAL);
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000000L;
	CHECK_ERR(syscall(SYS_nanosleep, &ts, NULL), EINVAL);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	CHECK_ERR(syscall(SYS_nanosleep, &ts, NULL), EINVAL);
	CHECK_ERR(syscall(1000), ENOSYS);
	CHECK_ERR(syscall(1000, -1L, -1L, -1L, -1L, -1L, -1L), ENOSYS);

	/* The file was not touched by the faulting writes. */
	CHECK_EQ(pread(fd, buf, 16, 0), 16);
	CHECK(memcmp(buf, "0123456789abcdef", 16) == 0);
	close(fd);
}

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	long total_calls = 0, total_errors = 0, deaths = 0;
	size_t idx;

	if (t_mktmp("syscall_robustness", dir, sizeof dir) != 0)
		DONE();
	self_pid = getpid();

	exact_errnos(dir);

	sh = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	CHECK(sh != MAP_FAILED);
	if (sh == MAP_FAILED)
		DONE();

	t_join(path, sizeof path, dir, "content");
	good_file_fd = open(path, O_RDONLY);
	good_dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(good_file_fd >= 3 && good_dir_fd >= 3);

	for (idx = 0; idx < NSC; idx++) {
		long start = 0;
		int died = 0;

		memset((void *)sh, 0, sizeof *sh);
		while (start < PER_SYSCALL) {
			pid_t pid = fork();
			int st;

			if (pid < 0) {
				CHECK(pid >= 0);
				break;
			}
			if (pid == 0)
				run_batch(idx, start);
			st = t_wait(pid);
			if (st == -1) {
				CHECK(st != -1);
				break;
			}
			if (WIFEXITED(st)) {
				CHECK_EQ(WEXITSTATUS(st), 0);
				break;
			}
			if (WIFSIGNALED(st)) {
				long args[6];

				gen_args(idx, sh->current, args);
				t_printf("  note: %s: batch child killed by "
					 "signal %d at call %ld (%#lx, %#lx, "
					 "%#lx, ...); continuing\n",
					 table[idx].name, WTERMSIG(st),
					 sh->current, args[0], args[1], args[2]);
				deaths++;
				start = sh->current + 1;
				if (++died >= MAX_DEATHS) {
					t_printf("  note: %s: %d deaths, rest "
						 "of the batch skipped\n",
						 table[idx].name, died);
					break;
				}
				continue;
			}
			CHECK(!"unexpected wait status");
			break;
		}
		if (sh->bad) {
			long args[6];

			gen_args(idx, sh->bad_iter, args);
			t_failures++;
			t_printf("  check failed: %s returned %ld (%#lx) at "
				 "call %ld (%#lx, %#lx, %#lx, ...): not a value "
				 "or -errno\n",
				 table[idx].name, sh->bad_ret,
				 (unsigned long)sh->bad_ret, sh->bad_iter,
				 args[0], args[1], args[2]);
		}
		total_calls += sh->calls;
		total_errors += sh->errors;
	}

	/* The parent is intact and the kernel still answers normally. */
	CHECK_EQ(getpid(), self_pid);
	CHECK_EQ(syscall(SYS_getpid), self_pid);
	CHECK_ERR(syscall(1000), ENOSYS);

	t_printf("  note: %zu syscalls, %ld calls returned (%ld errors), "
		 "%ld batch children killed by signals\n",
		 NSC, total_calls, total_errors, deaths);
	close(good_file_fd);
	close(good_dir_fd);
	t_rmtree(dir);
	DONE();
}
