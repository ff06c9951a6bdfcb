/* Many threads: 300 created and joined in turn, 64 alive at once, custom
 * stack sizes, and thread stacks that really are usable. */
#include "next.h"

#define ALIVE 64

static volatile int gate;
static int arrived;

static void *quick(void *arg) { return arg; }

static void *gated(void *arg)
{
	__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
	while (!gate)
		syscall(SYS_futex, &gate, FUTEX_WAIT, 0, NULL, NULL, 0);
	return arg;
}

static void *deep(void *arg)
{
	size_t n = (size_t)arg;
	volatile char buf[n];
	size_t i;
	unsigned sum = 0;

	for (i = 0; i < n; i += 512)
		buf[i] = (char)i;
	for (i = 0; i < n; i += 512)
		sum += (unsigned char)buf[i];
	return (void *)(long)sum;
}

int main(void)
{
	pthread_t th[ALIVE];
	pthread_attr_t a;
	void *ret;
	int i;

	for (i = 0; i < 300; i++) {
		pthread_t t;

		CHECK_EQ(pthread_create(&t, NULL, quick, (void *)(long)i), 0);
		CHECK_EQ(pthread_join(t, &ret), 0);
		CHECK_EQ((long)ret, i);
	}

	for (i = 0; i < ALIVE; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, gated, (void *)(long)i), 0);
	while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < ALIVE)
		t_msleep(1);
	gate = 1;
	syscall(SYS_futex, &gate, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	for (i = 0; i < ALIVE; i++) {
		CHECK_EQ(pthread_join(th[i], &ret), 0);
		CHECK_EQ((long)ret, i);
	}

	/* A 4 MiB thread stack can hold a 3 MiB frame; a 64 KiB one a 32 KiB
	 * frame. */
	pthread_attr_init(&a);
	CHECK_EQ(pthread_attr_setstacksize(&a, 4 << 20), 0);
	CHECK_EQ(pthread_create(&th[0], &a, deep, (void *)(size_t)(3 << 20)), 0);
	CHECK_EQ(pthread_join(th[0], NULL), 0);
	CHECK_EQ(pthread_attr_setstacksize(&a, 64 << 10), 0);
	CHECK_EQ(pthread_create(&th[0], &a, deep, (void *)(size_t)(32 << 10)), 0);
	CHECK_EQ(pthread_join(th[0], NULL), 0);
	DONE();
}
