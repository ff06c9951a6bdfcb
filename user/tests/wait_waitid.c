/* waitid: siginfo contents for exits and kills, P_PID/P_PGID/P_ALL,
 * WNOHANG with nothing to report (zeroed info), WNOWAIT, errors. */
#include "next.h"

int main(void)
{
	siginfo_t si;
	pid_t pid, a;
	int p[2];

	/* Exit status. */
	pid = fork();
	if (pid == 0)
		_exit(42);
	memset(&si, 0xff, sizeof si);
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED), 0);
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 42);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_uid, getuid());
	CHECK_EQ(si.si_errno, 0);

	/* Killed by a signal. */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_EQ(kill(pid, SIGTERM), 0);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_ALL, 0, &si, WEXITED), 0);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGTERM);
	CHECK_EQ(si.si_pid, pid);

	/* WNOHANG with a running child: 0, and the info is zeroed. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		t_await(p[0]);
		_exit(3);
	}
	close(p[0]);
	memset(&si, 0x5a, sizeof si);
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, 0);
	CHECK_EQ(si.si_signo, 0);
	/* WNOWAIT leaves the child to be reaped again. */
	close(p[1]);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 3);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_ERR(waitid(P_PID, pid, &si, WEXITED | WNOHANG), ECHILD);

	/* P_PGID: only children in that group. */
	CHECK_EQ(pipe(p), 0);
	a = fork();
	if (a == 0) {
		setpgid(0, 0);
		close(p[1]);
		t_await(p[0]);
		_exit(7);
	}
	setpgid(a, a);
	pid = fork();
	if (pid == 0)
		_exit(8);
	/* Our own group has the quick child only. */
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PGID, getpgid(0), &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 8);
	close(p[0]);
	close(p[1]);
	memset(&si, 0, sizeof si);
	CHECK_EQ(waitid(P_PGID, a, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, a);
	CHECK_EQ(si.si_status, 7);

	/* Errors. */
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED), ECHILD);
	CHECK_ERR(waitid(P_PID, getppid(), &si, WEXITED), ECHILD);
	pid = fork();
	if (pid == 0)
		_exit(0);
	/* No event selected. */
	CHECK_ERR(waitid(P_PID, pid, &si, 0), EINVAL);
	CHECK_ERR(waitid(P_PID, pid, &si, WNOHANG), EINVAL);
	/* Unknown idtype, unknown option bits. */
	CHECK_ERR(syscall(SYS_waitid, 99, pid, &si, WEXITED, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_waitid, P_PID, pid, &si, WEXITED | 0x10000, NULL),
		  EINVAL);
	/* P_PID with pid <= 0 is invalid. */
	CHECK_ERR(syscall(SYS_waitid, P_PID, 0, &si, WEXITED, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_waitid, P_PID, pid, BAD_PTR2, WEXITED, NULL), EFAULT);
	/* The EFAULT consumed the child (as with wait4). */
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), ECHILD);
	DONE();
}
