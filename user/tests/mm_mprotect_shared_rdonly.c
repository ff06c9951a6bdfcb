/* A MAP_SHARED mapping of a descriptor not open for writing can never be
 * made writable: mprotect(PROT_WRITE) is EACCES (Linux clears
 * VM_MAYWRITE), for a file and for /dev/zero alike; read and exec
 * changes are fine, and so is PROT_WRITE on a private mapping of the same
 * descriptor or a shared one of a read-write descriptor. */
#include "next.h"
#include <sys/mman.h>

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	char *p, *q;
	int ro, rw, zero;

	if (t_mktmp("mm_mprotect_shared_rdonly", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "abcdefgh", 8, 0644), 0);
	ro = open(path, O_RDONLY);
	rw = open(path, O_RDWR);
	CHECK(ro >= 0 && rw >= 0);

	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
	CHECK(p != MAP_FAILED);
	CHECK_ERR(mprotect(p, PAGE, PROT_READ | PROT_WRITE), EACCES);
	CHECK_ERR(mprotect(p, PAGE, PROT_WRITE), EACCES);
	CHECK_EQ(mprotect(p, PAGE, PROT_NONE), 0);
	CHECK_EQ(mprotect(p, PAGE, PROT_READ), 0);
	CHECK_EQ(p[0], 'a');
	/* Asking for PROT_WRITE at mmap time is EACCES too. */
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), EACCES);

	/* Private: copy-on-write, so writable. */
	q = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ro, 0);
	CHECK(q != MAP_FAILED);
	CHECK_EQ(mprotect(q, PAGE, PROT_READ | PROT_WRITE), 0);
	q[0] = 'z';
	CHECK_EQ(p[0], 'a');
	munmap(q, PAGE);

	/* Shared through a read-write descriptor. */
	q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rw, 0);
	CHECK(q != MAP_FAILED);
	CHECK_EQ(mprotect(q, PAGE, PROT_READ | PROT_WRITE), 0);
	q[1] = 'Y';
	CHECK_EQ(p[1], 'Y');
	munmap(q, PAGE);
	munmap(p, PAGE);

	/* /dev/zero opened read-only. */
	zero = open("/dev/zero", O_RDONLY);
	CHECK(zero >= 0);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, zero, 0);
	CHECK(p != MAP_FAILED);
	CHECK_ERR(mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE), EACCES);
	munmap(p, 2 * PAGE);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, zero, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(mprotect(p, PAGE, PROT_READ | PROT_WRITE), 0);
	munmap(p, PAGE);
	close(zero);
	close(ro);
	close(rw);
	t_rmtree(dir);
	DONE();
}
