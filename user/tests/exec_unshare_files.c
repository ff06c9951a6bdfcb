/* execve(2) in a process that shares its descriptor table (clone with
 * CLONE_FILES) first gives it a private copy: the close-on-exec
 * descriptors it closes stay open for the other sharer, and descriptors
 * the new program opens do not appear there. */
#include "next.h"

int main(void)
{
	int fd, st;
	long pid;

	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		char *argv[] = { "sh", "-c", "exec 7</; exit 0", NULL };

		execv("/bin/sh", argv);
		_exit(99);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid((pid_t)pid, &st, 0), (pid_t)pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Our close-on-exec descriptor survived the child's execve. */
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	/* The shell's descriptor 7 was opened in its own table. */
	CHECK_ERR(fcntl(7, F_GETFD), EBADF);
	close(fd);
	DONE();
}
