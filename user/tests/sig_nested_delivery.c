/* When several signals become deliverable at once and the handlers do not
 * block each other, Linux sets up one frame per signal before returning to
 * user mode (lowest number first), so the handler frames nest and the
 * last one set up runs first; each handler's own signal stays blocked
 * until it returns. */
#include "next.h"

static volatile char order[16];
static volatile int olen;

static void on_sig(int s)
{
	if (olen < 15)
		order[olen++] = s == SIGHUP ? 'H' : s == SIGUSR1 ? '1' : '2';
}

int main(void)
{
	sigset_t set;

	t_sigaction(SIGHUP, on_sig, 0);
	t_sigaction(SIGUSR1, on_sig, 0);
	t_sigaction(SIGUSR2, on_sig, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	t_raise(SIGUSR2);
	t_raise(SIGUSR1);
	t_raise(SIGHUP);
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
	/* Frames set up for HUP, then USR1, then USR2: USR2 runs first. */
	CHECK_EQ(olen, 3);
	CHECK(order[0] == '2' && order[1] == '1' && order[2] == 'H');
	if (olen == 3 && order[0] != '2')
		t_note("order was %c%c%c", order[0], order[1], order[2]);
	DONE();
}
