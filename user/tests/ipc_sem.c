/*
 * System V semaphores (semget, semop, semtimedop, semctl; svipc(7)): keys
 * and ids, GETVAL/SETVAL/GETALL/SETALL/GETPID/GETNCNT/GETZCNT, ERANGE,
 * atomic multi-operation semop, IPC_NOWAIT, wait-for-zero, blocking and
 * wake-ups across processes, semtimedop timeouts, EINTR (even with
 * SA_RESTART), EIDRM on removal, SEM_UNDO at exit, IPC_STAT/IPC_SET/
 * IPC_INFO/SEM_INFO/SEM_STAT, the kernel's semid64_ds layout, permissions.
 *
 * IPC objects are global on a host: every set is IPC_PRIVATE or has a key
 * made from this test's pid, and every one is removed at the end.
 */
#include "next.h"

#include <grp.h>
#include <sys/ipc.h>
#include <sys/sem.h>

#ifndef SEM_STAT_ANY
#define SEM_STAT_ANY 20
#endif

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

/* The kernel's struct seminfo. */
struct k_seminfo {
	int semmap, semmni, semmns, semmnu, semmsl, semopm, semume, semusz,
	    semvmx, semaem;
};

static key_t base_key;
static int ids[64];
static int nids;

static int track(int id)
{
	if (id >= 0 && nids < 64)
		ids[nids++] = id;
	return id;
}

static void untrack(int id)
{
	for (int i = 0; i < nids; i++)
		if (ids[i] == id)
			ids[i] = -1;
}

static void cleanup(void)
{
	for (int i = 0; i < nids; i++)
		if (ids[i] >= 0)
			semctl(ids[i], 0, IPC_RMID);
	nids = 0;
}

static int rmid(int id)
{
	untrack(id);
	return semctl(id, 0, IPC_RMID);
}

static int getval(int id, int n)
{
	return semctl(id, n, GETVAL);
}

static int setval(int id, int n, int v)
{
	union semun u = { .val = v };
	return semctl(id, n, SETVAL, u);
}

static long op1(int id, int num, int op, int flg)
{
	struct sembuf s = { .sem_num = num, .sem_op = op, .sem_flg = flg };
	return syscall(SYS_semop, id, &s, 1);
}

static long timedop1(int id, int num, int op, long ns)
{
	struct sembuf s = { .sem_num = num, .sem_op = op, .sem_flg = 0 };
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	return syscall(SYS_semtimedop, id, &s, 1, &ts);
}

/* Wait (bounded) until GETNCNT (or GETZCNT) of sem n reaches want. */
static int wait_cnt(int id, int n, int cmd, int want)
{
	for (int i = 0; i < 20000; i++) {
		if (semctl(id, n, cmd) == want)
			return 1;
		t_msleep(1);
	}
	return 0;
}

static int drop_root(void)
{
	return setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0 ? 0 : -1;
}

static void test_get_ctl(void)
{
	time_t t0 = time(NULL);
	int id = track(semget(IPC_PRIVATE, 3, 0640));
	struct semid_ds ds;
	union semun u;
	unsigned short all[3];
	key_t k = base_key + 1;

	CHECK(id >= 0);
	u.buf = &ds;
	CHECK_EQ(semctl(id, 0, IPC_STAT, u), 0);
	CHECK_EQ(ds.sem_nsems, 3);
	CHECK_EQ(ds.sem_perm.mode & 0777, 0640);
	CHECK_EQ(ds.sem_perm.uid, geteuid());
	CHECK_EQ(ds.sem_perm.cuid, geteuid());
	CHECK_EQ(ds.sem_perm.gid, getegid());
	CHECK_EQ(ds.sem_otime, 0);
	CHECK(ds.sem_ctime >= t0 - 1 && ds.sem_ctime <= time(NULL) + 1);

	/* The kernel's layout. */
	unsigned char raw[160];
	uint64_t u64;
	memset(raw, 0xaa, sizeof raw);
	CHECK_EQ(syscall(SYS_semctl, id, 0, IPC_STAT, raw), 0);
	memcpy(&u64, raw + 48, 8);
	CHECK_EQ(u64, 0); /* sem_otime */
	memcpy(&u64, raw + 80, 8);
	CHECK_EQ(u64, 3); /* sem_nsems */
	CHECK_EQ(raw[104], 0xaa);

	/* New semaphores are 0. */
	u.array = all;
	memset(all, 0xff, sizeof all);
	CHECK_EQ(semctl(id, 0, GETALL, u), 0);
	CHECK(all[0] == 0 && all[1] == 0 && all[2] == 0);
	CHECK_EQ(getval(id, 2), 0);
	CHECK_EQ(semctl(id, 0, GETPID), 0);

	/* SETVAL, GETPID, ERANGE, bad semnum. */
	CHECK_EQ(setval(id, 1, 7), 0);
	CHECK_EQ(getval(id, 1), 7);
	CHECK_EQ(semctl(id, 1, GETPID), getpid());
	CHECK_EQ(setval(id, 1, 32767), 0);
	CHECK_ERR(setval(id, 1, 32768), ERANGE);
	CHECK_ERR(setval(id, 1, -1), ERANGE);
	/* ERANGE comes before the id is looked up. */
	CHECK_ERR(setval(id + 32768 * 5, 0, 40000), ERANGE);
	CHECK_ERR(setval(-1, 0, 40000), EINVAL);
	CHECK_ERR(setval(id, 3, 1), EINVAL);
	CHECK_ERR(setval(id, -1, 1), EINVAL);
	CHECK_ERR(semctl(id, 3, GETVAL), EINVAL);
	CHECK_ERR(semctl(id, -1, GETNCNT), EINVAL);

	/* SETALL / GETALL. */
	unsigned short set[3] = { 1, 2, 3 };
	u.array = set;
	CHECK_EQ(semctl(id, 0, SETALL, u), 0);
	u.array = all;
	CHECK_EQ(semctl(id, 0, GETALL, u), 0);
	CHECK(all[0] == 1 && all[1] == 2 && all[2] == 3);
	unsigned short big[3] = { 1, 40000, 3 };
	u.array = big;
	CHECK_ERR(semctl(id, 0, SETALL, u), ERANGE);
	CHECK_EQ(getval(id, 0), 1);
	u.array = BAD_PTR;
	CHECK_ERR(semctl(id, 0, SETALL, u), EFAULT);
	CHECK_ERR(semctl(id, 0, GETALL, u), EFAULT);

	/* IPC_SET. */
	u.buf = &ds;
	CHECK_EQ(semctl(id, 0, IPC_STAT, u), 0);
	ds.sem_perm.mode = 0600;
	CHECK_EQ(semctl(id, 0, IPC_SET, u), 0);
	CHECK_EQ(semctl(id, 0, IPC_STAT, u), 0);
	CHECK_EQ(ds.sem_perm.mode & 0777, 0600);
	ds.sem_perm.gid = (gid_t)-1;
	CHECK_ERR(semctl(id, 0, IPC_SET, u), EINVAL);
	u.buf = BAD_PTR;
	CHECK_ERR(semctl(id, 0, IPC_SET, u), EFAULT);
	CHECK_ERR(semctl(id, 0, IPC_STAT, u), EFAULT);

	/* Bad ids and commands. */
	u.buf = &ds;
	CHECK_ERR(semctl(-1, 0, IPC_STAT, u), EINVAL);
	CHECK_ERR(semctl(id, 0, 1234), EINVAL);
	CHECK_ERR(semctl(id + 32768 * 5, 0, GETVAL), EINVAL);

	/* SEM_STAT by index; IPC_INFO and SEM_INFO. */
	CHECK_EQ(semctl(id % 32768, 0, SEM_STAT, u), id);
	CHECK_EQ(ds.sem_nsems, 3);
	CHECK_EQ(semctl(id % 32768, 0, SEM_STAT_ANY, u), id);
	struct k_seminfo si;
	int maxidx = syscall(SYS_semctl, 0, 0, IPC_INFO, &si);
	CHECK(maxidx >= id % 32768);
	CHECK(si.semmsl >= 250 && si.semopm >= 32 && si.semmni > 0);
	CHECK_EQ(si.semvmx, 32767);
	CHECK_EQ(syscall(SYS_semctl, 0, 0, SEM_INFO, &si), maxidx);
	CHECK(si.semusz >= 1); /* sets in use */
	CHECK(si.semaem >= 3); /* semaphores in use */

	/* semget: keys, sizes. */
	struct k_seminfo lim;
	syscall(SYS_semctl, 0, 0, IPC_INFO, &lim);
	CHECK_ERR(semget(IPC_PRIVATE, 0, 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, -1, 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, lim.semmsl + 1, 0600), EINVAL);
	CHECK_ERR(semget(k, 2, 0600), ENOENT);
	int kid = track(semget(k, 2, IPC_CREAT | IPC_EXCL | 0600));
	CHECK(kid >= 0);
	CHECK_ERR(semget(k, 2, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(semget(k, 2, IPC_CREAT | 0600), kid);
	CHECK_EQ(semget(k, 0, 0), kid);
	CHECK_EQ(semget(k, 1, 0), kid);
	CHECK_ERR(semget(k, 3, 0), EINVAL);
	CHECK_EQ(semctl(kid, 0, IPC_STAT, u), 0);
	CHECK_EQ(ds.sem_perm.__key, k);

	/* Removal: the id is stale, the key free. */
	CHECK_EQ(rmid(kid), 0);
	CHECK_ERR(semctl(kid, 0, GETVAL), EINVAL);
	CHECK_ERR(semctl(kid, 0, IPC_RMID), EINVAL);
	CHECK_ERR(op1(kid, 0, 1, 0), EINVAL);
	CHECK_ERR(semget(k, 0, 0), ENOENT);
	CHECK_EQ(rmid(id), 0);
}

static void test_semop(void)
{
	int id = track(semget(IPC_PRIVATE, 3, 0600));
	struct sembuf s[4];
	struct semid_ds ds;
	union semun u = { .buf = &ds };
	time_t t0 = time(NULL);

	CHECK(id >= 0);
	/* Argument checks. */
	s[0] = (struct sembuf){ 0, 1, 0 };
	CHECK_ERR(syscall(SYS_semop, id, s, 0), EINVAL);
	CHECK_ERR(syscall(SYS_semop, -1, s, 1), EINVAL);
	CHECK_ERR(syscall(SYS_semop, id, BAD_PTR, 1), EFAULT);
	CHECK_ERR(syscall(SYS_semop, id, s, 100000), E2BIG);
	s[0] = (struct sembuf){ 3, 1, 0 };
	CHECK_ERR(syscall(SYS_semop, id, s, 1), EFBIG);

	/* Simple increments and decrements; otime and sempid. */
	CHECK_EQ(op1(id, 0, 2, 0), 0);
	CHECK_EQ(getval(id, 0), 2);
	CHECK_EQ(semctl(id, 0, GETPID), getpid());
	CHECK_EQ(semctl(id, 0, IPC_STAT, u), 0);
	CHECK(ds.sem_otime >= t0 - 1);
	CHECK_EQ(op1(id, 0, -1, 0), 0);
	CHECK_EQ(getval(id, 0), 1);

	/* IPC_NOWAIT: EAGAIN, nothing changed. */
	CHECK_ERR(op1(id, 1, -1, IPC_NOWAIT), EAGAIN);
	CHECK_ERR(op1(id, 0, 0, IPC_NOWAIT), EAGAIN);
	CHECK_EQ(op1(id, 1, 0, IPC_NOWAIT), 0);

	/* All or nothing: sem0 could go down, sem1 cannot. */
	s[0] = (struct sembuf){ 0, -1, IPC_NOWAIT };
	s[1] = (struct sembuf){ 1, -1, IPC_NOWAIT };
	CHECK_ERR(syscall(SYS_semop, id, s, 2), EAGAIN);
	CHECK_EQ(getval(id, 0), 1);
	CHECK_EQ(getval(id, 1), 0);

	/* Operations apply in order: the same semaphore twice. */
	s[0] = (struct sembuf){ 2, 1, 0 };
	s[1] = (struct sembuf){ 2, -1, 0 };
	s[2] = (struct sembuf){ 2, 0, 0 };
	s[3] = (struct sembuf){ 0, -1, 0 };
	CHECK_EQ(syscall(SYS_semop, id, s, 4), 0);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(getval(id, 2), 0);

	/* ERANGE above SEMVMX, with nothing applied. */
	CHECK_EQ(setval(id, 0, 32767), 0);
	s[0] = (struct sembuf){ 1, 5, 0 };
	s[1] = (struct sembuf){ 0, 1, 0 };
	CHECK_ERR(syscall(SYS_semop, id, s, 2), ERANGE);
	CHECK_EQ(getval(id, 1), 0);
	CHECK_EQ(getval(id, 0), 32767);

	/* semtimedop: a timeout ends the wait with EAGAIN. */
	CHECK_EQ(setval(id, 0, 0), 0);
	long long t1 = t_now_ns(CLOCK_MONOTONIC);
	CHECK_ERR(timedop1(id, 0, -1, 50 * 1000000L), EAGAIN);
	CHECK(t_now_ns(CLOCK_MONOTONIC) - t1 >= 45 * 1000000LL);
	CHECK_ERR(timedop1(id, 0, -1, 0), EAGAIN);
	CHECK_EQ(timedop1(id, 0, 0, 1000000L), 0); /* zero: no wait */
	struct timespec bad = { 0, 1000000000L };
	s[0] = (struct sembuf){ 0, -1, 0 };
	CHECK_ERR(syscall(SYS_semtimedop, id, s, 1, &bad), EINVAL);
	CHECK_ERR(syscall(SYS_semtimedop, id, s, 1, BAD_PTR), EFAULT);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	CHECK_EQ(rmid(id), 0);
}

/* Waiters in other processes: wake-ups, GETNCNT/GETZCNT, atomic waits. */
static void test_blocking(void)
{
	int id = track(semget(IPC_PRIVATE, 2, 0600));
	pid_t pid;

	CHECK(id >= 0);
	/* A decrement waits for the value. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 0, -2, 0), 0);
		CHILD_DONE();
	}
	CHECK(wait_cnt(id, 0, GETNCNT, 1));
	CHECK_EQ(semctl(id, 0, GETZCNT), 0);
	CHECK_EQ(op1(id, 0, 1, 0), 0); /* not enough yet */
	t_msleep(20);
	CHECK_EQ(getval(id, 0), 1);
	CHECK_EQ(semctl(id, 0, GETNCNT), 1);
	CHECK_EQ(op1(id, 0, 1, 0), 0);
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	CHECK_EQ(semctl(id, 0, GETPID), pid);

	/* Wait-for-zero, woken by SETVAL. */
	CHECK_EQ(setval(id, 1, 3), 0);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 1, 0, 0), 0);
		CHILD_DONE();
	}
	CHECK(wait_cnt(id, 1, GETZCNT, 1));
	CHECK_EQ(semctl(id, 1, GETNCNT), 0);
	CHECK_EQ(setval(id, 1, 0), 0);
	t_wait_ok(pid);
	CHECK_EQ(semctl(id, 1, GETZCNT), 0);

	/* A two-semaphore wait takes both at once; only the semaphore it is
	 * blocked on counts in GETNCNT. */
	pid = fork();
	if (pid == 0) {
		struct sembuf s[2] = { { 0, -1, 0 }, { 1, -1, 0 } };
		CHECK_EQ(syscall(SYS_semop, id, s, 2), 0);
		CHILD_DONE();
	}
	CHECK(wait_cnt(id, 0, GETNCNT, 1));
	CHECK_EQ(semctl(id, 1, GETNCNT), 0);
	CHECK_EQ(setval(id, 0, 1), 0);
	CHECK(wait_cnt(id, 1, GETNCNT, 1));
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	CHECK_EQ(getval(id, 0), 1); /* not taken alone */
	CHECK_EQ(setval(id, 1, 1), 0);
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(getval(id, 1), 0);

	/* A semtimedop woken before its timeout. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(timedop1(id, 0, -1, 60 * 1000000000L), 0);
		CHILD_DONE();
	}
	CHECK(wait_cnt(id, 0, GETNCNT, 1));
	CHECK_EQ(op1(id, 0, 1, 0), 0);
	t_wait_ok(pid);
	CHECK_EQ(rmid(id), 0);
}

static volatile sig_atomic_t got_sig;

static void on_sig(int sig)
{
	(void)sig;
	got_sig = 1;
}

/* EINTR (even under SA_RESTART) and EIDRM. */
static void test_interrupt_remove(void)
{
	int id = track(semget(IPC_PRIVATE, 1, 0600));

	CHECK(id >= 0);
	for (int restart = 0; restart < 2; restart++) {
		pid_t pid = fork();
		if (pid == 0) {
			t_sigaction(SIGUSR1, on_sig, restart ? SA_RESTART : 0);
			CHECK_ERR(op1(id, 0, -1, 0), EINTR);
			CHECK(got_sig);
			CHILD_DONE();
		}
		CHECK(wait_cnt(id, 0, GETNCNT, 1));
		kill(pid, SIGUSR1);
		t_wait_ok(pid);
		CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	}
	/* Removal wakes every waiter with EIDRM. */
	pid_t p1 = fork();
	if (p1 == 0) {
		CHECK_ERR(op1(id, 0, -1, 0), EIDRM);
		CHILD_DONE();
	}
	pid_t p2 = fork();
	if (p2 == 0) {
		CHECK_ERR(timedop1(id, 0, -1, 60 * 1000000000L), EIDRM);
		CHILD_DONE();
	}
	CHECK(wait_cnt(id, 0, GETNCNT, 2));
	CHECK_EQ(rmid(id), 0);
	t_wait_ok(p1);
	t_wait_ok(p2);
}

static int undo_id;

/* Runs in a clone(CLONE_SYSVSEM) child, and in a thread. */
static int undo_plus2(void *arg)
{
	(void)arg;
	struct sembuf sb = { 0, 2, SEM_UNDO };
	return syscall(SYS_semop, undo_id, &sb, 1) == 0 ? 0 : 1;
}

static void *undo_thread(void *arg)
{
	return (void *)(long)undo_plus2(arg);
}

/* SEM_UNDO: adjustments applied at exit. */
static void test_undo(void)
{
	int id = track(semget(IPC_PRIVATE, 2, 0600));
	pid_t pid;
	int go[2], ready[2];

	CHECK(id >= 0);
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(ready), 0);
	/* +1 undone at exit. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 0, 1, SEM_UNDO), 0);
		CHECK_EQ(op1(id, 0, 1, SEM_UNDO), 0);
		CHECK_EQ(op1(id, 1, 5, 0), 0);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(getval(id, 1), 5);
	CHECK_EQ(semctl(id, 0, GETPID), pid);

	/* -2 undone: the value comes back. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 1, -2, SEM_UNDO), 0);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 1), 5);

	/* Clamped at 0: the value went down meanwhile. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 0, 3, SEM_UNDO), 0);
		t_post(ready[1]);
		t_await(go[0]);
		CHILD_DONE();
	}
	t_await(ready[0]);
	CHECK_EQ(getval(id, 0), 3);
	CHECK_EQ(op1(id, 0, -2, 0), 0);
	t_post(go[1]);
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 0), 0);

	/* SETVAL clears the adjustment of that semaphore. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 0, 3, SEM_UNDO), 0);
		CHECK_EQ(op1(id, 1, 1, SEM_UNDO), 0);
		t_post(ready[1]);
		t_await(go[0]);
		CHILD_DONE();
	}
	t_await(ready[0]);
	CHECK_EQ(setval(id, 0, 10), 0);
	t_post(go[1]);
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 0), 10);
	CHECK_EQ(getval(id, 1), 5);

	/* Undo range: SEMAEM (32767). */
	CHECK_EQ(setval(id, 1, 0), 0);
	pid = fork();
	if (pid == 0) {
		/* semadj -32767, then -32768 (the limit), then too far. */
		CHECK_EQ(op1(id, 1, 32767, SEM_UNDO), 0);
		CHECK_EQ(op1(id, 1, -32767, 0), 0);
		CHECK_EQ(op1(id, 1, 1, SEM_UNDO), 0);
		CHECK_ERR(op1(id, 1, 1, SEM_UNDO), ERANGE);
		CHECK_EQ(getval(id, 1), 1);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 1), 0); /* 1 - 32768, clamped */

	/* A fork child does not inherit its parent's adjustments. */
	CHECK_EQ(setval(id, 1, 0), 0);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 1, 2, SEM_UNDO), 0);
		pid_t g = fork();
		if (g == 0)
			_exit(0);
		t_wait_ok(g);
		CHECK_EQ(getval(id, 1), 2);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_EQ(getval(id, 1), 0);

	/* CLONE_SYSVSEM shares the undo list: the child's exit applies
	 * nothing while the parent still uses it. */
	CHECK_EQ(setval(id, 0, 0), 0);
	undo_id = id;
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id, 0, 1, SEM_UNDO), 0);
		void *stack = t_stack(65536);
		long c = t_clone(CLONE_SYSVSEM | SIGCHLD, stack, NULL, NULL, 0, undo_plus2, NULL);
		CHECK(c > 0);
		if (c > 0)
			t_wait_ok((pid_t)c);
		CHECK_EQ(getval(id, 0), 3);
		/* Threads share it too: nothing is undone when one ends. */
		pthread_t th;
		void *ret = (void *)1L;
		CHECK_EQ(pthread_create(&th, NULL, undo_thread, NULL), 0);
		pthread_join(th, &ret);
		CHECK(ret == NULL);
		CHECK_EQ(getval(id, 0), 5);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	/* The last user's exit undid all of it. */
	CHECK_EQ(getval(id, 0), 0);

	/* Undo of a removed set is dropped quietly. */
	int id2 = track(semget(IPC_PRIVATE, 1, 0600));
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(op1(id2, 0, 1, SEM_UNDO), 0);
		t_post(ready[1]);
		t_await(go[0]);
		CHILD_DONE();
	}
	t_await(ready[0]);
	CHECK_EQ(rmid(id2), 0);
	t_post(go[1]);
	t_wait_ok(pid);

	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	CHECK_EQ(rmid(id), 0);
}

static void test_perms(void)
{
	if (geteuid() != 0) {
		t_note("not root: permission checks skipped");
		return;
	}
	key_t k = base_key + 2;
	int id = track(semget(k, 1, IPC_CREAT | IPC_EXCL | 0600));
	int ro = track(semget(IPC_PRIVATE, 1, 0644));
	CHECK(id >= 0 && ro >= 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct semid_ds ds;
		union semun u = { .buf = &ds };
		CHECK_EQ(drop_root(), 0);
		CHECK_ERR(semget(k, 1, 0600), EACCES);
		CHECK_EQ(semget(k, 1, 0), id);
		CHECK_ERR(op1(id, 0, 1, 0), EACCES);
		CHECK_ERR(op1(id, 0, 0, IPC_NOWAIT), EACCES);
		CHECK_ERR(semctl(id, 0, GETVAL), EACCES);
		CHECK_ERR(semctl(id, 0, GETNCNT), EACCES);
		CHECK_ERR(setval(id, 0, 1), EACCES);
		CHECK_ERR(semctl(id, 0, IPC_STAT, u), EACCES);
		CHECK_ERR(semctl(id, 0, IPC_SET, u), EPERM);
		CHECK_ERR(semctl(id, 0, IPC_RMID), EPERM);
		/* Read permission: wait-for-zero and reads, no changes. */
		CHECK_EQ(op1(ro, 0, 0, IPC_NOWAIT), 0);
		CHECK_ERR(op1(ro, 0, 1, 0), EACCES);
		CHECK_EQ(getval(ro, 0), 0);
		CHECK_ERR(setval(ro, 0, 1), EACCES);
		CHECK_EQ(semctl(ro, 0, IPC_STAT, u), 0);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_EQ(rmid(id), 0);
	CHECK_EQ(rmid(ro), 0);
}

int main(void)
{
	base_key = (key_t)(((getpid() & 0x3fffff) << 8) | 0x20);
	atexit(cleanup);

	test_get_ctl();
	test_semop();
	test_blocking();
	test_interrupt_remove();
	test_undo();
	test_perms();
	cleanup();
	DONE();
}
