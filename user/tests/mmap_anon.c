/* mmap anonymous private memory: zero fill, alignment, large sparse use. */
#include "t.h"
#include <sys/mman.h>

int main(void)
{
	unsigned char *p, *q, *ro, *big;
	size_t len = 4 * PAGE, big_len = 128UL << 20, i;
	int nonzero, bad;

	/* Basic mapping: page aligned, zero filled, writable. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		DONE();
	CHECK_EQ((unsigned long)p % PAGE, 0);
	nonzero = 0;
	for (i = 0; i < len; i++)
		if (p[i])
			nonzero++;
	CHECK_EQ(nonzero, 0);
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i ^ 0x5a);
	bad = 0;
	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i ^ 0x5a))
			bad++;
	CHECK_EQ(bad, 0);

	/* A second mapping does not overlap the first and is independent. */
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK(q + len <= p || q >= p + len);
	CHECK_EQ(q[0], 0);
	q[0] = 1;
	CHECK_EQ(p[0], 0x5a);

	/* An odd length is rounded up to whole pages. */
	CHECK_EQ(munmap(q, len), 0);
	q = mmap(NULL, 100, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	CHECK(q != MAP_FAILED);
	q[PAGE - 1] = 7;
	CHECK_EQ(q[PAGE - 1], 7);
	CHECK_EQ(munmap(q, 100), 0);

	/* Read-only anonymous mapping reads zeros. */
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED);
	CHECK_EQ(ro[0] + ro[PAGE - 1], 0);
	CHECK_EQ(munmap(ro, PAGE), 0);

	/* A hint address that is free is accepted (or another is chosen). */
	q = mmap((void *)0x200000000UL, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_EQ((unsigned long)q % PAGE, 0);
	q[10] = 10;
	CHECK_EQ(q[10], 10);
	CHECK_EQ(munmap(q, PAGE), 0);

	/* Large mapping (128 MiB) touched sparsely: one byte per MiB. */
	big = mmap(NULL, big_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(big != MAP_FAILED);
	if (big != MAP_FAILED) {
		for (i = 0; i < big_len; i += 1UL << 20)
			big[i + (i >> 20) % PAGE] = (unsigned char)((i >> 20) + 1);
		big[big_len - 1] = 0xee;
		bad = 0;
		for (i = 0; i < big_len; i += 1UL << 20) {
			if (big[i + (i >> 20) % PAGE] != (unsigned char)((i >> 20) + 1))
				bad++;
			/* Untouched neighbours in the same page are zero. */
			if (big[i + PAGE / 2 + 1] != 0 && (i >> 20) % PAGE != PAGE / 2 + 1)
				bad++;
		}
		CHECK_EQ(bad, 0);
		CHECK_EQ(big[big_len - 1], 0xee);
		CHECK_EQ(big[big_len / 2 + 12345], 0);
		CHECK_EQ(munmap(big, big_len), 0);
	}

	/* Raw syscall. */
	q = (unsigned char *)syscall(SYS_mmap, 0, PAGE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_EQ(q[0], 0);
	CHECK_EQ(syscall(SYS_munmap, q, PAGE), 0);

	CHECK_EQ(munmap(p, len), 0);
	DONE();
}
