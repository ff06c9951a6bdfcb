/* futex(2) error cases. */
#include "next.h"

int main(void)
{
	static int word[2];
	struct timespec ts;
	char *unaligned = (char *)word + 1;

	/* Unaligned address. */
	CHECK_ERR(t_futex((int *)unaligned, FUTEX_WAIT, 0, NULL, NULL, 0), EINVAL);
	CHECK_ERR(t_futex((int *)unaligned, FUTEX_WAKE, 1, NULL, NULL, 0), EINVAL);
	/* Unmapped address. */
	CHECK_ERR(t_futex((int *)BAD_PTR2, FUTEX_WAIT, 0, NULL, NULL, 0), EFAULT);
	CHECK_ERR(t_futex(NULL, FUTEX_WAIT, 0, NULL, NULL, 0), EFAULT);
	/* Unknown operation. */
	CHECK_ERR(t_futex(word, 99, 0, NULL, NULL, 0), ENOSYS);
	CHECK_ERR(t_futex(word, 99 | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0), ENOSYS);
	/* Bad timeouts. */
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000000;
	CHECK_ERR(t_futex(word, FUTEX_WAIT, 0, &ts, NULL, 0), EINVAL);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	CHECK_ERR(t_futex(word, FUTEX_WAIT, 0, &ts, NULL, 0), EINVAL);
	ts.tv_sec = 0;
	ts.tv_nsec = -1;
	CHECK_ERR(t_futex(word, FUTEX_WAIT_BITSET, 0, &ts, NULL, 1), EINVAL);
	CHECK_ERR(t_futex(word, FUTEX_WAIT, 0, (struct timespec *)BAD_PTR2, NULL, 0),
		  EFAULT);
	/* FUTEX_CLOCK_REALTIME is not valid with FUTEX_WAKE. */
	CHECK_ERR(t_futex(word, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0),
		  ENOSYS);
	/* Requeue to an unmapped second word. */
	CHECK_ERR(t_futex(word, FUTEX_CMP_REQUEUE, 1, (struct timespec *)1L,
			  (int *)BAD_PTR2, 0),
		  EFAULT);
	/* Waking zero waiters is fine. */
	CHECK_EQ(t_futex(word, FUTEX_WAKE, 0, NULL, NULL, 0), 0);
	DONE();
}
