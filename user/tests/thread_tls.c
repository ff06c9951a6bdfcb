/* Thread-local storage: __thread initial values, per-thread copies,
 * pthread keys with destructors. */
#include "next.h"

static __thread int tls_init = 42;
static __thread long tls_bss;
static __thread char tls_big[4096] = { 1, 2, 3 };
static pthread_key_t key;
static int destructor_runs;
static void *destructor_arg;

static void destructor(void *p)
{
	__atomic_add_fetch(&destructor_runs, 1, __ATOMIC_SEQ_CST);
	destructor_arg = p;
}

struct res {
	int init_seen, bss_seen, big_ok;
	void *addr;
	int after;
};

static void *worker(void *arg)
{
	struct res *r = arg;
	int i, ok = 1;

	r->init_seen = tls_init;
	r->bss_seen = (int)tls_bss;
	for (i = 3; i < 4096; i++)
		if (tls_big[i])
			ok = 0;
	r->big_ok = ok && tls_big[0] == 1 && tls_big[2] == 3;
	r->addr = &tls_init;
	tls_init = 7;
	tls_bss = 99;
	sched_yield();
	r->after = tls_init;
	pthread_setspecific(key, (void *)0x1234);
	return NULL;
}

static void *fs_self(void *arg)
{
	unsigned long v;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	*(unsigned long *)arg = v;
	return NULL;
}

int main(void)
{
	struct res r[4];
	pthread_t th[4];
	unsigned long fs0 = 0, main_fs0;
	int i;

	CHECK_EQ(pthread_key_create(&key, destructor), 0);
	tls_init = 100;
	tls_bss = 5;
	memset(r, 0, sizeof r);
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, &r[i]), 0);
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(r[i].init_seen, 42);
		CHECK_EQ(r[i].bss_seen, 0);
		CHECK(r[i].big_ok);
		CHECK_EQ(r[i].after, 7);
		CHECK(r[i].addr != (void *)&tls_init);
	}
	CHECK(r[0].addr != r[1].addr);
	/* The main thread's copies are untouched. */
	CHECK_EQ(tls_init, 100);
	CHECK_EQ(tls_bss, 5);
	CHECK_EQ(destructor_runs, 4);
	CHECK(destructor_arg == (void *)0x1234);

	/* The x86-64 TLS ABI: %fs:0 holds the thread pointer itself, and it
	 * differs between threads. */
	__asm__ volatile("mov %%fs:0, %0" : "=r"(main_fs0));
	CHECK_EQ(pthread_create(&th[0], NULL, fs_self, &fs0), 0);
	CHECK_EQ(pthread_join(th[0], NULL), 0);
	CHECK(fs0 != 0 && fs0 != main_fs0);
	DONE();
}
