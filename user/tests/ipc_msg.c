/*
 * System V message queues (msgget, msgsnd, msgrcv, msgctl; svipc(7)): keys
 * and ids, typed messages and msgrcv's msgtyp 0/>0/<0 and MSG_EXCEPT,
 * MSG_NOERROR and E2BIG, IPC_NOWAIT (ENOMSG, EAGAIN), MSG_COPY, blocking
 * receivers and senders (msg_qbytes, message count), EIDRM on removal,
 * EINTR, IPC_STAT/IPC_SET/IPC_INFO/MSG_INFO/MSG_STAT, the kernel's
 * msqid64_ds layout, permissions.
 *
 * IPC objects are global on a host: every queue is IPC_PRIVATE or has a
 * key made from this test's pid, and every one is removed at the end.
 */
#include "next.h"

#include <grp.h>
#include <sys/ipc.h>
#include <sys/msg.h>

#ifndef MSG_EXCEPT
#define MSG_EXCEPT 020000
#endif
#ifndef MSG_COPY
#define MSG_COPY 040000
#endif
#ifndef MSG_STAT_ANY
#define MSG_STAT_ANY 13
#endif

/* The kernel's struct msginfo. */
struct k_msginfo {
	int msgpool, msgmap, msgmax, msgmnb, msgmni, msgssz, msgtql;
	unsigned short msgseg;
};

struct tmsg {
	long mtype;
	char mtext[9000];
};

static key_t base_key;
static int ids[64];
static int nids;
static struct k_msginfo lim;

static int track(int id)
{
	if (id >= 0 && nids < 64)
		ids[nids++] = id;
	return id;
}

static int rmid(int id)
{
	for (int i = 0; i < nids; i++)
		if (ids[i] == id)
			ids[i] = -1;
	return msgctl(id, IPC_RMID, NULL);
}

static void cleanup(void)
{
	for (int i = 0; i < nids; i++)
		if (ids[i] >= 0)
			msgctl(ids[i], IPC_RMID, NULL);
	nids = 0;
}

static int drop_root(void)
{
	return setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0 ? 0 : -1;
}

/* Send a message of `len` bytes, each byte `fill`. */
static long snd(int id, long type, size_t len, char fill, int flags)
{
	static struct tmsg m;

	m.mtype = type;
	memset(m.mtext, fill, len);
	return syscall(SYS_msgsnd, id, &m, len, flags);
}

/* Receive into m; returns the size or -1. */
static long rcv(int id, struct tmsg *m, size_t size, long type, int flags)
{
	memset(m, 0, sizeof *m);
	return syscall(SYS_msgrcv, id, m, size, type, flags);
}

static unsigned long qnum(int id)
{
	struct msqid_ds ds;

	if (msgctl(id, IPC_STAT, &ds) != 0)
		return (unsigned long)-1;
	return ds.msg_qnum;
}

static int set_qbytes(int id, unsigned long n)
{
	struct msqid_ds ds;

	if (msgctl(id, IPC_STAT, &ds) != 0)
		return -1;
	ds.msg_qbytes = n;
	return msgctl(id, IPC_SET, &ds);
}

static void test_get_ctl(void)
{
	time_t t0 = time(NULL);
	int id = track(msgget(IPC_PRIVATE, 0640));
	struct msqid_ds ds;
	key_t k = base_key + 1;

	CHECK(id >= 0);
	CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.msg_perm.mode & 0777, 0640);
	CHECK_EQ(ds.msg_perm.uid, geteuid());
	CHECK_EQ(ds.msg_perm.cuid, geteuid());
	CHECK_EQ(ds.msg_perm.gid, getegid());
	CHECK_EQ(ds.msg_qnum, 0);
	CHECK_EQ(ds.msg_qbytes, (unsigned long)lim.msgmnb);
	CHECK_EQ(ds.msg_lspid, 0);
	CHECK_EQ(ds.msg_lrpid, 0);
	CHECK_EQ(ds.msg_stime, 0);
	CHECK_EQ(ds.msg_rtime, 0);
	CHECK(ds.msg_ctime >= t0 - 1 && ds.msg_ctime <= time(NULL) + 1);

	/* Counters after a send and a receive, and the kernel's layout. */
	struct tmsg m;
	CHECK_EQ(snd(id, 5, 100, 'a', 0), 0);
	unsigned char raw[160];
	uint64_t u64;
	int32_t i32;
	memset(raw, 0xaa, sizeof raw);
	CHECK_EQ(syscall(SYS_msgctl, id, IPC_STAT, raw), 0);
	memcpy(&u64, raw + 48, 8);
	CHECK(u64 >= (uint64_t)t0 - 1); /* msg_stime */
	memcpy(&u64, raw + 56, 8);
	CHECK_EQ(u64, 0); /* msg_rtime */
	memcpy(&u64, raw + 72, 8);
	CHECK_EQ(u64, 100); /* msg_cbytes */
	memcpy(&u64, raw + 80, 8);
	CHECK_EQ(u64, 1); /* msg_qnum */
	memcpy(&u64, raw + 88, 8);
	CHECK_EQ(u64, (uint64_t)lim.msgmnb); /* msg_qbytes */
	memcpy(&i32, raw + 96, 4);
	CHECK_EQ(i32, getpid()); /* msg_lspid */
	memcpy(&i32, raw + 100, 4);
	CHECK_EQ(i32, 0); /* msg_lrpid */
	CHECK_EQ(raw[120], 0xaa);
	CHECK_EQ(rcv(id, &m, sizeof m.mtext, 0, 0), 100);
	CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.msg_lrpid, getpid());
	CHECK(ds.msg_rtime >= t0 - 1);
	CHECK_EQ(ds.msg_qnum, 0);
	CHECK_EQ(ds.__msg_cbytes, 0);

	/* IPC_SET: mode, qbytes. */
	ds.msg_perm.mode = 0600;
	ds.msg_qbytes = 1000;
	CHECK_EQ(msgctl(id, IPC_SET, &ds), 0);
	CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.msg_perm.mode & 0777, 0600);
	CHECK_EQ(ds.msg_qbytes, 1000);
	ds.msg_perm.uid = (uid_t)-1;
	CHECK_ERR(msgctl(id, IPC_SET, &ds), EINVAL);
	CHECK_ERR(msgctl(id, IPC_SET, BAD_PTR), EFAULT);
	CHECK_ERR(msgctl(id, IPC_STAT, BAD_PTR), EFAULT);

	/* Bad ids and commands. */
	CHECK_ERR(msgctl(-1, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(msgctl(id, 1234, &ds), EINVAL);
	CHECK_ERR(msgctl(id + 32768 * 3, IPC_STAT, &ds), EINVAL);

	/* MSG_STAT by index; IPC_INFO and MSG_INFO. */
	CHECK_EQ(msgctl(id % 32768, MSG_STAT, &ds), id);
	CHECK_EQ(msgctl(id % 32768, MSG_STAT_ANY, &ds), id);
	struct k_msginfo mi;
	int maxidx = syscall(SYS_msgctl, 0, IPC_INFO, &mi);
	CHECK(maxidx >= id % 32768);
	CHECK_EQ(mi.msgmax, lim.msgmax);
	CHECK(mi.msgmni > 0);
	CHECK_EQ(snd(id, 1, 10, 'x', 0), 0);
	CHECK_EQ(syscall(SYS_msgctl, 0, MSG_INFO, &mi), maxidx);
	CHECK(mi.msgpool >= 1); /* queues in use */
	CHECK(mi.msgmap >= 1);  /* messages */
	CHECK(mi.msgtql >= 10); /* bytes */

	/* msgget: keys. */
	CHECK_ERR(msgget(k, 0600), ENOENT);
	int kid = track(msgget(k, IPC_CREAT | IPC_EXCL | 0600));
	CHECK(kid >= 0);
	CHECK_ERR(msgget(k, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(msgget(k, IPC_CREAT | 0600), kid);
	CHECK_EQ(msgget(k, 0), kid);
	CHECK_EQ(msgctl(kid, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.msg_perm.__key, k);
	/* Removal: the id is stale, the key free. */
	CHECK_EQ(rmid(kid), 0);
	CHECK_ERR(msgctl(kid, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(snd(kid, 1, 1, 'x', IPC_NOWAIT), EINVAL);
	CHECK_ERR(rcv(kid, &m, 10, 0, IPC_NOWAIT), EINVAL);
	CHECK_ERR(msgget(k, 0), ENOENT);
	CHECK_EQ(rmid(id), 0);
}

static void test_send_receive(void)
{
	int id = track(msgget(IPC_PRIVATE, 0600));
	struct tmsg m;

	CHECK(id >= 0);
	/* Argument checks. */
	CHECK_ERR(snd(id, 0, 1, 'x', 0), EINVAL);
	CHECK_ERR(snd(id, -3, 1, 'x', 0), EINVAL);
	CHECK_ERR(snd(id, 1, lim.msgmax + 1, 'x', 0), EINVAL);
	CHECK_ERR(syscall(SYS_msgsnd, id, &m, (size_t)-1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_msgsnd, id, BAD_PTR, 1, 0), EFAULT);
	CHECK_ERR(snd(-1, 1, 1, 'x', 0), EINVAL);
	CHECK_ERR(syscall(SYS_msgrcv, id, &m, (size_t)-1, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_msgrcv, -1, &m, 10, 0, 0), EINVAL);
	CHECK_ERR(rcv(id, &m, 10, 0, IPC_NOWAIT), ENOMSG);
	CHECK_ERR(rcv(id, &m, 10, 3, IPC_NOWAIT), ENOMSG);

	/* Types 1, 2, 3, 2, 1 with distinct contents. */
	CHECK_EQ(snd(id, 1, 1, 'a', 0), 0);
	CHECK_EQ(snd(id, 2, 2, 'b', 0), 0);
	CHECK_EQ(snd(id, 3, 3, 'c', 0), 0);
	CHECK_EQ(snd(id, 2, 4, 'd', 0), 0);
	CHECK_EQ(snd(id, 1, 5, 'e', 0), 0);
	CHECK_EQ(snd(id, 7, lim.msgmax, 'f', 0), 0);
	CHECK_EQ(qnum(id), 6);

	/* MSG_COPY: by position, without removing (needs IPC_NOWAIT). */
	long r = rcv(id, &m, sizeof m.mtext, 1, MSG_COPY | IPC_NOWAIT);
	if (r == -1 && errno == ENOSYS) {
		t_note("MSG_COPY not configured in this kernel");
	} else {
		CHECK_EQ(r, 2);
		CHECK_EQ(m.mtype, 2);
		CHECK_EQ(m.mtext[0], 'b');
		CHECK_EQ(qnum(id), 6);
		CHECK_ERR(rcv(id, &m, sizeof m.mtext, 1, MSG_COPY), EINVAL);
		CHECK_ERR(rcv(id, &m, sizeof m.mtext, 1, MSG_COPY | IPC_NOWAIT | MSG_EXCEPT), EINVAL);
		CHECK_ERR(rcv(id, &m, sizeof m.mtext, 6, MSG_COPY | IPC_NOWAIT), ENOMSG);
		CHECK_ERR(rcv(id, &m, 1, 1, MSG_COPY | IPC_NOWAIT), E2BIG);
	}

	/* msgtyp > 0: the first of that type. */
	CHECK_EQ(rcv(id, &m, sizeof m.mtext, 2, 0), 2);
	CHECK_EQ(m.mtype, 2);
	CHECK(m.mtext[0] == 'b' && m.mtext[1] == 'b' && m.mtext[2] == 0);
	/* MSG_EXCEPT: the first of another type. */
	CHECK_EQ(rcv(id, &m, sizeof m.mtext, 1, MSG_EXCEPT), 3);
	CHECK_EQ(m.mtype, 3);
	/* msgtyp < 0: the lowest type up to |msgtyp|, first of it. */
	CHECK_EQ(rcv(id, &m, sizeof m.mtext, -2, 0), 1);
	CHECK_EQ(m.mtext[0], 'a');
	CHECK_EQ(rcv(id, &m, sizeof m.mtext, -2, 0), 5);
	CHECK_EQ(m.mtext[0], 'e');
	CHECK_EQ(rcv(id, &m, sizeof m.mtext, -2, 0), 4);
	CHECK_EQ(m.mtype, 2);
	CHECK_ERR(rcv(id, &m, sizeof m.mtext, -6, IPC_NOWAIT), ENOMSG);
	/* Too small a buffer: E2BIG and the message stays... */
	CHECK_ERR(rcv(id, &m, 10, 0, 0), E2BIG);
	CHECK_EQ(qnum(id), 1);
	/* ...unless MSG_NOERROR truncates it. */
	CHECK_EQ(rcv(id, &m, 10, 0, MSG_NOERROR), 10);
	CHECK_EQ(m.mtype, 7);
	CHECK_EQ(m.mtext[9], 'f');
	CHECK_EQ(m.mtext[10], 0);
	CHECK_EQ(qnum(id), 0);

	/* Zero-length messages; msgtyp LONG_MIN. */
	CHECK_EQ(snd(id, 9, 0, 0, 0), 0);
	CHECK_EQ(rcv(id, &m, 0, LONG_MIN, 0), 0);
	CHECK_EQ(m.mtype, 9);

	/* Unwritable buffer: EFAULT (and the message is gone, as on Linux). */
	CHECK_EQ(snd(id, 1, 4, 'z', 0), 0);
	CHECK_ERR(syscall(SYS_msgrcv, id, BAD_PTR, 10, 0, 0), EFAULT);

	/* A full queue: EAGAIN with IPC_NOWAIT; qbytes also bounds the
	 * number of messages. */
	while (qnum(id) > 0)
		rcv(id, &m, sizeof m.mtext, 0, IPC_NOWAIT);
	CHECK_EQ(set_qbytes(id, 100), 0);
	CHECK_EQ(snd(id, 1, 60, 'x', IPC_NOWAIT), 0);
	CHECK_ERR(snd(id, 1, 60, 'x', IPC_NOWAIT), EAGAIN);
	CHECK_EQ(snd(id, 1, 40, 'x', IPC_NOWAIT), 0);
	CHECK_ERR(snd(id, 1, 1, 'x', IPC_NOWAIT), EAGAIN);
	CHECK_EQ(rcv(id, &m, 100, 0, 0), 60);
	CHECK_EQ(rcv(id, &m, 100, 0, 0), 40);
	CHECK_EQ(set_qbytes(id, 2), 0);
	CHECK_EQ(snd(id, 1, 0, 0, IPC_NOWAIT), 0);
	CHECK_EQ(snd(id, 1, 0, 0, IPC_NOWAIT), 0);
	CHECK_ERR(snd(id, 1, 0, 0, IPC_NOWAIT), EAGAIN);
	/* A message larger than the queue can never be sent. */
	CHECK_ERR(snd(id, 1, 3, 'x', IPC_NOWAIT), EAGAIN);
	CHECK_EQ(rmid(id), 0);
}

static volatile sig_atomic_t got_sig;

static void on_sig(int sig)
{
	(void)sig;
	got_sig = 1;
}

static void test_blocking(void)
{
	int id = track(msgget(IPC_PRIVATE, 0600));
	struct tmsg m;
	pid_t pid;

	CHECK(id >= 0);
	/* A receiver waits for its type. */
	pid = fork();
	if (pid == 0) {
		struct tmsg cm;
		CHECK_EQ(rcv(id, &cm, sizeof cm.mtext, 5, 0), 3);
		CHECK_EQ(cm.mtype, 5);
		CHECK_EQ(cm.mtext[0], 'q');
		CHILD_DONE();
	}
	t_wait_proc_state(pid, "S");
	CHECK_EQ(snd(id, 4, 1, 'p', 0), 0);
	t_msleep(20);
	CHECK_EQ(qnum(id), 1);
	CHECK_EQ(snd(id, 5, 3, 'q', 0), 0);
	t_wait_ok(pid);
	CHECK_EQ(qnum(id), 1);
	CHECK_EQ(rcv(id, &m, 10, 0, 0), 1);

	/* A sender waits for room. */
	CHECK_EQ(set_qbytes(id, 100), 0);
	CHECK_EQ(snd(id, 1, 60, 'x', 0), 0);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(snd(id, 2, 60, 'y', 0), 0);
		CHILD_DONE();
	}
	t_wait_proc_state(pid, "S");
	t_msleep(20);
	CHECK_EQ(qnum(id), 1);
	CHECK_EQ(rcv(id, &m, 100, 0, 0), 60);
	t_wait_ok(pid);
	CHECK_EQ(rcv(id, &m, 100, 0, IPC_NOWAIT), 60);
	CHECK_EQ(m.mtype, 2);

	/* Raising qbytes with IPC_SET lets a waiting sender in. */
	CHECK_EQ(set_qbytes(id, 10), 0);
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(snd(id, 3, 20, 'w', 0), 0);
		CHILD_DONE();
	}
	t_wait_proc_state(pid, "S");
	CHECK_EQ(set_qbytes(id, 100), 0);
	t_wait_ok(pid);
	CHECK_EQ(rcv(id, &m, 100, 3, IPC_NOWAIT), 20);

	/* A signal interrupts both waits with EINTR (a handler ran), with
	 * or without SA_RESTART. */
	for (int restart = 0; restart < 2; restart++) {
		pid = fork();
		if (pid == 0) {
			struct tmsg cm;
			t_sigaction(SIGUSR1, on_sig, restart ? SA_RESTART : 0);
			CHECK_ERR(rcv(id, &cm, 10, 0, 0), EINTR);
			CHECK(got_sig);
			got_sig = 0;
			CHECK_EQ(set_qbytes(id, 0), 0);
			CHECK_ERR(snd(id, 1, 1, 'x', 0), EINTR);
			CHECK(got_sig);
			CHILD_DONE();
		}
		t_wait_proc_state(pid, "S");
		t_msleep(20);
		kill(pid, SIGUSR1);
		for (int i = 0; i < 20000; i++) {
			struct msqid_ds ds;
			if (msgctl(id, IPC_STAT, &ds) == 0 && ds.msg_qbytes == 0)
				break;
			t_msleep(1);
		}
		t_wait_proc_state(pid, "S");
		t_msleep(20);
		kill(pid, SIGUSR1);
		t_wait_ok(pid);
		CHECK_EQ(set_qbytes(id, 100), 0);
	}

	/* Removal wakes receivers and senders with EIDRM. */
	CHECK_EQ(set_qbytes(id, 10), 0);
	CHECK_EQ(snd(id, 1, 10, 'x', 0), 0);
	pid_t r1 = fork();
	if (r1 == 0) {
		struct tmsg cm;
		CHECK_ERR(rcv(id, &cm, 10, 2, 0), EIDRM);
		CHILD_DONE();
	}
	pid_t s1 = fork();
	if (s1 == 0) {
		CHECK_ERR(snd(id, 1, 5, 'x', 0), EIDRM);
		CHILD_DONE();
	}
	t_wait_proc_state(r1, "S");
	t_wait_proc_state(s1, "S");
	t_msleep(20);
	CHECK_EQ(rmid(id), 0);
	t_wait_ok(r1);
	t_wait_ok(s1);
}

static void test_perms(void)
{
	if (geteuid() != 0) {
		t_note("not root: permission checks skipped");
		return;
	}
	key_t k = base_key + 2;
	int id = track(msgget(k, IPC_CREAT | IPC_EXCL | 0600));
	int wo = track(msgget(IPC_PRIVATE, 0622));
	CHECK(id >= 0 && wo >= 0);
	CHECK_EQ(snd(id, 1, 1, 'x', 0), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct msqid_ds ds;
		struct tmsg m;
		CHECK_EQ(drop_root(), 0);
		CHECK_ERR(msgget(k, 0400), EACCES);
		CHECK_EQ(msgget(k, 0), id);
		CHECK_ERR(snd(id, 1, 1, 'x', IPC_NOWAIT), EACCES);
		CHECK_ERR(rcv(id, &m, 10, 0, IPC_NOWAIT), EACCES);
		CHECK_ERR(msgctl(id, IPC_STAT, &ds), EACCES);
		CHECK_ERR(msgctl(id % 32768, MSG_STAT, &ds), EACCES);
		CHECK_EQ(msgctl(id % 32768, MSG_STAT_ANY, &ds), id);
		CHECK_ERR(msgctl(id, IPC_SET, &ds), EPERM);
		CHECK_ERR(msgctl(id, IPC_RMID, NULL), EPERM);
		/* Write-only for others: send, but not receive or stat. */
		CHECK_EQ(snd(wo, 1, 1, 'x', IPC_NOWAIT), 0);
		CHECK_ERR(rcv(wo, &m, 10, 0, IPC_NOWAIT), EACCES);
		CHECK_ERR(msgctl(wo, IPC_STAT, &ds), EACCES);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_EQ(qnum(wo), 1);
	/* qbytes above MSGMNB: root only. Hand the queue to 65534 first. */
	struct msqid_ds ds;
	CHECK_EQ(msgctl(wo, IPC_STAT, &ds), 0);
	ds.msg_perm.uid = 65534;
	CHECK_EQ(msgctl(wo, IPC_SET, &ds), 0);
	pid = fork();
	if (pid == 0) {
		struct msqid_ds d;
		CHECK_EQ(drop_root(), 0);
		CHECK_EQ(msgctl(wo, IPC_STAT, &d), 0);
		d.msg_qbytes = lim.msgmnb + 1;
		CHECK_ERR(msgctl(wo, IPC_SET, &d), EPERM);
		d.msg_qbytes = lim.msgmnb - 1;
		CHECK_EQ(msgctl(wo, IPC_SET, &d), 0);
		CHECK_EQ(msgctl(wo, IPC_RMID, NULL), 0);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_ERR(msgctl(wo, IPC_STAT, &ds), EINVAL);
	rmid(wo);
	CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
	ds.msg_qbytes = lim.msgmnb * 2;
	if (msgctl(id, IPC_SET, &ds) != 0) {
		/* Root without CAP_SYS_RESOURCE (some containers). */
		CHECK_EQ(errno, EPERM);
		t_note("no CAP_SYS_RESOURCE: qbytes above msgmnb refused");
	} else {
		CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
		CHECK_EQ(ds.msg_qbytes, (unsigned long)lim.msgmnb * 2);
	}
	CHECK_EQ(rmid(id), 0);
}

int main(void)
{
	base_key = (key_t)(((getpid() & 0x3fffff) << 8) | 0x30);
	atexit(cleanup);
	if (syscall(SYS_msgctl, 0, IPC_INFO, &lim) < 0) {
		CHECK(0);
		DONE();
	}

	test_get_ctl();
	test_send_receive();
	test_blocking();
	test_perms();
	cleanup();
	DONE();
}
