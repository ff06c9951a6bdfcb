/* RLIMIT_AS bounds the address space (VmSize) and RLIMIT_DATA the
 * private writable memory (VmData, the heap included): mmap, mremap
 * growth and brk beyond them fail with ENOMEM (brk returns the old
 * break); a MAP_FIXED mapping that replaces as much as it adds is fine;
 * read-only and shared mappings are not data. They apply to root too. */
#include "next.h"
#include <sys/mman.h>
#include <sys/resource.h>

#define MB (1024UL * 1024)

static void *map(size_t len, int prot, int flags)
{
	return mmap(NULL, len, prot, MAP_ANONYMOUS | flags, -1, 0);
}

static void *rw(size_t len)
{
	return map(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
}

static int set_cur(int res, rlim_t bytes)
{
	struct rlimit rl;

	if (getrlimit(res, &rl))
		return -1;
	rl.rlim_cur = bytes;
	return setrlimit(res, &rl);
}

static unsigned long status_bytes(const char *key)
{
	long long kb = t_proc_kv("/proc/self/status", key);

	return kb < 0 ? 0 : (unsigned long)kb * 1024;
}

static void address_space(void)
{
	unsigned long size = status_bytes("VmSize:"), brk0;
	char *a, *b;

	CHECK(size > 0);
	CHECK_EQ(set_cur(RLIMIT_AS, size + 8 * MB), 0);
	CHECK_ERR(rw(16 * MB), ENOMEM);
	CHECK_ERR(map(16 * MB, PROT_NONE, MAP_PRIVATE), ENOMEM);
	a = rw(4 * MB);
	CHECK(a != MAP_FAILED);
	CHECK_ERR(rw(8 * MB), ENOMEM);
	/* Replacing 4 MiB with 4 MiB adds nothing. */
	b = mmap(a, 4 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(b == a);
	b = mremap(a, 4 * MB, 12 * MB, MREMAP_MAYMOVE);
	CHECK(b == MAP_FAILED && errno == ENOMEM);
	brk0 = syscall(SYS_brk, 0);
	CHECK_EQ(syscall(SYS_brk, brk0 + 16 * MB), brk0);
	CHECK_EQ(munmap(a, 4 * MB), 0);
	/* Room again. */
	a = rw(8 * MB);
	CHECK(a != MAP_FAILED);
	if (a != MAP_FAILED)
		munmap(a, 8 * MB);
	CHECK_EQ(set_cur(RLIMIT_AS, RLIM_INFINITY), 0);
}

static void data(void)
{
	unsigned long used = status_bytes("VmData:"), brk0;
	char *a;

	CHECK_EQ(set_cur(RLIMIT_DATA, used + 4 * MB), 0);
	CHECK_ERR(rw(8 * MB), ENOMEM);
	/* Not data: read-only, shared. */
	a = map(8 * MB, PROT_READ, MAP_PRIVATE);
	CHECK(a != MAP_FAILED);
	if (a != MAP_FAILED)
		munmap(a, 8 * MB);
	a = map(8 * MB, PROT_READ | PROT_WRITE, MAP_SHARED);
	CHECK(a != MAP_FAILED);
	if (a != MAP_FAILED)
		munmap(a, 8 * MB);
	a = rw(1 * MB);
	CHECK(a != MAP_FAILED);
	if (a != MAP_FAILED)
		munmap(a, 1 * MB);
	/* The heap counts. */
	brk0 = syscall(SYS_brk, 0);
	CHECK_EQ(syscall(SYS_brk, brk0 + 8 * MB), brk0);
	CHECK_EQ(syscall(SYS_brk, brk0 + 64 * 1024), brk0 + 64 * 1024);
	CHECK_EQ(syscall(SYS_brk, brk0), brk0);
	CHECK_EQ(set_cur(RLIMIT_DATA, RLIM_INFINITY), 0);
	a = rw(8 * MB);
	CHECK(a != MAP_FAILED);
}

int main(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		address_space();
		data();
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	DONE();
}
