/* The random-page test, on the capture's hot path beside the zero test:
 * which kept pages LZ4 is not asked to search. Its own header so the unit
 * tests can reach it (tests/unit/test_entropy.c). */
#ifndef KDI_ENTROPY_H
#define KDI_ENTROPY_H

#include <stddef.h>
#include <stdint.h>

/* Of 256 bytes sampled across a page, how many distinct values make it
 * look random. Uniformly random bytes give 162 on average (256 draws of
 * 256 values), rarely under 150; text gives under 100, and a page of
 * structures, pointers or code far fewer, their zero and high bytes
 * repeating. A page three quarters random and a quarter zero gives about
 * 134, and is searched. */
#define RANDOM_DISTINCT 150u
/* ... and how often one value may come back: random bytes rarely repeat
 * one 8 times in 256 draws, but a run of one byte (zeros, 0xff fill) of
 * 128 bytes or more, which LZ4 would shorten, gives 8 of them. */
#define RANDOM_MAX_REPEAT 8u

/* 1 when the page's bytes sample as random: compressed, encrypted or
 * random data, which LZ4 searches through for nothing (on a real 1.5 GiB
 * guest at level 1, half the kept pages: LZ4 stored 58436 of 114800 raw,
 * at 1.9 us each). Two samples per 1/128th of the page, the second off
 * the first's alignment, so that a repeating layout is not sampled at one
 * phase only. ps is a power of two, at least 4 KiB. */
static inline int page_looks_random(const uint8_t *p, size_t ps)
{
	uint16_t seen[256] = { 0 };
	unsigned distinct = 0, top = 0;
	size_t step = ps / 128, off = ps / 256 + 1;

	for (size_t i = 0; i < ps; i += step) {
		unsigned a = ++seen[p[i]], b = ++seen[p[i + off]];
		distinct += (a == 1) + (b == 1);
		top = a > top ? a : top;
		top = b > top ? b : top;
		if (top >= RANDOM_MAX_REPEAT)
			return 0;	/* most kernel pages: their zeros, early */
	}
	return distinct >= RANDOM_DISTINCT;
}

#endif
