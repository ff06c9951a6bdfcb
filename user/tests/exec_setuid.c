/* execve(2) of set-user-ID and set-group-ID programs (credentials(7)): the
 * file's owner becomes the effective (and saved) user, its group the
 * effective group when the group may execute it; AT_SECURE is set and the
 * process is no longer dumpable. Not on a nosuid mount, and not after
 * PR_SET_NO_NEW_PRIVS (which execve keeps). Plus the prctl flags involved
 * (dumpable, no_new_privs, timer slack, capability bounding set). Needs
 * root (mount, chown, uid switching). */
#include "next.h"
#include <grp.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

static char dir[PATH_MAX];

/* The probe: the program re-run as "probe" prints its ids. */
static int probe(void)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	getresuid(&r, &e, &s);
	getresgid(&rg, &eg, &sg);
	printf("%u %u %u %u %u %u %lu %d %d\n", r, e, s, rg, eg, sg,
	       getauxval(AT_SECURE), prctl(PR_GET_DUMPABLE, 0, 0, 0, 0),
	       prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	return 0;
}

/* Copies our own executable to `path` with `mode`, owned by uid:gid. */
static int install(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	static char buf[1 << 16];
	int in = open("/proc/self/exe", O_RDONLY), out;
	ssize_t n;

	out = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0700);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	if (chown(path, uid, gid) || chmod(path, mode))
		return -1;
	return 0;
}

/* Runs `path probe` as uid/gid 1000 (after `nnp`), returns its line. */
static int run(const char *path, int nnp, char *line, size_t n)
{
	int p[2], st;
	ssize_t got;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)path, "probe", NULL };

		dup2(p[1], 1);
		if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
		    setresuid(1000, 1000, 1000))
			_exit(90);
		if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(91);
		execv(path, argv);
		_exit(92);
	}
	close(p[1]);
	got = read(p[0], line, n - 1);
	close(p[0]);
	line[got > 0 ? got : 0] = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX + 16], sub[PATH_MAX + 16], line[128];

	if (argc > 1 && !strcmp(argv[1], "probe"))
		return probe();
	/* prctl flags, no privilege needed. */
	CHECK_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	CHECK_ERR(prctl(PR_SET_DUMPABLE, 2, 0, 0, 0), EINVAL);
	CHECK_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	CHECK_ERR(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0), EINVAL);
	CHECK_EQ(prctl(PR_CAPBSET_READ, 0, 0, 0, 0), 1);
	CHECK_ERR(prctl(PR_CAPBSET_READ, 1000, 0, 0, 0), EINVAL);
	CHECK_EQ(prctl(PR_SET_TIMERSLACK, 123456, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 123456);
	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
	if (!t_is_root())
		SKIP("needs root for mount, chown and uid switching");

	CHECK_EQ(t_mktmp("exec_setuid", dir, sizeof dir), 0);
	CHECK_EQ(chmod(dir, 0755), 0);
	CHECK_EQ(mount("t", dir, "tmpfs", 0, "mode=0755"), 0);
	snprintf(path, sizeof path, "%s/prog", dir);

	/* Plain: everything stays 1000, not secure, dumpable. */
	CHECK_EQ(install(path, 0755, 2000, 3000), 0);
	CHECK_EQ(run(path, 0, line, sizeof line), 0);
	CHECK(strcmp(line, "1000 1000 1000 1000 1000 1000 0 1 0\n") == 0);
	/* Set-user-ID and set-group-ID. */
	CHECK_EQ(install(path, 06755, 2000, 3000), 0);
	CHECK_EQ(run(path, 0, line, sizeof line), 0);
	CHECK(strcmp(line, "1000 2000 2000 1000 3000 3000 1 0 0\n") == 0);
	/* Set-group-ID without group execute is no set-group-ID. */
	CHECK_EQ(install(path, 02745, 2000, 3000), 0);
	CHECK_EQ(run(path, 0, line, sizeof line), 0);
	CHECK(strcmp(line, "1000 1000 1000 1000 1000 1000 0 1 0\n") == 0);
	/* no_new_privs: no privileges, and it survives execve. */
	CHECK_EQ(install(path, 06755, 2000, 3000), 0);
	CHECK_EQ(run(path, 1, line, sizeof line), 0);
	CHECK(strcmp(line, "1000 1000 1000 1000 1000 1000 0 1 1\n") == 0);
	/* A nosuid mount. */
	snprintf(sub, sizeof sub, "%s/ns", dir);
	CHECK_EQ(mkdir(sub, 0755), 0);
	CHECK_EQ(mount("t", sub, "tmpfs", MS_NOSUID, "mode=0755"), 0);
	snprintf(path, sizeof path, "%s/ns/prog", dir);
	CHECK_EQ(install(path, 06755, 2000, 3000), 0);
	CHECK_EQ(run(path, 0, line, sizeof line), 0);
	CHECK(strcmp(line, "1000 1000 1000 1000 1000 1000 0 1 0\n") == 0);
	CHECK_EQ(umount(sub), 0);
	CHECK_EQ(umount(dir), 0);
	rmdir(dir);
	DONE();
}
