/* select on sets that span several words: ready descriptors found in any
 * word, bits at or above nfds (in the same byte and word, and further)
 * ignored and cleared in the result, only whole longs up to nfds written
 * back (the bytes after them untouched), and a set larger than
 * FD_SETSIZE (a descriptor above 1024). */
#include "next.h"
#include <sys/resource.h>
#include <sys/select.h>

#define NPIPES 100

int main(void)
{
	int rd[NPIPES], wr[NPIPES];
	unsigned long set[64];
	unsigned char *bytes = (unsigned char *)set;
	struct timeval tv;
	int i, maxfd = 0, p[2];

	for (i = 0; i < NPIPES; i++) {
		CHECK_EQ(pipe(p), 0);
		rd[i] = p[0];
		wr[i] = p[1];
		if (p[1] > maxfd)
			maxfd = p[1];
	}
	/* Data in pipes 3, 50 and 99 only. */
	CHECK_EQ(write(wr[3], "x", 1), 1);
	CHECK_EQ(write(wr[50], "x", 1), 1);
	CHECK_EQ(write(wr[99], "x", 1), 1);
	memset(set, 0, sizeof set);
	for (i = 0; i < NPIPES; i++)
		set[rd[i] / 64] |= 1UL << (rd[i] % 64);
	tv.tv_sec = tv.tv_usec = 0;
	CHECK_EQ(syscall(SYS_select, maxfd + 1, set, NULL, NULL, &tv), 3);
	for (i = 0; i < NPIPES; i++) {
		int on = (set[rd[i] / 64] >> (rd[i] % 64)) & 1;
		CHECK_EQ(on, i == 3 || i == 50 || i == 99);
	}

	/* nfds = rd[3] + 1: bits above it (in its byte, its word and later
	 * words) are not looked at and come back clear; the bytes after the
	 * last long of nfds bits keep what they held. */
	CHECK(rd[3] + 1 < 64);
	int nfds = rd[3] + 1;
	int written = (nfds + 63) / 64 * 8;
	/* Ready pipes 50 and 99 sit above nfds, in the bytes not written. */
	memset(set, 0xa5, sizeof set);
	set[0] = 1UL << rd[3] | 1UL << (rd[3] + 1) | 1UL << 63;
	set[rd[50] / 64] |= 1UL << (rd[50] % 64);
	set[rd[99] / 64] |= 1UL << (rd[99] % 64);
	unsigned long before[64];
	memcpy(before, set, sizeof set);
	CHECK_EQ(syscall(SYS_select, nfds, set, NULL, NULL, &tv), 1);
	for (i = 0; i < written * 8; i++) {
		int on = (bytes[i / 8] >> (i % 8)) & 1;
		CHECK_EQ(on, i == rd[3]);
	}
	CHECK(memcmp(bytes + written, (unsigned char *)before + written,
		     sizeof set - (size_t)written) == 0);

	/* A descriptor above FD_SETSIZE, if the limit allows one. */
	struct rlimit rl;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max > 1200) {
		rl.rlim_cur = 1200;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
		CHECK_EQ(dup2(rd[50], 1100), 1100);
		CHECK_EQ(dup2(rd[0], 1101), 1101);
		memset(set, 0, sizeof set);
		set[1100 / 64] |= 1UL << (1100 % 64);
		set[1101 / 64] |= 1UL << (1101 % 64);
		set[rd[0] / 64] |= 1UL << (rd[0] % 64);
		CHECK_EQ(syscall(SYS_select, 1102, set, NULL, NULL, &tv), 1);
		CHECK(set[1100 / 64] & (1UL << (1100 % 64)));
		CHECK(!(set[1101 / 64] & (1UL << (1101 % 64))));
		CHECK(!(set[rd[0] / 64] & (1UL << (rd[0] % 64))));
		/* A closed descriptor in the large set: EBADF. */
		close(1101);
		set[1101 / 64] |= 1UL << (1101 % 64);
		CHECK_ERR(syscall(SYS_select, 1102, set, NULL, NULL, &tv), EBADF);
		close(1100);
	} else {
		t_note("RLIMIT_NOFILE hard limit %lu: no descriptor above 1024",
		       (unsigned long)rl.rlim_max);
	}
	for (i = 0; i < NPIPES; i++) {
		close(rd[i]);
		close(wr[i]);
	}
	DONE();
}
