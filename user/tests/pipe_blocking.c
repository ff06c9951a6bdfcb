/* Blocking pipes between processes: a reader sleeps until data arrives, a
 * writer sleeps while the pipe is full and wakes when the reader drains
 * it; a big blocking write is delivered whole; FIONREAD reports the bytes
 * queued; lseek/pread/pwrite fail with ESPIPE. */
#include "next.h"

int main(void)
{
	static char big[300000], got[300000];
	int p[2], avail = -1;
	size_t have = 0;
	pid_t pid;
	ssize_t n;
	char c;

	CHECK_EQ(pipe(p), 0);

	/* Reader waits for a late writer. */
	pid = fork();
	if (pid == 0) {
		t_msleep(30);
		(void)!write(p[1], "z", 1);
		_exit(0);
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'z');
	CHECK(t_wait_ok(pid));

	/* A 300000-byte blocking write goes through a 64 KiB pipe. */
	for (n = 0; n < (ssize_t)sizeof big; n++)
		big[n] = (char)(n * 13 + 5);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(write(p[1], big, sizeof big) == sizeof big ? 0 : 1);
	}
	close(p[1]);
	if (!t_wait_proc_state(pid, "S"))
		t_msleep(30);
	CHECK_EQ(ioctl(p[0], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 65536);
	while ((n = read(p[0], got + have, sizeof got - have)) > 0)
		have += (size_t)n;
	CHECK_EQ(n, 0);
	CHECK_EQ(have, sizeof big);
	CHECK(memcmp(big, got, sizeof big) == 0);
	CHECK(t_wait_ok(pid));
	CHECK_EQ(ioctl(p[0], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 0);
	close(p[0]);

	/* Pipes are not seekable. */
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(lseek(p[1], 0, SEEK_SET), ESPIPE);
	CHECK_ERR(pread(p[0], &c, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(p[1], &c, 1, 0), ESPIPE);
	CHECK_EQ(write(p[1], "abc", 3), 3);
	CHECK_EQ(ioctl(p[0], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 3);
	close(p[0]);
	close(p[1]);
	DONE();
}
