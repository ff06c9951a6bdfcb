/* vm.mmap_min_addr (/proc/sys/vm/mmap_min_addr; 65536 on Trellis): an
 * unprivileged process cannot map below it (MAP_FIXED,
 * MAP_FIXED_NOREPLACE, mremap MREMAP_FIXED: EPERM), a hint below it is
 * moved up to it, and mapping at it works; root (CAP_SYS_RAWIO) may map
 * page 0. */
#include "next.h"
#include <sys/mman.h>

#define NOBODY 65534

/* The raw call: musl turns EPERM for a NULL hint into ENOMEM. */
static void *map_at(unsigned long addr, int flags)
{
	return (void *)syscall(SYS_mmap, addr, PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
}

int main(void)
{
	char buf[32];
	unsigned long min;
	pid_t pid;

	CHECK(t_read_file("/proc/sys/vm/mmap_min_addr", buf, sizeof buf) > 0);
	min = strtoul(buf, NULL, 10);
	if (t_is_trellis())
		CHECK_EQ(min, 65536);
	min = (min + PAGE - 1) & ~(PAGE - 1);
	if (min == 0)
		SKIP("vm.mmap_min_addr is 0 here");
	if (!t_is_root())
		SKIP("needs root to compare with an unprivileged user");

	pid = fork();
	if (pid == 0) {
		void *p, *q;

		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		CHECK_ERR(map_at(0, MAP_FIXED), EPERM);
		CHECK_ERR(map_at(min - PAGE, MAP_FIXED), EPERM);
		CHECK_ERR(map_at(0, MAP_FIXED_NOREPLACE), EPERM);
		p = map_at(min, MAP_FIXED);
		CHECK(p == (void *)min);
		if (p != MAP_FAILED) {
			*(volatile char *)p = 1;
			CHECK_EQ(munmap(p, PAGE), 0);
		}
		/* A hint below the minimum is raised to it (free here). */
		if (min > PAGE) {
			p = map_at(min / 2 & ~(PAGE - 1), 0);
			CHECK(p == (void *)min);
			if (p != MAP_FAILED)
				munmap(p, PAGE);
		}
		/* A NULL hint is no hint. */
		p = map_at(0, 0);
		CHECK(p != MAP_FAILED && (unsigned long)p >= min);
		/* mremap cannot move there either. */
		q = mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)0);
		CHECK(q == MAP_FAILED && errno == EPERM);
		if (p != MAP_FAILED)
			munmap(p, PAGE);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Root may map page 0 (in a child: nothing else must land there). */
	pid = fork();
	if (pid == 0) {
		void *p = map_at(0, MAP_FIXED);
		/* Through a volatile, so the compiler cannot assume NULL. */
		volatile uintptr_t base = (uintptr_t)p;

		CHECK(p == (void *)0);
		if (p != MAP_FAILED) {
			((volatile char *)base)[100] = 7;
			CHECK_EQ(((volatile char *)base)[100], 7);
			CHECK_EQ(munmap(p, PAGE), 0);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	DONE();
}
