/*
 * The vDSO: clock_gettime, gettimeofday, time and getcpu answered in user
 * mode. The kernel maps this shared object into every process, with its
 * data page ("vvar", kernel/src/vdso.rs) one page below the ELF header,
 * and passes its address as AT_SYSINFO_EHDR; the C library finds the
 * functions through the dynamic symbol table (version LINUX_2.6).
 *
 * The monotonic clock is the kernel's own computation, repeated here with
 * the same parameters: ((rdtsc - tsc_at_boot) * mult) >> 32. The wall
 * clock adds the wall time at boot, which clock_settime moves; the kernel
 * writes it under a sequence count (odd while it writes). Anything else
 * (CPU-time clocks, unknown ids, clock_getres, getcpu) is a system call.
 *
 * Built by kernel/build.rs: no libc, position independent, no relocations.
 */

typedef unsigned int u32;
typedef unsigned long u64;
typedef long i64;

struct vvar {
	u32 seq;
	u32 shift;
	u64 tsc_at_boot;
	u64 mult;
	u64 realtime_at_boot_ns;
};

struct timespec_ {
	i64 tv_sec;
	i64 tv_nsec;
};

struct timeval_ {
	i64 tv_sec;
	i64 tv_usec;
};

struct timezone_ {
	int tz_minuteswest;
	int tz_dsttime;
};

/* The page below the ELF header (__ehdr_start, from the linker). */
static inline const volatile struct vvar *vvar(void)
{
	const char *ehdr;
	__asm__("lea __ehdr_start(%%rip), %0" : "=r"(ehdr));
	return (const volatile struct vvar *)(ehdr - 4096);
}

#define barrier() __asm__ __volatile__("" ::: "memory")

static inline long syscall2(long nr, long a, long b)
{
	long ret;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b)
			     : "rcx", "r11", "memory");
	return ret;
}

static inline long syscall3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b), "d"(c)
			     : "rcx", "r11", "memory");
	return ret;
}

static inline u64 rdtsc(void)
{
	u32 lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

/*
 * The fraction bits of the clock's multiplier: frame::timer::CLOCK_SHIFT,
 * a constant there too (kernel/src/vdso.rs asserts the two agree, and still
 * publishes it in the data page). A constant shift of 32 is the high half
 * of the 128-bit product's middle: one shrd, no test for shifts >= 64.
 */
#define CLOCK_SHIFT 32

#define likely(x) __builtin_expect(!!(x), 1)

/*
 * Nanoseconds since boot, plus the wall time at boot if `with_boot`, read
 * consistently under the sequence count. Inlined into each caller with
 * `with_boot` a constant, so the monotonic clocks read neither the wall
 * offset nor anything through memory of their own: the fast path is the
 * data page, rdtsc and the multiply.
 */
static inline __attribute__((always_inline)) u64 read_clock(int with_boot, u64 *boot)
{
	const volatile struct vvar *v = vvar();
	u32 seq;
	u64 mono;
	do {
		seq = v->seq;
		barrier();
		u64 base = v->tsc_at_boot, mult = v->mult;
		if (with_boot)
			*boot = v->realtime_at_boot_ns;
		u64 now = rdtsc();
		u64 ticks = now > base ? now - base : 0;
		mono = (u64)(((unsigned __int128)ticks * mult) >> CLOCK_SHIFT);
		barrier();
	} while (__builtin_expect((seq & 1) || seq != v->seq, 0));
	return mono;
}

#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_MONOTONIC_RAW 4
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_MONOTONIC_COARSE 6
#define CLOCK_BOOTTIME 7
#define CLOCK_TAI 11

#define SYS_gettimeofday 96
#define SYS_time 201
#define SYS_clock_gettime 228
#define SYS_clock_getres 229
#define SYS_getcpu 309

/* The clock ids answered here, by kind (bit = clock id). */
#define MONO_CLOCKS ((1u << CLOCK_MONOTONIC) | (1u << CLOCK_MONOTONIC_RAW) | \
		     (1u << CLOCK_MONOTONIC_COARSE) | (1u << CLOCK_BOOTTIME))
#define WALL_CLOCKS ((1u << CLOCK_REALTIME) | (1u << CLOCK_REALTIME_COARSE) | (1u << CLOCK_TAI))

int __vdso_clock_gettime(int clock, struct timespec_ *ts)
{
	u64 ns, boot;
	/* A bad pointer faults below as it would in the kernel's copy-out;
	 * NULL gets the system call's EFAULT instead. CLOCK_MONOTONIC, the
	 * clock programs time intervals with, is tested first. */
	if (likely(clock == CLOCK_MONOTONIC && ts)) {
		ns = read_clock(0, &boot);
	} else if ((unsigned)clock < 32 && ((1u << clock) & MONO_CLOCKS) && ts) {
		ns = read_clock(0, &boot);
	} else if ((unsigned)clock < 32 && ((1u << clock) & WALL_CLOCKS) && ts) {
		ns = read_clock(1, &boot);
		ns += boot;
	} else {
		return syscall2(SYS_clock_gettime, clock, (long)ts);
	}
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	return 0;
}

int __vdso_gettimeofday(struct timeval_ *tv, struct timezone_ *tz)
{
	u64 boot;
	if (tv) {
		u64 ns = read_clock(1, &boot);
		ns += boot;
		tv->tv_sec = ns / 1000000000;
		tv->tv_usec = ns % 1000000000 / 1000;
	}
	if (tz) {
		tz->tz_minuteswest = 0;
		tz->tz_dsttime = 0;
	}
	return 0;
}

i64 __vdso_time(i64 *t)
{
	u64 boot;
	u64 ns = read_clock(1, &boot);
	i64 s = (ns + boot) / 1000000000;
	if (t)
		*t = s;
	return s;
}

int __vdso_clock_getres(int clock, struct timespec_ *res)
{
	return syscall2(SYS_clock_getres, clock, (long)res);
}

long __vdso_getcpu(unsigned *cpu, unsigned *node, void *cache)
{
	return syscall3(SYS_getcpu, (long)cpu, (long)node, (long)cache);
}

int clock_gettime(int, struct timespec_ *) __attribute__((weak, alias("__vdso_clock_gettime")));
int gettimeofday(struct timeval_ *, struct timezone_ *) __attribute__((weak, alias("__vdso_gettimeofday")));
i64 time(i64 *) __attribute__((weak, alias("__vdso_time")));
int clock_getres(int, struct timespec_ *) __attribute__((weak, alias("__vdso_clock_getres")));
long getcpu(unsigned *, unsigned *, void *) __attribute__((weak, alias("__vdso_getcpu")));
