/* The ptrace access check on /proc/<pid> (PTRACE_MODE_READ_FSCREDS):
 * an unprivileged reader cannot open maps, environ, mem or auxv of
 * another user's process (EACCES), nor read its exe/cwd/root/fd links or
 * list its fd directory, while stat, status and cmdline stay readable.
 * A process of the same user is open to it only while dumpable; changing
 * ids makes a process non-dumpable and its /proc files root's. The
 * process itself and root may always look. Also /proc/pid/mem and
 * /proc/pid/auxv contents. */
#include "next.h"
#include <sys/auxv.h>
#include <sys/prctl.h>

#define NOBODY 65534

static volatile unsigned long marker = 0x5eed1234abcdUL;

static int open_rd(pid_t pid, const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : -1;
}

static int read_link(pid_t pid, const char *name)
{
	char path[64], buf[256];

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	return readlink(path, buf, sizeof buf) > 0 ? 0 : -1;
}

static uid_t proc_owner(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* A process of user `uid` that waits to be killed; dumpable if asked.
 * It reports on `ready` when it is set up. */
static pid_t target(uid_t uid, int dumpable, int ready)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (uid != 0 &&
		    (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(10);
		if (dumpable && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(11);
		t_post(ready);
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	t_wait(pid);
}

static void check_auxv(void)
{
	unsigned long words[128];
	ssize_t n;
	int fd, i, found = 0, ended = 0;

	fd = open("/proc/self/auxv", O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	n = read(fd, words, sizeof words);
	close(fd);
	CHECK(n > 0 && n % 16 == 0);
	for (i = 0; i + 1 < n / 8; i += 2) {
		if (words[i] == AT_PAGESZ) {
			CHECK_EQ(words[i + 1], 4096);
			found = 1;
		}
		if (words[i] == AT_ENTRY)
			CHECK_EQ(words[i + 1], getauxval(AT_ENTRY));
		if (words[i] == AT_NULL) {
			ended = 1;
			CHECK_EQ(i + 2, n / 8);
		}
	}
	CHECK(found);
	CHECK(ended);
}

int main(void)
{
	int p[2];
	pid_t root_proc, child;

	check_auxv();
	if (!t_is_root())
		SKIP("needs root to run as another user");
	CHECK_EQ(pipe(p), 0);
	root_proc = target(0, 1, p[1]);
	CHECK_EQ(t_await(p[0]), 0);

	child = fork();
	if (child == 0) {
		pid_t same, hidden;
		char c;

		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		/* Changing ids made us non-dumpable. */
		CHECK_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
		CHECK_EQ(proc_owner(getpid()), 0);
		/* We still see our own. */
		CHECK_EQ(open_rd(getpid(), "maps"), 0);
		CHECK_ERR(open_rd(getpid(), "mem"), EACCES); /* 0600 and root's now */

		/* Root's process: the private files are closed to us. */
		CHECK_ERR(open_rd(root_proc, "maps"), EACCES);
		CHECK_ERR(open_rd(root_proc, "environ"), EACCES);
		CHECK_ERR(open_rd(root_proc, "mem"), EACCES);
		CHECK_ERR(open_rd(root_proc, "auxv"), EACCES);
		CHECK_ERR(open_rd(root_proc, "fd"), EACCES);
		CHECK_ERR(read_link(root_proc, "exe"), EACCES);
		CHECK_ERR(read_link(root_proc, "cwd"), EACCES);
		CHECK_ERR(read_link(root_proc, "root"), EACCES);
		CHECK_ERR(read_link(root_proc, "fd/0"), EACCES);
		CHECK_EQ(open_rd(root_proc, "stat"), 0);
		CHECK_EQ(open_rd(root_proc, "status"), 0);
		CHECK_EQ(open_rd(root_proc, "cmdline"), 0);

		/* A process of ours that made itself dumpable again. */
		same = target(NOBODY, 1, p[1]);
		CHECK_EQ(t_await(p[0]), 0);
		CHECK_EQ(proc_owner(same), NOBODY);
		CHECK_EQ(open_rd(same, "maps"), 0);
		CHECK_EQ(open_rd(same, "environ"), 0);
		CHECK_EQ(open_rd(same, "auxv"), 0);
		CHECK_EQ(open_rd(same, "mem"), 0);
		CHECK_EQ(open_rd(same, "fd"), 0);
		CHECK_EQ(read_link(same, "exe"), 0);
		CHECK_EQ(read_link(same, "fd/0"), 0);

		/* One that stayed non-dumpable: root's files, closed to us. */
		hidden = target(NOBODY, 0, p[1]);
		CHECK_EQ(t_await(p[0]), 0);
		CHECK_EQ(proc_owner(hidden), 0);
		CHECK_ERR(open_rd(hidden, "maps"), EACCES);
		CHECK_ERR(read_link(hidden, "exe"), EACCES);
		CHECK_EQ(open_rd(hidden, "status"), 0);

		reap(same);
		reap(hidden);
		(void)c;
		CHILD_DONE();
	}
	CHECK(t_wait_ok(child));

	/* Root may look at anyone; /proc/pid/mem reads its memory. */
	{
		char path[64];
		unsigned long got = 0;
		int fd;

		CHECK_EQ(open_rd(root_proc, "maps"), 0);
		CHECK_EQ(read_link(root_proc, "exe"), 0);
		snprintf(path, sizeof path, "/proc/%d/mem", (int)root_proc);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		CHECK_EQ(pread(fd, &got, sizeof got, (off_t)(uintptr_t)&marker), sizeof got);
		CHECK_EQ(got, 0x5eed1234abcdUL);
		/* An unmapped address reads as EIO. */
		CHECK_ERR(pread(fd, &got, sizeof got, 4096), EIO);
		close(fd);
		/* Writes change it (our own copy stays). */
		fd = open("/proc/self/mem", O_RDWR);
		CHECK(fd >= 0);
		got = 0x1111;
		CHECK_EQ(pwrite(fd, &got, sizeof got, (off_t)(uintptr_t)&marker), sizeof got);
		CHECK_EQ(marker, 0x1111);
		close(fd);
	}
	reap(root_proc);
	DONE();
}
