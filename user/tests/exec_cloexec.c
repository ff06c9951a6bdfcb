/* execve closes close-on-exec descriptors (O_CLOEXEC, FD_CLOEXEC,
 * dup3/F_DUPFD_CLOEXEC/pipe2 O_CLOEXEC) and keeps the others, with their
 * file offsets and status flags. */
#include "next.h"

int main(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	char args[8][16];
	int keep, c1, c2, c3, c4, p[2], keep_dup;
	pid_t pid;

	if (argc == 9 && !strcmp(argv[1], "check")) {
		int fds[7], i;
		char b;

		for (i = 0; i < 7; i++)
			fds[i] = atoi(argv[2 + i]);
		/* keep and keep_dup are open, without FD_CLOEXEC. */
		CHECK_EQ(fcntl(fds[0], F_GETFD), 0);
		CHECK_EQ(fcntl(fds[6], F_GETFD), 0);
		/* The offset survived: the next byte is '5'. */
		CHECK_EQ(read(fds[0], &b, 1), 1);
		CHECK_EQ(b, '5');
		CHECK_EQ(fcntl(fds[6], F_GETFL) & O_APPEND, O_APPEND);
		for (i = 1; i < 6; i++)
			CHECK_ERR(fcntl(fds[i], F_GETFD), EBADF);
		DONE();
	}

	t_self_path(argv[0], self, sizeof self);
	if (t_mktmp("exec_cloexec", dir, sizeof dir) != 0)
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);

	keep = open(path, O_RDONLY);
	CHECK_EQ(lseek(keep, 5, SEEK_SET), 5);
	c1 = open(path, O_RDONLY | O_CLOEXEC);
	CHECK_EQ(fcntl(c1, F_GETFD), FD_CLOEXEC);
	c2 = open(path, O_RDONLY);
	CHECK_EQ(fcntl(c2, F_SETFD, FD_CLOEXEC), 0);
	c3 = dup3(keep, 60, O_CLOEXEC);
	CHECK_EQ(c3, 60);
	c4 = fcntl(keep, F_DUPFD_CLOEXEC, 70);
	CHECK_EQ(c4, 70);
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	keep_dup = open(path, O_WRONLY | O_APPEND);
	/* A dup of a close-on-exec fd does not inherit the flag. */
	{
		int d = dup(c1);

		CHECK_EQ(fcntl(d, F_GETFD), 0);
		close(d);
	}

	snprintf(args[0], 16, "%d", keep);
	snprintf(args[1], 16, "%d", c1);
	snprintf(args[2], 16, "%d", c2);
	snprintf(args[3], 16, "%d", c3);
	snprintf(args[4], 16, "%d", c4);
	snprintf(args[5], 16, "%d", p[0]);
	snprintf(args[6], 16, "%d", keep_dup);
	pid = fork();
	if (pid == 0) {
		char *av[] = { self, "check", args[0], args[1], args[2],
			       args[3], args[4], args[5], args[6], NULL };

		execv(self, av);
		_exit(127);
	}
	CHECK(t_wait_ok(pid));
	/* Ours are all still open. */
	CHECK(fcntl(c1, F_GETFD) >= 0 && fcntl(p[1], F_GETFD) >= 0);
	t_rmtree(dir);
	DONE();
}
