/*
 * Overcommit accounting (proc(5) /proc/sys/vm/overcommit_memory; the
 * kernel's overcommit-accounting document). In the heuristic mode (0) a
 * private writable mapping larger than RAM and swap is ENOMEM, while
 * MAP_NORESERVE and read-only private mappings are not charged. On
 * Trellis, Committed_AS follows the charged mappings exactly (mmap,
 * mprotect to writable, brk, fork) and comes back to where it started;
 * modes 1 and 2 are checked there too (changing them would disturb a
 * host).
 */
#include "next.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

static long long committed(void)
{
	return t_proc_kv("/proc/meminfo", "Committed_AS:");
}

static int set_mode(const char *v)
{
	int fd = open("/proc/sys/vm/overcommit_memory", O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, v, strlen(v));
	int e = errno;
	close(fd);
	errno = e;
	return n < 0 ? -1 : 0;
}

static void exact_accounting(void)
{
	const size_t mb = 1 << 20;
	long long c0 = committed();

	char *p = mmap(NULL, 64 * mb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(committed(), c0 + 64 * 1024);
	/* Half of it unmapped: half the charge goes. */
	CHECK(munmap(p + 32 * mb, 32 * mb) == 0);
	CHECK_EQ(committed(), c0 + 32 * 1024);
	/* mremap growth is charged. */
	char *q = mremap(p, 32 * mb, 48 * mb, MREMAP_MAYMOVE);
	CHECK(q != MAP_FAILED);
	CHECK_EQ(committed(), c0 + 48 * 1024);
	CHECK(munmap(q, 48 * mb) == 0);
	CHECK_EQ(committed(), c0);

	/* Read-only and MAP_NORESERVE: nothing; made writable: charged, and
	 * it stays charged when made read-only again. */
	p = mmap(NULL, 16 * mb, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mmap(NULL, 16 * mb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED && q != MAP_FAILED);
	CHECK_EQ(committed(), c0);
	CHECK(mprotect(p, 16 * mb, PROT_READ | PROT_WRITE) == 0);
	CHECK_EQ(committed(), c0 + 16 * 1024);
	CHECK(mprotect(p, 16 * mb, PROT_READ) == 0);
	CHECK_EQ(committed(), c0 + 16 * 1024);
	CHECK(munmap(p, 16 * mb) == 0 && munmap(q, 16 * mb) == 0);
	CHECK_EQ(committed(), c0);

	/* brk (raw: musl's brk() always fails). */
	char *b = (char *)syscall(SYS_brk, 0);
	CHECK_EQ(syscall(SYS_brk, b + 4 * mb), (long)(b + 4 * mb));
	long long grown = committed() - c0;
	CHECK(grown >= 4 * 1024 && grown <= 4 * 1024 + 4);
	CHECK_EQ(syscall(SYS_brk, b), (long)b);
	CHECK_EQ(committed(), c0);

	/* fork charges the child's copy; everything comes back. */
	int ready[2], go[2];
	CHECK(pipe(ready) == 0 && pipe(go) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		t_post(ready[1]);
		t_await(go[0]);
		_exit(0);
	}
	t_await(ready[0]);
	CHECK(committed() > c0);
	t_post(go[1]);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(committed(), c0);
}

static void other_modes(size_t huge)
{
	long long limit;

	CHECK_ERR(set_mode("3"), EINVAL);
	/* 1: anything goes. */
	CHECK(set_mode("1") == 0);
	void *p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, huge);
	/* 2: CommitLimit, MAP_NORESERVE ignored. */
	CHECK(set_mode("2") == 0);
	limit = t_proc_kv("/proc/meminfo", "CommitLimit:");
	CHECK_EQ(limit, t_proc_kv("/proc/meminfo", "MemTotal:") / 2 / 4 * 4);
	size_t lim = (size_t)limit * 1024;
	CHECK_ERR(mmap(NULL, lim, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), ENOMEM);
	CHECK_ERR(mmap(NULL, lim, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), ENOMEM);
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, 1 << 20);
	CHECK(set_mode("0") == 0);
}

int main(void)
{
	struct sysinfo si;
	char mode[8] = "";

	CHECK(sysinfo(&si) == 0);
	if (t_read_file("/proc/sys/vm/overcommit_memory", mode, sizeof mode) <= 0 || mode[0] != '0')
		SKIP("vm.overcommit_memory is not 0 here");
	size_t ram = (size_t)si.totalram * si.mem_unit + (size_t)si.totalswap * si.mem_unit;
	size_t huge = ram + (64 << 20);

	/* Mode 0: one private writable mapping larger than RAM + swap. */
	CHECK_ERR(mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), ENOMEM);
	/* Not charged: MAP_NORESERVE, read-only. */
	void *p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		/* Making it writable again does not charge a NORESERVE area. */
		CHECK(mprotect(p, huge, PROT_READ | PROT_WRITE) == 0);
		munmap(p, huge);
	}
	p = mmap(NULL, huge, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		/* ... until made writable: the whole size is charged then. */
		CHECK_ERR(mprotect(p, huge, PROT_READ | PROT_WRITE), ENOMEM);
		munmap(p, huge);
	}
	/* Two mappings each below the limit are fine together (heuristic). */
	void *a = mmap(NULL, ram / 4 * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *b = mmap(NULL, ram / 4 * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED && b != MAP_FAILED);
	if (a != MAP_FAILED)
		munmap(a, ram / 4 * 3);
	if (b != MAP_FAILED)
		munmap(b, ram / 4 * 3);

	if (t_is_trellis()) {
		exact_accounting();
		if (t_is_root())
			other_modes(huge);
	} else {
		t_note("Committed_AS is exact only on Trellis; modes 1 and 2 are not changed on a host");
	}
	DONE();
}
