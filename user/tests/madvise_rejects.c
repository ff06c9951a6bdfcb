/* madvise advice Linux rejects: MADV_REMOVE on private memory (EINVAL
 * for anonymous, EACCES for a private file mapping) or locked memory,
 * MADV_MERGEABLE/UNMERGEABLE without KSM, MADV_DONTNEED and MADV_FREE on
 * locked memory, MADV_FREE and MADV_WIPEONFORK on file or shared memory
 * (EINVAL); areas are taken in address order, so the advice has acted on
 * those before a rejected one; a range with unmapped pages is ENOMEM,
 * after the advice has acted on the mapped part. MADV_REMOVE on shared
 * memory frees it for every sharer. */
#include "next.h"
#include <sys/mman.h>

static char *anon(size_t len, int flags)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | flags, -1, 0);
}

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	char *p, *s, *f;
	int fd, ksm = access("/sys/kernel/mm/ksm", F_OK) == 0;
	pid_t pid;

	if (t_is_trellis())
		CHECK(!ksm);
	p = anon(4 * PAGE, MAP_PRIVATE);
	s = anon(4 * PAGE, MAP_SHARED);
	CHECK(p != MAP_FAILED && s != MAP_FAILED);
	memset(p, 1, 4 * PAGE);
	memset(s, 2, 4 * PAGE);

	CHECK_ERR(madvise(p, PAGE, MADV_REMOVE), EINVAL);
	if (ksm) {
		CHECK_EQ(madvise(p, PAGE, MADV_MERGEABLE), 0);
		CHECK_EQ(madvise(p, PAGE, MADV_UNMERGEABLE), 0);
	} else {
		CHECK_ERR(madvise(p, PAGE, MADV_MERGEABLE), EINVAL);
		CHECK_ERR(madvise(p, PAGE, MADV_UNMERGEABLE), EINVAL);
	}
	CHECK_ERR(madvise(s, PAGE, MADV_FREE), EINVAL);
	CHECK_ERR(madvise(s, PAGE, MADV_WIPEONFORK), EINVAL);
	CHECK_EQ(madvise(p, PAGE, MADV_WIPEONFORK), 0);
	CHECK_EQ(madvise(p, PAGE, MADV_KEEPONFORK), 0);
	CHECK_EQ(madvise(p + PAGE, PAGE, MADV_FREE), 0);

	/* Locked memory. */
	if (mlock(p + 2 * PAGE, PAGE) == 0) {
		/* Areas are taken in order: the one before the locked
		 * page was dropped, the one after it was not. */
		CHECK_ERR(madvise(p, 4 * PAGE, MADV_DONTNEED), EINVAL);
		CHECK_EQ(p[0], 0);
		CHECK_EQ(p[3 * PAGE], 1);
		p[0] = 1;
		CHECK_ERR(madvise(p + 2 * PAGE, PAGE, MADV_FREE), EINVAL);
		CHECK_EQ(munlock(p + 2 * PAGE, PAGE), 0);
	} else {
		t_note("mlock: %s", strerror(errno));
	}

	/* Holes: ENOMEM, after the mapped part was dropped. */
	CHECK_EQ(munmap(p + 3 * PAGE, PAGE), 0);
	CHECK_ERR(madvise(p, 4 * PAGE, MADV_DONTNEED), ENOMEM);
	CHECK_EQ(p[0], 0);
	CHECK_ERR(madvise(p, 4 * PAGE, MADV_NORMAL), ENOMEM);
	CHECK_ERR(madvise(p + 3 * PAGE, PAGE, MADV_WILLNEED), ENOMEM);

	/* REMOVE on shared memory: zeros for every sharer. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(madvise(s + PAGE, PAGE, MADV_REMOVE), 0);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	CHECK_EQ(s[PAGE], 0);
	CHECK_EQ(s[0], 2);
	CHECK_EQ(s[2 * PAGE], 2);

	/* File mappings. */
	if (t_mktmp("madvise_rejects", dir, sizeof dir) == 0) {
		static char buf[2 * 4096];

		memset(buf, 'a', sizeof buf);
		t_join(path, sizeof path, dir, "f");
		CHECK_EQ(t_write_file(path, buf, sizeof buf, 0644), 0);
		fd = open(path, O_RDWR);
		f = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		CHECK(f != MAP_FAILED);
		CHECK_ERR(madvise(f, PAGE, MADV_REMOVE), EACCES);
		CHECK_ERR(madvise(f, PAGE, MADV_FREE), EINVAL);
		munmap(f, 2 * PAGE);
		close(fd);
		t_rmtree(dir);
	}
	DONE();
}
