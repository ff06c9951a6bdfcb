/* Stress: 64 concurrent children (all alive at once, released together),
 * reaped with wait(-1) in whatever order, each status exactly once; then
 * 64 children that each fork a grandchild. */
#include "next.h"

#define N 64

int main(void)
{
	pid_t pids[N];
	int seen[N] = { 0 }, p[2], i, bad = 0;

	CHECK_EQ(pipe(p), 0);
	for (i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			close(p[1]);
			t_await(p[0]); /* EOF when the parent closes */
			_exit(i);
		}
		if (pids[i] < 0) {
			CHECK(pids[i] > 0);
			break;
		}
	}
	close(p[0]);
	close(p[1]);
	for (i = 0; i < N; i++) {
		int st, j;
		pid_t r = wait4(-1, &st, 0, NULL);

		for (j = 0; j < N; j++)
			if (pids[j] == r) {
				if (!WIFEXITED(st) || WEXITSTATUS(st) != j)
					bad++;
				seen[j]++;
			}
	}
	CHECK_EQ(bad, 0);
	for (i = 0; i < N; i++)
		CHECK_EQ(seen[i], 1);
	CHECK_ERR(wait4(-1, NULL, WNOHANG, NULL), ECHILD);

	/* Children with grandchildren, concurrently. */
	for (i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			pid_t g = fork();

			if (g == 0)
				_exit(7);
			_exit(g > 0 && WEXITSTATUS(t_wait(g)) == 7 ? 0 : 1);
		}
	}
	for (i = 0; i < N; i++)
		CHECK(t_wait_ok(pids[i]));
	DONE();
}
