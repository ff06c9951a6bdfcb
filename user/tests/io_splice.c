/* splice(2), tee(2) and vmsplice(2): file->pipe, pipe->file, pipe->pipe,
 * tee without consuming, vmsplice both ways, non-blocking modes, end of
 * file, EPIPE, and Linux's errors. */
#include "next.h"

static void on_alarm(int sig)
{
	(void)sig;
}

static int fill_pipe(int wfd)
{
	static char buf[65536];
	int fl = fcntl(wfd, F_GETFL), total = 0;
	ssize_t n;

	fcntl(wfd, F_SETFL, fl | O_NONBLOCK);
	while ((n = write(wfd, buf, sizeof buf)) > 0)
		total += n;
	fcntl(wfd, F_SETFL, fl);
	return total;
}

int main(void)
{
	char buf[256];
	int m, p[2], q[2], d, ro, wo, ap, dn;
	loff_t off;
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; /* no SA_RESTART: a blocked call is EINTR */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	m = memfd_create("splice", 0);
	CHECK(m >= 0);
	CHECK_EQ(write(m, "hello world", 11), 11);
	CHECK_EQ(lseek(m, 0, SEEK_SET), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);

	/* file -> pipe at the file position, which moves. */
	CHECK_EQ(splice(m, NULL, p[1], NULL, 5, 0), 5);
	CHECK_EQ(lseek(m, 0, SEEK_CUR), 5);
	/* ... or at *off_in, which moves instead of the position. */
	off = 6;
	CHECK_EQ(splice(m, &off, p[1], NULL, 100, 0), 5);
	CHECK_EQ(off, 11);
	CHECK_EQ(lseek(m, 0, SEEK_CUR), 5);
	/* At the end of the file: 0. */
	CHECK_EQ(splice(m, &off, p[1], NULL, 100, 0), 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 10);
	CHECK(!memcmp(buf, "helloworld", 10));

	/* pipe -> file at the position or *off_out; takes what is there. */
	CHECK_EQ(write(p[1], "ABCDEFG", 7), 7);
	CHECK_EQ(lseek(m, 0, SEEK_SET), 0);
	CHECK_EQ(splice(p[0], NULL, m, NULL, 3, 0), 3);
	CHECK_EQ(lseek(m, 0, SEEK_CUR), 3);
	off = 8;
	CHECK_EQ(splice(p[0], NULL, m, &off, 100, 0), 4);
	CHECK_EQ(off, 12);
	CHECK_EQ(lseek(m, 0, SEEK_CUR), 3);
	CHECK_EQ(pread(m, buf, 20, 0), 12);
	CHECK(!memcmp(buf, "ABClo woDEFG", 12));

	/* pipe -> pipe moves the bytes. */
	CHECK_EQ(write(p[1], "12345", 5), 5);
	CHECK_EQ(splice(p[0], NULL, q[1], NULL, 3, 0), 3);
	CHECK_EQ(splice(p[0], NULL, q[1], NULL, 100, 0), 2);
	CHECK_EQ(read(q[0], buf, sizeof buf), 5);
	CHECK(!memcmp(buf, "12345", 5));

	/* tee copies without consuming. */
	CHECK_EQ(write(p[1], "teedata", 7), 7);
	CHECK_EQ(tee(p[0], q[1], 3, 0), 3);
	CHECK_EQ(tee(p[0], q[1], 100, 0), 7);
	CHECK_EQ(read(q[0], buf, sizeof buf), 10);
	CHECK(!memcmp(buf, "teeteedata", 10));
	CHECK_EQ(read(p[0], buf, sizeof buf), 7);
	CHECK(!memcmp(buf, "teedata", 7));

	/* vmsplice: user memory into the write end, out of the read end. */
	{
		char a[] = "vm", b[] = "splice";
		struct iovec in[2] = { { a, 2 }, { b, 6 } };
		char x[3], y[10];
		struct iovec out[2] = { { x, 3 }, { y, 10 } };
		CHECK_EQ(vmsplice(p[1], in, 2, 0), 8);
		CHECK_EQ(vmsplice(p[0], out, 2, 0), 8);
		CHECK(!memcmp(x, "vms", 3) && !memcmp(y, "plice", 5));
		CHECK_EQ(vmsplice(p[1], in, 0, 0), 0);
		CHECK_ERR(vmsplice(p[1], in, 1025, 0), EINVAL);
		CHECK_ERR(vmsplice(p[1], BAD_PTR2, 1, 0), EFAULT);
		CHECK_ERR(vmsplice(p[1], in, 1, 0x10), EINVAL);
		CHECK_ERR(vmsplice(m, in, 1, 0), EBADF);
		CHECK_ERR(vmsplice(-1, in, 1, 0), EBADF);
		/* Empty pipe: SPLICE_F_NONBLOCK is EAGAIN; O_NONBLOCK is not
		 * looked at, so the call blocks (until the alarm here). */
		CHECK_ERR(vmsplice(p[0], out, 1, SPLICE_F_NONBLOCK), EAGAIN);
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		alarm(1);
		CHECK_ERR(vmsplice(p[0], out, 1, 0), EINTR);
		alarm(0);
		fcntl(p[0], F_SETFL, 0);
	}

	/* Empty input pipe: SPLICE_F_NONBLOCK or O_NONBLOCK on it is EAGAIN. */
	CHECK_ERR(splice(p[0], NULL, q[1], NULL, 5, SPLICE_F_NONBLOCK), EAGAIN);
	CHECK_ERR(splice(p[0], NULL, m, NULL, 5, SPLICE_F_NONBLOCK), EAGAIN);
	CHECK_ERR(tee(p[0], q[1], 5, SPLICE_F_NONBLOCK), EAGAIN);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	CHECK_ERR(splice(p[0], NULL, q[1], NULL, 5, 0), EAGAIN);
	CHECK_ERR(splice(p[0], NULL, m, NULL, 5, 0), EAGAIN);
	CHECK_ERR(tee(p[0], q[1], 5, 0), EAGAIN);
	fcntl(p[0], F_SETFL, 0);
	/* ... and blocking waits (interrupted by a signal here). */
	alarm(1);
	CHECK_ERR(splice(p[0], NULL, m, NULL, 5, 0), EINTR);
	alarm(0);

	/* Full output pipe. */
	CHECK(fill_pipe(q[1]) >= 65536);
	CHECK_EQ(write(p[1], "z", 1), 1);
	CHECK_ERR(splice(p[0], NULL, q[1], NULL, 1, SPLICE_F_NONBLOCK), EAGAIN);
	CHECK_ERR(tee(p[0], q[1], 1, SPLICE_F_NONBLOCK), EAGAIN);
	CHECK_ERR(splice(m, NULL, q[1], NULL, 1, SPLICE_F_NONBLOCK), EAGAIN);
	{
		char in[1] = "v";
		struct iovec iv = { in, 1 };
		CHECK_ERR(vmsplice(q[1], &iv, 1, SPLICE_F_NONBLOCK), EAGAIN);
	}
	fcntl(q[1], F_SETFL, O_NONBLOCK);
	CHECK_ERR(splice(m, NULL, q[1], NULL, 1, 0), EAGAIN);
	fcntl(q[1], F_SETFL, 0);
	alarm(1);
	CHECK_ERR(splice(m, NULL, q[1], NULL, 1, 0), EINTR);
	alarm(0);
	/* Nothing was lost from the file position. */
	CHECK_EQ(lseek(m, 0, SEEK_CUR), 3);
	close(q[0]);
	close(q[1]);
	CHECK_EQ(read(p[0], buf, 1), 1);

	/* No readers: EPIPE (SIGPIPE ignored here). No writers: end, 0. */
	CHECK_EQ(pipe(q), 0);
	close(q[0]);
	CHECK_ERR(splice(m, NULL, q[1], NULL, 5, 0), EPIPE);
	CHECK_EQ(write(p[1], "w", 1), 1);
	CHECK_ERR(splice(p[0], NULL, q[1], NULL, 5, 0), EPIPE);
	{
		struct iovec iv = { "x", 1 };
		CHECK_ERR(vmsplice(q[1], &iv, 1, 0), EPIPE);
	}
	close(q[1]);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(pipe(q), 0);
	close(p[1]);
	CHECK_EQ(splice(p[0], NULL, q[1], NULL, 5, 0), 0);
	CHECK_EQ(splice(p[0], NULL, m, NULL, 5, 0), 0);
	CHECK_EQ(tee(p[0], q[1], 5, 0), 0);
	{
		char x[4];
		struct iovec iv = { x, 4 };
		CHECK_EQ(vmsplice(p[0], &iv, 1, 0), 0);
	}
	close(p[0]);
	CHECK_EQ(pipe(p), 0);

	/* Errors. */
	d = open("/", O_RDONLY | O_DIRECTORY);
	dn = open("/dev/null", O_RDWR);
	{
		char path[PATH_MAX], dir[PATH_MAX];
		CHECK_EQ(t_mktmp("io_splice", dir, sizeof dir), 0);
		t_join(path, sizeof path, dir, "f");
		CHECK_EQ(t_write_file(path, "data", 4, 0644), 0);
		ro = open(path, O_RDONLY);
		wo = open(path, O_WRONLY);
		ap = open(path, O_WRONLY | O_APPEND);
		t_rmtree(dir);
	}
	CHECK(d >= 0 && dn >= 0 && ro >= 0 && wo >= 0 && ap >= 0);
	/* Flags first, then a zero length succeeds whatever the fds. */
	CHECK_ERR(splice(-1, NULL, -1, NULL, 5, 0x10), EINVAL);
	CHECK_EQ(splice(-1, NULL, -1, NULL, 0, 0), 0);
	CHECK_ERR(tee(-1, -1, 0, 0x10), EINVAL);
	CHECK_EQ(tee(-1, -1, 0, 0), 0);
	CHECK_EQ(splice(m, NULL, q[1], NULL, 0, 0), 0);
	/* Descriptors and access modes. */
	CHECK_ERR(splice(-1, NULL, q[1], NULL, 5, 0), EBADF);
	CHECK_ERR(splice(m, NULL, -1, NULL, 5, 0), EBADF);
	CHECK_ERR(splice(wo, NULL, q[1], NULL, 5, 0), EBADF);
	CHECK_ERR(splice(m, NULL, p[0], NULL, 5, 0), EBADF);
	CHECK_ERR(splice(p[1], NULL, m, NULL, 5, 0), EBADF);
	CHECK_ERR(splice(q[0], NULL, ro, NULL, 5, 0), EBADF);
	CHECK_ERR(splice(p[0], NULL, q[0], NULL, 5, 0), EBADF);
	/* Neither side a pipe, or the same pipe on both. */
	CHECK_ERR(splice(m, NULL, m, NULL, 5, 0), EINVAL);
	CHECK_ERR(splice(p[0], NULL, p[1], NULL, 5, 0), EINVAL);
	/* An offset for a pipe side. */
	off = 0;
	CHECK_ERR(splice(p[0], &off, q[1], NULL, 5, 0), ESPIPE);
	CHECK_ERR(splice(m, NULL, q[1], &off, 5, 0), ESPIPE);
	/* Bad offsets, a directory, an O_APPEND output. */
	CHECK_ERR(splice(m, BAD_PTR2, q[1], NULL, 5, 0), EFAULT);
	off = -1;
	CHECK_ERR(splice(m, &off, q[1], NULL, 5, 0), EINVAL);
	CHECK_ERR(splice(d, NULL, q[1], NULL, 5, 0), EINVAL);
	CHECK_EQ(write(p[1], "abc", 3), 3);
	CHECK_ERR(splice(p[0], NULL, ap, NULL, 5, 0), EINVAL);
	/* Devices work: pipe -> /dev/null (at an offset too), /dev/zero ->
	 * pipe. */
	off = 0;
	CHECK_EQ(splice(p[0], NULL, dn, &off, 1, 0), 1);
	CHECK_EQ(splice(p[0], NULL, dn, NULL, 5, 0), 2);
	{
		int z = open("/dev/zero", O_RDONLY);
		CHECK(z >= 0);
		CHECK_EQ(splice(z, NULL, q[1], NULL, 5, 0), 5);
		CHECK_EQ(read(q[0], buf, sizeof buf), 5);
		CHECK(!memcmp(buf, "\0\0\0\0\0", 5));
		close(z);
	}
	/* tee: both must be pipes (EINVAL), with the right modes (EBADF),
	 * and different. */
	CHECK_ERR(tee(m, q[1], 5, 0), EINVAL);
	CHECK_ERR(tee(p[0], m, 5, 0), EINVAL);
	CHECK_ERR(tee(p[1], q[1], 5, 0), EBADF);
	CHECK_ERR(tee(p[0], q[0], 5, 0), EBADF);
	CHECK_ERR(tee(-1, q[1], 5, 0), EBADF);
	CHECK_ERR(tee(p[0], p[1], 5, 0), EINVAL);

	/* A large transfer through a pipe in steps keeps the data intact. */
	{
		static char src[200000], dst[200000];
		int src_fd = memfd_create("src", 0), dst_fd = memfd_create("dst", 0);
		size_t moved = 0;
		for (size_t i = 0; i < sizeof src; i++)
			src[i] = (char)(i * 7 + i / 4096);
		CHECK_EQ(write(src_fd, src, sizeof src), (long)sizeof src);
		CHECK_EQ(lseek(src_fd, 0, SEEK_SET), 0);
		while (moved < sizeof src) {
			ssize_t in = splice(src_fd, NULL, p[1], NULL, sizeof src, 0);
			if (in <= 0)
				break;
			for (ssize_t left = in; left > 0;) {
				ssize_t out = splice(p[0], NULL, dst_fd, NULL, left, 0);
				if (out <= 0) {
					left = 0;
					in = -1;
					break;
				}
				left -= out;
			}
			if (in < 0)
				break;
			moved += in;
		}
		CHECK_EQ(moved, sizeof src);
		CHECK_EQ(pread(dst_fd, dst, sizeof dst, 0), (long)sizeof dst);
		CHECK(!memcmp(src, dst, sizeof src));
		close(src_fd);
		close(dst_fd);
	}
	DONE();
}
