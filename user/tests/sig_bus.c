/* SIGBUS from touching a file mapping beyond the end of the file
 * (BUS_ADRERR, exact si_addr), including after the file shrank. */
#include "next.h"

static sigjmp_buf env;
static volatile void *addr;
static volatile int code, signo;

static void on_bus(int s, siginfo_t *si, void *c)
{
	(void)c;
	signo = s;
	addr = si->si_addr;
	code = si->si_code;
	siglongjmp(env, 1);
}

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[4096];
	volatile char *m;
	int fd;

	if (t_mktmp("sig_bus", dir, sizeof dir) != 0)
		DONE();
	t_join(path, sizeof path, dir, "f");
	memset(buf, 'q', sizeof buf);
	CHECK_EQ(t_write_file(path, buf, 4096, 0644), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	m = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		DONE();
	CHECK_EQ(t_siginfo_action(SIGBUS, on_bus, 0), 0);

	/* Inside the file. */
	CHECK_EQ(m[100], 'q');
	/* The page past EOF. */
	signo = 0;
	if (sigsetjmp(env, 1) == 0)
		(void)m[4096 + 16];
	CHECK_EQ(signo, SIGBUS);
	CHECK_EQ(code, BUS_ADRERR);
	CHECK(addr == m + 4096 + 16);

	/* The file grows: the page becomes readable (zeros past the data). */
	CHECK_EQ(ftruncate(fd, 8192), 0);
	signo = 0;
	if (sigsetjmp(env, 1) == 0)
		CHECK_EQ(m[4096 + 16], 0);
	CHECK_EQ(signo, 0);

	/* A fault with SIGBUS blocked kills. */
	{
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			t_block(SIGBUS, SIG_BLOCK);
			(void)m[2 * 4096 + 1];
			_exit(0);
		}
		st = t_wait(pid);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
	}
	close(fd);
	t_rmtree(dir);
	DONE();
}
