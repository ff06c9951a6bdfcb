/* mremap(2): shrinking, growing in place, moving (MREMAP_MAYMOVE), to a
 * fixed address (MREMAP_FIXED), MREMAP_DONTUNMAP, duplicating a shared
 * mapping (old_size 0), and Linux's errors. */
#include "next.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

static void *map(size_t len, int flags)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
}

/* A free range of len bytes (mapped then unmapped). */
static char *free_range(size_t len)
{
	char *p = map(len, MAP_PRIVATE);
	munmap(p, len);
	return p;
}

static int mapped(void *p)
{
	unsigned char v;
	return mincore(p, PAGE, &v) == 0;
}

int main(void)
{
	char *a, *b, *r;

	/* Shrinking unmaps the tail and keeps the start. (8 pages are
	 * reserved so the space after the area is known to be free.) */
	a = map(8 * PAGE, MAP_PRIVATE);
	CHECK(a != MAP_FAILED);
	munmap(a + 4 * PAGE, 4 * PAGE);
	memset(a, 'a', 4 * PAGE);
	CHECK(mremap(a, 4 * PAGE, 2 * PAGE, 0) == a);
	CHECK(mapped(a + PAGE) && !mapped(a + 2 * PAGE));
	CHECK_EQ(a[2 * PAGE - 1], 'a');
	/* Same size: the address back. */
	CHECK(mremap(a, 2 * PAGE, 2 * PAGE, 0) == a);

	/* Growing in place when the space after is free: the contents stay,
	 * the new part is zero. */
	CHECK(mremap(a, 2 * PAGE, 4 * PAGE, 0) == a);
	CHECK_EQ(a[PAGE], 'a');
	CHECK_EQ(a[3 * PAGE], 0);
	a[4 * PAGE - 1] = 'z';

	/* Growing when something is in the way: ENOMEM without MAYMOVE,
	 * a move with it (contents and protection carried over, the old
	 * range unmapped). */
	b = mmap(a + 4 * PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(b == a + 4 * PAGE);
	CHECK(mremap(a, 4 * PAGE, 8 * PAGE, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
	r = mremap(a, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE);
	CHECK(r != MAP_FAILED && r != a);
	if (r != MAP_FAILED) {
		CHECK_EQ(r[0], 'a');
		CHECK_EQ(r[4 * PAGE - 1], 'z');
		CHECK_EQ(r[7 * PAGE], 0);
		r[7 * PAGE] = 'n';
		CHECK(!mapped(a) && !mapped(a + 3 * PAGE));
		CHECK(mapped(b));
		a = r;
	}
	munmap(b, PAGE);

	/* MREMAP_FIXED moves to the given address, replacing what is there. */
	{
		char *dst = free_range(8 * PAGE);
		char *old = map(PAGE, MAP_PRIVATE);
		CHECK(mmap(dst, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == dst);
		dst[0] = 'o';
		old[0] = 'x';
		r = mremap(a, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		CHECK(r == dst);
		CHECK_EQ(dst[0], 'a');
		CHECK_EQ(dst[7 * PAGE], 'n');
		CHECK(!mapped(a));
		a = dst;
		/* Fixed with a smaller size: the tail is dropped first. */
		r = mremap(a, 8 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, free_range(2 * PAGE));
		CHECK(r != MAP_FAILED);
		if (r != MAP_FAILED) {
			CHECK_EQ(r[0], 'a');
			CHECK(!mapped(a) && !mapped(a + 7 * PAGE));
			a = r;
		}
		munmap(old, PAGE);
	}

	/* Part of an area moves alone. */
	{
		char *p = map(3 * PAGE, MAP_PRIVATE);
		p[0] = '0';
		p[PAGE] = '1';
		p[2 * PAGE] = '2';
		r = mremap(p + PAGE, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
		CHECK(r != MAP_FAILED && r != p + PAGE);
		if (r != MAP_FAILED) {
			CHECK_EQ(r[0], '1');
			CHECK(mapped(p) && !mapped(p + PAGE) && mapped(p + 2 * PAGE));
			CHECK_EQ(p[2 * PAGE], '2');
			munmap(r, 2 * PAGE);
		}
		munmap(p, 3 * PAGE);
	}

	/* MREMAP_DONTUNMAP: the pages move, the old range stays mapped and
	 * reads as fresh zero pages. */
	{
		char *p = map(2 * PAGE, MAP_PRIVATE);
		memset(p, 'd', 2 * PAGE);
		r = mremap(p, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
		CHECK(r != MAP_FAILED && r != p);
		if (r != MAP_FAILED) {
			CHECK_EQ(r[0], 'd');
			CHECK_EQ(r[2 * PAGE - 1], 'd');
			CHECK(mapped(p));
			CHECK_EQ(p[0], 0);
			munmap(r, 2 * PAGE);
		}
		munmap(p, 2 * PAGE);
	}

	/* Shared memory moves stay shared with a fork child, and old_size 0
	 * maps the same pages a second time. */
	{
		char *s = map(PAGE, MAP_SHARED), *dup;
		s[0] = 'S';
		dup = mremap(s, 0, PAGE, MREMAP_MAYMOVE);
		CHECK(dup != MAP_FAILED && dup != s);
		if (dup != MAP_FAILED) {
			CHECK_EQ(dup[0], 'S');
			dup[1] = 'D';
			CHECK_EQ(s[1], 'D');
		}
		CHECK(mremap(s, 0, PAGE, 0) == MAP_FAILED);
		CHECK_EQ(errno, ENOMEM);
		r = mremap(s, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
		CHECK(r != MAP_FAILED);
		if (r != MAP_FAILED) {
			pid_t pid = fork();
			if (pid == 0) {
				r[2] = 'C';
				_exit(0);
			}
			t_wait_ok(pid);
			CHECK_EQ(r[2], 'C');
			if (dup != MAP_FAILED)
				CHECK_EQ(dup[2], 'C');
			munmap(r, 2 * PAGE);
		}
		if (dup != MAP_FAILED)
			munmap(dup, PAGE);
		/* A private mapping cannot be duplicated. */
		char *p = map(PAGE, MAP_PRIVATE);
		CHECK(mremap(p, 0, PAGE, MREMAP_MAYMOVE) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		munmap(p, PAGE);
	}

	/* A file mapping moves with its contents. */
	{
		int fd = memfd_create("mremap", 0);
		char *f;
		CHECK(fd >= 0);
		CHECK_EQ(ftruncate(fd, 2 * PAGE), 0);
		CHECK_EQ(pwrite(fd, "file", 4, PAGE), 4);
		f = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
		CHECK(f != MAP_FAILED);
		r = mremap(f, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
		CHECK(r != MAP_FAILED);
		if (r != MAP_FAILED) {
			CHECK(!memcmp(r + PAGE, "file", 4));
			munmap(r, 2 * PAGE);
		}
		close(fd);
	}

	/* Errors. */
	{
		char *p = map(3 * PAGE, MAP_PRIVATE), *hole = p + PAGE;
		munmap(hole, PAGE);
		/* Flags and sizes. */
		CHECK(mremap(p, PAGE, 2 * PAGE, 8) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, 2 * PAGE, MREMAP_FIXED, hole) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, PAGE, MREMAP_DONTUNMAP) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p + 1, PAGE, PAGE, 0) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, 0, 0) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, -PAGE, PAGE, 0) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		/* Fixed destinations: unaligned, overlapping, beyond user space. */
		CHECK(mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole + 1) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, p + PAGE / 2) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		CHECK(mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)0x7ffffffff000UL) == MAP_FAILED);
		CHECK_EQ(errno, EINVAL);
		/* Nothing mapped there, or the old range runs past its area. */
		CHECK(mremap(hole, PAGE, 2 * PAGE, MREMAP_MAYMOVE) == MAP_FAILED);
		CHECK_EQ(errno, EFAULT);
		CHECK(mremap(hole, PAGE, PAGE, 0) == MAP_FAILED);
		CHECK_EQ(errno, EFAULT);
		CHECK(mremap(hole, 2 * PAGE, PAGE, 0) == MAP_FAILED);
		CHECK_EQ(errno, EFAULT);
		CHECK(mremap(p, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE) == MAP_FAILED);
		CHECK_EQ(errno, EFAULT);
		CHECK(mremap(hole, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, free_range(4 * PAGE)) == MAP_FAILED);
		CHECK_EQ(errno, EFAULT);
		/* Nothing changed. */
		CHECK(mapped(p) && !mapped(hole) && mapped(p + 2 * PAGE));
		munmap(p, 3 * PAGE);
	}
	DONE();
}
