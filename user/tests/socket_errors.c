/*
 * The generic socket calls with bad input, as the man pages and Linux
 * answer: unknown families, types, flags and protocols; descriptors that
 * are not sockets (ENOTSOCK) or not open (EBADF); address lengths that are
 * negative, zero, too large or unaligned; bad pointers (EFAULT);
 * getsockopt/setsockopt levels, names and lengths (truncation to optlen);
 * sendmsg/recvmsg headers (too many iovecs, negative name length); the
 * SOCK_CLOEXEC / SOCK_NONBLOCK flags; accept4 flags; shutdown's how.
 */
#include "next.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/uio.h>

static long raw(long nr, long a, long b, long c, long d, long e, long f)
{
	return syscall(nr, a, b, c, d, e, f);
}

int main(void)
{
	int s, fd, v, sv[2];
	socklen_t len;
	char buf[256];
	struct sockaddr_un sun;
	struct msghdr mh;
	struct iovec iov[1];

	/* socket(2): families, types, flags, protocols. */
	CHECK_ERR(socket(-1, SOCK_STREAM, 0), EAFNOSUPPORT);
	CHECK_ERR(socket(46, SOCK_STREAM, 0), EAFNOSUPPORT);
	CHECK_ERR(socket(1000, SOCK_STREAM, 0), EAFNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, 0, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, 11, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, 15, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM | 0x100, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, SOCK_RDM, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, 2), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, -1), EPROTONOSUPPORT);
	s = socket(AF_UNIX, SOCK_STREAM, AF_UNIX);
	CHECK(s >= 0);
	close(s);
	/* SOCK_RAW is a datagram socket for AF_UNIX. */
	s = socket(AF_UNIX, SOCK_RAW, 0);
	CHECK(s >= 0);
	len = sizeof v;
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len), 0);
	CHECK_EQ(v, SOCK_DGRAM);
	close(s);

	/* Flags become the descriptor's and the file's. */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	CHECK(s >= 0);
	CHECK_EQ(fcntl(s, F_GETFD), FD_CLOEXEC);
	CHECK(fcntl(s, F_GETFL) & O_NONBLOCK);
	CHECK_EQ(fcntl(s, F_GETFL) & O_ACCMODE, O_RDWR);
	close(s);
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK_EQ(fcntl(s, F_GETFD), 0);
	CHECK_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, 0);
	{
		struct stat st;
		CHECK_EQ(fstat(s, &st), 0);
		CHECK(S_ISSOCK(st.st_mode));
	}

	/* socketpair(2). */
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM, 0, BAD_PTR2), EFAULT);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM | 0x100, 0, sv), EINVAL);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM, 7, sv), EPROTONOSUPPORT);
	CHECK_ERR(socketpair(1000, SOCK_STREAM, 0, sv), EAFNOSUPPORT);

	/* Not a socket, not open. */
	fd = open("/", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_ERR(bind(fd, (struct sockaddr *)&sun, sizeof sun), ENOTSOCK);
	CHECK_ERR(connect(fd, (struct sockaddr *)&sun, sizeof sun), ENOTSOCK);
	CHECK_ERR(listen(fd, 1), ENOTSOCK);
	CHECK_ERR(accept(fd, NULL, NULL), ENOTSOCK);
	CHECK_ERR(send(fd, "x", 1, 0), ENOTSOCK);
	CHECK_ERR(recv(fd, buf, 1, 0), ENOTSOCK);
	CHECK_ERR(shutdown(fd, SHUT_RDWR), ENOTSOCK);
	len = sizeof sun;
	CHECK_ERR(getsockname(fd, (struct sockaddr *)&sun, &len), ENOTSOCK);
	CHECK_ERR(getpeername(fd, (struct sockaddr *)&sun, &len), ENOTSOCK);
	len = sizeof v;
	CHECK_ERR(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len), ENOTSOCK);
	CHECK_ERR(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &v, sizeof v), ENOTSOCK);
	close(fd);
	CHECK_ERR(bind(999, (struct sockaddr *)&sun, sizeof sun), EBADF);
	CHECK_ERR(send(-1, "x", 1, 0), EBADF);
	CHECK_ERR(getsockopt(999, SOL_SOCKET, SO_TYPE, &v, &len), EBADF);
	CHECK_ERR(shutdown(999, SHUT_RD), EBADF);

	/* Address lengths: negative and above sockaddr_storage are EINVAL,
	 * shorter than the family EINVAL; a bad pointer EFAULT. */
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	CHECK_ERR(raw(SYS_bind, s, (long)&sun, -1, 0, 0, 0), EINVAL);
	CHECK_ERR(raw(SYS_bind, s, (long)&sun, 129, 0, 0, 0), EINVAL);
	CHECK_ERR(raw(SYS_bind, s, (long)&sun, 0x7fffffff, 0, 0, 0), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&sun, 0), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&sun, 1), EINVAL);
	CHECK_ERR(bind(s, BAD_PTR2, sizeof sun), EFAULT);
	CHECK_ERR(connect(s, (struct sockaddr *)&sun, 0), EINVAL);
	CHECK_ERR(connect(s, (struct sockaddr *)&sun, 2), EINVAL);
	CHECK_ERR(raw(SYS_connect, s, (long)&sun, -5, 0, 0, 0), EINVAL);
	CHECK_ERR(connect(s, BAD_PTR2, sizeof sun), EFAULT);
	/* sun_path longer than 108 bytes (addrlen 111 > sizeof sockaddr_un). */
	{
		char big[128];
		memset(big, 'a', sizeof big);
		big[0] = AF_UNIX;
		big[1] = 0;
		CHECK_ERR(bind(s, (struct sockaddr *)big, 111), EINVAL);
	}
	/* Another family on an AF_UNIX socket: EINVAL. */
	{
		struct sockaddr_storage ss;
		memset(&ss, 0, sizeof ss);
		ss.ss_family = AF_INET;
		CHECK_ERR(bind(s, (struct sockaddr *)&ss, 16), EINVAL);
		ss.ss_family = 99;
		CHECK_ERR(connect(s, (struct sockaddr *)&ss, 16), EINVAL);
	}
	/* An unaligned address buffer is fine. */
	{
		char ubuf[sizeof sun + 1];
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		memcpy(a.sun_path, "\0unaligned-errors", 17);
		memcpy(ubuf + 1, &a, sizeof a);
		CHECK_EQ(bind(s, (struct sockaddr *)(ubuf + 1), offsetof(struct sockaddr_un, sun_path) + 17), 0);
		/* Bound twice: EINVAL. */
		CHECK_ERR(bind(s, (struct sockaddr *)(ubuf + 1), offsetof(struct sockaddr_un, sun_path) + 17), EINVAL);
	}

	/* getsockname: value-result length, truncation, EINVAL, EFAULT. */
	len = sizeof sun;
	CHECK_EQ(getsockname(s, (struct sockaddr *)&sun, &len), 0);
	CHECK_EQ(len, offsetof(struct sockaddr_un, sun_path) + 17);
	CHECK(memcmp(sun.sun_path, "\0unaligned-errors", 17) == 0);
	memset(buf, 0x55, sizeof buf);
	len = 4;
	CHECK_EQ(getsockname(s, (struct sockaddr *)buf, &len), 0);
	CHECK_EQ(len, offsetof(struct sockaddr_un, sun_path) + 17);
	CHECK_EQ(buf[2], 0);
	CHECK_EQ(buf[3], 'u');
	CHECK_EQ((unsigned char)buf[4], 0x55);
	len = 0;
	CHECK_EQ(getsockname(s, (struct sockaddr *)BAD_PTR2, &len), 0);
	CHECK_EQ(len, offsetof(struct sockaddr_un, sun_path) + 17);
	CHECK_ERR(raw(SYS_getsockname, s, (long)buf, (long)BAD_PTR2, 0, 0, 0), EFAULT);
	CHECK_ERR(raw(SYS_getsockname, s, (long)BAD_PTR2, (long)&len, 0, 0, 0), EFAULT);
	len = (socklen_t)-1;
	CHECK_ERR(getsockname(s, (struct sockaddr *)buf, &len), EINVAL);
	/* accept4's flags. */
	{
		int l = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK_EQ(bind(l, (struct sockaddr *)&(struct sockaddr_un){.sun_family = AF_UNIX}, 2), 0);
		CHECK_EQ(listen(l, 1), 0);
		CHECK_ERR(raw(SYS_accept4, l, 0, 0, 0x100, 0, 0), EINVAL);
		len = sizeof v;
		CHECK_EQ(getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len), 0);
		CHECK_EQ(v, 1);
		close(l);
	}
	/* getpeername of an unconnected socket. */
	len = sizeof sun;
	CHECK_ERR(getpeername(s, (struct sockaddr *)&sun, &len), ENOTCONN);

	/* getsockopt: the generic options, truncation, bad lengths. */
	len = sizeof v;
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_DOMAIN, &v, &len), 0);
	CHECK_EQ(v, AF_UNIX);
	CHECK_EQ(len, sizeof v);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &v, &len), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &v, &len), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_ERROR, &v, &len), 0);
	CHECK_EQ(v, 0);
	v = 0x12345678;
	len = 2;
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len), 0);
	CHECK_EQ(len, 2);
	CHECK_EQ(v & 0xffff, SOCK_DGRAM);
	CHECK_EQ((unsigned)v >> 16, 0x1234);
	len = 100;
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_TYPE, buf, &len), 0);
	CHECK_EQ(len, 4);
	len = (socklen_t)-1;
	CHECK_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len), EINVAL);
	CHECK_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, BAD_PTR2), EFAULT);
	len = sizeof v;
	CHECK_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, BAD_PTR2, &len), EFAULT);
	CHECK_ERR(getsockopt(s, SOL_SOCKET, 9999, &v, &len), ENOPROTOOPT);
	/* setsockopt: short values, unknown names, read-only options. */
	v = 1;
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_PASSCRED, &v, 2), EINVAL);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_PASSCRED, BAD_PTR2, 4), EFAULT);
	CHECK_ERR(raw(SYS_setsockopt, s, SOL_SOCKET, SO_PASSCRED, (long)&v, -1, 0), EINVAL);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, 9999, &v, sizeof v), ENOPROTOOPT);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_TYPE, &v, sizeof v), ENOPROTOOPT);
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_PASSCRED, &v, sizeof v), 0);
	len = sizeof v;
	v = 0;
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_PASSCRED, &v, &len), 0);
	CHECK_EQ(v, 1);
	/* SO_SNDBUF doubles what is set, with a floor. */
	v = 1;
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof v), 0);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, &len), 0);
	CHECK_EQ(v, 4608);
	v = 10000;
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof v), 0);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, &len), 0);
	CHECK_EQ(v, 20000);
	/* AF_UNIX has no options at other levels. */
	CHECK_ERR(setsockopt(s, SOL_IP, 1, &v, sizeof v), EOPNOTSUPP);
	CHECK_ERR(getsockopt(s, 6, 1, &v, &len), EOPNOTSUPP);

	/* listen/accept on a datagram socket, accept4 flags, shutdown how. */
	CHECK_ERR(listen(s, 1), EOPNOTSUPP);
	CHECK_ERR(accept(s, NULL, NULL), EOPNOTSUPP);
	CHECK_ERR(shutdown(s, 3), EINVAL);
	CHECK_ERR(shutdown(s, -1), EINVAL);

	/* sendmsg/recvmsg headers. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	iov[0].iov_base = "hi";
	iov[0].iov_len = 2;
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = iov;
	mh.msg_iovlen = 1025;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EMSGSIZE);
	CHECK_ERR(recvmsg(sv[1], &mh, MSG_DONTWAIT), EMSGSIZE);
	mh.msg_iovlen = 1;
	mh.msg_name = &sun;
	mh.msg_namelen = (socklen_t)-1;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	mh.msg_name = NULL;
	mh.msg_namelen = 0;
	CHECK_ERR(raw(SYS_sendmsg, sv[0], (long)BAD_PTR2, 0, 0, 0, 0), EFAULT);
	CHECK_ERR(raw(SYS_recvmsg, sv[1], (long)BAD_PTR2, 0, 0, 0, 0), EFAULT);
	iov[0].iov_base = BAD_PTR2;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EFAULT);
	/* A negative iovec length. */
	iov[0].iov_base = buf;
	iov[0].iov_len = (size_t)-1;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	iov[0].iov_len = 2;
	iov[0].iov_base = "hi";
	/* Zero iovecs is an empty datagram. */
	mh.msg_iovlen = 0;
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 0);
	mh.msg_iovlen = 1;
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 2);
	/* recvfrom into a bad buffer: EFAULT. */
	CHECK_ERR(recv(sv[1], BAD_PTR2, 2, 0), EFAULT);
	CHECK_ERR(sendto(sv[0], BAD_PTR2, 2, 0, NULL, 0), EFAULT);
	/* recvfrom with an address but a bad length pointer. */
	CHECK_EQ(send(sv[0], "ab", 2, 0), 2);
	CHECK_ERR(raw(SYS_recvfrom, sv[1], (long)buf, 2, MSG_DONTWAIT, (long)&sun, (long)BAD_PTR2), EFAULT);
	/* sendto with an address length 0 on a connected datagram socket is
	 * a send to the peer. */
	CHECK_EQ(sendto(sv[0], "cd", 2, 0, (struct sockaddr *)&sun, 0), 2);
	close(sv[0]);
	close(sv[1]);
	close(s);
	DONE();
}
