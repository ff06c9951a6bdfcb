/* set_tid_address returns the caller's tid; set_robust_list validation. */
#include "t.h"

struct x_robust_list_head {
	void *next;
	long futex_offset;
	void *list_op_pending;
};

static int tid_word;
static struct x_robust_list_head head;

int main(void)
{
	pid_t me = getpid(), pid;
	long tid = syscall(SYS_gettid);

	/* set_tid_address returns the thread id. */
	CHECK_EQ(syscall(SYS_set_tid_address, &tid_word), tid);
	CHECK_EQ(syscall(SYS_set_tid_address, &tid_word), me);

	/* In a child it returns the child's tid, which is its pid. */
	pid = fork();
	if (pid == 0) {
		static int child_word;
		long r = syscall(SYS_set_tid_address, &child_word);

		CHECK_EQ(r, getpid());
		CHECK_EQ(r, syscall(SYS_gettid));
		CHECK(r != me);
		/* NULL is accepted (nothing cleared on exit). */
		CHECK_EQ(syscall(SYS_set_tid_address, NULL), getpid());
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);

	/* set_robust_list: an empty, well-formed list of the right size. */
	pid = fork();
	if (pid == 0) {
		head.next = &head;
		head.futex_offset = 0;
		head.list_op_pending = NULL;
		CHECK_EQ(syscall(SYS_set_robust_list, &head, sizeof head), 0);
		CHILD_DONE();
	}
	CHECK(pid > 0);
	t_wait_ok(pid);
	CHECK_EQ(sizeof head, 24);

	/* EINVAL: any length other than sizeof(struct robust_list_head). */
	CHECK_ERR(syscall(SYS_set_robust_list, &head, 0), EINVAL);
	CHECK_ERR(syscall(SYS_set_robust_list, &head, 23), EINVAL);
	CHECK_ERR(syscall(SYS_set_robust_list, &head, 25), EINVAL);
	CHECK_ERR(syscall(SYS_set_robust_list, &head, 48), EINVAL);
	CHECK_ERR(syscall(SYS_set_robust_list, NULL, (size_t)-1), EINVAL);

	DONE();
}
