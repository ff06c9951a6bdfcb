/*
 * /proc/pid/oom_score_adj and oom_score (proc(5)): the range and EINVAL,
 * inheritance by fork and execve, the unprivileged lowering rule (EACCES
 * below the lowest value a privileged writer set), the score's scale,
 * and (Trellis only: it exhausts memory) the OOM killer's choice: a
 * +1000 process goes before a larger one, a -1000 one is never killed.
 */
#include "next.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static int write_adj(const char *v)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, v, strlen(v));
	int e = errno;
	close(fd);
	errno = e;
	return n < 0 ? -1 : 0;
}

static long read_num(const char *path)
{
	char buf[64];
	if (t_read_file(path, buf, sizeof buf) <= 0)
		return -99999;
	return strtol(buf, NULL, 10);
}

/* Whether CAP_SYS_RESOURCE (24) is in our effective set. */
static int sys_resource(void)
{
	char buf[4096];
	if (t_read_file("/proc/self/status", buf, sizeof buf) <= 0)
		return 0;
	const char *v = t_find_line(buf, "CapEff:");
	return v && (strtoull(v, NULL, 16) >> 24 & 1);
}

static void touch(size_t n)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
}

/* Trellis only: a -1000 process survives, a +1000 one goes first. */
static void oom_choice(void)
{
	int go[2], ready[2];
	CHECK(pipe(go) == 0 && pipe(ready) == 0);
	pid_t immune = fork();
	if (immune == 0) {
		if (write_adj("-1000") != 0)
			_exit(2);
		touch(32 << 20);
		t_post(ready[1]);
		t_await(go[0]);
		_exit(0);
	}
	pid_t first = fork();
	if (first == 0) {
		if (write_adj("1000") != 0)
			_exit(2);
		touch(4 << 20);
		t_post(ready[1]);
		t_await(go[0]); /* killed before this returns */
		_exit(0);
	}
	t_await(ready[0]);
	t_await(ready[0]);
	CHECK(read_num("/proc/self/oom_score") >= 0);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/oom_score", immune);
	CHECK_EQ(read_num(path), 0);
	snprintf(path, sizeof path, "/proc/%d/oom_score", first);
	CHECK(read_num(path) >= 1300);
	pid_t hog = fork();
	if (hog == 0) {
		if (write_adj("0") != 0)
			_exit(2);
		for (;;)
			touch(1 << 20);
	}
	int st = t_wait(first);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	st = t_wait(hog);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	t_post(go[1]);
	CHECK(t_wait_ok(immune));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "print")) {
		return (int)read_num("/proc/self/oom_score_adj") == atoi(argv[2]) ? 0 : 1;
	}
	long adj0 = read_num("/proc/self/oom_score_adj");
	CHECK(adj0 >= -1000 && adj0 <= 1000);
	CHECK_ERR(write_adj("1001"), EINVAL);
	CHECK_ERR(write_adj("-1001"), EINVAL);
	CHECK_ERR(write_adj("abc"), EINVAL);
	CHECK_EQ(read_num("/proc/self/oom_score_adj"), adj0);
	long s = read_num("/proc/self/oom_score");
	CHECK(s >= 0 && s <= 1333);

	if (!t_is_root()) {
		/* Raising is always allowed. */
		CHECK(write_adj("1000") == 0);
		CHECK(read_num("/proc/self/oom_score") >= 1300);
		SKIP("not root: the privileged part needs root");
	}

	/* Going below the floor needs CAP_SYS_RESOURCE, which a container's
	 * root may lack; a write with it sets the floor (the child's too). */
	int cap = sys_resource();
	int floor = cap ? 500 : 0;
	CHECK(write_adj("500") == 0);
	CHECK_EQ(read_num("/proc/self/oom_score_adj"), 500);
	s = read_num("/proc/self/oom_score");
	CHECK(s >= 990 && s <= 1333);
	CHECK(write_adj("1000") == 0);
	CHECK(read_num("/proc/self/oom_score") >= 1300);
	if (cap) {
		CHECK(write_adj("-1000") == 0);
		CHECK_EQ(read_num("/proc/self/oom_score"), 0);
	} else {
		CHECK_ERR(write_adj("-1000"), EACCES);
		t_note("no CAP_SYS_RESOURCE: the floor stays 0");
	}
	CHECK(write_adj("500") == 0);
	char floor_s[16], below_s[16];
	snprintf(floor_s, sizeof floor_s, "%d", floor);
	snprintf(below_s, sizeof below_s, "%d", floor - 1);

	pid_t pid = fork();
	if (pid == 0) {
		CHECK_EQ(read_num("/proc/self/oom_score_adj"), 500);
		CHECK(setgid(65534) == 0 && setuid(65534) == 0);
		/* setuid made us non-dumpable: our /proc files were root's. */
		CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHECK(write_adj("700") == 0);
		CHECK(write_adj(floor_s) == 0);
		CHECK_ERR(write_adj(below_s), EACCES);
		CHECK_ERR(write_adj("-1000"), EACCES);
		CHECK_EQ(read_num("/proc/self/oom_score_adj"), floor);
		CHECK(write_adj("800") == 0);
		/* Kept by execve. */
		execl("/proc/self/exe", argv[0], "print", "800", (char *)NULL);
		_exit(9);
	}
	CHECK(t_wait_ok(pid));
	/* The parent's own value is its own. */
	CHECK_EQ(read_num("/proc/self/oom_score_adj"), 500);
	/* Root may go back to 0 (with CAP_SYS_RESOURCE below the floor). */
	if (cap)
		CHECK(write_adj("0") == 0);

	if (t_is_trellis() && cap)
		oom_choice();
	else
		t_note("the OOM choice is checked on Trellis only (it exhausts memory)");
	DONE();
}
