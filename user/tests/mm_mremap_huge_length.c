/* mremap(2) to a new length beyond user space (found by the syscall
 * fuzzer: mremap(addr, 0xff, 0xfffffffffffff000, MREMAP_MAYMOVE) made the
 * search for a free range add the length to the bottom of the mmap area and
 * overflow, a kernel panic).  Linux (6.18) answers EINVAL for a new length
 * above TASK_SIZE whatever the flags; a length of all of user space is
 * ENOMEM (it fits nowhere) or EINVAL at a fixed address.  The old mapping
 * stays as it was.  Raw syscalls: musl answers ENOMEM itself for lengths
 * above PTRDIFF_MAX. */
#include "next.h"

#include <sys/syscall.h>

#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#endif

/* Linux's TASK_SIZE on x86-64 (4-level paging): the end of user space. */
#define USER_SPACE 0x7ffffffff000UL

static long raw_mremap(void *old, unsigned long old_len, unsigned long new_len,
		       long flags, void *new_addr)
{
	return syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

int main(void)
{
	static const unsigned long huge[] = {
		0xfffffffffffff000UL, /* the fuzzer's: the last page-aligned length */
		0xffffffffffffe000UL,
		1UL << 63,
		1UL << 62,
		USER_SPACE + PAGE,
	};
	char *a, *free_page;
	unsigned i;

	a = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	a[0] = 'a';
	free_page = a + PAGE;
	CHECK_EQ(munmap(free_page, PAGE), 0);

	for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
		CHECK_ERR(raw_mremap(a, PAGE, huge[i], 0, NULL), EINVAL);
		CHECK_ERR(raw_mremap(a, PAGE, huge[i], MREMAP_MAYMOVE, NULL),
			  EINVAL);
		/* The same through an unaligned old length (rounded up). */
		CHECK_ERR(raw_mremap(a, 0xff, huge[i], MREMAP_MAYMOVE, NULL),
			  EINVAL);
		CHECK_ERR(raw_mremap(a, PAGE, huge[i],
				     MREMAP_MAYMOVE | MREMAP_FIXED, free_page),
			  EINVAL);
	}
	/* All of user space: cannot grow in place, fits nowhere, and not at
	 * any address but 0. */
	CHECK_ERR(raw_mremap(a, PAGE, USER_SPACE, 0, NULL), ENOMEM);
	CHECK_ERR(raw_mremap(a, PAGE, USER_SPACE, MREMAP_MAYMOVE, NULL), ENOMEM);
	CHECK_ERR(raw_mremap(a, PAGE, USER_SPACE, MREMAP_MAYMOVE | MREMAP_FIXED,
			     free_page),
		  EINVAL);

	/* Nothing moved or changed. */
	CHECK_EQ(a[0], 'a');
	a[PAGE - 1] = 'z';
	CHECK_EQ(a[PAGE - 1], 'z');
	CHECK(raw_mremap(a, PAGE, PAGE, 0, NULL) == (long)a);
	CHECK_EQ(munmap(a, PAGE), 0);
	DONE();
}
