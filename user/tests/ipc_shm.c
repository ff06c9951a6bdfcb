/*
 * System V shared memory (shmget, shmat, shmdt, shmctl; svipc(7)): keys and
 * ids, IPC_STAT/IPC_SET/IPC_RMID/IPC_INFO/SHM_INFO/SHM_STAT/SHM_LOCK, the
 * kernel's shmid64_ds layout, attach addresses (SHM_RND, SHM_REMAP,
 * SHM_RDONLY), shm_nattch through fork, exec, exit and mprotect splits,
 * destruction at the last detach, permissions.
 *
 * IPC objects are global on a host: every object is IPC_PRIVATE or has a
 * key made from this test's pid, and every one is removed at the end.
 */
#include "next.h"

#include <grp.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15
#endif
#ifndef SHM_DEST
#define SHM_DEST 01000
#endif
#ifndef SHM_LOCKED
#define SHM_LOCKED 02000
#endif
#ifndef SHM_REMAP
#define SHM_REMAP 040000
#endif

/* The kernel's struct shminfo64 and struct shm_info (x86-64). */
struct k_shminfo {
	unsigned long shmmax, shmmin, shmmni, shmseg, shmall, unused[4];
};
struct k_shm_info {
	int used_ids;
	unsigned long shm_tot, shm_rss, shm_swp, swap_attempts, swap_successes;
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
			shmctl(ids[i], IPC_RMID, NULL);
	nids = 0;
}

static key_t key_n(int n)
{
	return base_key + n;
}

static unsigned long nattch(int id)
{
	struct shmid_ds ds;

	if (shmctl(id, IPC_STAT, &ds) != 0)
		return (unsigned long)-1;
	return ds.shm_nattch;
}

/* A free, page-aligned range of `pages` pages. */
static char *free_range(size_t pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, pages * PAGE);
	return p;
}

/* Drops root in a child: uid/gid 65534, no supplementary groups. */
static int drop_root(void)
{
	return setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0 ? 0 : -1;
}

static void test_get_and_stat(void)
{
	time_t t0 = time(NULL);
	int id = track(shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0640));
	struct shmid_ds ds;

	CHECK(id >= 0);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.shm_segsz, 10000);
	CHECK_EQ(ds.shm_perm.mode & 0777, 0640);
	CHECK_EQ(ds.shm_perm.mode & SHM_DEST, 0);
	CHECK_EQ(ds.shm_perm.__key, IPC_PRIVATE);
	CHECK_EQ(ds.shm_perm.uid, geteuid());
	CHECK_EQ(ds.shm_perm.cuid, geteuid());
	CHECK_EQ(ds.shm_perm.gid, getegid());
	CHECK_EQ(ds.shm_perm.cgid, getegid());
	CHECK_EQ(ds.shm_cpid, getpid());
	CHECK_EQ(ds.shm_lpid, 0);
	CHECK_EQ(ds.shm_nattch, 0);
	CHECK_EQ(ds.shm_atime, 0);
	CHECK_EQ(ds.shm_dtime, 0);
	CHECK(ds.shm_ctime >= t0 - 1 && ds.shm_ctime <= time(NULL) + 1);

	/* Each IPC_PRIVATE call makes a new segment. */
	int id2 = track(shmget(IPC_PRIVATE, 10000, 0600));
	CHECK(id2 >= 0 && id2 != id);

	/* The kernel's layout: raw syscall into a byte buffer. */
	unsigned char raw[160];
	memset(raw, 0xaa, sizeof raw);
	CHECK_EQ(syscall(SYS_shmctl, id, IPC_STAT, raw), 0);
	uint32_t u32;
	uint64_t u64;
	int32_t i32;
	memcpy(&i32, raw + 0, 4);
	CHECK_EQ(i32, 0); /* key */
	memcpy(&u32, raw + 4, 4);
	CHECK_EQ(u32, geteuid()); /* uid */
	memcpy(&u32, raw + 20, 4);
	CHECK_EQ(u32 & 0777, 0640); /* mode */
	memcpy(&u64, raw + 48, 8);
	CHECK_EQ(u64, 10000); /* shm_segsz */
	memcpy(&i32, raw + 80, 4);
	CHECK_EQ(i32, getpid()); /* shm_cpid */
	memcpy(&u64, raw + 88, 8);
	CHECK_EQ(u64, 0); /* shm_nattch */
	CHECK_EQ(raw[112], 0xaa); /* nothing written past the 112 bytes */
	CHECK_EQ(raw[159], 0xaa);

	/* EFAULT for an unwritable buffer; EINVAL for bad ids and commands. */
	CHECK_ERR(shmctl(id, IPC_STAT, BAD_PTR), EFAULT);
	CHECK_ERR(shmctl(-1, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(shmctl(id, 12345, &ds), EINVAL);
	CHECK_ERR(syscall(SYS_shmctl, id, -1, &ds), EINVAL);
	CHECK_ERR(shmctl(id, IPC_SET, BAD_PTR), EFAULT);

	/* IPC_SET: owner and permission bits; ctime. */
	ds.shm_perm.mode = 0604 | SHM_DEST; /* only the low 9 bits count */
	CHECK_EQ(shmctl(id, IPC_SET, &ds), 0);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.shm_perm.mode & 07777, 0604);
	ds.shm_perm.uid = (uid_t)-1;
	CHECK_ERR(shmctl(id, IPC_SET, &ds), EINVAL);

	/* SHM_STAT takes an index and returns the id; SHM_STAT_ANY too. */
	CHECK_EQ(shmctl(id % 32768, SHM_STAT, &ds), id);
	CHECK_EQ(ds.shm_segsz, 10000);
	CHECK_EQ(shmctl(id % 32768, SHM_STAT_ANY, &ds), id);

	/* IPC_INFO and SHM_INFO return the highest index in use. */
	struct k_shminfo info;
	int maxidx = syscall(SYS_shmctl, 0, IPC_INFO, &info);
	CHECK(maxidx >= id % 32768 && maxidx >= id2 % 32768);
	CHECK_EQ(info.shmmin, 1);
	CHECK(info.shmmax >= 10000);
	CHECK(info.shmmni > 0);
	CHECK(info.shmall > 0);
	struct k_shm_info sinfo;
	CHECK_EQ(syscall(SYS_shmctl, 0, SHM_INFO, &sinfo), maxidx);
	CHECK(sinfo.used_ids >= 2);
	CHECK(sinfo.shm_tot >= 6); /* two segments of 3 pages */

	/* SHM_LOCK / SHM_UNLOCK (root or owner) show in the mode. */
	CHECK_EQ(shmctl(id, SHM_LOCK, NULL), 0);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK(ds.shm_perm.mode & SHM_LOCKED);
	CHECK_EQ(shmctl(id, SHM_UNLOCK, NULL), 0);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.shm_perm.mode & SHM_LOCKED, 0);

	/* IPC_RMID of an unattached segment: gone at once, the id is stale. */
	CHECK_EQ(shmctl(id2, IPC_RMID, NULL), 0);
	untrack(id2);
	CHECK_ERR(shmctl(id2, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(shmctl(id2, IPC_RMID, NULL), EINVAL);
	CHECK_ERR(shmat(id2, NULL, 0), EINVAL);
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	untrack(id);
}

static void test_keys(void)
{
	key_t k = key_n(1);
	struct shmid_ds ds;

	CHECK_ERR(shmget(k, 4096, 0600), ENOENT);
	int id = track(shmget(k, 8192, IPC_CREAT | IPC_EXCL | 0600));
	CHECK(id >= 0);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.shm_perm.__key, k);
	CHECK_ERR(shmget(k, 4096, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(shmget(k, 4096, IPC_CREAT | 0600), id);
	CHECK_EQ(shmget(k, 0, 0), id);
	CHECK_EQ(shmget(k, 8192, 0), id);
	/* Larger than the segment. */
	CHECK_ERR(shmget(k, 8193, 0), EINVAL);
	/* Sizes: zero and above SHMMAX. */
	CHECK_ERR(shmget(IPC_PRIVATE, 0, 0600), EINVAL);
	CHECK_ERR(shmget(key_n(2), 0, IPC_CREAT | 0600), EINVAL);
	CHECK_ERR(shmget(IPC_PRIVATE, (size_t)-1, 0600), EINVAL);

	/* Another process finds it by key and shares the memory. */
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	if (p != (void *)-1) {
		strcpy(p, "parent");
		pid_t pid = fork();
		if (pid == 0) {
			int cid = shmget(k, 0, 0);
			CHECK_EQ(cid, id);
			char *q = shmat(cid, NULL, SHM_RDONLY);
			CHECK(q != (void *)-1);
			if (q != (void *)-1) {
				CHECK(strcmp(q, "parent") == 0);
				/* The fork's copy of the parent's attachment is writable. */
				strcpy(p + 100, "child");
				CHECK_EQ(shmdt(q), 0);
			}
			CHILD_DONE();
		}
		t_wait_ok(pid);
		CHECK(strcmp(p + 100, "child") == 0);
		CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
		CHECK_EQ(ds.shm_nattch, 1);
		CHECK_EQ(ds.shm_lpid, pid); /* the child's last detach */
		CHECK_EQ(shmdt(p), 0);
	}

	/* After IPC_RMID the key no longer finds it. */
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	untrack(id);
	CHECK_ERR(shmget(k, 0, 0), ENOENT);
}

static void test_attach(void)
{
	int id = track(shmget(IPC_PRIVATE, 3 * PAGE, 0600));
	struct shmid_ds ds;
	time_t t0 = time(NULL);

	CHECK(id >= 0);
	char *a = shmat(id, NULL, 0);
	char *b = shmat(id, NULL, 0);
	CHECK(a != (void *)-1 && b != (void *)-1);
	if (a == (void *)-1 || b == (void *)-1)
		return;
	CHECK(a != b);
	CHECK_EQ((uintptr_t)a % PAGE, 0);
	/* Fresh memory reads as zeros; both attachments see the same pages. */
	CHECK_EQ(a[0], 0);
	CHECK_EQ(a[3 * PAGE - 1], 0);
	a[5] = 42;
	b[2 * PAGE + 7] = 43;
	CHECK_EQ(b[5], 42);
	CHECK_EQ(a[2 * PAGE + 7], 43);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.shm_nattch, 2);
	CHECK_EQ(ds.shm_lpid, getpid());
	CHECK(ds.shm_atime >= t0 - 1);
	CHECK_EQ(ds.shm_dtime, 0);

	/* The /proc/sysvipc/shm line of the segment. */
	static char text[65536];
	if (t_read_file("/proc/sysvipc/shm", text, sizeof text) > 0) {
		char *line = strchr(text, '\n');
		int found = 0;
		while (line && *++line) {
			int key, sid, cpid, lpid;
			unsigned perms;
			unsigned long size, natt;
			if (sscanf(line, "%d %d %o %lu %d %d %lu", &key, &sid, &perms,
				   &size, &cpid, &lpid, &natt) == 7 && sid == id) {
				found = 1;
				CHECK_EQ(key, 0);
				CHECK_EQ(perms, 0600);
				CHECK_EQ(size, 3 * PAGE);
				CHECK_EQ(cpid, getpid());
				CHECK_EQ(natt, 2);
			}
			line = strchr(line, '\n');
		}
		CHECK(found);
	} else {
		t_note("no /proc/sysvipc/shm");
	}

	/* shmdt: only a segment's start, page aligned. */
	CHECK_ERR(shmdt(b + 1), EINVAL);
	CHECK_ERR(shmdt(b + PAGE), EINVAL);
	CHECK_ERR(shmdt(BAD_PTR2), EINVAL);
	CHECK_EQ(shmdt(b), 0);
	CHECK_ERR(shmdt(b), EINVAL);
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK_EQ(ds.shm_nattch, 1);
	CHECK(ds.shm_dtime >= t0 - 1);

	/* A given address: must be SHMLBA-aligned unless SHM_RND. */
	char *r = free_range(8);
	CHECK(r != NULL);
	if (r) {
		CHECK_ERR(shmat(id, r + 100, 0), EINVAL);
		char *c = shmat(id, r + PAGE + 100, SHM_RND);
		CHECK(c == r + PAGE);
		if (c != (void *)-1) {
			CHECK_EQ(c[5], 42);
			/* Occupied: EINVAL without SHM_REMAP. */
			CHECK_ERR(shmat(id, r + 2 * PAGE, 0), EINVAL);
			/* Replacing an ordinary mapping with SHM_REMAP. */
			char *m = mmap(r + 5 * PAGE, PAGE, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			CHECK(m == r + 5 * PAGE);
			CHECK_ERR(shmat(id, r + 5 * PAGE, 0), EINVAL);
			char *d = shmat(id, r + 5 * PAGE, SHM_REMAP);
			CHECK(d == r + 5 * PAGE);
			if (d != (void *)-1) {
				CHECK_EQ(d[5], 42);
				CHECK_EQ(shmdt(d), 0);
			}
			CHECK_EQ(shmdt(c), 0);
		}
	}
	/* SHM_REMAP needs an address. */
	CHECK_ERR(shmat(id, NULL, SHM_REMAP), EINVAL);
	CHECK_ERR(shmat(-1, NULL, 0), EINVAL);
	CHECK_ERR(shmat(id + 32768 * 7, NULL, 0), EINVAL);

	/* SHM_RDONLY: reads work, a write faults. */
	char *ro = shmat(id, NULL, SHM_RDONLY);
	CHECK(ro != (void *)-1);
	if (ro != (void *)-1) {
		CHECK_EQ(ro[5], 42);
		pid_t pid = fork();
		if (pid == 0) {
			*(volatile char *)ro = 1;
			_exit(0);
		}
		int st = t_wait(pid);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
		/* ...and it cannot be made writable. */
		CHECK_ERR(mprotect(ro, PAGE, PROT_READ | PROT_WRITE), EACCES);
		CHECK_EQ(mprotect(ro, PAGE, PROT_NONE), 0);
		CHECK_EQ(mprotect(ro, PAGE, PROT_READ), 0);
		CHECK_EQ(ro[5], 42);
		CHECK_EQ(shmdt(ro), 0);
	}

	/* A segment whose size is not a page multiple maps whole pages. */
	int odd = track(shmget(IPC_PRIVATE, PAGE + 10, 0600));
	char *o = shmat(odd, NULL, 0);
	CHECK(o != (void *)-1);
	if (o != (void *)-1) {
		o[2 * PAGE - 1] = 1;
		CHECK_EQ(o[2 * PAGE - 1], 1);
		CHECK_EQ(shmdt(o), 0);
	}

	/* Every area counts: pieces split by mprotect are attachments too,
	 * and shmdt of the start removes them all. */
	char *s = shmat(id, NULL, 0);
	CHECK(s != (void *)-1);
	if (s != (void *)-1) {
		CHECK_EQ(nattch(id), 2);
		CHECK_EQ(mprotect(s + PAGE, PAGE, PROT_READ), 0);
		CHECK_EQ(nattch(id), 4);
		CHECK_EQ(shmdt(s), 0);
		CHECK_EQ(nattch(id), 1);
		/* munmap of a whole attachment detaches it as well. */
		s = shmat(id, NULL, 0);
		CHECK(s != (void *)-1);
		CHECK_EQ(nattch(id), 2);
		CHECK_EQ(munmap(s, 3 * PAGE), 0);
		CHECK_EQ(nattch(id), 1);
	}
	CHECK_EQ(shmdt(a), 0);
	CHECK_EQ(nattch(id), 0);
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	untrack(id);
	CHECK_EQ(shmctl(odd, IPC_RMID, NULL), 0);
	untrack(odd);
}

/* Segment destroyed only at its last detach. */
static void test_rmid_attached(void)
{
	key_t k = key_n(3);
	int id = track(shmget(k, PAGE, IPC_CREAT | IPC_EXCL | 0600));
	struct shmid_ds ds;

	CHECK(id >= 0);
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	if (p == (void *)-1)
		return;
	strcpy(p, "still here");
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	/* Still there, marked, no longer found by its key. */
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	CHECK(ds.shm_perm.mode & SHM_DEST);
	CHECK_EQ(ds.shm_perm.__key, IPC_PRIVATE);
	CHECK_EQ(ds.shm_nattch, 1);
	CHECK_ERR(shmget(k, 0, 0), ENOENT);
	CHECK(strcmp(p, "still here") == 0);
	/* Linux still lets it be attached. */
	char *q = shmat(id, NULL, SHM_RDONLY);
	CHECK(q != (void *)-1);
	if (q != (void *)-1) {
		CHECK(strcmp(q, "still here") == 0);
		CHECK_EQ(shmdt(q), 0);
	}
	/* A child's copy keeps it alive after the parent detaches. */
	int go[2], ready[2];
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(go[1]);
		t_post(ready[1]);
		t_await(go[0]);
		CHECK(strcmp(p, "still here") == 0);
		CHILD_DONE();
	}
	close(go[0]);
	t_await(ready[0]);
	CHECK_EQ(nattch(id), 2);
	CHECK_EQ(shmdt(p), 0);
	CHECK_EQ(nattch(id), 1);
	t_post(go[1]);
	t_wait_ok(pid);
	/* The child's exit was the last detach. */
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
	untrack(id);
	/* The key is free for a new segment. */
	int id2 = track(shmget(k, PAGE, IPC_CREAT | IPC_EXCL | 0600));
	CHECK(id2 >= 0 && id2 != id);
	char *n = shmat(id2, NULL, 0);
	CHECK(n != (void *)-1);
	if (n != (void *)-1) {
		CHECK_EQ(n[0], 0);
		CHECK_EQ(shmdt(n), 0);
	}
	shmctl(id2, IPC_RMID, NULL);
	untrack(id2);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

/* Attachments are dropped by execve. */
static void test_exec(const char *self)
{
	int id = track(shmget(IPC_PRIVATE, PAGE, 0600));
	int ready[2], go[2];

	CHECK(id >= 0);
	CHECK_EQ(pipe(ready), 0);
	CHECK_EQ(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char a1[16], a2[16];
		char *p = shmat(id, NULL, 0);
		if (p == (void *)-1)
			_exit(2);
		close(ready[0]);
		close(go[1]);
		snprintf(a1, sizeof a1, "%d", ready[1]);
		snprintf(a2, sizeof a2, "%d", go[0]);
		execl(self, self, "exec-child", a1, a2, (char *)NULL);
		_exit(3);
	}
	close(ready[1]);
	close(go[0]);
	CHECK_EQ(t_await(ready[0]), 0);
	CHECK_EQ(nattch(id), 0);
	t_post(go[1]);
	t_wait_ok(pid);
	close(ready[0]);
	close(go[1]);
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	untrack(id);
}

static void test_perms(void)
{
	if (geteuid() != 0) {
		t_note("not root: permission checks skipped");
		return;
	}
	key_t k = key_n(4);
	int id = track(shmget(k, PAGE, IPC_CREAT | IPC_EXCL | 0600));
	int id2 = track(shmget(IPC_PRIVATE, PAGE, 0644));
	int id3 = track(shmget(IPC_PRIVATE, PAGE, 0600));
	struct shmid_ds ds;

	CHECK(id >= 0 && id2 >= 0 && id3 >= 0);
	/* id3 is handed to uid 65534. */
	CHECK_EQ(shmctl(id3, IPC_STAT, &ds), 0);
	ds.shm_perm.uid = 65534;
	CHECK_EQ(shmctl(id3, IPC_SET, &ds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct shmid_ds d;
		CHECK_EQ(drop_root(), 0);
		CHECK_ERR(shmget(k, 0, 0600), EACCES);
		CHECK_ERR(shmget(k, 0, 0400), EACCES);
		/* No permission bits asked for: allowed. */
		CHECK_EQ(shmget(k, 0, 0), id);
		CHECK_ERR(shmat(id, NULL, 0), EACCES);
		CHECK_ERR(shmat(id, NULL, SHM_RDONLY), EACCES);
		CHECK_ERR(shmctl(id, IPC_STAT, &d), EACCES);
		CHECK_ERR(shmctl(id % 32768, SHM_STAT, &d), EACCES);
		CHECK_EQ(shmctl(id % 32768, SHM_STAT_ANY, &d), id);
		CHECK_ERR(shmctl(id, IPC_RMID, NULL), EPERM);
		CHECK_ERR(shmctl(id, IPC_SET, &d), EPERM);
		CHECK_ERR(shmctl(id, SHM_LOCK, NULL), EPERM);
		/* 0644: read-only attach only. */
		CHECK_ERR(shmat(id2, NULL, 0), EACCES);
		char *p = shmat(id2, NULL, SHM_RDONLY);
		CHECK(p != (void *)-1);
		if (p != (void *)-1)
			CHECK_EQ(shmdt(p), 0);
		CHECK_EQ(shmctl(id2, IPC_STAT, &d), 0);
		/* Owner (not creator) 65534: mode 0600 applies to it, and it
		 * may change and remove the segment. */
		p = shmat(id3, NULL, 0);
		CHECK(p != (void *)-1);
		if (p != (void *)-1)
			CHECK_EQ(shmdt(p), 0);
		CHECK_EQ(shmctl(id3, IPC_STAT, &d), 0);
		CHECK_EQ(d.shm_perm.uid, 65534);
		CHECK_EQ(d.shm_perm.cuid, 0);
		d.shm_perm.mode = 0;
		CHECK_EQ(shmctl(id3, IPC_SET, &d), 0);
		CHECK_ERR(shmat(id3, NULL, SHM_RDONLY), EACCES);
		CHECK_EQ(shmctl(id3, IPC_RMID, NULL), 0);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	CHECK_ERR(shmctl(id3, IPC_STAT, &ds), EINVAL);
	untrack(id3);
	/* Root passes every mode check. */
	ds.shm_perm.uid = 0;
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	ds.shm_perm.mode = 0;
	CHECK_EQ(shmctl(id, IPC_SET, &ds), 0);
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	if (p != (void *)-1)
		CHECK_EQ(shmdt(p), 0);
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	untrack(id);
	CHECK_EQ(shmctl(id2, IPC_RMID, NULL), 0);
	untrack(id2);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];

	if (argc == 4 && strcmp(argv[1], "exec-child") == 0) {
		/* After execve: report, then wait to be let go. */
		t_post(atoi(argv[2]));
		t_await(atoi(argv[3]));
		return 0;
	}
	base_key = (key_t)(((getpid() & 0x3fffff) << 8) | 0x10);
	atexit(cleanup);
	t_self_path(argv[0], self, sizeof self);

	test_get_and_stat();
	test_keys();
	test_attach();
	test_rmid_attached();
	test_exec(self);
	test_perms();
	cleanup();
	DONE();
}
