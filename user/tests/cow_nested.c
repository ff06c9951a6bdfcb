/*
 * Copy-on-write across generations and many forks: grandchildren, private
 * file mappings and brk-style heap growth all stay isolated.
 */
#include "t.h"
#include <sys/mman.h>

#define PAGES 16

static unsigned char data[PAGES * PAGE];

static unsigned sum(const unsigned char *p, size_t n)
{
	unsigned s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

int main(void)
{
	char dir[128], path[256];
	unsigned before;
	unsigned char *fm;
	pid_t pid;
	int i, st, fd;

	for (i = 0; i < (int)sizeof data; i++)
		data[i] = (unsigned char)i;
	before = sum(data, sizeof data);

	/* Twenty children each scribble over all pages; we are unaffected. */
	for (i = 0; i < 20; i++) {
		pid = fork();
		if (pid == 0) {
			memset(data, i + 1, sizeof data);
			_exit(data[PAGE * (PAGES - 1)] == i + 1 ? 0 : 1);
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
	}
	CHECK_EQ(sum(data, sizeof data), before);

	/* Three generations: each level modifies one page and checks that it
	 * still sees its ancestors' values elsewhere. */
	pid = fork();
	if (pid == 0) {
		pid_t g;

		data[0] = 0xc1;
		g = fork();
		if (g == 0) {
			int bad = 0;

			if (data[0] != 0xc1)
				bad |= 1;
			data[0] = 0xd2;
			data[PAGE] = 0xd2;
			if (data[2 * PAGE] != (unsigned char)(2 * PAGE))
				bad |= 2;
			_exit(bad);
		}
		if (g < 0)
			_exit(10);
		if (t_wait(g) != 0)
			_exit(11);
		/* The grandchild's writes are invisible here. */
		if (data[0] != 0xc1 || data[PAGE] != (unsigned char)PAGE)
			_exit(12);
		_exit(0);
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_EQ(data[0], 0);
	CHECK_EQ(sum(data, sizeof data), before);

	/* Private file mapping: a child's write is invisible to the parent,
	 * and a parent write before fork is visible to the child. */
	if (t_mktmp("cow_nested", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "ABCDEFGH", 8, 0644), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	fm = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(fm != MAP_FAILED);
	if (fm != MAP_FAILED) {
		fm[1] = 'b';
		pid = fork();
		if (pid == 0) {
			int bad = (fm[1] != 'b') | ((fm[0] != 'A') << 1);
			fm[0] = 'a';
			fm[2] = 'c';
			_exit(bad);
		}
		CHECK(pid > 0);
		t_wait_ok(pid);
		CHECK(memcmp(fm, "AbCDEFGH", 8) == 0);
		CHECK_EQ(munmap(fm, PAGE), 0);
	}
	CHECK_EQ(close(fd), 0);
	{
		char buf[16];
		CHECK_EQ(t_read_file(path, buf, sizeof buf), 8);
		CHECK(memcmp(buf, "ABCDEFGH", 8) == 0);
	}

	/* brk heap memory grown before the fork is copied, not shared. */
	{
		unsigned long b0 = (unsigned long)syscall(SYS_brk, 0);
		unsigned char *h = (unsigned char *)b0;

		if ((unsigned long)syscall(SYS_brk, b0 + 2 * PAGE) == b0 + 2 * PAGE) {
			memset(h, 0x77, 2 * PAGE);
			pid = fork();
			if (pid == 0) {
				int bad = h[PAGE] != 0x77;
				memset(h, 0x88, 2 * PAGE);
				_exit(bad);
			}
			CHECK(pid > 0);
			t_wait_ok(pid);
			CHECK_EQ(h[0], 0x77);
			CHECK_EQ(h[2 * PAGE - 1], 0x77);
			CHECK_EQ((unsigned long)syscall(SYS_brk, b0), b0);
		} else {
			CHECK(!"brk grow failed");
		}
	}

	t_rmtree(dir);
	DONE();
}
