/* Address-space layout randomization across execve: the stack, an
 * anonymous mmap, the vDSO and (kernel.randomize_va_space 2) the program
 * break land at new addresses in every exec; with personality
 * ADDR_NO_RANDOMIZE every exec gets the same ones. On Trellis, as root,
 * the sysctl's levels 0 and 1 are checked too (never on a host: the
 * setting is global). */
#include "next.h"

#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>

#define RUNS 4

enum { STACK, MMAP, BRK, VDSO, RANDOM, NADDR };
static const char *const names[NADDR] = { "stack", "mmap", "brk", "vdso", "AT_RANDOM" };

/* The child: prints the addresses this exec got. */
static int report(void)
{
	int local = 0;
	void *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long a[NADDR] = {
		(unsigned long)&local,
		(unsigned long)m,
		(unsigned long)syscall(SYS_brk, 0),
		getauxval(AT_SYSINFO_EHDR),
		getauxval(AT_RANDOM),
	};
	char buf[256];
	int n = snprintf(buf, sizeof buf, "%lx %lx %lx %lx %lx\n", a[0], a[1], a[2], a[3], a[4]);
	return write(1, buf, n) == n ? 0 : 1;
}

/* Execs `self report` (with ADDR_NO_RANDOMIZE when `nornd`) and reads
 * back its addresses. */
static int run_once(const char *self, int nornd, unsigned long out[NADDR])
{
	int p[2];
	char buf[256] = { 0 };
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (nornd && personality(PER_LINUX | ADDR_NO_RANDOMIZE) < 0)
			_exit(3);
		execl(self, self, "report", (char *)NULL);
		_exit(9);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t r;
	while (got < sizeof buf - 1 && (r = read(p[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += r;
	close(p[0]);
	if (t_wait(pid) != 0)
		return -1;
	return sscanf(buf, "%lx %lx %lx %lx %lx", &out[0], &out[1], &out[2], &out[3], &out[4]) == NADDR ? 0 : -1;
}

/* How many different values address `k` took over the runs. */
static int distinct(unsigned long v[RUNS][NADDR], int k)
{
	int n = 0;
	for (int i = 0; i < RUNS; i++) {
		int seen = 0;
		for (int j = 0; j < i; j++)
			seen |= v[j][k] == v[i][k];
		n += !seen;
	}
	return n;
}

/* Runs RUNS execs and checks which addresses moved: `moving` has a bit per
 * address that must differ, the others must stay put. */
static void check_runs(const char *self, int nornd, unsigned moving, const char *what)
{
	unsigned long v[RUNS][NADDR];
	for (int i = 0; i < RUNS; i++) {
		if (run_once(self, nornd, v[i]) != 0) {
			t_printf("  %s: exec %d did not report\n", what, i);
			CHECK(0);
			return;
		}
	}
	for (int k = 0; k < NADDR; k++) {
		if (k == VDSO && v[0][VDSO] == 0)
			continue; /* no vDSO */
		int d = distinct(v, k);
		int want_moving = (moving >> k) & 1;
		if (want_moving ? d < 2 : d != 1) {
			t_printf("  %s: %s took %d different values over %d execs (%lx %lx %lx %lx)\n", what, names[k], d,
				 RUNS, v[0][k], v[1][k], v[2][k], v[3][k]);
			CHECK(0);
		}
	}
	/* AT_RANDOM's 16 bytes sit on the stack, above the pointer. */
	CHECK(v[0][RANDOM] > v[0][STACK]);
}

static int sysctl_get(void)
{
	char buf[16];
	if (t_read_file("/proc/sys/kernel/randomize_va_space", buf, sizeof buf) <= 0)
		return -1;
	return atoi(buf);
}

static int sysctl_set(int level)
{
	char buf[4];
	int n = snprintf(buf, sizeof buf, "%d\n", level);
	int fd = open("/proc/sys/kernel/randomize_va_space", O_WRONLY);
	if (fd < 0)
		return -1;
	int ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

static unsigned for_level(int level)
{
	unsigned all = (1u << STACK) | (1u << MMAP) | (1u << VDSO) | (1u << RANDOM);
	return level == 0 ? 0 : level == 1 ? all : all | (1u << BRK);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return report();
	const char *self = "/proc/self/exe";
	int level = sysctl_get();
	if (level < 0)
		SKIP("no /proc/sys/kernel/randomize_va_space");
	if (personality(0xffffffff) & ADDR_NO_RANDOMIZE)
		SKIP("started with ADDR_NO_RANDOMIZE");
	check_runs(self, 0, for_level(level), "default");
	check_runs(self, 1, 0, "ADDR_NO_RANDOMIZE");
	if (t_is_trellis() && getuid() == 0) {
		for (int l = 0; l <= 2; l++) {
			char what[32];
			snprintf(what, sizeof what, "randomize_va_space=%d", l);
			CHECK_EQ(sysctl_set(l), 0);
			check_runs(self, 0, for_level(l), what);
		}
		CHECK_EQ(sysctl_set(level), 0);
		CHECK_EQ(sysctl_get(), level);
		/* Out of range values are refused. */
		CHECK(sysctl_set(3) < 0);
		CHECK_EQ(sysctl_get(), level);
	}
	DONE();
}
