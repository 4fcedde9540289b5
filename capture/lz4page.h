/* One kept page into a PAGES chunk's LZ4 stream, by the capture's rule:
 * the block's pages are one stream, a page that samples as random is not
 * searched, and a page LZ4 cannot shorten is stored raw. The capture's
 * hot path (capture/pipeline.c) and kdumpinit estimate (host/estimate.c)
 * both compress through it, so the estimate's sizes are the capture's. */
#ifndef KDI_LZ4PAGE_H
#define KDI_LZ4PAGE_H

#include <stdint.h>
#include <string.h>

#include <lz4.h>

#include "entropy.h"

/* LZ4's acceleration. Measured on a 6.1 dump: 2 and 4 save under 10 % of
 * the time at level 31 and less at level 1, for 2-6 % more output; the
 * output-size budget (1.05x makedumpfile -l) is worth more. */
#define LZ4_ACCEL 1
/* For a page that samples as random (entropy.h): LZ4 takes this as its
 * maximum, probes a position or two and emits the page as literals, which
 * come out longer than the page, so it is stored raw as a search would
 * have stored it, without the search. The call is still made, so the page
 * stays in the stream's history exactly as the reader's dictionary has
 * it (a skipped call would leave LZ4 a dictionary with a hole). */
#define LZ4_ACCEL_SKIP 65537

/* Compresses the ps bytes at page (which must stay in place until the
 * stream is reset: LZ4 keeps it as history) into dst, which has room for
 * LZ4_COMPRESSBOUND(ps). Returns the bytes stored and sets *raw when the
 * page went in raw (copied to dst): then the stored size is ps. */
static inline uint32_t lz4_page(LZ4_stream_t *s, const uint8_t *page, uint8_t *dst, uint32_t ps,
				int *raw)
{
	int acc = page_looks_random(page, ps) ? LZ4_ACCEL_SKIP : LZ4_ACCEL;
	int n = LZ4_compress_fast_continue(s, (const char *)page, (char *)dst, (int)ps,
					   LZ4_COMPRESSBOUND(ps), acc);

	if (n > 0 && (uint32_t)n < ps) {
		*raw = 0;
		return (uint32_t)n;
	}
	/* Incompressible: stored raw. It stays in LZ4's history, as it is
	 * in the reader's. A failed call (never, with a bound-sized output)
	 * leaves the stream undefined: restart it. */
	if (n <= 0)
		LZ4_initStream(s, sizeof *s);
	memcpy(dst, page, ps);
	*raw = 1;
	return ps;
}

#endif
