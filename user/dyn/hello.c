/*
 * A dynamically linked program for exec_dynamic: built twice, against
 * musl's loader and glibc's (user/Makefile: $(BUILD)/dyn/hello-musl and
 * hello-glibc), and started by the test.  It prints what the kernel gave
 * the dynamic linker and exits with 7.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

int main(int argc, char **argv)
{
	unsigned long base = getauxval(AT_BASE);
	unsigned long entry = getauxval(AT_ENTRY);
	unsigned long phdr = getauxval(AT_PHDR);
	const char *named = "anon";
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	/* The mapping that holds the interpreter's base has its file name. */
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= base &&
		    base < hi) {
			if (strchr(line, '/'))
				named = "named";
			break;
		}
	}
	if (f)
		fclose(f);
	printf("argc=%d arg1=%s base=%lx entry=%lx phdr=%lx main=%lx interp=%s\n",
	       argc, argc > 1 ? argv[1] : "-", base, entry, phdr,
	       (unsigned long)&main, named);
	return 7;
}
