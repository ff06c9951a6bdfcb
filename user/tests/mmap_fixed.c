/* mmap MAP_FIXED: exact placement, replacing part of an existing mapping. */
#include "t.h"
#include <sys/mman.h>

int main(void)
{
	unsigned char *base, *p;
	size_t i;
	int bad;

	/* Reserve 8 pages and fill them. */
	base = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(base != MAP_FAILED);
	if (base == MAP_FAILED)
		DONE();
	for (i = 0; i < 8 * PAGE; i++)
		base[i] = (unsigned char)(i / PAGE + 1);

	/* MAP_FIXED over pages 2..3 returns exactly the requested address. */
	p = mmap(base + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(p == base + 2 * PAGE);

	/* The replaced pages are fresh (zero); the neighbours are intact. */
	bad = 0;
	for (i = 2 * PAGE; i < 4 * PAGE; i++)
		if (base[i] != 0)
			bad++;
	CHECK_EQ(bad, 0);
	bad = 0;
	for (i = 0; i < 8 * PAGE; i++) {
		if (i >= 2 * PAGE && i < 4 * PAGE)
			continue;
		if (base[i] != (unsigned char)(i / PAGE + 1))
			bad++;
	}
	CHECK_EQ(bad, 0);

	/* The new pages are usable. */
	base[2 * PAGE + 5] = 99;
	CHECK_EQ(base[2 * PAGE + 5], 99);

	/* MAP_FIXED into a hole left by munmap. */
	CHECK_EQ(munmap(base + 6 * PAGE, PAGE), 0);
	p = mmap(base + 6 * PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(p == base + 6 * PAGE);
	CHECK_EQ(base[6 * PAGE], 0);
	CHECK_EQ(base[7 * PAGE], 8);
	CHECK_EQ(base[5 * PAGE], 6);

	/* MAP_FIXED at a free, chosen address. */
	CHECK_EQ(munmap(base, 8 * PAGE), 0);
	p = mmap(base + PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(p == base + PAGE);
	CHECK_EQ(p[0], 0);
	p[0] = 3;
	CHECK_EQ(p[0], 3);

	/* Raw syscall with MAP_FIXED over an existing page. */
	p = (unsigned char *)syscall(SYS_mmap, base + PAGE, PAGE,
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(p == base + PAGE);
	CHECK_EQ(p[0], 0);

	/* EINVAL: MAP_FIXED with an unaligned address. */
	CHECK_ERR(syscall(SYS_mmap, base + 1, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), EINVAL);

	CHECK_EQ(munmap(base + PAGE, PAGE), 0);
	DONE();
}
