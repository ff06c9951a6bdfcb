/*
 * AF_UNIX names: bind(2) to a path makes a socket file (S_IFSOCK, mode
 * 0777 minus the umask) and EADDRINUSE if the path exists; listen(2),
 * connect(2), accept(2)/accept4(2) with the addresses getsockname(2),
 * getpeername(2) and accept report; connect errors (ENOENT, ENOTDIR,
 * ECONNREFUSED without a listener or to a file that is not a socket,
 * EACCES without write permission, EPROTOTYPE for another type, EISCONN);
 * abstract names; autobind (bind with only the family); a full backlog
 * (EAGAIN for a non-blocking connect); a listener closed with pending
 * connections (ECONNRESET); accept on a non-listening socket (EINVAL).
 */
#include "next.h"
#include <ctype.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static socklen_t mkaddr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strncpy(a->sun_path, path, sizeof a->sun_path - 1);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static socklen_t mkabstract(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, name, strlen(name));
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

int main(void)
{
	char dir[128], path[200], other[200], name[64];
	struct sockaddr_un a, got;
	socklen_t alen, len;
	struct stat st;
	int l, c, s, n, v;
	char buf[64];
	struct pollfd pfd;

	if (t_mktmp("unix_bind", dir, sizeof dir))
		return 1;
	t_join(path, sizeof path, dir, "sock");

	/* bind: a socket file with the umask applied. */
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	alen = mkaddr(&a, path);
	umask(022);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, alen), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0755);
	/* Opening a socket file is ENXIO. */
	CHECK_ERR(open(path, O_RDWR), ENXIO);
	/* getsockname: the path as given, with its NUL. */
	len = sizeof got;
	CHECK_EQ(getsockname(l, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(len, alen);
	CHECK(strcmp(got.sun_path, path) == 0);
	/* An existing path: EADDRINUSE, for a socket file or another one. */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), EADDRINUSE);
	t_join(other, sizeof other, dir, "file");
	CHECK_EQ(t_write_file(other, "x", 1, 0644), 0);
	alen = mkaddr(&a, other);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), EADDRINUSE);
	/* The walk's errors. */
	t_join(other, sizeof other, dir, "nodir/sock");
	alen = mkaddr(&a, other);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), ENOENT);
	t_join(other, sizeof other, dir, "file/sock");
	alen = mkaddr(&a, other);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), ENOTDIR);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen), ENOTDIR);
	t_join(other, sizeof other, dir, "nothere");
	alen = mkaddr(&a, other);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen), ENOENT);
	/* A file that is not a socket: ECONNREFUSED. */
	t_join(other, sizeof other, dir, "file");
	alen = mkaddr(&a, other);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen), ECONNREFUSED);
	/* A socket that does not listen: ECONNREFUSED; listen needs a name. */
	alen = mkaddr(&a, path);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen), ECONNREFUSED);
	CHECK_ERR(listen(s, 1), EINVAL);
	CHECK_ERR(accept(l, NULL, NULL), EINVAL);
	/* Another type: EPROTOTYPE. */
	c = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK_EQ(listen(l, 2), 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, alen), EPROTOTYPE);
	close(c);

	/* connect / accept, names on both sides. */
	CHECK_EQ(connect(s, (struct sockaddr *)&a, alen), 0);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen), EISCONN);
	pfd.fd = l;
	pfd.events = POLLIN;
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	len = sizeof got;
	memset(&got, 0x55, sizeof got);
	c = accept4(l, (struct sockaddr *)&got, &len, SOCK_CLOEXEC);
	CHECK(c >= 0);
	CHECK_EQ(fcntl(c, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(len, sizeof(sa_family_t));
	CHECK_EQ(got.sun_family, AF_UNIX);
	len = sizeof got;
	CHECK_EQ(getpeername(s, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(len, alen);
	CHECK(strcmp(got.sun_path, path) == 0);
	len = sizeof got;
	CHECK_EQ(getsockname(c, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(len, alen);
	len = sizeof got;
	CHECK_EQ(getsockname(s, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(len, sizeof(sa_family_t));
	CHECK_EQ(write(s, "ping", 4), 4);
	CHECK_EQ(read(c, buf, sizeof buf), 4);
	CHECK_EQ(write(c, "pong", 4), 4);
	CHECK_EQ(read(s, buf, sizeof buf), 4);
	CHECK(memcmp(buf, "pong", 4) == 0);
	/* SO_PEERCRED of both ends: this process. */
	{
		struct ucred cr;
		len = sizeof cr;
		CHECK_EQ(getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len), 0);
		CHECK_EQ(cr.pid, getpid());
		CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len), 0);
		CHECK_EQ(cr.pid, getpid());
		CHECK_EQ(cr.uid, geteuid());
	}
	close(c);
	close(s);
	/* Nothing pending: a non-blocking accept is EAGAIN. */
	v = fcntl(l, F_GETFL);
	CHECK_EQ(fcntl(l, F_SETFL, v | O_NONBLOCK), 0);
	CHECK_ERR(accept(l, NULL, NULL), EAGAIN);
	CHECK_EQ(fcntl(l, F_SETFL, v), 0);

	/* A full backlog: a non-blocking connect is EAGAIN. */
	CHECK_EQ(listen(l, 0), 0);
	{
		int cs[8], i, full = 0;
		for (i = 0; i < 8; i++) {
			cs[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (connect(cs[i], (struct sockaddr *)&a, alen) != 0) {
				CHECK_EQ(errno, EAGAIN);
				full = 1;
				break;
			}
		}
		CHECK(full);
		CHECK(i >= 1);
		/* Closing the listener resets the pending connections. */
		close(l);
		CHECK_ERR(read(cs[0], buf, sizeof buf), ECONNRESET);
		CHECK_EQ(read(cs[0], buf, sizeof buf), 0);
		for (n = 0; n <= i && n < 8; n++)
			close(cs[n]);
	}
	/* The file stays after close; its name is free again only by unlink. */
	CHECK_EQ(stat(path, &st), 0);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen), ECONNREFUSED);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), EADDRINUSE);
	CHECK_EQ(unlink(path), 0);
	CHECK_EQ(bind(s, (struct sockaddr *)&a, alen), 0);
	close(s);

	/* Write permission on the socket file is needed to connect. */
	if (geteuid() == 0) {
		pid_t pid;
		l = socket(AF_UNIX, SOCK_STREAM, 0);
		t_join(other, sizeof other, dir, "private");
		alen = mkaddr(&a, other);
		CHECK_EQ(bind(l, (struct sockaddr *)&a, alen), 0);
		CHECK_EQ(listen(l, 4), 0);
		CHECK_EQ(chmod(other, 0755), 0);
		CHECK_EQ(chmod(dir, 0755), 0);
		pid = fork();
		if (pid == 0) {
			int x;
			if (setgid(1000) || setuid(1000))
				_exit(3);
			x = socket(AF_UNIX, SOCK_STREAM, 0);
			CHECK_ERR(connect(x, (struct sockaddr *)&a, alen), EACCES);
			CHILD_DONE();
		}
		t_wait_ok(pid);
		CHECK_EQ(chmod(other, 0777), 0);
		pid = fork();
		if (pid == 0) {
			int x;
			if (setgid(1000) || setuid(1000))
				_exit(3);
			x = socket(AF_UNIX, SOCK_STREAM, 0);
			CHECK_EQ(connect(x, (struct sockaddr *)&a, alen), 0);
			CHILD_DONE();
		}
		t_wait_ok(pid);
		close(l);
	}

	/* Abstract names: no file; in use while bound; free after close. */
	snprintf(name, sizeof name, "trellis-unix-bind-%d", (int)getpid());
	l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	alen = mkabstract(&a, name);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, alen), 0);
	CHECK_EQ(listen(l, 4), 0);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), EADDRINUSE);
	/* A name is its bytes: a shorter length is another name. */
	CHECK_ERR(connect(s, (struct sockaddr *)&a, alen - 1), ECONNREFUSED);
	CHECK_EQ(connect(s, (struct sockaddr *)&a, alen), 0);
	c = accept(l, NULL, NULL);
	CHECK(c >= 0);
	len = sizeof got;
	CHECK_EQ(getpeername(s, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(len, alen);
	CHECK(memcmp(got.sun_path, a.sun_path, alen - 2) == 0);
	/* Seqpacket keeps boundaries. */
	CHECK_EQ(send(s, "one", 3, 0), 3);
	CHECK_EQ(send(s, "two!", 4, 0), 4);
	CHECK_EQ(recv(c, buf, sizeof buf, 0), 3);
	CHECK_EQ(recv(c, buf, 2, 0), 2);
	CHECK_ERR(recv(c, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	close(s);
	CHECK_EQ(recv(c, buf, sizeof buf, 0), 0);
	close(c);
	close(l);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(bind(s, (struct sockaddr *)&a, alen), 0);
	close(s);

	/* Autobind: bind with only the family gives an abstract name of
	 * five hex digits; twice is fine. */
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof(sa_family_t)), 0);
	len = sizeof got;
	CHECK_EQ(getsockname(s, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(len, sizeof(sa_family_t) + 6);
	CHECK_EQ(got.sun_path[0], 0);
	for (n = 1; n < 6; n++)
		CHECK(isxdigit((unsigned char)got.sun_path[n]));
	CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof(sa_family_t)), 0);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, alen), EINVAL);
	close(s);

	t_rmtree(dir);
	DONE();
}
