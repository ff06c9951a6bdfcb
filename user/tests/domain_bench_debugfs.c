/*
 * domain_bench_debugfs: the bench domain's debug file
 * (/sys/kernel/debug/domains/bench/run, what the domain_call_* bench rows
 * drive) runs cross-domain calls and refuses anything else: each mode
 * runs and is counted in /proc/domains; malformed text, a zero or too
 * large count, junk and overlong writes are EINVAL; the directory is
 * root's only (a non-root process cannot even look the file up, as with
 * Linux's 0700 debugfs); a long run stops with EINTR for a signal that
 * arrives meanwhile.  Trellis only (Linux has no such file).
 */
#include "next.h"
#include <sys/time.h>

#define RUN "/sys/kernel/debug/domains/bench/run"

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static long wr(int fd, const char *s)
{
	return write(fd, s, strlen(s));
}

/* The `calls` column of the bench line of /proc/domains, or -1. */
static long bench_calls(void)
{
	char line[256];
	long calls = -1;
	FILE *f = fopen("/proc/domains", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		char name[64], alive[16];
		long heap, c;
		if (sscanf(line, "%63s %15s %ld %ld", name, alive, &heap, &c) == 4 &&
		    strcmp(name, "bench") == 0)
			calls = c;
	}
	fclose(f);
	return calls;
}

int main(void)
{
	if (!t_is_trellis())
		SKIP("the bench domain's debug file is Trellis's own");
	if (getuid() != 0)
		SKIP("debugfs is root's");

	int fd = open(RUN, O_WRONLY);
	CHECK(fd >= 0);

	/* Every mode runs; the domain's calls are counted. */
	CHECK_EQ(wr(fd, "null 10\n"), 8);
	long before = bench_calls();
	CHECK(before >= 10);
	CHECK_EQ(wr(fd, "null 1000"), 9);
	CHECK_EQ(wr(fd, "rref 100"), 8);
	CHECK_EQ(wr(fd, "move 100"), 8);
	CHECK_EQ(wr(fd, "direct 5000"), 11);
	CHECK_EQ(bench_calls(), before + 1200);

	/* Hostile input. */
	static const char *bad[] = {
		"\n", "null", "null 0", "null -1", "null 1048577",
		"null 99999999999999999999999", "null 1 2", "nul 1", "NULL 1",
		"null 0x10", "null 1e3", "crash 1", "\xff\xfe 1",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK_ERR(wr(fd, bad[i]), EINVAL);
	static char big[65536];
	memset(big, '7', sizeof big);
	memcpy(big, "null ", 5);
	CHECK_ERR(write(fd, big, sizeof big), EINVAL);
	CHECK_EQ(bench_calls(), before + 1200);

	/* Root's only: a non-root process cannot reach the file. */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		CHECK_ERR(open(RUN, O_WRONLY), EACCES);
		CHECK_ERR(open("/sys/kernel/debug/domains/bench", O_RDONLY | O_DIRECTORY), EACCES);
		CHILD_DONE();
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/*
	 * A signal stops a long run: with a timer every millisecond, a write
	 * of the largest count (far longer than that) returns EINTR.
	 */
	struct sigaction sa = { .sa_handler = on_alarm };
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	int eintr = 0;
	for (int i = 0; i < 20 && !eintr; i++) {
		errno = 0;
		long r = wr(fd, "null 1048576");
		if (r < 0) {
			CHECK_EQ(errno, EINTR);
			eintr = 1;
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	CHECK(eintr);
	CHECK(alarms > 0);

	CHECK_EQ(close(fd), 0);
	DONE();
}
