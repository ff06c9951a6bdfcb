/* /proc/self/maps: "start-end perms offset dev inode [path]" lines in
 * address order; our mappings show with the right permissions (and
 * change with mprotect), the executable, [stack] and [heap]. */
#include "next.h"

struct ent {
	unsigned long start, end, off, inode;
	char perms[5];
	char path[256];
};

static int find(unsigned long addr, struct ent *out)
{
	static char buf[65536];
	char *line, *save = NULL;
	unsigned long prev_end = 0;
	int ok = 0, ordered = 1;

	if (t_read_file("/proc/self/maps", buf, sizeof buf) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ent e;
		unsigned dmaj, dmin;
		int pos = 0;

		memset(&e, 0, sizeof e);
		if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %n", &e.start, &e.end,
			   e.perms, &e.off, &dmaj, &dmin, &e.inode, &pos) < 7)
			return -2;
		if (pos > 0)
			snprintf(e.path, sizeof e.path, "%s", line + pos);
		if (e.start < prev_end || e.end <= e.start)
			ordered = 0;
		prev_end = e.end;
		if (addr >= e.start && addr < e.end) {
			*out = e;
			ok = 1;
		}
	}
	if (!ordered)
		return -3;
	return ok ? 0 : 1;
}

int main(void)
{
	struct ent e;
	char *m;
	int local;
	void *heap;

	m = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK_EQ(find((unsigned long)m, &e), 0);
	CHECK_EQ(e.start, (unsigned long)m);
	CHECK_EQ(e.end, (unsigned long)m + 3 * 4096);
	CHECK(strcmp(e.perms, "r--p") == 0);
	CHECK_EQ(e.inode, 0);

	/* mprotect of the middle page splits the area. */
	CHECK_EQ(mprotect(m + 4096, 4096, PROT_READ | PROT_WRITE), 0);
	CHECK_EQ(find((unsigned long)m + 4096, &e), 0);
	CHECK_EQ(e.start, (unsigned long)m + 4096);
	CHECK_EQ(e.end, (unsigned long)m + 8192);
	CHECK(strcmp(e.perms, "rw-p") == 0);
	CHECK_EQ(find((unsigned long)m, &e), 0);
	CHECK(strcmp(e.perms, "r--p") == 0);
	CHECK_EQ(e.end, (unsigned long)m + 4096);
	/* A shared mapping shows 's'. */
	{
		char *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		CHECK_EQ(find((unsigned long)s, &e), 0);
		CHECK(strcmp(e.perms, "rwxs") == 0);
		munmap(s, 4096);
	}
	/* Unmapped: gone. */
	munmap(m, 3 * 4096);
	CHECK_EQ(find((unsigned long)m, &e), 1);

	/* The stack. */
	CHECK_EQ(find((unsigned long)&local, &e), 0);
	CHECK(strcmp(e.path, "[stack]") == 0);
	CHECK(strcmp(e.perms, "rw-p") == 0);

	/* Our code: r-xp, the executable file with an inode. */
	CHECK_EQ(find((unsigned long)&main, &e), 0);
	CHECK(e.perms[0] == 'r' && e.perms[2] == 'x');
	CHECK(e.inode != 0);
	CHECK(e.path[0] == '/');

	/* The heap after growing brk. */
	heap = sbrk(0);
	if (sbrk(65536) != (void *)-1) {
		CHECK_EQ(find((unsigned long)heap, &e), 0);
		CHECK(strcmp(e.path, "[heap]") == 0);
	}

	/* A mapped file: its path and offset, " (deleted)" once unlinked;
	 * 's' for a shared mapping. */
	{
		char dir[PATH_MAX], path[PATH_MAX + 8], want[PATH_MAX + 32];
		char *fm, *sm;
		int fd;

		CHECK_EQ(t_mktmp("procfs_maps", dir, sizeof dir), 0);
		snprintf(path, sizeof path, "%s/f", dir);
		fd = open(path, O_CREAT | O_RDWR, 0600);
		CHECK(fd >= 0);
		CHECK_EQ(ftruncate(fd, 8192), 0);
		fm = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
		sm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CHECK(fm != MAP_FAILED && sm != MAP_FAILED);
		CHECK_EQ(find((unsigned long)fm, &e), 0);
		CHECK(strcmp(e.path, path) == 0);
		CHECK(strcmp(e.perms, "r--p") == 0);
		CHECK_EQ(e.off, 4096);
		CHECK_EQ(find((unsigned long)sm, &e), 0);
		CHECK(strcmp(e.perms, "rw-s") == 0);
		CHECK_EQ(unlink(path), 0);
		snprintf(want, sizeof want, "%s (deleted)", path);
		CHECK_EQ(find((unsigned long)fm, &e), 0);
		CHECK(strcmp(e.path, want) == 0);
		munmap(fm, 4096);
		munmap(sm, 4096);
		close(fd);
		rmdir(dir);
	}
	DONE();
}
