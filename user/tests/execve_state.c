/*
 * State across execve: FD_CLOEXEC descriptors are closed, others stay open
 * with their offset; cwd and umask are kept; caught signals are reset to
 * SIG_DFL while ignored ones stay ignored; the blocked mask is kept.
 */
#include "t.h"

static void handler(int sig)
{
	(void)sig;
}

static int helper(char **argv)
{
	char buf[PATH_MAX];
	struct sigaction sa;
	sigset_t set;
	mode_t m;
	int bad = 0;

	/* fd 20: not close-on-exec, offset 3. fd 21: close-on-exec. */
	if (fcntl(20, F_GETFD) != 0)
		bad |= 1;
	else if (lseek(20, 0, SEEK_CUR) != 3)
		bad |= 2;
	if (fcntl(21, F_GETFD) != -1 || errno != EBADF)
		bad |= 4;
	if (!getcwd(buf, sizeof buf) || strcmp(buf, argv[2]))
		bad |= 8;
	m = umask(0);
	if (m != 027)
		bad |= 16;
	if (sigaction(SIGUSR1, NULL, &sa) || sa.sa_handler != SIG_DFL)
		bad |= 32;
	if (sigaction(SIGUSR2, NULL, &sa) || sa.sa_handler != SIG_IGN)
		bad |= 64;
	if (sigprocmask(SIG_SETMASK, NULL, &set) || !sigismember(&set, SIGTERM))
		bad |= 128;
	return bad ? (bad & 0xff) | 1 : 0;
}

int main(int argc, char **argv, char **envp)
{
	char dir[128], path[256], self[PATH_MAX];
	struct sigaction sa;
	pid_t pid;
	int fd, st;

	if (argc > 2 && !strcmp(argv[1], "helper"))
		return helper(argv);
	t_self_path(argv[0], self, sizeof self);
	if (t_mktmp("execve_state", dir, sizeof dir))
		DONE();
	t_join(path, sizeof path, dir, "f");
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0644), 0);

	pid = fork();
	if (pid == 0) {
		char *a[] = { self, "helper", dir, NULL };
		sigset_t set;

		fd = open(path, O_RDONLY);
		if (fd < 0 || dup2(fd, 20) != 20 || dup2(fd, 21) != 21)
			_exit(200);
		close(fd);
		if (lseek(20, 3, SEEK_SET) != 3)
			_exit(201);
		if (fcntl(21, F_SETFD, FD_CLOEXEC) != 0)
			_exit(202);
		if (chdir(dir) != 0)
			_exit(203);
		umask(027);
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		if (sigaction(SIGUSR1, &sa, NULL) != 0)
			_exit(204);
		sa.sa_handler = SIG_IGN;
		if (sigaction(SIGUSR2, &sa, NULL) != 0)
			_exit(205);
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
			_exit(206);
		execve(self, a, envp);
		_exit(207);
	}
	CHECK(pid > 0);
	st = t_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);

	t_rmtree(dir);
	DONE();
}
