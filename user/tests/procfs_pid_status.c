/* /proc/<pid>/status "Key:\tvalue" lines: Name, State, Tgid, Pid, PPid,
 * Uid/Gid (four ids), VmRSS/VmSize in kB, Threads, SigBlk/SigIgn masks. */
#include "next.h"

static const char *field(const char *text, const char *key)
{
	const char *v = t_find_line(text, key);

	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	return v;
}

int main(void)
{
	static char buf[8192];
	const char *v;
	unsigned long long mask;
	int a, b, c, d;
	pid_t pid;

	signal(SIGUSR2, SIG_IGN);
	t_block(SIGUSR1, SIG_BLOCK);
	CHECK(t_read_file("/proc/self/status", buf, sizeof buf) > 0);
	v = field(buf, "Name:");
	CHECK(v && !strncmp(v, "procfs_pid_stat", 15));
	v = field(buf, "State:");
	CHECK(v && v[0] == 'R');
	v = field(buf, "Tgid:");
	CHECK(v && atoi(v) == getpid());
	v = field(buf, "Pid:");
	CHECK(v && atoi(v) == getpid());
	v = field(buf, "PPid:");
	CHECK(v && atoi(v) == getppid());
	v = field(buf, "Uid:");
	CHECK(v && sscanf(v, "%d %d %d %d", &a, &b, &c, &d) == 4);
	CHECK(a == (int)getuid() && b == (int)geteuid());
	v = field(buf, "Gid:");
	CHECK(v && sscanf(v, "%d %d %d %d", &a, &b, &c, &d) == 4);
	CHECK(a == (int)getgid());
	v = field(buf, "Threads:");
	CHECK(v && atoi(v) == 1);
	v = field(buf, "VmRSS:");
	CHECK(v && atol(v) > 0 && strstr(v, "kB"));
	v = field(buf, "VmSize:");
	CHECK(v && atol(v) > 0 && strstr(v, "kB"));
	v = field(buf, "SigBlk:");
	CHECK(v && sscanf(v, "%llx", &mask) == 1);
	CHECK(mask & (1ULL << (SIGUSR1 - 1)));
	v = field(buf, "SigIgn:");
	CHECK(v && sscanf(v, "%llx", &mask) == 1);
	CHECK(mask & (1ULL << (SIGUSR2 - 1)));

	/* A child's status as seen from the parent. */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	{
		char path[64];

		t_wait_proc_state(pid, "S");
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
		CHECK(t_read_file(path, buf, sizeof buf) > 0);
		v = field(buf, "State:");
		CHECK(v && v[0] == 'S');
		v = field(buf, "PPid:");
		CHECK(v && atoi(v) == getpid());
	}
	kill(pid, SIGKILL);
	t_wait(pid);
	DONE();
}
