/* Exact wait status words: exit codes, termination signals without the
 * core bit, and core-dumping signals with it (0x80).  Linux only sets the
 * core bit when a core is really written, so the children raise
 * RLIMIT_CORE and work in a scratch directory; with RLIMIT_CORE 0 Linux
 * would report no core bit. */
#include "next.h"

static int core_pattern_is_plain(void)
{
	char buf[256];

	if (t_read_file("/proc/sys/kernel/core_pattern", buf, sizeof buf) <= 0)
		return 1;
	return buf[0] != '|' && !strchr(buf, '/');
}

static int status_of_signal(int sig, const char *dir)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		if (setrlimit(RLIMIT_CORE, &rl) != 0) {
			rl.rlim_cur = rl.rlim_max = 64 << 20;
			setrlimit(RLIMIT_CORE, &rl);
		}
		if (chdir(dir) != 0)
			_exit(100);
		signal(sig, SIG_DFL);
		t_block(sig, SIG_UNBLOCK);
		kill(getpid(), sig);
		_exit(101);
	}
	return t_wait(pid);
}

int main(void)
{
	const int term[] = { SIGHUP, SIGINT, SIGPIPE, SIGALRM, SIGTERM,
				    SIGUSR1, SIGUSR2, SIGKILL, SIGVTALRM,
				    SIGPROF, SIGIO, SIGRTMIN, SIGRTMAX };
	static const int core[] = { SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS,
				    SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS };
	char dir[PATH_MAX];
	unsigned i;
	int st, plain = core_pattern_is_plain();

	if (t_mktmp("wait_status_bits", dir, sizeof dir) != 0)
		DONE();

	for (i = 0; i < 256; i += 17) {
		pid_t pid = fork();

		if (pid == 0)
			_exit((int)i);
		st = t_wait(pid);
		CHECK_EQ(st, (int)(i << 8));
	}
	/* Only the low 8 bits of the exit code survive. */
	{
		pid_t pid = fork();

		if (pid == 0)
			syscall(SYS_exit_group, 0x1234);
		st = t_wait(pid);
		CHECK_EQ(st, 0x3400);
	}

	for (i = 0; i < sizeof term / sizeof term[0]; i++) {
		st = status_of_signal(term[i], dir);
		CHECK_EQ(st, term[i]);
		CHECK(WIFSIGNALED(st) && !WCOREDUMP(st));
	}
	if (!plain && !t_is_trellis())
		t_note("host core_pattern is a pipe or path: core bit not "
		       "checked");
	for (i = 0; i < sizeof core / sizeof core[0]; i++) {
		st = status_of_signal(core[i], dir);
		CHECK(WIFSIGNALED(st));
		CHECK_EQ(WTERMSIG(st), core[i]);
		if (plain || t_is_trellis())
			CHECK_EQ(st, core[i] | 0x80);
	}
	t_rmtree(dir);
	DONE();
}
