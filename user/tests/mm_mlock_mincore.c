/* mincore(2) residency, msync(2) validation, and the mlock family:
 * mlock/mlock2/munlock/mlockall/munlockall, VmLck in /proc/self/status,
 * RLIMIT_MEMLOCK for an unprivileged process. */
#include "next.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

static void *map(size_t len, int flags)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
}

/* Residency of n pages at p as a string of '0'/'1', or "ERR". */
static const char *resident(void *p, size_t n)
{
	static char out[64];
	unsigned char v[64];

	if (mincore(p, n * PAGE, v) != 0)
		return "ERR";
	for (size_t i = 0; i < n; i++)
		out[i] = (v[i] & 1) ? '1' : '0';
	out[n] = 0;
	return out;
}

#define CHECK_RES(p, n, want) do { \
	const char *r_ = resident((p), (n)); \
	if (strcmp(r_, (want))) { \
		t_printf("  residency %s, expected %s\n", r_, (want)); \
		CHECK(!strcmp(r_, (want))); \
	} } while (0)

/* VmLck of this process in kB, or -1. */
static long vmlck(void)
{
	char buf[4096], *p;

	if (t_read_file("/proc/self/status", buf, sizeof buf) <= 0)
		return -1;
	p = strstr(buf, "VmLck:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

int main(void)
{
	char *a = map(4 * PAGE, MAP_PRIVATE), *hole;
	unsigned char vec[8];

	/* mincore: untouched anonymous pages are not resident; touched
	 * ones are; MADV_DONTNEED drops them. */
	CHECK(a != MAP_FAILED);
	CHECK_RES(a, 4, "0000");
	a[PAGE] = 1;
	(void)*(volatile char *)(a + 3 * PAGE);
	CHECK_RES(a, 4, "0101");
	CHECK_EQ(madvise(a + PAGE, PAGE, MADV_DONTNEED), 0);
	CHECK_RES(a, 4, "0001");
	/* PROT_NONE pages keep their residency. */
	a[0] = 1;
	CHECK_EQ(mprotect(a, PAGE, PROT_NONE), 0);
	CHECK_RES(a, 1, "1");
	CHECK_EQ(mprotect(a, PAGE, PROT_READ | PROT_WRITE), 0);
	/* Shared memory touched by a child is resident for the parent. */
	{
		char *s = map(2 * PAGE, MAP_SHARED);
		pid_t pid = fork();
		if (pid == 0) {
			s[PAGE] = 1;
			_exit(0);
		}
		t_wait_ok(pid);
		CHECK_RES(s, 2, "01");
		munmap(s, 2 * PAGE);
	}
	/* File pages with data are resident (tmpfs keeps them in memory). */
	{
		int fd = memfd_create("mincore", 0);
		char *f;
		CHECK_EQ(ftruncate(fd, 2 * PAGE), 0);
		CHECK_EQ(pwrite(fd, "x", 1, 0), 1);
		CHECK_EQ(pwrite(fd, "y", 1, PAGE), 1);
		f = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
		CHECK(f != MAP_FAILED);
		CHECK_RES(f, 2, "11");
		CHECK_EQ(msync(f, 2 * PAGE, MS_SYNC), 0);
		CHECK_EQ(msync(f, PAGE, MS_ASYNC | MS_INVALIDATE), 0);
		munmap(f, 2 * PAGE);
		close(fd);
	}
	/* mincore errors. */
	hole = a + 2 * PAGE;
	CHECK_EQ(munmap(hole, PAGE), 0);
	CHECK_ERR(mincore(a, 4 * PAGE, vec), ENOMEM);
	CHECK_ERR(mincore(hole, PAGE, vec), ENOMEM);
	CHECK_ERR(mincore(a + 1, PAGE, vec), EINVAL);
	CHECK_ERR(mincore(a, PAGE, BAD_PTR2), EFAULT);
	CHECK_ERR(mincore(a, -1L, vec), ENOMEM);
	CHECK_ERR(mincore((void *)0x7ffffffff000UL, 2 * PAGE, vec), ENOMEM);
	CHECK_EQ(mincore(a, 0, vec), 0);
	CHECK_EQ(mincore(a, 2 * PAGE - 1, vec), 0);

	/* msync: flags and alignment, then unmapped pages. */
	CHECK_EQ(msync(a, 2 * PAGE, MS_SYNC), 0);
	CHECK_EQ(msync(a, PAGE, 0), 0);
	CHECK_EQ(msync(a, PAGE, MS_ASYNC), 0);
	CHECK_EQ(msync(a, 0, MS_SYNC), 0);
	CHECK_EQ(msync(hole, 0, MS_SYNC), 0);
	CHECK_ERR(msync(a, PAGE, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK_ERR(msync(a, PAGE, 8), EINVAL);
	CHECK_ERR(msync(a + 1, PAGE, MS_SYNC), EINVAL);
	CHECK_ERR(msync(a, 4 * PAGE, MS_SYNC), ENOMEM);
	CHECK_ERR(msync(hole, PAGE, MS_SYNC), ENOMEM);
	CHECK_ERR(msync(a, -PAGE, MS_SYNC), ENOMEM);

	/* mlock: any alignment, faults the pages in, counts in VmLck. */
	{
		char *m = map(4 * PAGE, MAP_PRIVATE);
		long before = vmlck();
		CHECK(before >= 0);
		CHECK_RES(m, 4, "0000");
		CHECK_EQ(mlock(m + 100, PAGE), 0); /* two pages */
		CHECK_RES(m, 4, "1100");
		CHECK_EQ(vmlck(), before + 8);
		CHECK_EQ(mlock(m, PAGE), 0); /* already locked: no change */
		CHECK_EQ(vmlck(), before + 8);
		CHECK_EQ(munlock(m, PAGE), 0);
		CHECK_EQ(vmlck(), before + 4);
		/* MLOCK_ONFAULT locks without faulting in. */
		CHECK_EQ(syscall(SYS_mlock2, m + 2 * PAGE, 2 * PAGE, MLOCK_ONFAULT), 0);
		CHECK_RES(m, 4, "1100");
		CHECK_EQ(vmlck(), before + 12);
		CHECK_EQ(syscall(SYS_mlock2, m, PAGE, 0), 0);
		CHECK_ERR(syscall(SYS_mlock2, m, PAGE, 2), EINVAL);
		CHECK_EQ(munlock(m, 4 * PAGE), 0);
		CHECK_EQ(vmlck(), before);
		/* Locks are not inherited. */
		CHECK_EQ(mlock(m, PAGE), 0);
		{
			pid_t pid = fork();
			if (pid == 0)
				_exit(vmlck() == 0 ? 0 : 1);
			t_wait_ok(pid);
		}
		/* Unmapping drops the lock. */
		munmap(m, 4 * PAGE);
		CHECK_EQ(vmlck(), before);
		/* Errors: unmapped pages (also for munlock), overflow. */
		CHECK_ERR(mlock(hole, PAGE), ENOMEM);
		CHECK_ERR(mlock(a, 4 * PAGE), ENOMEM);
		CHECK_ERR(munlock(hole, PAGE), ENOMEM);
		CHECK_ERR(mlock(a, -PAGE), EINVAL);
		CHECK_EQ(mlock(hole, 0), 0);
		CHECK_EQ(munlock(a, 0), 0);
	}

	/* mlockall: flags, then MCL_CURRENT faults in what is mapped and
	 * MCL_FUTURE locks (and faults in) what is mapped later. */
	CHECK_ERR(mlockall(0), EINVAL);
	CHECK_ERR(mlockall(MCL_ONFAULT), EINVAL);
	CHECK_ERR(mlockall(8), EINVAL);
	CHECK_ERR(mlockall(MCL_CURRENT | 8), EINVAL);
	{
		pid_t pid = fork();
		if (pid == 0) {
			char *m = map(2 * PAGE, MAP_PRIVATE), *later;
			if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
				_exit(2);
			if (strcmp(resident(m, 2), "11"))
				_exit(3);
			later = map(2 * PAGE, MAP_PRIVATE);
			if (strcmp(resident(later, 2), "11"))
				_exit(4);
			if (vmlck() <= 0)
				_exit(5);
			if (munlockall() != 0 || vmlck() != 0)
				_exit(6);
			later = map(2 * PAGE, MAP_PRIVATE);
			if (strcmp(resident(later, 2), "00"))
				_exit(7);
			_exit(0);
		}
		t_wait_ok(pid);
	}
	CHECK_EQ(munlockall(), 0);

	/* RLIMIT_MEMLOCK binds an unprivileged process: ENOMEM past it,
	 * EPERM when it is 0. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			struct rlimit rl = { 2 * PAGE, 2 * PAGE };
			char *m = map(4 * PAGE, MAP_PRIVATE);
			if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 || setuid(65534) != 0)
				_exit(2);
			if (mlock(m, PAGE) != 0)
				_exit(3);
			if (mlock(m + PAGE, PAGE) != 0)
				_exit(4);
			if (mlock(m, 2 * PAGE) != 0) /* already locked */
				_exit(5);
			if (mlock(m + 2 * PAGE, PAGE) != -1 || errno != ENOMEM)
				_exit(6);
			if (mlockall(MCL_CURRENT) != -1 || errno != ENOMEM)
				_exit(7);
			rl.rlim_cur = 0;
			if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
				_exit(8);
			if (mlock(m + 2 * PAGE, PAGE) != -1 || errno != EPERM)
				_exit(9);
			if (munlock(m, 4 * PAGE) != 0)
				_exit(10);
			_exit(0);
		}
		t_wait_ok(pid);
	}
	DONE();
}
