/*
 * The vDSO (vdso(7)): AT_SYSINFO_EHDR points at an ELF image mapped as
 * "[vdso]" with its data page "[vvar]"; the C library's clock_gettime,
 * gettimeofday and time go through it and agree with the system calls,
 * interleaved; the data page cannot be made writable and a store to the
 * image, once made writable, stays private to the process that made it. On Trellis, a clock_settime shows through the vDSO at once.
 */
#include "t.h"
#include "next.h"

#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/time.h>

static long long ns(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

static void find(const char *tag, unsigned long *lo, unsigned long *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	*lo = *hi = 0;
	CHECK(f != NULL);
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, tag))
			sscanf(line, "%lx-%lx", lo, hi);
	if (f)
		fclose(f);
}

int main(void)
{
	unsigned long ehdr = getauxval(AT_SYSINFO_EHDR), lo, hi, vlo, vhi;
	CHECK(ehdr != 0);
	if (!ehdr)
		DONE();
	CHECK(memcmp((void *)ehdr, "\177ELF", 4) == 0);
	find("[vdso]", &lo, &hi);
	CHECK_EQ(lo, ehdr);
	CHECK(hi > lo);
	find("[vvar]", &vlo, &vhi);
	CHECK(vlo != 0 && vhi <= lo);

	/* Interleaved with the system call, each clock never goes back. */
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW };
	for (unsigned c = 0; c < sizeof clocks / sizeof clocks[0]; c++) {
		for (int i = 0; i < 200; i++) {
			struct timespec a, b, d;
			CHECK(clock_gettime(clocks[c], &a) == 0);
			CHECK(syscall(SYS_clock_gettime, clocks[c], &b) == 0);
			CHECK(clock_gettime(clocks[c], &d) == 0);
			if (ns(&a) > ns(&b) || ns(&b) > ns(&d)) {
				t_note("clock %d: %lld %lld %lld", clocks[c], ns(&a), ns(&b), ns(&d));
				CHECK(0);
				break;
			}
			CHECK(a.tv_nsec >= 0 && a.tv_nsec < 1000000000);
		}
	}
	/* gettimeofday and time agree with CLOCK_REALTIME. */
	struct timespec r1, r2;
	struct timeval tv;
	CHECK(clock_gettime(CLOCK_REALTIME, &r1) == 0);
	CHECK(gettimeofday(&tv, NULL) == 0);
	time_t t = time(NULL);
	CHECK(clock_gettime(CLOCK_REALTIME, &r2) == 0);
	long long us = tv.tv_sec * 1000000LL + tv.tv_usec;
	CHECK(us >= ns(&r1) / 1000 && us <= ns(&r2) / 1000);
	CHECK(t >= r1.tv_sec && t <= r2.tv_sec);
	/* CPU-time clocks go to the kernel and still work. */
	struct timespec cpu;
	CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0);
	CHECK_ERR(clock_gettime(12345, &cpu), EINVAL);

	/* The data page is never writable (Linux: EACCES, or EINVAL where
	 * system mappings are sealed). The image may be made writable
	 * (Trellis, older Linux) and a store to it stays private to the
	 * process that made it, or it may be sealed (Linux 6.15+). */
	CHECK(mprotect((void *)vlo, PAGE, PROT_READ | PROT_WRITE) == -1);
	CHECK(errno == EACCES || errno == EINVAL);
	pid_t pid = fork();
	if (pid == 0) {
		if (mprotect((void *)lo, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
			_exit(errno == EINVAL && !t_is_trellis() ? 0 : 2);
		((volatile char *)lo)[0] = 0;
		_exit(((volatile char *)lo)[0] == 0 ? 0 : 3);
	}
	CHECK_EQ(t_wait(pid), 0);
	CHECK(memcmp((void *)ehdr, "\177ELF", 4) == 0);
	struct timespec m;
	CHECK(clock_gettime(CLOCK_MONOTONIC, &m) == 0);

	/* Setting the clock shows through the vDSO (not on the host: it
	 * would move the host's clock). */
	if (t_is_trellis() && t_is_root()) {
		struct timespec now, set, back;
		CHECK(clock_gettime(CLOCK_REALTIME, &now) == 0);
		set = now;
		set.tv_sec += 100000;
		CHECK(clock_settime(CLOCK_REALTIME, &set) == 0);
		CHECK(clock_gettime(CLOCK_REALTIME, &back) == 0);
		CHECK(back.tv_sec >= set.tv_sec && back.tv_sec < set.tv_sec + 60);
		CHECK(time(NULL) >= set.tv_sec);
		CHECK(clock_settime(CLOCK_REALTIME, &now) == 0);
		CHECK(clock_gettime(CLOCK_REALTIME, &back) == 0);
		CHECK(back.tv_sec < set.tv_sec);
	}
	DONE();
}
