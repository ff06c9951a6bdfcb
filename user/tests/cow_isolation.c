/*
 * Copy-on-write after fork: parent and child each write to a global, a heap
 * buffer, a stack buffer and an anonymous mmap page, and each sees only its
 * own writes.  The two sides are interleaved with flag files so that each
 * checks after the other has written.
 */
#include "t.h"
#include <sys/mman.h>

#define N 8192

static int global_buf[N / sizeof(int)];

static int fill_ok(const void *p, size_t n, unsigned char v)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != v)
			return 0;
	return 1;
}

/* Returns a bitmask of regions that do not hold value v. */
static int check_all(unsigned char *heap, unsigned char *stack,
		     unsigned char *map, unsigned char v)
{
	int bad = 0;

	if (!fill_ok(global_buf, sizeof global_buf, v))
		bad |= 1;
	if (!fill_ok(heap, N, v))
		bad |= 2;
	if (!fill_ok(stack, N, v))
		bad |= 4;
	if (!fill_ok(map, 2 * PAGE, v))
		bad |= 8;
	return bad;
}

static void fill_all(unsigned char *heap, unsigned char *stack,
		     unsigned char *map, unsigned char v)
{
	memset(global_buf, v, sizeof global_buf);
	memset(heap, v, N);
	memset(stack, v, N);
	memset(map, v, 2 * PAGE);
}

int main(void)
{
	char dir[128], child_wrote[256], parent_wrote[256];
	unsigned char stack[N];
	unsigned char *heap = malloc(N);
	unsigned char *map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int st;

	CHECK(heap != NULL);
	CHECK(map != MAP_FAILED);
	if (!heap || map == MAP_FAILED)
		DONE();
	if (t_mktmp("cow_isolation", dir, sizeof dir))
		DONE();
	t_join(child_wrote, sizeof child_wrote, dir, "child-wrote");
	t_join(parent_wrote, sizeof parent_wrote, dir, "parent-wrote");

	fill_all(heap, stack, map, 0x11);

	pid = fork();
	if (pid == 0) {
		int bad = check_all(heap, stack, map, 0x11) << 4;

		/* Child writes its own values... */
		fill_all(heap, stack, map, 0x22);
		if (t_touch(child_wrote) != 0)
			_exit(200);
		/* ...waits for the parent's writes... */
		if (t_wait_for_file(parent_wrote) != 0)
			_exit(201);
		/* ...and must still see only its own. */
		bad |= check_all(heap, stack, map, 0x22);
		_exit(bad);
	}
	CHECK(pid > 0);

	/* Parent writes its own values, then waits for the child's. */
	fill_all(heap, stack, map, 0x33);
	CHECK_EQ(t_touch(parent_wrote), 0);
	CHECK_EQ(t_wait_for_file(child_wrote), 0);
	CHECK_EQ(check_all(heap, stack, map, 0x33), 0);

	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	/* Low nibble: child saw foreign writes; high nibble: bad snapshot. */
	CHECK_EQ(WEXITSTATUS(st), 0);

	/* Still only our values after the child is gone. */
	CHECK_EQ(check_all(heap, stack, map, 0x33), 0);

	/* A child that only reads sees the parent's current values. */
	pid = fork();
	if (pid == 0)
		_exit(check_all(heap, stack, map, 0x33));
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);

	munmap(map, 2 * PAGE);
	free(heap);
	t_rmtree(dir);
	DONE();
}
