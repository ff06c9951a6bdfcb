/* Writes of at most PIPE_BUF bytes are atomic: four processes write
 * records of exactly PIPE_BUF bytes (each filled with its writer's id)
 * concurrently; the reader sees only whole, unmixed records, and all of
 * them. */
#include "next.h"

#define WRITERS 4
#define RECORDS 500

int main(void)
{
	static char rec[PIPE_BUF], stream[PIPE_BUF * 2];
	int p[2], w, counts[WRITERS] = { 0 }, bad = 0;
	size_t have = 0;
	pid_t pids[WRITERS];
	ssize_t n;

	CHECK_EQ(PIPE_BUF, 4096);
	CHECK_EQ(pipe(p), 0);
	for (w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			int i;

			close(p[0]);
			memset(rec, 'A' + w, sizeof rec);
			for (i = 0; i < RECORDS; i++)
				if (write(p[1], rec, sizeof rec) != sizeof rec)
					_exit(1);
			_exit(0);
		}
	}
	close(p[1]);
	/* Read in odd-sized pieces and reassemble. */
	for (;;) {
		n = read(p[0], stream + have, 1000 + (have % 7) * 300 < sizeof stream - have
					      ? 1000 + (have % 7) * 300
					      : sizeof stream - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		while (have >= PIPE_BUF) {
			size_t i;
			char id = stream[0];

			for (i = 1; i < PIPE_BUF; i++)
				if (stream[i] != id) {
					bad++;
					break;
				}
			if (id >= 'A' && id < 'A' + WRITERS)
				counts[id - 'A']++;
			else
				bad++;
			memmove(stream, stream + PIPE_BUF, have - PIPE_BUF);
			have -= PIPE_BUF;
		}
	}
	CHECK_EQ(n, 0);
	CHECK_EQ(have, 0);
	CHECK_EQ(bad, 0);
	for (w = 0; w < WRITERS; w++) {
		CHECK_EQ(counts[w], RECORDS);
		CHECK(t_wait_ok(pids[w]));
	}
	close(p[0]);
	DONE();
}
