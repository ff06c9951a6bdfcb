/* Shared (non-private) futexes between processes over MAP_SHARED memory,
 * and a process blocked in FUTEX_WAIT woken by another process. */
#include "next.h"

int main(void)
{
	volatile int *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	long r;
	int i;

	CHECK(w != MAP_FAILED);
	if (w == MAP_FAILED)
		DONE();
	w[0] = 0;
	w[1] = 0;

	/* Child waits; parent wakes it through the shared word. */
	pid = fork();
	if (pid == 0) {
		while (w[0] == 0) {
			long rr = t_futex(&w[0], FUTEX_WAIT, 0, NULL, NULL, 0);

			if (rr != 0 && errno != EAGAIN && errno != EINTR)
				_exit(2);
		}
		_exit(w[0] == 1 ? 0 : 3);
	}
	CHECK(pid > 0);
	/* Wait until the child is really asleep on the word. */
	t_wait_proc_state(pid, "S");
	w[0] = 1;
	do {
		r = t_futex(&w[0], FUTEX_WAKE, 1, NULL, NULL, 0);
	} while (r == 0 && t_proc_state(pid) == 'S' && (t_msleep(1), 1));
	CHECK(t_wait_ok(pid));

	/* Several child processes woken with one FUTEX_WAKE; the count of
	 * woken waiters is exact once they are all asleep. */
	w[1] = 0;
	{
		pid_t kids[4];
		int total = 0;

		for (i = 0; i < 4; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				while (w[1] == 0)
					t_futex(&w[1], FUTEX_WAIT, 0, NULL,
						NULL, 0);
				_exit(0);
			}
		}
		for (i = 0; i < 4; i++)
			t_wait_proc_state(kids[i], "S");
		w[1] = 1;
		for (i = 0; i < 200 && total < 4; i++) {
			total += (int)t_futex(&w[1], FUTEX_WAKE, INT_MAX, NULL,
					      NULL, 0);
			if (total < 4)
				t_msleep(1);
		}
		for (i = 0; i < 4; i++)
			CHECK(t_wait_ok(kids[i]));
	}
	DONE();
}
