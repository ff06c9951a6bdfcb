/* FIFOs from mkfifo and mknod: file type, open rules (O_RDONLY|O_NONBLOCK
 * succeeds alone, O_WRONLY|O_NONBLOCK without a reader is ENXIO, blocking
 * opens rendezvous), data between processes, EOF, ESPIPE, O_RDWR. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], f1[PATH_MAX], f2[PATH_MAX], buf[32];
	struct stat st;
	int r, w;
	pid_t pid;

	if (t_mktmp("fifo_basic", dir, sizeof dir) != 0)
		DONE();
	t_join(f1, sizeof f1, dir, "fifo1");
	t_join(f2, sizeof f2, dir, "fifo2");
	CHECK_EQ(mkfifo(f1, 0644), 0);
	CHECK_EQ(mknod(f2, S_IFIFO | 0600, 0), 0);
	CHECK_EQ(stat(f1, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0644 & ~(mode_t)umask(umask(0)));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(stat(f2, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_ERR(mkfifo(f1, 0644), EEXIST);

	/* Non-blocking open rules. */
	CHECK_ERR(open(f1, O_WRONLY | O_NONBLOCK), ENXIO);
	r = open(f1, O_RDONLY | O_NONBLOCK);
	CHECK(r >= 0);
	/* No writer at all: end of file, not EAGAIN. */
	CHECK_EQ(read(r, buf, 1), 0);
	w = open(f1, O_WRONLY | O_NONBLOCK);
	CHECK(w >= 0);
	CHECK_EQ(write(w, "fifo", 4), 4);
	CHECK_EQ(read(r, buf, sizeof buf), 4);
	CHECK(memcmp(buf, "fifo", 4) == 0);
	/* A writer exists but wrote nothing: EAGAIN. */
	CHECK_ERR(read(r, buf, 1), EAGAIN);
	CHECK_ERR(lseek(r, 0, SEEK_SET), ESPIPE);
	close(w);
	CHECK_EQ(read(r, buf, sizeof buf), 0);
	close(r);

	/* Blocking opens wait for the other side. */
	pid = fork();
	if (pid == 0) {
		int fd = open(f2, O_WRONLY);

		if (fd < 0)
			_exit(1);
		(void)!write(fd, "through", 7);
		close(fd);
		_exit(0);
	}
	r = open(f2, O_RDONLY);
	CHECK(r >= 0);
	memset(buf, 0, sizeof buf);
	{
		size_t have = 0;
		ssize_t n;

		while ((n = read(r, buf + have, sizeof buf - have)) > 0)
			have += (size_t)n;
		CHECK_EQ(have, 7);
	}
	CHECK(strcmp(buf, "through") == 0);
	close(r);
	CHECK(t_wait_ok(pid));

	/* O_RDWR on a FIFO does not block (Linux). */
	r = open(f2, O_RDWR);
	CHECK(r >= 0);
	CHECK_EQ(write(r, "x", 1), 1);
	CHECK_EQ(read(r, buf, 1), 1);
	close(r);

	/* The data never touches the file. */
	CHECK_EQ(stat(f2, &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(unlink(f1), 0);
	CHECK_EQ(unlink(f2), 0);
	t_rmtree(dir);
	DONE();
}
