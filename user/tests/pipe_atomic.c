/*
 * PIPE_BUF atomicity (pipe(7)): writers writing PIPE_BUF-byte records to
 * one pipe at the same time never interleave them, and a blocking write
 * larger than the pipe completes in full while a reader drains it.
 */
#include "t.h"

#define WRITERS 4
#define RECORDS 64

int main(void)
{
	int p[2], i, counts[WRITERS] = { 0 };
	static char rec[PIPE_BUF], big[200000];
	pid_t pids[WRITERS], pid;
	long total;
	ssize_t n;

	CHECK_EQ(PIPE_BUF, 4096);
	CHECK_EQ(pipe(p), 0);
	for (i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int k;

			close(p[0]);
			memset(rec, 'a' + i, sizeof rec);
			for (k = 0; k < RECORDS; k++)
				if (write(p[1], rec, sizeof rec) != sizeof rec)
					_exit(1);
			_exit(0);
		}
	}
	close(p[1]);
	for (;;) {
		size_t got = 0;

		while (got < sizeof rec) {
			n = read(p[0], rec + got, sizeof rec - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (got == 0)
			break;
		CHECK_EQ(got, sizeof rec);
		if (got != sizeof rec)
			break;
		for (i = 1; i < (int)sizeof rec; i++)
			if (rec[i] != rec[0])
				break;
		CHECK_EQ(i, (int)sizeof rec);
		if (rec[0] >= 'a' && rec[0] < 'a' + WRITERS)
			counts[rec[0] - 'a']++;
	}
	for (i = 0; i < WRITERS; i++) {
		CHECK_EQ(counts[i], RECORDS);
		CHECK(t_wait_ok(pids[i]));
	}
	close(p[0]);

	/* One blocking write of 200000 bytes arrives whole and in order. */
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (i = 0; i < (int)sizeof big; i++)
			big[i] = (char)(i * 7);
		_exit(write(p[1], big, sizeof big) == sizeof big ? 0 : 1);
	}
	close(p[1]);
	total = 0;
	while ((n = read(p[0], big + total, sizeof big - total)) > 0)
		total += n;
	CHECK_EQ(total, (long)sizeof big);
	for (i = 0; i < (int)sizeof big; i++)
		if (big[i] != (char)(i * 7))
			break;
	CHECK_EQ(i, (int)sizeof big);
	CHECK(t_wait_ok(pid));
	close(p[0]);
	DONE();
}
