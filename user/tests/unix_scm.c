/*
 * AF_UNIX control messages: SCM_RIGHTS passes open files (the same open
 * file description: a shared offset; also to a forked child), with
 * MSG_CMSG_CLOEXEC; a control buffer too small sets MSG_CTRUNC and the
 * descriptors that do not fit are closed, not leaked; forged messages are
 * refused (cmsg_len past the buffer or short: EINVAL; a descriptor not
 * open: EBADF; more than SCM_MAX_FD: EINVAL; unknown SOL_SOCKET type:
 * EINVAL); SCM_CREDENTIALS: a process may claim its own ids, another pid
 * is EPERM for a non-root sender; SO_PASSCRED delivers the sender's
 * credentials with every message.
 */
#include "next.h"
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#define SCM_MAX_FD 253
/* Raw: musl copies the control buffer (EFAULT would be a crash). */
#define sendmsg(s, m, f) syscall(SYS_sendmsg, (s), (m), (f))

static int send_fds(int s, const int *fds, int n, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 300)];
	struct msghdr mh;
	struct iovec iov = {.iov_base = "F", .iov_len = 1};
	struct cmsghdr *c;

	memset(&mh, 0, sizeof mh);
	memset(cbuf, 0, sizeof cbuf);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	/* musl's sendmsg refuses control buffers above 1024 bytes. */
	return syscall(SYS_sendmsg, s, &mh, flags);
}

/* Receives one message; stores up to *n descriptors; returns msg_flags. */
static int recv_fds(int s, int *fds, int *n, size_t controllen, int flags)
{
	char cbuf[4096], b[8];
	struct msghdr mh;
	struct iovec iov = {.iov_base = b, .iov_len = sizeof b};
	struct cmsghdr *c;
	int got = 0;

	memset(&mh, 0, sizeof mh);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = controllen ? cbuf : NULL;
	mh.msg_controllen = controllen;
	if (recvmsg(s, &mh, flags) < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds + got, CMSG_DATA(c), k * sizeof(int));
			got += k;
		}
	}
	*n = got;
	return mh.msg_flags;
}

/* The lowest free descriptor. */
static int lowest_free(void)
{
	int fd = dup(0);
	close(fd);
	return fd;
}

int main(void)
{
	int sv[2], fds[300], got[300], n, i, fl, f, low;
	char path[128], buf[16];
	struct msghdr mh;
	struct iovec iov = {.iov_base = "x", .iov_len = 1};
	char cbuf[256];
	struct cmsghdr *c;
	pid_t pid;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	snprintf(path, sizeof path, "/tmp/unix_scm.%d", (int)getpid());
	CHECK_EQ(t_write_file(path, "0123456789", 10, 0600), 0);
	f = open(path, O_RDONLY);
	CHECK(f >= 0);

	/* One descriptor: the same open file (shared offset). */
	CHECK_EQ(send_fds(sv[0], &f, 1, 0), 1);
	fl = recv_fds(sv[1], got, &n, 256, 0);
	CHECK_EQ(fl & MSG_CTRUNC, 0);
	CHECK_EQ(n, 1);
	CHECK(got[0] != f);
	CHECK_EQ(fcntl(got[0], F_GETFD), 0);
	CHECK_EQ(read(got[0], buf, 4), 4);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 4);
	close(got[0]);
	/* MSG_CMSG_CLOEXEC. */
	CHECK_EQ(send_fds(sv[0], &f, 1, 0), 1);
	fl = recv_fds(sv[1], got, &n, 256, MSG_CMSG_CLOEXEC);
	CHECK_EQ(n, 1);
	CHECK_EQ(fcntl(got[0], F_GETFD), FD_CLOEXEC);
	close(got[0]);

	/* Too small a control buffer: MSG_CTRUNC, the rest closed. */
	for (i = 0; i < 4; i++)
		fds[i] = f;
	low = lowest_free();
	CHECK_EQ(send_fds(sv[0], fds, 4, 0), 1);
	fl = recv_fds(sv[1], got, &n, CMSG_LEN(sizeof(int) * 2), 0);
	CHECK(fl & MSG_CTRUNC);
	CHECK_EQ(n, 2);
	close(got[0]);
	close(got[1]);
	CHECK_EQ(lowest_free(), low);
	/* No control buffer at all: every descriptor closed. */
	CHECK_EQ(send_fds(sv[0], fds, 4, 0), 1);
	fl = recv_fds(sv[1], got, &n, 0, 0);
	CHECK(fl & MSG_CTRUNC);
	CHECK_EQ(n, 0);
	CHECK_EQ(lowest_free(), low);
	/* Only a header's room: none installed either. */
	CHECK_EQ(send_fds(sv[0], fds, 1, 0), 1);
	fl = recv_fds(sv[1], got, &n, sizeof(struct cmsghdr), 0);
	CHECK(fl & MSG_CTRUNC);
	CHECK_EQ(n, 0);
	CHECK_EQ(lowest_free(), low);

	/* SCM_MAX_FD descriptors pass; one more is EINVAL. */
	for (i = 0; i < 300; i++)
		fds[i] = f;
	CHECK_EQ(send_fds(sv[0], fds, SCM_MAX_FD, 0), 1);
	fl = recv_fds(sv[1], got, &n, sizeof cbuf * 8, 0);
	CHECK_EQ(n, SCM_MAX_FD);
	for (i = 0; i < n; i++)
		close(got[i]);
	CHECK_ERR(send_fds(sv[0], fds, SCM_MAX_FD + 1, 0), EINVAL);
	/* A descriptor that is not open: EBADF, and nothing is sent. */
	fds[1] = 987;
	CHECK_ERR(send_fds(sv[0], fds, 2, 0), EBADF);
	fds[1] = -1;
	CHECK_ERR(send_fds(sv[0], fds, 2, 0), EBADF);
	CHECK_ERR(recv(sv[1], buf, 1, MSG_DONTWAIT), EAGAIN);

	/* Forged headers. */
	memset(&mh, 0, sizeof mh);
	memset(cbuf, 0, sizeof cbuf);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_SPACE(sizeof(int)) + 8; /* past the buffer */
	memcpy(CMSG_DATA(c), &f, sizeof f);
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	c->cmsg_len = 8; /* shorter than a header */
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	c->cmsg_len = CMSG_LEN(sizeof(int));
	c->cmsg_type = 77; /* unknown SOL_SOCKET type */
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	c->cmsg_type = SCM_CREDENTIALS; /* wrong length */
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	/* Control buffer shorter than a header: ignored. */
	c->cmsg_type = SCM_RIGHTS;
	mh.msg_controllen = 8;
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	CHECK_EQ(recv(sv[1], buf, 1, 0), 1);
	/* A control pointer that is not readable: EFAULT. */
	mh.msg_control = BAD_PTR2;
	mh.msg_controllen = CMSG_SPACE(sizeof(int));
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EFAULT);
	/* Zero descriptors in SCM_RIGHTS: a plain message. */
	mh.msg_control = cbuf;
	c->cmsg_len = CMSG_LEN(0);
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	CHECK_EQ(recv(sv[1], buf, 1, 0), 1);

	/* Across fork: the child receives a pipe's write end and writes. */
	{
		int p[2];
		CHECK_EQ(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			int k, g[4];
			close(p[1]);
			recv_fds(sv[1], g, &k, 256, 0);
			if (k != 1 || write(g[0], "child", 5) != 5)
				_exit(1);
			_exit(0);
		}
		CHECK_EQ(send_fds(sv[0], &p[1], 1, 0), 1);
		close(p[1]);
		t_wait_ok(pid);
		CHECK_EQ(read(p[0], buf, sizeof buf), 5);
		/* Every write end is closed now. */
		CHECK_EQ(read(p[0], buf, sizeof buf), 0);
		close(p[0]);
	}

	/* SCM_CREDENTIALS: own ids pass; with SO_PASSCRED they arrive. */
	{
		struct ucred uc = {.pid = getpid(), .uid = getuid(), .gid = getgid()};
		struct ucred *rc;
		int on = 1, seen = 0;
		CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on), 0);
		memset(&mh, 0, sizeof mh);
		memset(cbuf, 0, sizeof cbuf);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof uc);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_CREDENTIALS;
		c->cmsg_len = CMSG_LEN(sizeof uc);
		memcpy(CMSG_DATA(c), &uc, sizeof uc);
		CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
		memset(&mh, 0, sizeof mh);
		memset(cbuf, 0, sizeof cbuf);
		iov.iov_base = buf;
		iov.iov_len = sizeof buf;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof cbuf;
		CHECK_EQ(recvmsg(sv[1], &mh, 0), 1);
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				rc = (struct ucred *)CMSG_DATA(c);
				CHECK_EQ(rc->pid, getpid());
				CHECK_EQ(rc->uid, getuid());
				CHECK_EQ(rc->gid, getgid());
				seen++;
			}
		}
		CHECK_EQ(seen, 1);
		/* Without a message of its own, the sender's ids come anyway. */
		CHECK_EQ(send(sv[0], "y", 1, 0), 1);
		mh.msg_controllen = sizeof cbuf;
		CHECK_EQ(recvmsg(sv[1], &mh, 0), 1);
		c = CMSG_FIRSTHDR(&mh);
		CHECK(c != NULL);
		if (c) {
			CHECK_EQ(c->cmsg_type, SCM_CREDENTIALS);
			CHECK_EQ(((struct ucred *)CMSG_DATA(c))->pid, getpid());
		}
		/* A control buffer too small for them: MSG_CTRUNC. */
		CHECK_EQ(send(sv[0], "z", 1, 0), 1);
		mh.msg_controllen = sizeof(struct cmsghdr) + 4;
		CHECK_EQ(recvmsg(sv[1], &mh, 0), 1);
		CHECK(mh.msg_flags & MSG_CTRUNC);
		iov.iov_base = "x";
		iov.iov_len = 1;
		/* A non-root sender may not claim another pid or uid. */
		if (geteuid() == 0) {
			pid = fork();
			if (pid == 0) {
				struct ucred bad;
				char cb[64];
				struct msghdr m2;
				if (setgid(1000) || setuid(1000))
					_exit(3);
				memset(&m2, 0, sizeof m2);
				memset(cb, 0, sizeof cb);
				m2.msg_iov = &iov;
				m2.msg_iovlen = 1;
				m2.msg_control = cb;
				m2.msg_controllen = CMSG_SPACE(sizeof bad);
				c = CMSG_FIRSTHDR(&m2);
				c->cmsg_level = SOL_SOCKET;
				c->cmsg_type = SCM_CREDENTIALS;
				c->cmsg_len = CMSG_LEN(sizeof bad);
				bad.pid = 1;
				bad.uid = 1000;
				bad.gid = 1000;
				memcpy(CMSG_DATA(c), &bad, sizeof bad);
				CHECK_ERR(sendmsg(sv[0], &m2, 0), EPERM);
				bad.pid = getpid();
				bad.uid = 0;
				memcpy(CMSG_DATA(c), &bad, sizeof bad);
				CHECK_ERR(sendmsg(sv[0], &m2, 0), EPERM);
				bad.uid = 1000;
				bad.gid = 0;
				memcpy(CMSG_DATA(c), &bad, sizeof bad);
				CHECK_ERR(sendmsg(sv[0], &m2, 0), EPERM);
				bad.gid = 1000;
				memcpy(CMSG_DATA(c), &bad, sizeof bad);
				CHECK_EQ(sendmsg(sv[0], &m2, 0), 1);
				CHILD_DONE();
			}
			t_wait_ok(pid);
			iov.iov_base = buf;
			iov.iov_len = sizeof buf;
			mh.msg_controllen = sizeof cbuf;
			CHECK_EQ(recvmsg(sv[1], &mh, 0), 1);
			c = CMSG_FIRSTHDR(&mh);
			CHECK(c != NULL);
			if (c) {
				CHECK_EQ(((struct ucred *)CMSG_DATA(c))->pid, pid);
				CHECK_EQ(((struct ucred *)CMSG_DATA(c))->uid, 1000);
			}
		}
	}
	/* SCM_RIGHTS over a socket of another family is refused; AF_UNIX
	 * is the only one here, so check a datagram pair takes them. */
	close(sv[0]);
	close(sv[1]);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_EQ(send_fds(sv[0], &f, 1, 0), 1);
	/* MSG_PEEK installs copies; the real receive installs again. */
	fl = recv_fds(sv[1], got, &n, 256, MSG_PEEK);
	CHECK_EQ(n, 1);
	close(got[0]);
	fl = recv_fds(sv[1], got, &n, 256, 0);
	CHECK_EQ(n, 1);
	close(got[0]);
	close(sv[0]);
	close(sv[1]);
	close(f);
	unlink(path);
	DONE();
}
