/* During a handler its own signal and sa_mask are blocked (a re-raise is
 * delivered after it returns) unless SA_NODEFER; the mask is restored
 * afterwards. */
#include "next.h"

/* volatile: libc marks some calls as leaf functions, so without it the
 * compiler may assume a handler cannot change these during the call. */
static volatile int depth, max_depth, entries;
static volatile int self_blocked_inside, usr2_blocked_inside;
static volatile char order[16];
static volatile int order_len;

static void on_usr1(int s)
{
	sigset_t cur;
	int me;

	(void)s;
	depth++;
	me = ++entries;
	if (depth > max_depth)
		max_depth = depth;
	order[order_len++] = (char)('a' + me - 1);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	self_blocked_inside = sigismember(&cur, SIGUSR1);
	usr2_blocked_inside = sigismember(&cur, SIGUSR2);
	if (me == 1) {
		t_raise(SIGUSR1);
		t_raise(SIGUSR2);
	}
	order[order_len++] = (char)('A' + me - 1);
	depth--;
}

static void on_usr2(int s)
{
	(void)s;
	order[order_len++] = '2';
}

static void install(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &sa, NULL);
}

static void reset(void)
{
	int i;

	depth = max_depth = entries = order_len = 0;
	for (i = 0; i < 16; i++)
		order[i] = 0;
}

int main(void)
{
	sigset_t cur;

	CHECK_EQ(t_sigaction(SIGUSR2, on_usr2, 0), 0);

	/* Default: no nesting; the re-raised USR1 runs after the first
	 * handler returns, and USR2 (in sa_mask) waits too. */
	install(0);
	reset();
	t_raise(SIGUSR1);
	CHECK_EQ(max_depth, 1);
	CHECK_EQ(entries, 2);
	CHECK(self_blocked_inside);
	CHECK(usr2_blocked_inside);
	/* a = first entry, A = its exit; then the pending signals, lowest
	 * number first: USR1 (10) before USR2 (12). */
	CHECK(strcmp((const char *)order, "aAbB2") == 0);
	if (strcmp((const char *)order, "aAbB2") != 0)
		t_note("order was %s", (const char *)order);

	/* SA_NODEFER: the re-raise nests at once; sa_mask still applies. */
	install(SA_NODEFER);
	reset();
	t_raise(SIGUSR1);
	CHECK_EQ(max_depth, 2);
	CHECK_EQ(entries, 2);
	CHECK(!self_blocked_inside);
	CHECK(strcmp((const char *)order, "abBA2") == 0);
	if (strcmp((const char *)order, "abBA2") != 0)
		t_note("order was %s", (const char *)order);

	/* The mask is back to what it was. */
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGUSR1));
	CHECK(!sigismember(&cur, SIGUSR2));
	DONE();
}
