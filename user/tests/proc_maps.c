/*
 * /proc/self/maps lists the address space: the stack, an anonymous
 * mapping with its permissions (which follow mprotect), and the program's
 * own text mapped from its file.
 */
#include "t.h"
#include <sys/mman.h>

/* The maps line whose range holds addr, copied to line; 1 if found. */
static int find_line(unsigned long addr, char *line, size_t n)
{
	static char buf[65536];
	char *p, *nl;

	if (t_read_file("/proc/self/maps", buf, sizeof buf) <= 0)
		return 0;
	for (p = buf; *p; p = nl + 1) {
		unsigned long lo, hi;
		nl = strchr(p, '\n');
		if (!nl)
			break;
		if (sscanf(p, "%lx-%lx", &lo, &hi) == 2 && lo <= addr &&
		    addr < hi) {
			snprintf(line, n, "%.*s", (int)(nl - p), p);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	char line[512], perms[8];
	unsigned long lo, hi, off, ino;
	unsigned maj, min;
	int local = 0, fields;
	char *m;

	/* The stack. */
	CHECK(find_line((unsigned long)&local, line, sizeof line));
	CHECK(strstr(line, "[stack]") != NULL);
	CHECK(strstr(line, " rw-p ") != NULL);

	/* An anonymous mapping: dev 00:00, inode 0, no name. */
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK(find_line((unsigned long)m + PAGE, line, sizeof line));
	fields = sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &off,
			&maj, &min, &ino);
	CHECK_EQ(fields, 7);
	CHECK(strcmp(perms, "rw-p") == 0);
	CHECK(lo <= (unsigned long)m && hi >= (unsigned long)m + 3 * PAGE);
	CHECK_EQ(maj, 0);
	CHECK_EQ(ino, 0);

	/* mprotect splits it: the middle page alone is read-only. */
	CHECK_EQ(mprotect(m + PAGE, PAGE, PROT_READ), 0);
	CHECK(find_line((unsigned long)m + PAGE, line, sizeof line));
	CHECK_EQ(sscanf(line, "%lx-%lx %7s", &lo, &hi, perms), 3);
	CHECK(strcmp(perms, "r--p") == 0);
	CHECK_EQ(lo, (unsigned long)m + PAGE);
	CHECK_EQ(hi, (unsigned long)m + 2 * PAGE);
	CHECK_EQ(munmap(m, 3 * PAGE), 0);
	CHECK(!find_line((unsigned long)m + PAGE, line, sizeof line));

	/* This function's code: executable, from a file (inode != 0), named
	 * by the program's path. */
	CHECK(find_line((unsigned long)&find_line, line, sizeof line));
	CHECK_EQ(sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &off,
			&maj, &min, &ino), 7);
	CHECK(perms[2] == 'x');
	CHECK(ino != 0);
	CHECK(strchr(line, '/') != NULL);
	DONE();
}
