/* A MAP_PRIVATE mapping of a file and write(2) to the same file: a page
 * the mapping has only read shows what is written to the file afterwards
 * (it maps the file's own page), a page it has stored to is its private
 * copy and no longer follows the file, and the file never sees the
 * mapping's stores.  A forked child shares the unwritten page's view. */
#include "t.h"
#include <sys/mman.h>
#include <sys/wait.h>

#define FSIZE (2 * PAGE)

int main(void)
{
	char dir[128], path[256];
	static unsigned char data[FSIZE];
	unsigned char *m, c;
	volatile unsigned char sink;
	size_t i;
	int fd, st;
	pid_t pid;

	if (t_mktmp("mmap_private_file_writes", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	for (i = 0; i < FSIZE; i++)
		data[i] = (unsigned char)(i * 13 + 1);
	CHECK_EQ(t_write_file(path, data, FSIZE, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	m = mmap(NULL, FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		DONE();
	/* Read both pages first. */
	sink = m[0];
	sink = m[PAGE];
	(void)sink;
	CHECK_EQ(m[5], data[5]);

	/* A write to the file shows through pages only read so far. */
	c = 0xa5;
	CHECK_EQ(pwrite(fd, &c, 1, 5), 1);
	CHECK_EQ(pwrite(fd, &c, 1, PAGE + 7), 1);
	CHECK_EQ(m[5], 0xa5);
	CHECK_EQ(m[PAGE + 7], 0xa5);

	/* A store makes page 0 private: the file does not see it, and later
	 * writes to the file do not reach the copy; page 1 still follows. */
	m[6] = 0x5a;
	CHECK_EQ(pread(fd, &c, 1, 6), 1);
	CHECK_EQ(c, data[6]);
	c = 0x3c;
	CHECK_EQ(pwrite(fd, &c, 1, 5), 1);
	CHECK_EQ(pwrite(fd, &c, 1, PAGE + 8), 1);
	CHECK_EQ(m[5], 0xa5);
	CHECK_EQ(m[6], 0x5a);
	CHECK_EQ(m[PAGE + 8], 0x3c);

	/* A child sees the same: its own copy of page 0, the file's page 1;
	 * its store to page 1 stays its own. */
	pid = fork();
	if (pid == 0) {
		if (m[5] != 0xa5 || m[6] != 0x5a || m[PAGE + 8] != 0x3c)
			_exit(2);
		m[PAGE + 9] = 0x11;
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(m[PAGE + 9], data[PAGE + 9]);
	CHECK_EQ(pread(fd, &c, 1, PAGE + 9), 1);
	CHECK_EQ(c, data[PAGE + 9]);

	CHECK_EQ(munmap(m, FSIZE), 0);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(unlink(path), 0);
	t_rmtree(dir);
	DONE();
}
