/*
 * Argument pools and the call generator.
 *
 * Every call is a pure function of (seed, batch, worker, index): its own
 * PRNG is seeded from those four numbers, and the pools it draws from sit
 * at fixed addresses and are filled the same way in every child.  So any
 * call of any batch can be regenerated on its own, which is what resuming
 * after a killed child and replaying a batch with --trace rely on.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "syscalls.h"

_Static_assert(SC_LAST == FUZZ_SC_LAST, "syscalls.h and fuzz.h disagree");

/* ---- PRNG (splitmix64) -------------------------------------------------- */

struct rng {
	uint64_t s;
};

static uint64_t next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return next(r) % n;
}

#define PICK(r, arr) ((arr)[below(r, sizeof(arr) / sizeof((arr)[0]))])

/* ---- formatting ---------------------------------------------------------- */

size_t fz_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

char *put_str(char *p, char *end, const char *s)
{
	while (*s && p < end)
		*p++ = *s++;
	return p;
}

char *put_hex(char *p, char *end, uint64_t v)
{
	char tmp[16];
	int n = 0;

	p = put_str(p, end, "0x");
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n && p < end)
		*p++ = tmp[--n];
	return p;
}

char *put_udec(char *p, char *end, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && p < end)
		*p++ = tmp[--n];
	return p;
}

char *put_dec(char *p, char *end, int64_t v)
{
	if (v < 0) {
		p = put_str(p, end, "-");
		return put_udec(p, end, (uint64_t)0 - (uint64_t)v);
	}
	return put_udec(p, end, (uint64_t)v);
}

void write_all(int fd, const char *buf, size_t n)
{
	int tries = 0;

	while (n) {
		long w = raw3(1, fd, buf, n);

		if (w > 0) {
			buf += w;
			n -= (size_t)w;
		} else if (w == -4 && ++tries < 1000) { /* EINTR */
			continue;
		} else {
			return;
		}
	}
}

/* ---- pools --------------------------------------------------------------- */

/* Offsets of structures in the STRUCTS area. */
#define S_TIMES 0x0000 /* 16 timespecs, also read as timeval/itimer pairs */
#define N_TIMES 16
#define S_IOV_SMALL 0x0200 /* small iovec arrays, 64 bytes apart */
#define N_IOV_SMALL 6
#define S_POLLFD 0x0400
#define S_SIGSETS 0x0600 /* 4 sigsets, 16 bytes apart */
#define S_FDSET 0x0700 /* 2 fd_sets of 128 bytes */
#define S_SOCKADDR 0x0800
#define S_SIGACTION 0x0900 /* 5 kernel sigactions, 32 bytes apart */
#define S_RLIMIT 0x0a00
#define S_CLONE_ARGS 0x0b00
#define S_SCHED 0x0c00
#define S_STACK_T 0x0d00
#define S_FUTEX 0x0e00
#define S_MISC 0x0f00
#define S_GENERIC 0x1000 /* zeroed scratch for out-structures */
#define S_IOV_BIG 0x3000 /* 1025 iovecs */
#define N_IOV_BIG 1025

static const uint64_t struct_offsets[] = {
	S_TIMES,	S_TIMES + 16,	 S_TIMES + 48,	  S_IOV_SMALL,
	S_POLLFD,	S_SIGSETS,	 S_SIGSETS + 16,  S_SIGSETS + 48,
	S_FDSET,	S_FDSET + 128,	 S_SOCKADDR,	  S_SOCKADDR + 128,
	S_SIGACTION,	S_SIGACTION + 32, S_SIGACTION + 96, S_RLIMIT,
	S_RLIMIT + 16,	S_RLIMIT + 32,	 S_CLONE_ARGS,	  S_SCHED,
	S_SCHED + 64,	S_STACK_T,	 S_STACK_T + 32,  S_FUTEX,
	S_FUTEX + 4,	S_FUTEX + 8,	 S_MISC,	  S_MISC + 64,
	S_MISC + 128,	S_GENERIC,	 S_GENERIC + 0x800,
};

/* Path and string pool, written into the PATHS pages. */
static const char *const path_strings[] = {
	"/tmp/fz/file",
	"/tmp/fz/ro",
	"/tmp/fz/dir",
	"/tmp/fz/dir/sub",
	"/tmp/fz/new",
	"/tmp/fz/link",
	"/tmp/fz/fifo",
	"/tmp/fz/x.sh",
	"/tmp/fz/y",
	"/tmp/fz/sock",
	"/tmp/fz/mnt",
	"/tmp/fz",
	"file",
	"dir",
	"new",
	"link",
	"dir/sub",
	"mnt",
	".",
	"",
	"/tmp/fz/dir/../file",
	"//tmp//fz/./dir/",
	"/tmp/fz/nonexistent/x",
	"/tmp/fz/file/x",
	"/proc/self/maps",
	"/proc/self/status",
	"/proc/meminfo",
	"/proc/self/fd/3",
	"/proc/self/fd/0",
	"/proc/self/cwd",
	"tmpfs",
	"proc",
	"ramfs",
	"devpts",
	"bogus",
	"user.fz",
	"trusted.fz",
	"security.fz",
	"user.",
	"size=1m,nr_inodes=16",
	"mode=777",
};
#define N_PATH_STRINGS (sizeof path_strings / sizeof path_strings[0])
/* Addresses of the strings above plus three built ones: a 256-byte name,
 * a path longer than PATH_MAX, and a string that runs into an unmapped
 * page without a NUL. */
static uint64_t paths[N_PATH_STRINGS + 3];
static int npaths;

static struct fdent fdlist[MAX_FDS];
static int nfds;
static int closed_fd = 200;
static int self_pid_v = 2;

static uint64_t rw_struct(uint64_t off)
{
	return STRUCTS + off;
}

static void put64(uint64_t addr, uint64_t v)
{
	*(volatile uint64_t *)addr = v;
}

static void put32(uint64_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}

static void *map_at(uint64_t addr, size_t len, int prot, int flags)
{
	void *p = mmap((void *)addr, len, prot,
		       flags | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		p = mmap((void *)addr, len, prot, flags | MAP_FIXED, -1, 0);
	return p;
}

/*
 * Maps and fills the zone and the path pages.  Called once by the parent;
 * the children inherit copies.  Returns nothing: a failure shows as
 * EFAULT in the fuzzed calls, which is still a valid campaign.
 */
void pools_init(void)
{
	uint64_t i;
	char *pp;
	size_t at = 0;

	map_at(RW_BUF, RW_LEN, PROT_READ | PROT_WRITE,
	       MAP_PRIVATE | MAP_ANONYMOUS);
	map_at(RO_BUF, RO_LEN, PROT_READ | PROT_WRITE,
	       MAP_PRIVATE | MAP_ANONYMOUS);
	map_at(STRUCTS, STRUCTS_LEN, PROT_READ | PROT_WRITE,
	       MAP_PRIVATE | MAP_ANONYMOUS);
	/* Arena: 32 RW pages, 8 holes, 8 read-only, 8 shared, 8 holes. */
	map_at(ARENA, 32 * 0x1000, PROT_READ | PROT_WRITE,
	       MAP_PRIVATE | MAP_ANONYMOUS);
	map_at(ARENA + 40 * 0x1000, 8 * 0x1000, PROT_READ,
	       MAP_PRIVATE | MAP_ANONYMOUS);
	map_at(ARENA + 48 * 0x1000, 8 * 0x1000, PROT_READ | PROT_WRITE,
	       MAP_SHARED | MAP_ANONYMOUS);
	map_at(PATHS, PATHS_LEN, PROT_READ | PROT_WRITE,
	       MAP_PRIVATE | MAP_ANONYMOUS);

	/* Buffers: mostly zero (so that sigsets and flag words read from
	 * them are tame), with a little structure. */
	for (i = 0; i < RW_LEN; i += 64)
		put32(RW_BUF + i, (uint32_t)(i / 64));
	for (i = 0; i < RO_LEN; i += 8)
		put64(RO_BUF + i, i * 0x0101010101010101ULL);
	for (i = 0; i < 32; i++)
		put64(ARENA + i * 0x1000, i);

	/* Times: zero, 1 us, just below a second, an invalid nsec, negative,
	 * one second, huge, -1 nsec, 50 ms, 2 s, both -1, 2^62 s, 10 ms,
	 * then pairs usable as itimerspec {interval, value}. */
	{
		static const int64_t t[N_TIMES][2] = {
			{ 0, 0 },
			{ 0, 1000 },
			{ 0, 999999999 },
			{ 0, 1000000000 },
			{ -1, 0 },
			{ 1, 0 },
			{ INT64_MAX, 999999999 },
			{ 0, -1 },
			{ 0, 50000000 },
			{ 2, 0 },
			{ -1, -1 },
			{ 1LL << 62, 0 },
			{ 0, 10000000 },
			{ 0, 1 },
			{ 0, 1 },
			{ 0, 0 },
		};
		for (i = 0; i < N_TIMES; i++) {
			put64(rw_struct(S_TIMES + i * 16), (uint64_t)t[i][0]);
			put64(rw_struct(S_TIMES + i * 16 + 8),
			      (uint64_t)t[i][1]);
		}
	}

	/* Small iovec arrays (4 entries each, 64 bytes apart). */
	{
		static const uint64_t iov[N_IOV_SMALL][4][2] = {
			{ { RW_BUF, 16 },
			  { RW_BUF + 0x100, 4096 },
			  { RO_BUF, 64 },
			  { RW_BUF + RW_LEN - 16, 32 } },
			{ { HOLE, 8 }, { RW_BUF, 8 }, { 0, 0 }, { 0, 0 } },
			{ { RW_BUF, ~0UL }, { RW_BUF, 1 }, { 0, 0 }, { 0, 0 } },
			{ { 0, 0 },
			  { 0xffff800000000000UL, 16 },
			  { RW_BUF, 1 },
			  { 0, 1 } },
			{ { RW_BUF, 0x7ffff000 },
			  { RW_BUF, 0x7ffff000 },
			  { RW_BUF, 0x7ffff000 },
			  { RW_BUF, 0x7ffff000 } },
			{ { USER_END - 8, 0x1020 },
			  { USER_END - 0x1000, 0x1000 },
			  { RW_BUF, 8 },
			  { USER_END, 8 } },
		};
		for (i = 0; i < N_IOV_SMALL; i++) {
			int j;

			for (j = 0; j < 4; j++) {
				uint64_t o = S_IOV_SMALL + i * 64 + j * 16;

				put64(rw_struct(o), iov[i][j][0]);
				put64(rw_struct(o + 8), iov[i][j][1]);
			}
		}
	}
	for (i = 0; i < N_IOV_BIG; i++) {
		put64(rw_struct(S_IOV_BIG + i * 16), RW_BUF + (i * 8) % 0x3000);
		put64(rw_struct(S_IOV_BIG + i * 16 + 8), 8);
	}

	/* Sigsets: empty, full, {SIGUSR1}, {SIGALRM}. */
	put64(rw_struct(S_SIGSETS + 16), ~0UL);
	put64(rw_struct(S_SIGSETS + 32), 1UL << (10 - 1));
	put64(rw_struct(S_SIGSETS + 48), 1UL << (14 - 1));
	/* fd_set 2: every bit. */
	for (i = 0; i < 128; i += 8)
		put64(rw_struct(S_FDSET + 128 + i), ~0UL);
	/* sockaddr_un /tmp/fz/sock, sockaddr_in 127.0.0.1:1234. */
	{
		char *su = (char *)rw_struct(S_SOCKADDR);
		char *sin = (char *)rw_struct(S_SOCKADDR + 128);

		su[0] = 1; /* AF_UNIX */
		memcpy(su + 2, "/tmp/fz/sock", 13);
		sin[0] = 2; /* AF_INET */
		sin[2] = 0x04;
		sin[3] = 0xd2;
		sin[4] = 127;
		sin[7] = 1;
	}
	/* Kernel sigactions {handler, flags, restorer, mask}: the handler
	 * and restorer are filled in per child (pools_child_fill). */
	put64(rw_struct(S_SIGACTION + 32), 1); /* SIG_IGN */
	put64(rw_struct(S_SIGACTION + 96), 0xdead0000UL);
	put64(rw_struct(S_SIGACTION + 96 + 8), 0x04000000UL); /* SA_RESTORER */
	put64(rw_struct(S_SIGACTION + 96 + 16), 0xdead1000UL);
	/* rlimits: {0,0}, {inf,inf}, {1,0}, {1024,4096}. */
	put64(rw_struct(S_RLIMIT + 16), ~0UL);
	put64(rw_struct(S_RLIMIT + 24), ~0UL);
	put64(rw_struct(S_RLIMIT + 32), 1);
	put64(rw_struct(S_RLIMIT + 48), 1024);
	put64(rw_struct(S_RLIMIT + 56), 4096);
	/* clone_args: exit_signal SIGCHLD, nothing else. */
	put64(rw_struct(S_CLONE_ARGS + 32), 17);
	/* sched_param 0 and 99; sched_attr {size 48, SCHED_FIFO, prio 1}. */
	put32(rw_struct(S_SCHED + 16), 99);
	put32(rw_struct(S_SCHED + 64), 48);
	put32(rw_struct(S_SCHED + 64 + 4), 1);
	put32(rw_struct(S_SCHED + 64 + 24), 1);
	/* stack_t: {arena, 0, 8192}, {bad, SS_DISABLE, 0}. */
	put64(rw_struct(S_STACK_T), ARENA);
	put64(rw_struct(S_STACK_T + 16), 8192);
	put64(rw_struct(S_STACK_T + 32), 0xdead0000UL);
	put32(rw_struct(S_STACK_T + 32 + 8), 2);
	/* futex words 0, 1, -1 */
	put32(rw_struct(S_FUTEX + 4), 1);
	put32(rw_struct(S_FUTEX + 8), ~0U);
	/* misc: msgbuf {1, "fz"}, sembuf[2] {0,+1,0},{0,-1,IPC_NOWAIT},
	 * epoll_event {EPOLLIN}. */
	put64(rw_struct(S_MISC), 1);
	put32(rw_struct(S_MISC + 8), 0x7a66);
	put32(rw_struct(S_MISC + 64), 0x00010000);
	put32(rw_struct(S_MISC + 64 + 6), 0x0800ffff);
	put32(rw_struct(S_MISC + 128), 1);

	/* Paths: NUL-separated strings from the start of the first page. */
	pp = (char *)PATHS;
	for (i = 0; i < N_PATH_STRINGS; i++) {
		size_t n = fz_strlen(path_strings[i]) + 1;

		memcpy(pp + at, path_strings[i], n);
		paths[npaths++] = PATHS + at;
		at += n;
	}
	/* A 256-byte component (NAME_MAX + 1). */
	at = (at + 7) & ~7UL;
	paths[npaths++] = PATHS + at;
	memcpy(pp + at, "/tmp/fz/", 8);
	memset(pp + at + 8, 'n', 256);
	at += 8 + 256 + 1;
	/* The rest of the two pages: "a/a/a/..." with no NUL at all, so a
	 * path that starts here is longer than PATH_MAX or runs into the
	 * unmapped page after PATHS. */
	paths[npaths++] = PATHS + at;
	paths[npaths++] = PATHS + PATHS_LEN - 24;
	for (i = at; i < PATHS_LEN; i++)
		pp[i] = (i & 1) ? '/' : 'a';
	mprotect((void *)PATHS, PATHS_LEN, PROT_READ);
	mprotect((void *)RO_BUF, RO_LEN, PROT_READ);
}

void pools_child_fill(const struct fdent *fds, int n, int self_pid)
{
	int i;
	uint64_t pfd = rw_struct(S_POLLFD);

	nfds = n < MAX_FDS ? n : MAX_FDS;
	for (i = 0; i < nfds; i++)
		fdlist[i] = fds[i];
	self_pid_v = self_pid;
	for (i = 0; i < nfds; i++)
		if (fdlist[i].name && !strcmp(fdlist[i].name, "closed"))
			closed_fd = fdlist[i].fd;
	/* pollfds: every descriptor, alternating POLLIN and POLLOUT, then a
	 * bad one. */
	for (i = 0; i < nfds && i < 30; i++) {
		put32(pfd + (uint64_t)i * 8, (uint32_t)fdlist[i].fd);
		put32(pfd + (uint64_t)i * 8 + 4, (i & 1) ? 0x4 : 0x1);
	}
	put32(pfd + (uint64_t)i * 8, 99999);
	put32(pfd + (uint64_t)i * 8 + 4, 0x1);
	/* fd_set 1: our descriptors. */
	for (i = 0; i < nfds; i++) {
		int fd = fdlist[i].fd;

		if (fd >= 0 && fd < 1024) {
			uint64_t w = rw_struct(S_FDSET + (uint64_t)(fd / 64) * 8);

			put64(w, *(volatile uint64_t *)w | (1UL << (fd % 64)));
		}
	}
	/* sigaction 0: our handler with SA_SIGINFO|SA_RESTORER; 4: the same
	 * with SA_ONSTACK|SA_NODEFER|SA_RESETHAND. */
	put64(rw_struct(S_SIGACTION), (uint64_t)fz_noop_handler);
	put64(rw_struct(S_SIGACTION + 8), 0x04000004UL);
	put64(rw_struct(S_SIGACTION + 16), (uint64_t)fz_restorer);
	put64(rw_struct(S_SIGACTION + 128), (uint64_t)fz_noop_handler);
	put64(rw_struct(S_SIGACTION + 128 + 8), 0x4c000000UL);
	put64(rw_struct(S_SIGACTION + 128 + 16), (uint64_t)fz_restorer);
}

/* ---- generators ---------------------------------------------------------- */

static uint64_t g_int(struct rng *r, const char **l)
{
	uint64_t v = next(r), u = below(r, 100);

	*l = 0;
	/* Flags of 0 and small values are valid for most calls: without a
	 * bias most calls would stop at their EINVAL check. */
	if (u < 20)
		return 0;
	if (u < 30)
		return below(r, 4);
	switch (below(r, 14)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return ~0UL;
	case 3:
		return v % 16;
	case 4:
		return 1UL << (v % 64);
	case 5:
		return (uint32_t)v;
	case 6:
		return v;
	case 7:
		return 0x7fffffff;
	case 8:
		return 0x80000000UL;
	case 9:
		return 0xffffffffUL;
	case 10:
		return v & next(r) & next(r);
	case 11:
		return v % 256;
	case 12:
		return (1UL << (v % 32)) - 1;
	default:
		return (uint64_t)-(int64_t)(v % 8);
	}
}

static uint64_t g_fd(struct rng *r, const char **l)
{
	uint64_t u = below(r, 100);
	static const uint64_t odd[] = {
		~0UL,	     (uint64_t)-100, 0, 1, 2, 1 << 20, 0x7fffffff,
		0xffffffffUL, 65535,	     4096,
	};

	if (u < 72 && nfds) {
		const struct fdent *e = &fdlist[below(r, (uint64_t)nfds)];

		*l = e->name;
		if (below(r, 40) == 0) {
			*l = "fd+high";
			return (1UL << 32) | (uint32_t)e->fd;
		}
		return (uint64_t)e->fd;
	}
	if (u < 80) {
		*l = "closed";
		return (uint64_t)closed_fd;
	}
	if (u < 90) {
		*l = "fd:small";
		return below(r, 64);
	}
	*l = "fd:odd";
	return PICK(r, odd);
}

static uint64_t g_ptr(struct rng *r, const char **l)
{
	uint64_t u = below(r, 100);
	static const uint64_t edge[] = { 1, 8, 16, 64, 4096 };
	static const struct {
		uint64_t v;
		const char *l;
	} special[] = {
		{ 0, "null" },
		{ 1, "one" },
		{ 0xfff, "low" },
		{ 0x1000, "low" },
		{ HOLE, "hole" },
		{ HOLE + 0x800, "hole" },
		{ PATHS, "paths" },
		{ USER_END - 8, "eous-8" },
		{ USER_END - 16, "eous-16" },
		{ USER_END - 0x1000, "eous-page" },
		{ USER_END - 0x1008, "eous-page-8" },
		{ USER_END, "eous" },
		{ USER_END + 0xfff, "eous+fff" },
		{ 0x800000000000UL, "noncanon-lo" },
		{ 0xffff800000000000UL, "kernel" },
		{ 0xffff888000000000UL, "kernel-dmap" },
		{ 0xffffffff80000000UL, "kernel-text" },
		{ 0xfffffffffffff000UL, "kernel-top" },
		{ ~0UL, "all-ones" },
		{ 0x8000000000000000UL, "noncanon" },
		{ 0xdead000000000000UL, "noncanon" },
		{ RW_BUF + 1, "rw+1" },
		{ RW_BUF + 3, "rw+3" },
	};

	if (u < 33) {
		*l = "rw";
		return RW_BUF + (below(r, RW_LEN) & ~7UL);
	}
	if (u < 41) {
		*l = "rw-end";
		return RW_BUF + RW_LEN - PICK(r, edge);
	}
	if (u < 49) {
		*l = "ro";
		return RO_BUF + (below(r, RO_LEN) & ~7UL);
	}
	if (u < 51) {
		*l = "ro-end";
		return RO_BUF + RO_LEN - PICK(r, edge);
	}
	if (u < 66) {
		*l = "struct";
		return STRUCTS + PICK(r, struct_offsets);
	}
	if (u < 72) {
		*l = "arena";
		return ARENA + below(r, ARENA_PAGES) * 0x1000 +
		       (below(r, 4) ? 0 : below(r, 4096) & ~7UL);
	}
	if (u < 97) {
		uint64_t k = below(r, sizeof special / sizeof special[0]);

		*l = special[k].l;
		return special[k].v;
	}
	*l = "rand";
	return next(r);
}

static uint64_t g_path(struct rng *r, const char **l)
{
	if (below(r, 100) < 78) {
		*l = "path";
		return paths[below(r, (uint64_t)npaths)];
	}
	return g_ptr(r, l);
}

static uint64_t g_len(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		0,	1,	2,	  7,	    8,	       16,
		24,	64,	100,	  128,	    255,       256,
		4095,	4096,	4097,	  8192,	    0x1020,    16384,
		65536,	1 << 20, 1UL << 31, 1UL << 32, 1UL << 40, ~0UL,
		~0UL - 1, 0x7fffffffffffffffUL, 0x7ffff000, (uint64_t)-4096,
	};

	*l = 0;
	switch (below(r, 8)) {
	case 0:
		return below(r, 0x10000);
	case 1:
		return below(r, 64);
	default:
		return PICK(r, v);
	}
}

static uint64_t g_off(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		0,	   1,	       100,	  4095,	     4096,
		8192,	   ~0UL,       (uint64_t)-4096, 1UL << 31, 1UL << 32,
		1UL << 40, 1UL << 62, 0x7fffffffffffffffUL, 0x8000000000000000UL,
		0x7fffffffffffefffUL,
	};

	*l = 0;
	switch (below(r, 6)) {
	case 0:
		return below(r, 0x10000);
	case 1:
		return next(r);
	default:
		return PICK(r, v);
	}
}

static uint64_t g_mode(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		0,	   0644,     0777,    07777,   0100644, 040755, 010600,
		020666,	   060666,   0140777, 01777,   04755,	0xffffffffUL,
	};

	*l = 0;
	if (below(r, 4) == 0)
		return below(r, 4) ? (next(r) & 0xffff) : next(r);
	return PICK(r, v);
}

static uint64_t g_pid(struct rng *r, const char **l)
{
	*l = 0;
	switch (below(r, 12)) {
	case 0:
		return 0;
	case 1:
		return ~0UL;
	case 2:
	case 3:
	case 4:
		*l = "self";
		return (uint64_t)self_pid_v;
	case 5:
		*l = "-self";
		return (uint64_t)-(int64_t)self_pid_v;
	case 6:
		return 0x7fffffff;
	case 7:
		return 0xffffffff80000000UL;
	case 8:
		return below(r, 10);
	case 9:
		return (uint32_t)next(r);
	case 10:
		*l = "pid:dead";
		return 0x3ffff;
	default:
		return next(r);
	}
}

static uint64_t g_sig(struct rng *r, const char **l)
{
	static const uint64_t v[] = { 0, ~0UL, 65, 128, 9, 19, 14, 17, 32, 33, 64 };

	*l = 0;
	if (below(r, 10) < 6)
		return below(r, 65);
	if (below(r, 8) == 0)
		return next(r);
	return PICK(r, v);
}

static uint64_t g_uid(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		0, 1, 1000, 65534, 0xffffffffUL, 0xfffffffeUL,
	};

	*l = 0;
	/* Root campaigns would otherwise drop root early in a batch. */
	if (below(r, 3) == 0)
		return 0;
	switch (below(r, 6)) {
	case 0:
		return cfg.uid >= 0 ? (uint64_t)cfg.uid : 1000;
	case 1:
		return below(r, 2000);
	case 2:
		return next(r);
	default:
		return PICK(r, v);
	}
}

static uint64_t g_addr(struct rng *r, const char **l)
{
	static const struct {
		uint64_t v;
		const char *l;
	} special[] = {
		{ RW_BUF, "rw" },
		{ RO_BUF, "ro" },
		{ HOLE, "hole" },
		{ STRUCTS, "structs" },
		{ ZONE, "zone" },
		{ ZONE_END, "zone-end" },
		{ 0, "null" },
		{ 0x1000, "low" },
		{ 0x10000, "mmap_min_addr" },
		{ 0x100000000UL, "4g" },
		{ USER_END - 0x1000, "eous-page" },
		{ USER_END - 0x2000, "eous-2pages" },
		{ USER_END, "eous" },
		{ 0x7fffffff0000UL, "eous-64k" },
		{ 0xffff800000000000UL, "kernel" },
		{ 0xffffffff80000000UL, "kernel-text" },
		{ 0x8000000000000000UL, "noncanon" },
	};
	uint64_t u = below(r, 100);

	if (u < 45) {
		*l = "arena";
		return ARENA + below(r, ARENA_PAGES) * 0x1000;
	}
	if (u < 52) {
		*l = "arena+";
		return ARENA + below(r, ARENA_PAGES * 0x1000);
	}
	if (u < 90) {
		uint64_t k = below(r, sizeof special / sizeof special[0]);

		*l = special[k].l;
		return special[k].v;
	}
	*l = "rand";
	return below(r, 2) ? (next(r) & 0x7ffffffff000UL) : next(r);
}

static uint64_t g_time(struct rng *r, const char **l)
{
	if (below(r, 100) < 80) {
		*l = "time";
		return STRUCTS + S_TIMES + below(r, N_TIMES) * 16;
	}
	return g_ptr(r, l);
}

static uint64_t g_iov(struct rng *r, const char **l)
{
	uint64_t u = below(r, 100);

	if (u < 70) {
		*l = "iov";
		return STRUCTS + S_IOV_SMALL + below(r, N_IOV_SMALL) * 64;
	}
	if (u < 80) {
		*l = "iov:big";
		return STRUCTS + S_IOV_BIG;
	}
	return g_ptr(r, l);
}

static uint64_t g_num(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 8, 16, 64, 1024, 1025, 65536, ~0UL, 0x7fffffff,
	};

	*l = 0;
	switch (below(r, 5)) {
	case 0:
		return below(r, 32);
	case 1:
		return (uint32_t)next(r);
	default:
		return PICK(r, v);
	}
}

static uint64_t g_which(struct rng *r, const char **l)
{
	static const uint64_t v[] = { ~0UL, 100, 0x7fffffff, 0x80000000UL };

	*l = 0;
	switch (below(r, 10)) {
	case 0:
		return below(r, 64);
	case 1:
		return below(r, 2) ? next(r) : PICK(r, v);
	default:
		return below(r, 8);
	}
}

static uint64_t g_ioctl(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		0x5401,	    0x5402,	0x5403,	    0x5404,	0x5405,
		0x5406,	    0x5409,	0x540a,	    0x540b,	0x540c,
		0x540d,	    0x540e,	0x540f,	    0x5410,	0x5411,
		0x5412,	    0x5413,	0x5414,	    0x5415,	0x541b,
		0x541c,	    0x541d,	0x5420,	    0x5421,	0x5422,
		0x5423,	    0x5424,	0x5429,	    0x80045430, 0x40045431,
		0x5441,	    0x40045436, 0x5437,	    0x5450,	0x5451,
		0x5452,	    0x5460,	1,	    2,		0x80086601,
		0x40086602, 0x8901,	0x8902,	    0x8903,	0x8912,
		0x80081272, 0x80045200, 0x40049409, 0xc020660b, 0x5456,
	};

	*l = 0;
	switch (below(r, 10)) {
	case 0:
		return (uint32_t)next(r);
	case 1:
		return next(r);
	default:
		return PICK(r, v);
	}
}

static uint64_t g_fcntl(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		1024, 1025, 1026, 1030, 1031, 1032, 1033, 1034, 36, 37, 38,
	};

	*l = 0;
	switch (below(r, 8)) {
	case 0:
		return next(r);
	case 1:
	case 2:
		return PICK(r, v);
	default:
		return below(r, 17);
	}
}

static uint64_t g_clock(struct rng *r, const char **l)
{
	static const uint64_t v[] = {
		~0UL, 12, 16, 0x7fffffff, 0xffffffff80000000UL,
	};

	*l = 0;
	switch (below(r, 10)) {
	case 0:
		*l = "cpuclock:self";
		return (uint64_t)(((int64_t)~self_pid_v) * 8 + 2);
	case 1:
		return below(r, 2) ? next(r) : PICK(r, v);
	default:
		return below(r, 12);
	}
}

static uint64_t g_mmflags(struct rng *r, const char **l)
{
	static const uint64_t base[] = { 0x22, 0x22, 0x22, 0x21, 1, 2, 3, 0 };
	static const uint64_t bits[] = {
		0x10,	 0x20,	  0x100,   0x800,    0x1000,
		0x2000,	 0x4000,  0x8000,  0x10000,  0x20000,
		0x40000, 0x80000, 0x100000, 0x4000000,
	};
	uint64_t v;
	unsigned i;

	*l = 0;
	if (below(r, 10) == 0)
		return (uint32_t)next(r);
	v = PICK(r, base);
	for (i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (below(r, 10) == 0)
			v |= bits[i];
	return v;
}

/* A size argument that must be exactly `want` (sigsetsize, robust list
 * head): mostly right, sometimes any length. */
static uint64_t g_exact(struct rng *r, uint64_t want, const char **l)
{
	*l = 0;
	return below(r, 5) ? want : g_len(r, l);
}

static uint64_t g_kind(struct rng *r, char kind, const char **l);

static uint64_t g_any(struct rng *r, const char **l)
{
	static const char kinds[] = "iiffpplloksuawn";

	return g_kind(r, kinds[below(r, sizeof kinds - 1)], l);
}

static uint64_t g_kind(struct rng *r, char kind, const char **l)
{
	switch (kind) {
	case 'i':
		return g_int(r, l);
	case 'f':
		return g_fd(r, l);
	case 'p':
		return g_ptr(r, l);
	case 's':
		return g_path(r, l);
	case 'l':
		return g_len(r, l);
	case 'o':
		return g_off(r, l);
	case 'm':
		return g_mode(r, l);
	case 'k':
		return g_pid(r, l);
	case 'S':
		return g_sig(r, l);
	case 'u':
		return g_uid(r, l);
	case 'a':
		return g_addr(r, l);
	case 't':
		return g_time(r, l);
	case 'v':
		return g_iov(r, l);
	case 'n':
		return g_num(r, l);
	case 'c':
		return g_ioctl(r, l);
	case 'F':
		return g_fcntl(r, l);
	case 'C':
		return g_clock(r, l);
	case 'w':
		return g_which(r, l);
	case 'q':
		return g_mmflags(r, l);
	case 'Z':
		return g_exact(r, 8, l);
	case 'r':
		return g_exact(r, 24, l);
	default:
		return g_any(r, l);
	}
}

/* Assigned numbers, and those the kernel implements (a probe at start
 * found they do not answer ENOSYS), to draw most calls from. */
static uint16_t assigned[SC_LAST + 1];
static int nassigned;
static uint16_t implemented[SC_LAST + 1];
static int nimplemented;

static void init_assigned(void)
{
	int i;

	for (i = 0; i <= SC_LAST; i++)
		if (sc_table[i].name)
			assigned[nassigned++] = (uint16_t)i;
}

void gen_set_implemented(const uint64_t *bits)
{
	int i;

	nimplemented = 0;
	for (i = 0; i <= SC_LAST; i++)
		if (bits[i / 64] & (1UL << (i % 64)))
			implemented[nimplemented++] = (uint16_t)i;
}

static uint64_t g_nr(struct rng *r)
{
	static const uint64_t odd[] = {
		1000,	     0x40000000UL, 0x40000001UL, ~0UL,
		0x7fffffff,  0x80000000UL, 0x8000000000000000UL,
	};
	uint64_t u = below(r, 100);

	if (!nassigned)
		init_assigned();
	/* Mostly what the kernel implements; ENOSYS costs the kernel one
	 * table lookup and tests nothing else. */
	if (u < 75 && nimplemented)
		return implemented[below(r, (uint64_t)nimplemented)];
	if (u < 93)
		return assigned[below(r, (uint64_t)nassigned)];
	if (u < 96)
		return below(r, 600);
	if (u < 98)
		/* Upper bits set: Linux only looks at the low 32. */
		return (below(r, 4) + 1) << 32 | below(r, SC_LAST + 1);
	return PICK(r, odd);
}

/* --nrs LO-HI (triage): only numbers in this range. */
static uint64_t nr_lo, nr_hi = ~0UL;

void gen_limit_nrs(uint64_t lo, uint64_t hi)
{
	nr_lo = lo;
	nr_hi = hi;
}

void gen_call(struct call *c, struct labels *lab, uint64_t batch, int thread,
	      uint64_t idx)
{
	struct rng r;
	const char *sig = "";
	size_t nsig, j;
	int k;

	r.s = cfg.seed * 0xd1342543de82ef95ULL ^ batch * 0x9e3779b97f4a7c15ULL ^
	      (uint64_t)thread * 0xc2b2ae3d27d4eb4fULL ^
	      idx * 0x165667b19e3779f9ULL;
	for (k = 0; k < 3; k++)
		next(&r);
	c->nr = g_nr(&r);
	while (c->nr < nr_lo || c->nr > nr_hi)
		c->nr = nr_lo + below(&r, nr_hi - nr_lo + 1);
	if (c->nr <= SC_LAST && sc_table[c->nr].name)
		sig = sc_table[c->nr].sig;
	nsig = fz_strlen(sig);
	for (j = 0; j < 6; j++) {
		const char *l = 0;
		char kind = j < nsig ? sig[j] : 'x';

		if (j >= nsig && below(&r, 2)) {
			c->a[j] = 0;
		} else {
			if (below(&r, 100) < 8)
				kind = 'x';
			c->a[j] = g_kind(&r, kind, &l);
		}
		if (lab)
			lab->l[j] = l;
	}
}

int sc_known(int nr)
{
	return nr >= 0 && nr <= SC_LAST && sc_table[nr].name;
}

const char *sc_name(uint64_t nr, char *tmp)
{
	char *p;

	if (nr <= SC_LAST && sc_table[nr].name)
		return sc_table[nr].name;
	p = put_str(tmp, tmp + 8, "nr_");
	p = put_hex(p, tmp + 30, nr);
	*p = 0;
	return tmp;
}

/* Whether the NUL-terminated string at `a` is one of our path strings
 * (safe to print: it lies in the PATHS pages). */
static int is_path(uint64_t a)
{
	int i;

	for (i = 0; i < npaths - 2; i++)
		if (paths[i] == a)
			return 1;
	return 0;
}

int format_call(char *out, size_t cap, const struct call *c,
		const struct labels *lab)
{
	char tmp[32];
	char *p = out, *end = out + cap - 1;
	int j, nargs = 6;
	const char *sig = "";

	if (c->nr <= SC_LAST && sc_table[c->nr].name)
		sig = sc_table[c->nr].sig;
	/* Show the arguments the call takes, and any further non-zero ones. */
	while (nargs > (int)fz_strlen(sig) && c->a[nargs - 1] == 0)
		nargs--;
	p = put_str(p, end, sc_name(c->nr, tmp));
	p = put_str(p, end, "(");
	for (j = 0; j < nargs; j++) {
		if (j)
			p = put_str(p, end, ", ");
		p = put_hex(p, end, c->a[j]);
		if (lab && lab->l[j]) {
			p = put_str(p, end, "<");
			p = put_str(p, end, lab->l[j]);
			p = put_str(p, end, ">");
		}
		if (lab && lab->l[j] && !strcmp(lab->l[j], "path") &&
		    is_path(c->a[j])) {
			p = put_str(p, end, "\"");
			p = put_str(p, end, (const char *)c->a[j]);
			p = put_str(p, end, "\"");
		}
	}
	p = put_str(p, end, ")");
	*p = 0;
	return (int)(p - out);
}
