/* RLIMIT_MEMLOCK for an unprivileged process: mlock beyond it is ENOMEM;
 * after mlockall(MCL_FUTURE) a mapping that would pass it is EAGAIN
 * (mmap, MAP_LOCKED, mremap growth) and brk fails; a limit of 0 is EPERM
 * for mlock, mlockall and MAP_LOCKED. Root (CAP_IPC_LOCK) is not
 * limited. */
#include "next.h"
#include <sys/mman.h>
#include <sys/resource.h>

#define NOBODY 65534
#define KB 1024UL
#define MB (1024 * KB)

/* The raw call: musl turns EPERM for a NULL hint into ENOMEM. */
static void *anon(size_t len, int flags)
{
	return (void *)syscall(SYS_mmap, 0, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
}

static int set_memlock(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

static void unprivileged(void)
{
	char *big, *small, *p;
	unsigned long brk0, brk1;

	CHECK_EQ(set_memlock(1 * MB), 0);
	big = anon(2 * MB, 0);
	CHECK(big != MAP_FAILED);
	CHECK_ERR(mlock(big, 2 * MB), ENOMEM);
	CHECK_EQ(mlock(big, 512 * KB), 0);
	/* Already locked pages count once. */
	CHECK_EQ(mlock(big, 768 * KB), 0);
	CHECK_ERR(mlock(big + 768 * KB, 512 * KB), ENOMEM);
	CHECK_EQ(munlock(big, 2 * MB), 0);
	CHECK_EQ(munmap(big, 2 * MB), 0);

	/* mlockall(MCL_FUTURE): new mappings are locked, and limited. */
	CHECK_EQ(mlockall(MCL_FUTURE), 0);
	CHECK_ERR(anon(1024 * MB, 0), EAGAIN);
	CHECK_ERR(anon(2 * MB, 0), EAGAIN);
	small = anon(64 * KB, 0);
	CHECK(small != MAP_FAILED);
	p = mremap(small, 64 * KB, 2 * MB, MREMAP_MAYMOVE);
	CHECK(p == MAP_FAILED && errno == EAGAIN);
	brk0 = syscall(SYS_brk, 0);
	brk1 = syscall(SYS_brk, brk0 + 2 * MB);
	CHECK_EQ(brk1, brk0);
	CHECK_EQ(munlockall(), 0);

	/* Unlocked again: the same mappings work. */
	big = anon(1024 * MB, MAP_NORESERVE);
	CHECK(big != MAP_FAILED);
	if (big != MAP_FAILED)
		munmap(big, 1024 * MB);
	p = mremap(small, 64 * KB, 2 * MB, MREMAP_MAYMOVE);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, 2 * MB);

	/* MAP_LOCKED is held to the same limit. */
	CHECK_ERR(anon(2 * MB, MAP_LOCKED), EAGAIN);
	p = anon(64 * KB, MAP_LOCKED);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, 64 * KB);

	/* A limit of 0: no locking at all. */
	CHECK_EQ(set_memlock(0), 0);
	p = anon(PAGE, 0);
	CHECK_ERR(mlock(p, PAGE), EPERM);
	CHECK_ERR(mlockall(MCL_CURRENT), EPERM);
	CHECK_ERR(anon(PAGE, MAP_LOCKED), EPERM);
}

int main(void)
{
	pid_t pid;

	if (!t_is_root())
		SKIP("needs root to compare with an unprivileged user");
	pid = fork();
	if (pid == 0) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		unprivileged();
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* Root: the limit does not apply (a child: its locks end with it). */
	pid = fork();
	if (pid == 0) {
		char *p;

		CHECK_EQ(set_memlock(1 * MB), 0);
		CHECK_EQ(mlockall(MCL_FUTURE), 0);
		p = anon(4 * MB, 0);
		CHECK(p != MAP_FAILED);
		p = anon(4 * MB, MAP_LOCKED);
		CHECK(p != MAP_FAILED);
		CHECK_EQ(munlockall(), 0);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	DONE();
}
