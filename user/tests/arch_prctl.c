/*
 * arch_prctl ARCH_SET_FS / ARCH_GET_FS (raw syscall).  libc keeps its thread
 * pointer (and errno) in FS, so while our own FS base is installed the code
 * uses only inline-asm syscalls and touches no TLS; the original base is
 * restored before any check is evaluated.
 */
#include "t.h"

#define X_ARCH_SET_GS 0x1001
#define X_ARCH_SET_FS 0x1002
#define X_ARCH_GET_FS 0x1003
#define X_ARCH_GET_GS 0x1004

static inline long sc2(long n, long a, long b)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline unsigned long read_fs0(void)
{
	unsigned long v;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	return v;
}

static inline unsigned long read_fs8(void)
{
	unsigned long v;

	__asm__ volatile("mov %%fs:8, %0" : "=r"(v));
	return v;
}

static unsigned long block[8] __attribute__((aligned(64)));

int main(void)
{
	unsigned long orig = 0, got = 0, got2 = 0, seen0, seen8;
	long r_set, r_get, r_restore, r_get2;
	pid_t pid;

	/* Read the current FS base; libc's thread pointer is self-referential
	 * (x86-64 TLS ABI: %fs:0 holds the thread pointer itself). */
	CHECK_EQ(sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)&orig), 0);
	CHECK(orig != 0);
	CHECK_EQ(read_fs0(), orig);

	/* Install our own block as the FS base, observe it, restore. */
	block[0] = (unsigned long)block;
	block[1] = 0x1234abcdUL;
	r_set = sc2(SYS_arch_prctl, X_ARCH_SET_FS, (long)block);
	r_get = sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)&got);
	seen0 = read_fs0();
	seen8 = read_fs8();
	r_restore = sc2(SYS_arch_prctl, X_ARCH_SET_FS, (long)orig);
	r_get2 = sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)&got2);
	/* TLS is usable again from here on. */
	CHECK_EQ(r_set, 0);
	CHECK_EQ(r_get, 0);
	CHECK_EQ(got, (unsigned long)block);
	CHECK_EQ(seen0, (unsigned long)block);
	CHECK_EQ(seen8, 0x1234abcdUL);
	CHECK_EQ(r_restore, 0);
	CHECK_EQ(r_get2, 0);
	CHECK_EQ(got2, orig);
	CHECK_EQ(read_fs0(), orig);

	/* errno (TLS) works after the restore. */
	errno = 0;
	CHECK_ERR(close(-1), EBADF);

	/* The FS base is inherited by a forked child. */
	pid = fork();
	if (pid == 0) {
		unsigned long c = 0;
		long r = sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)&c);
		_exit(r == 0 && c == orig ? 0 : 1);
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* A child's change of FS base does not affect the parent. */
	pid = fork();
	if (pid == 0) {
		long r = sc2(SYS_arch_prctl, X_ARCH_SET_FS, (long)block);
		sc2(SYS_exit_group, r == 0 ? 0 : 1, 0);
		for (;;)
			;
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
	got = 0;
	CHECK_EQ(sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)&got), 0);
	CHECK_EQ(got, orig);

	/* EFAULT: ARCH_GET_FS into an unwritable address. */
	CHECK_EQ(sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)BAD_PTR2), -EFAULT);
	CHECK_ERR(syscall(SYS_arch_prctl, X_ARCH_GET_FS, BAD_PTR), EFAULT);

	/* EINVAL: unknown code. */
	CHECK_ERR(syscall(SYS_arch_prctl, 0x9999, 0), EINVAL);

	/* EPERM: a base outside the user address space (nothing changes). */
	CHECK_EQ(sc2(SYS_arch_prctl, X_ARCH_SET_FS, (long)0xffff800000000000UL),
		 -EPERM);
	got = 0;
	CHECK_EQ(sc2(SYS_arch_prctl, X_ARCH_GET_FS, (long)&got), 0);
	CHECK_EQ(got, orig);

	DONE();
}
