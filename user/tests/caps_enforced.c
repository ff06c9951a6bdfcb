/* Privilege is a capability, not uid 0 (capabilities(7)): a root process
 * that drops one capability from its effective set loses exactly the
 * operations Linux guards with it, and keeps the others.  Each case runs
 * in a child: it checks the operation with the starting set (when that
 * is harmless), drops the capability with capset(2), and checks the
 * errno.  access(2) checks with the real ids, for which a real uid 0
 * holds its *permitted* set (Linux's access_override_creds). */
#include "next.h"
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/mount.h>

#define V3 0x20080522
#define BIT(n) (1ULL << (n))
#define OTHER 1234

enum {
	C_CHOWN = 0, C_DAC_OVERRIDE = 1, C_DAC_READ_SEARCH = 2, C_FOWNER = 3,
	C_FSETID = 4, C_KILL = 5, C_SETGID = 6, C_SETUID = 7, C_IPC_LOCK = 14,
	C_IPC_OWNER = 15, C_SYS_RAWIO = 17, C_SYS_CHROOT = 18,
	C_SYS_PTRACE = 19, C_SYS_ADMIN = 21, C_SYS_NICE = 23,
	C_SYS_RESOURCE = 24, C_SYS_TIME = 25, C_MKNOD = 27, C_SYSLOG = 34, C_PERFMON = 38,
};

struct hdr {
	unsigned version;
	int pid;
};
struct data {
	unsigned eff, perm, inh;
};

static unsigned long long start_eff;
static char dir[128], secret[160], rdir[160];

static int get(unsigned long long *eff, unsigned long long *perm, unsigned long long *inh)
{
	struct hdr h = { V3, 0 };
	struct data d[2];

	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &h, d))
		return -1;
	*eff = d[0].eff | (unsigned long long)d[1].eff << 32;
	*perm = d[0].perm | (unsigned long long)d[1].perm << 32;
	*inh = d[0].inh | (unsigned long long)d[1].inh << 32;
	return 0;
}

/* Removes `mask` from the effective set only. */
static int drop(unsigned long long mask)
{
	unsigned long long eff, perm, inh;
	struct hdr h = { V3, 0 };
	struct data d[2];

	if (get(&eff, &perm, &inh))
		return -1;
	eff &= ~mask;
	d[0] = (struct data){ (unsigned)eff, (unsigned)perm, (unsigned)inh };
	d[1] = (struct data){ (unsigned)(eff >> 32), (unsigned)(perm >> 32), (unsigned)(inh >> 32) };
	return syscall(SYS_capset, &h, d);
}

static int held(int cap)
{
	return (start_eff & BIT(cap)) != 0;
}

/* A process of another user, paused until killed. */
static pid_t other_user_process(void)
{
	pid_t v = fork();

	if (v == 0) {
		if (setresgid(OTHER, OTHER, OTHER) || setresuid(OTHER, OTHER, OTHER))
			_exit(1);
		for (;;)
			pause();
	}
	return v;
}

/* Waits until `pid` runs as OTHER. */
static void await_uid(pid_t pid)
{
	char path[64], buf[512];
	const char *u;

	snprintf(path, sizeof path, "/proc/%d/status", pid);
	for (;;) {
		if (t_read_file(path, buf, sizeof buf) > 0 && (u = strstr(buf, "\nUid:\t")) &&
		    atoi(u + 6) == OTHER)
			return;
		sched_yield();
	}
}

static void case_dac(void)
{
	/* Both DAC capabilities gone: the mode bits rule. */
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(secret, O_RDONLY);

		CHECK(fd >= 0);
		close(fd);
		CHECK_EQ(drop(BIT(C_DAC_OVERRIDE) | BIT(C_DAC_READ_SEARCH)), 0);
		CHECK_ERR(open(secret, O_RDONLY), EACCES);
		CHECK_ERR(open(secret, O_WRONLY), EACCES);
		CHECK_ERR(open(rdir, O_RDONLY | O_DIRECTORY), EACCES);
		/* access(2) goes by the real uid 0's permitted set. */
		CHECK_EQ(access(secret, R_OK | W_OK), 0);
		CHECK_ERR(faccessat(AT_FDCWD, secret, R_OK, AT_EACCESS), EACCES);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* CAP_DAC_READ_SEARCH alone: read and search, not write. */
	pid = fork();
	if (pid == 0) {
		int fd;

		CHECK_EQ(drop(BIT(C_DAC_OVERRIDE)), 0);
		fd = open(secret, O_RDONLY);
		CHECK(fd >= 0);
		close(fd);
		fd = open(rdir, O_RDONLY | O_DIRECTORY);
		CHECK(fd >= 0);
		close(fd);
		CHECK_ERR(open(secret, O_WRONLY), EACCES);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	/* CAP_DAC_OVERRIDE alone covers everything but exec of a file
	 * without any execute bit. */
	pid = fork();
	if (pid == 0) {
		int fd;

		CHECK_EQ(drop(BIT(C_DAC_READ_SEARCH)), 0);
		fd = open(secret, O_RDWR);
		CHECK(fd >= 0);
		close(fd);
		CHECK_ERR(faccessat(AT_FDCWD, secret, X_OK, AT_EACCESS), EACCES);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

static void case_owner(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		char mine[192];
		int fd;

		/* CAP_FOWNER: chmod of another's file. */
		CHECK_EQ(chmod(secret, 0), 0);
		CHECK_EQ(drop(BIT(C_FOWNER)), 0);
		CHECK_ERR(chmod(secret, 0600), EPERM);
		/* CAP_CHOWN. */
		CHECK_EQ(drop(BIT(C_CHOWN)), 0);
		CHECK_ERR(chown(secret, 0, -1), EPERM);
		/* CAP_FSETID: our own file in a group we are not in loses
		 * set-group-ID on chmod. */
		snprintf(mine, sizeof mine, "%s/mine", dir);
		fd = open(mine, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0);
		close(fd);
		CHECK_ERR(chown(mine, -1, OTHER), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));

	pid = fork();
	if (pid == 0) {
		char mine[192];
		struct stat st;
		int fd;

		snprintf(mine, sizeof mine, "%s/mine2", dir);
		fd = open(mine, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0);
		close(fd);
		CHECK_EQ(chown(mine, -1, OTHER), 0);
		CHECK_EQ(chmod(mine, 02755), 0);
		CHECK_EQ(stat(mine, &st), 0);
		CHECK_EQ(st.st_mode & 07777, 02755);
		CHECK_EQ(drop(BIT(C_FSETID)), 0);
		CHECK_EQ(chmod(mine, 02755), 0);
		CHECK_EQ(stat(mine, &st), 0);
		CHECK_EQ(st.st_mode & 07777, 0755);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

static void case_ids(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		gid_t g = 0;

		CHECK_EQ(drop(BIT(C_SETUID)), 0);
		CHECK_ERR(setuid(OTHER), EPERM);
		CHECK_ERR(setresuid(-1, OTHER, -1), EPERM);
		CHECK_EQ(drop(BIT(C_SETGID)), 0);
		CHECK_ERR(setgroups(1, &g), EPERM);
		CHECK_ERR(setgid(OTHER), EPERM);
		/* Without the capabilities, ids we hold are still allowed. */
		CHECK_EQ(setuid(0), 0);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

static void case_other_process(void)
{
	pid_t v = other_user_process(), pid;

	CHECK(v > 0);
	await_uid(v);
	pid = fork();
	if (pid == 0) {
		char path[64];
		int fd;

		CHECK_EQ(kill(v, 0), 0);
		snprintf(path, sizeof path, "/proc/%d/maps", v);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		close(fd);
		CHECK_EQ(drop(BIT(C_KILL)), 0);
		CHECK_ERR(kill(v, 0), EPERM);
		/* PTRACE_MODE_READ: CAP_SYS_PTRACE (Linux 6.18 also lets
		 * CAP_SYS_ADMIN and CAP_PERFMON read maps: drop all three). */
		CHECK_EQ(drop(BIT(C_SYS_PTRACE) | BIT(C_SYS_ADMIN) | BIT(C_PERFMON)), 0);
		CHECK_ERR(open(path, O_RDONLY), EACCES);
		/* CAP_SYS_NICE: another user's process, and lowering our own
		 * nice value. */
		CHECK_EQ(drop(BIT(C_SYS_NICE)), 0);
		CHECK_ERR(setpriority(PRIO_PROCESS, v, 19), EPERM);
		errno = 0;
		{
			int nv = getpriority(PRIO_PROCESS, 0);

			CHECK_EQ(errno, 0);
			if (nv > -20)
				CHECK_ERR(setpriority(PRIO_PROCESS, 0, nv - 1), EACCES);
			CHECK_EQ(setpriority(PRIO_PROCESS, 0, nv < 19 ? nv + 1 : 19), 0);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	kill(v, SIGKILL);
	t_wait(v);
}

static void case_admin(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		char name[65], node[192];

		memset(name, 0, sizeof name);
		CHECK_EQ(gethostname(name, 64), 0);
		CHECK_EQ(sethostname(name, strlen(name)), 0);
		CHECK_EQ(chroot("/"), 0);
		snprintf(node, sizeof node, "%s/null", dir);
		CHECK_EQ(mknod(node, S_IFCHR | 0600, makedev(1, 3)), 0);
		CHECK_EQ(unlink(node), 0);

		CHECK_EQ(drop(BIT(C_SYS_ADMIN)), 0);
		CHECK_ERR(sethostname(name, strlen(name)), EPERM);
		CHECK_ERR(mount("none", dir, "tmpfs", 0, NULL), EPERM);
		CHECK_ERR(umount2(dir, 0), EPERM);
		CHECK_EQ(drop(BIT(C_SYS_CHROOT)), 0);
		CHECK_ERR(chroot("/"), EPERM);
		CHECK_EQ(drop(BIT(C_MKNOD)), 0);
		CHECK_ERR(mknod(node, S_IFCHR | 0600, makedev(1, 3)), EPERM);
		/* A FIFO needs no capability. */
		CHECK_EQ(mknod(node, S_IFIFO | 0600, 0), 0);
		CHECK_EQ(unlink(node), 0);
		/* syslog: CAP_SYSLOG, or CAP_SYS_ADMIN (already gone). */
		CHECK(syscall(SYS_syslog, 9, NULL, 0) >= 0);
		CHECK_EQ(drop(BIT(C_SYSLOG)), 0);
		CHECK_ERR(syscall(SYS_syslog, 9, NULL, 0), EPERM);
		/* CAP_SYS_TIME (never set with it: this may be the host). */
		{
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			CHECK_EQ(drop(BIT(C_SYS_TIME)), 0);
			CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EPERM);
		}
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

static void case_limits(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit rl, zero = { 0, 0 };
		char buf[32];
		void *p;

		/* CAP_SYS_RESOURCE: raising a hard limit. */
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
		rl.rlim_max = rl.rlim_cur;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
		rl.rlim_max++;
		if (held(C_SYS_RESOURCE)) {
			CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
			CHECK_EQ(drop(BIT(C_SYS_RESOURCE)), 0);
			rl.rlim_max++;
		} else {
			t_note("CAP_SYS_RESOURCE not held at the start");
		}
		CHECK_ERR(setrlimit(RLIMIT_NOFILE, &rl), EPERM);

		/* CAP_IPC_LOCK: mlock with RLIMIT_MEMLOCK 0. */
		CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &zero), 0);
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(p != MAP_FAILED);
		CHECK_EQ(mlock(p, 4096), 0);
		CHECK_EQ(munlock(p, 4096), 0);
		CHECK_EQ(drop(BIT(C_IPC_LOCK)), 0);
		CHECK_ERR(mlock(p, 4096), EPERM);

		/* CAP_SYS_RAWIO: mappings below vm.mmap_min_addr (page 0 is
		 * below it on every system that has one). */
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		CHECK(p == NULL);
		CHECK_EQ(munmap(NULL, 4096), 0);
		CHECK_EQ(drop(BIT(C_SYS_RAWIO)), 0);
		if (t_read_file("/proc/sys/vm/mmap_min_addr", buf, sizeof buf) > 0 && atol(buf) > 0)
			CHECK_ERR((long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), EPERM);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
}

static void case_ipc(void)
{
	int id = msgget(IPC_PRIVATE, 0);
	pid_t pid;

	CHECK(id >= 0);
	pid = fork();
	if (pid == 0) {
		struct msqid_ds ds;

		CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
		CHECK_EQ(drop(BIT(C_IPC_OWNER)), 0);
		CHECK_ERR(msgctl(id, IPC_STAT, &ds), EACCES);
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
}

int main(void)
{
	unsigned long long perm, inh;
	static const int needed[] = { C_CHOWN, C_DAC_OVERRIDE, C_DAC_READ_SEARCH, C_FOWNER, C_FSETID,
				      C_KILL, C_SETGID, C_SETUID, C_IPC_LOCK, C_IPC_OWNER, C_SYS_RAWIO,
				      C_SYS_CHROOT, C_SYS_PTRACE, C_SYS_ADMIN, C_SYS_NICE, C_SYS_TIME,
				      C_MKNOD, C_SYSLOG };
	int fd;

	if (geteuid() != 0)
		SKIP("needs root");
	CHECK_EQ(get(&start_eff, &perm, &inh), 0);
	for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
		if (!held(needed[i]))
			SKIP("capability %d not held at the start", needed[i]);

	CHECK_EQ(t_mktmp("caps_enforced", dir, sizeof dir), 0);
	CHECK_EQ(chmod(dir, 0755), 0);
	snprintf(secret, sizeof secret, "%s/secret", dir);
	snprintf(rdir, sizeof rdir, "%s/closed", dir);
	fd = open(secret, O_CREAT | O_WRONLY, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(chown(secret, OTHER, OTHER), 0);
	CHECK_EQ(mkdir(rdir, 0), 0);
	CHECK_EQ(chown(rdir, OTHER, OTHER), 0);

	case_dac();
	case_owner();
	case_ids();
	case_other_process();
	case_admin();
	case_limits();
	case_ipc();

	rmdir(rdir);
	unlink(secret);
	DONE();
}
