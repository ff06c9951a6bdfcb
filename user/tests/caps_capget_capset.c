/* capget/capset (capabilities(7)): the version handshake (v1 gives the
 * low 32 bits, v2 and v3 all 64; an unknown version is EINVAL and the
 * preferred v3 is written back; a NULL data pointer just probes); the
 * sets as Linux computes them - root's match /proc/self/status, a uid
 * change away from root drops them (the effective set alone for euid,
 * the file-system ones for fsuid), execve gives root the bounding set
 * and others nothing; capset may only drop (EPERM to raise the permitted
 * set, an effective bit outside it, or an inheritable bit without
 * CAP_SETPCAP), and only for the caller (EPERM for another pid). */
#include "next.h"
#include <sys/fsuid.h>

#define V1 0x19980330
#define V2 0x20071026
#define V3 0x20080522
#define NOBODY 65534
#define BIT(n) (1ULL << (n))
#define CAP_CHOWN_ 0
#define CAP_DAC_OVERRIDE_ 1
#define CAP_KILL_ 5
#define CAP_SETPCAP_ 8
#define CAP_NET_RAW_ 13

struct hdr {
	unsigned version;
	int pid;
};
struct data {
	unsigned eff, perm, inh;
};
struct caps {
	unsigned long long eff, perm, inh;
};

static long capget_(unsigned version, int pid, struct data *d)
{
	struct hdr h = { version, pid };

	return syscall(SYS_capget, &h, d);
}

static int get(int pid, struct caps *c)
{
	struct data d[2];

	memset(d, 0, sizeof d);
	if (capget_(V3, pid, d))
		return -1;
	c->eff = d[0].eff | (unsigned long long)d[1].eff << 32;
	c->perm = d[0].perm | (unsigned long long)d[1].perm << 32;
	c->inh = d[0].inh | (unsigned long long)d[1].inh << 32;
	return 0;
}

static long set(int pid, unsigned long long eff, unsigned long long perm, unsigned long long inh)
{
	struct hdr h = { V3, pid };
	struct data d[2] = {
		{ (unsigned)eff, (unsigned)perm, (unsigned)inh },
		{ (unsigned)(eff >> 32), (unsigned)(perm >> 32), (unsigned)(inh >> 32) },
	};

	return syscall(SYS_capset, &h, d);
}

static unsigned long long status_hex(const char *key)
{
	static char buf[8192];
	const char *v;

	if (t_read_file("/proc/self/status", buf, sizeof buf) <= 0)
		return ~0ULL;
	v = t_find_line(buf, key);
	return v ? strtoull(v, NULL, 16) : ~0ULL;
}

/* Runs this program with `mode` (after `setup` in the child), returning
 * its exit status. */
static int exec_self(const char *self, const char *mode, int drop)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char *argv[] = { (char *)self, (char *)mode, NULL };

		if (drop && (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY)))
			_exit(20);
		execv(self, argv);
		_exit(21);
	}
	st = t_wait(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void versions(void)
{
	struct hdr h = { 0x12345678, 0 };
	struct data d[2];

	/* Unknown version: EINVAL with data, 0 without; v3 written back. */
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CHECK_EQ(h.version, V3);
	h.version = 1;
	CHECK_EQ(syscall(SYS_capget, &h, NULL), 0);
	CHECK_EQ(h.version, V3);
	h.version = 1;
	CHECK_ERR(syscall(SYS_capset, &h, d), EINVAL);
	CHECK_EQ(h.version, V3);
	CHECK_ERR(syscall(SYS_capget, NULL, d), EFAULT);

	/* v1: one 32-bit half only. */
	memset(d, 0x5a, sizeof d);
	CHECK_EQ(capget_(V1, 0, d), 0);
	CHECK_EQ(d[1].eff, 0x5a5a5a5a);
	CHECK_EQ(d[0].eff, (unsigned)status_hex("CapEff:"));
	memset(d, 0, sizeof d);
	CHECK_EQ(capget_(V2, 0, d), 0);
	CHECK_EQ(d[1].perm, (unsigned)(status_hex("CapPrm:") >> 32));

	CHECK_ERR(capget_(V3, -1, d), EINVAL);
	CHECK_ERR(capget_(V3, 0x3ffffff0, d), ESRCH);
	{
		pid_t other = fork();

		if (other == 0) {
			pause();
			_exit(0);
		}
		CHECK_EQ(capget_(V3, other, d), 0);
		CHECK_EQ(d[0].eff, (unsigned)status_hex("CapEff:"));
		CHECK_ERR(set(other, 0, 0, 0), EPERM);
		kill(other, SIGKILL);
		t_wait(other);
	}
}

static void root_rules(void)
{
	struct caps c, d;
	unsigned long long bnd = status_hex("CapBnd:");

	CHECK_EQ(get(0, &c), 0);
	CHECK_EQ(c.eff, status_hex("CapEff:"));
	CHECK_EQ(c.perm, status_hex("CapPrm:"));
	CHECK_EQ(c.inh, status_hex("CapInh:"));
	if (t_is_trellis()) {
		CHECK_EQ(c.eff, BIT(41) - 1);
		CHECK_EQ(c.perm, BIT(41) - 1);
		CHECK_EQ(c.inh, 0);
		CHECK_EQ(bnd, BIT(41) - 1);
	}
	if (!(c.perm & BIT(CAP_NET_RAW_)) || !(c.eff & BIT(CAP_SETPCAP_))) {
		t_note("capability sets too small here to test capset");
		return;
	}

	/* Dropping from the effective set only, and back: fine. */
	CHECK_EQ(set(0, c.eff & ~BIT(CAP_NET_RAW_), c.perm, c.inh), 0);
	CHECK_EQ(get(getpid(), &d), 0);
	CHECK_EQ(d.eff, c.eff & ~BIT(CAP_NET_RAW_));
	CHECK_EQ(d.perm, c.perm);
	CHECK_EQ(set(getpid(), c.eff, c.perm, c.inh), 0);
	/* An effective bit outside the permitted set: EPERM. */
	CHECK_ERR(set(0, c.eff, c.perm & ~BIT(CAP_NET_RAW_), c.inh), EPERM);
	/* Inheritable: anything in the bounding set with CAP_SETPCAP. */
	CHECK_EQ(set(0, c.eff, c.perm, c.inh | BIT(CAP_KILL_)), 0);
	/* Drop from the permitted set: it cannot come back. */
	CHECK_EQ(set(0, c.eff & ~BIT(CAP_NET_RAW_), c.perm & ~BIT(CAP_NET_RAW_), c.inh), 0);
	CHECK_ERR(set(0, c.eff, c.perm, c.inh), EPERM);
	CHECK_EQ(get(0, &d), 0);
	CHECK_EQ(d.perm, c.perm & ~BIT(CAP_NET_RAW_));
	/* Without CAP_SETPCAP, only inheritable bits we hold or permit. */
	CHECK_EQ(set(0, d.eff & ~BIT(CAP_SETPCAP_), d.perm, 0), 0);
	CHECK_ERR(set(0, d.eff & ~BIT(CAP_SETPCAP_), d.perm, BIT(CAP_NET_RAW_)), EPERM);
	CHECK_EQ(set(0, d.eff & ~BIT(CAP_SETPCAP_), d.perm, BIT(CAP_KILL_)), 0);
	(void)bnd;
}

static void uid_rules(void)
{
	struct caps c, d;
	unsigned long long fs = BIT(CAP_CHOWN_) | BIT(CAP_DAC_OVERRIDE_);

	CHECK_EQ(get(0, &c), 0);
	/* euid away from 0 (real and saved stay 0): effective empty only. */
	CHECK_EQ(setresuid(-1, NOBODY, -1), 0);
	CHECK_EQ(get(0, &d), 0);
	CHECK_EQ(d.eff, 0);
	CHECK_EQ(d.perm, c.perm);
	CHECK_EQ(status_hex("CapEff:"), 0);
	/* Back to euid 0: the permitted set becomes effective. */
	CHECK_EQ(setresuid(-1, 0, -1), 0);
	CHECK_EQ(get(0, &d), 0);
	CHECK_EQ(d.eff, c.perm);
	/* fsuid away from 0: the file-system capabilities go, and return. */
	setfsuid(NOBODY);
	CHECK_EQ(get(0, &d), 0);
	CHECK_EQ(d.eff, c.perm & ~(fs | BIT(2) | BIT(3) | BIT(4) | BIT(9) | BIT(27) | BIT(32)));
	setfsuid(0);
	CHECK_EQ(get(0, &d), 0);
	CHECK_EQ(d.eff, c.perm);
	/* All uids away from 0: nothing left, nothing to regain. */
	CHECK_EQ(setresuid(NOBODY, NOBODY, NOBODY), 0);
	CHECK_EQ(get(0, &d), 0);
	CHECK_EQ(d.eff, 0);
	CHECK_EQ(d.perm, 0);
	CHECK_ERR(set(0, BIT(CAP_KILL_), BIT(CAP_KILL_), 0), EPERM);
	CHECK_EQ(set(0, 0, 0, 0), 0);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	pid_t pid;

	if (argc > 1) {
		struct caps c;

		if (get(0, &c))
			return 2;
		if (!strcmp(argv[1], "--none"))
			return c.eff == 0 && c.perm == 0 ? 0 : 1;
		if (!strcmp(argv[1], "--root"))
			return c.perm == status_hex("CapBnd:") && c.eff == c.perm ? 0 : 1;
		return 3;
	}
	versions();
	if (!t_is_root())
		SKIP("needs root for the capability rules");
	pid = fork();
	if (pid == 0) {
		root_rules();
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	pid = fork();
	if (pid == 0) {
		uid_rules();
		CHILD_DONE();
	}
	CHECK(t_wait_ok(pid));
	t_self_path(argv[0], self, sizeof self);
	CHECK_EQ(exec_self(self, "--root", 0), 0);
	CHECK_EQ(exec_self(self, "--none", 1), 0);
	DONE();
}
