/*
 * What the crash workloads (crashwork.c, netcrash.c) share: the content
 * generator xtask checks against (test_crash.rs `content`/`fill`) and a
 * monotonic clock in seconds.
 */
#ifndef STORAGE_CONTENT_H
#define STORAGE_CONTENT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t splitmix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The bytes [off, off+len) of the content of `seed` (off, len multiples of 8). */
static inline void fill(unsigned char *buf, uint64_t seed, uint64_t off, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = splitmix64((seed << 40) ^ ((off + i) / 8));
		for (int b = 0; b < 8; b++)
			buf[i + b] = (unsigned char)(w >> (8 * b));
	}
}

static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
