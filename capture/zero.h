/* The zero-page test, on the capture's hot path: every kept page at level
 * 1 and up goes through it, so it is inline, and a header of its own so
 * the unit tests can reach it (tests/unit/test_zero.c). */
#ifndef KDI_ZERO_H
#define KDI_ZERO_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the n bytes at b are all zero, else 0. b is 8-byte aligned (a
 * page in a mapping, the stage or scratch) and n a multiple of 64 (a page
 * size); it reads nothing past b + n. */
static inline int page_is_zero(const uint8_t *b, size_t n)
{
	const uint64_t *w = (const uint64_t *)b;
	uint64_t acc = 0;

	/* OR 8 words at a time: branch-light and auto-vectorised. */
	for (size_t i = 0; i < n / 8; i += 8) {
		acc |= w[i] | w[i + 1] | w[i + 2] | w[i + 3] |
		       w[i + 4] | w[i + 5] | w[i + 6] | w[i + 7];
		if (acc)
			return 0;
	}
	return 1;
}

#endif
