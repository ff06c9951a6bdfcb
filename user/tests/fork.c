/* fork: return values, pids, shared descriptors, several children. */
#include "t.h"

int main(void)
{
	char dir[128], path[256];
	pid_t parent = getpid(), pid, kids[5], r;
	int fd, i, st, seen;

	if (t_mktmp("fork", dir, sizeof dir))
		DONE();

	/* Child sees 0, parent sees the child's pid. */
	pid = fork();
	if (pid == 0) {
		/* Child: a new pid whose parent is us. */
		CHECK(getpid() != parent);
		CHECK_EQ(getppid(), parent);
		/* Report our own pid (low 8 bits) through the exit status. */
		_exit(t_failures ? 255 : (getpid() & 0x7f));
	}
	CHECK(pid > 0);
	CHECK(pid != parent);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), pid & 0x7f);

	/* Descriptors are inherited and share the file offset. */
	t_join(path, sizeof path, dir, "shared");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "parent:", 7), 7);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(lseek(fd, 0, SEEK_CUR), 7);
		CHECK_EQ(write(fd, "child", 5), 5);
		CHECK_EQ(close(fd), 0);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
	/* The child's write advanced our offset too. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);
	CHECK_EQ(close(fd), 0);
	{
		char buf[32];
		CHECK_EQ(t_read_file(path, buf, sizeof buf), 12);
		CHECK(strcmp(buf, "parent:child") == 0);
	}

	/* Several children at once, each reaped exactly once. */
	for (i = 0; i < 5; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(10 + i);
		CHECK(kids[i] > 0);
	}
	seen = 0;
	for (i = 0; i < 5; i++) {
		int j;

		r = wait4(-1, &st, 0, NULL);
		CHECK(r > 0);
		for (j = 0; j < 5; j++) {
			if (r == kids[j]) {
				CHECK(WIFEXITED(st));
				CHECK_EQ(WEXITSTATUS(st), 10 + j);
				seen |= 1 << j;
			}
		}
	}
	CHECK_EQ(seen, 0x1f);
	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);

	/* Raw fork syscall. */
	pid = (pid_t)syscall(SYS_fork);
	if (pid == 0)
		syscall(SYS_exit_group, 3);
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);

	/* A child can fork too (grandchild), and reap it. */
	pid = fork();
	if (pid == 0) {
		pid_t me = getpid(), g = fork();
		if (g == 0)
			_exit(getppid() == me ? 0 : 1);
		CHECK(g > 0);
		t_wait_ok(g);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	t_rmtree(dir);
	DONE();
}
