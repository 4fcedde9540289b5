/* Unit tests for capture/zero.h's page_is_zero, the capture's zero-page
 * test: an all-zero page is zero; one non-zero byte anywhere makes it not
 * zero (every byte of a 4 KiB page; the first and last byte of every word
 * and of every 64-byte group, the last group whole and a sample of the
 * rest of a 64 KiB one), whatever its bit; and nothing past the page is
 * read. The function takes 8-byte aligned pages only (it reads words), so
 * there is no misaligned case. */
#define CHECK_PREFIX "zero"
#include "check.h"

#include <stdint.h>

#include "../../capture/zero.h"

#define GUARD 64	/* bytes after the page, non-zero */

static uint8_t *page_buf(size_t ps)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, ps + GUARD))
		return NULL;
	memset(p, 0, ps);
	memset((uint8_t *)p + ps, 0xff, GUARD);
	return p;
}

/* Sets byte pos to v, asks, clears it: 1 when the page read as not zero. */
static int seen(uint8_t *b, size_t ps, size_t pos, uint8_t v)
{
	b[pos] = v;
	int r = !page_is_zero(b, ps);
	b[pos] = 0;
	return r;
}

struct sweep {
	uint64_t tried, missed;
	size_t first_pos;
	uint8_t first_v;
};

static void try(struct sweep *s, uint8_t *b, size_t ps, size_t pos)
{
	/* The lowest and highest bit, and all of them. */
	static const uint8_t vals[] = { 0x01, 0x80, 0xff };

	for (size_t k = 0; k < sizeof vals; k++) {
		s->tried++;
		if (!seen(b, ps, pos, vals[k]) && !s->missed++) {
			s->first_pos = pos;
			s->first_v = vals[k];
		}
	}
}

static void check_zero(size_t ps)
{
	uint8_t *b = page_buf(ps);

	CHECK(b != NULL, "no memory for a %zu-byte page", ps);
	if (!b)
		return;
	CHECK(page_is_zero(b, ps), "an all-zero %zu-byte page reads as not zero "
	      "(or the guard after it was read)", ps);
	free(b);
}

static void check_nonzero(size_t ps, int every_byte)
{
	uint8_t *b = page_buf(ps);
	struct sweep s = { 0 };

	CHECK(b != NULL, "no memory for a %zu-byte page", ps);
	if (!b)
		return;
	if (every_byte) {
		for (size_t pos = 0; pos < ps; pos++)
			try(&s, b, ps, pos);
	} else {
		for (size_t w = 0; w < ps; w += 8) {	/* each word's ends */
			try(&s, b, ps, w);
			try(&s, b, ps, w + 7);
		}
		for (size_t pos = ps - 64; pos < ps; pos++)	/* the last group */
			try(&s, b, ps, pos);
		uint32_t x = 2463534242u;		/* xorshift: a sample */
		for (int k = 0; k < 4096; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			try(&s, b, ps, x % ps);
		}
	}
	CHECK(s.missed == 0, "%zu-byte page: %llu of %llu single non-zero bytes read as zero, "
	      "the first at byte %zu (0x%02x)", ps, (unsigned long long)s.missed,
	      (unsigned long long)s.tried, s.first_pos, s.first_v);
	/* The sweep put every byte back: the page is zero again. */
	CHECK(page_is_zero(b, ps), "%zu-byte page not zero after the sweep", ps);
	free(b);
}

static void all_zero_4k(void) { check_zero(4096); }
static void all_zero_64k(void) { check_zero(65536); }
static void one_byte_4k(void) { check_nonzero(4096, 1); }
static void one_byte_64k(void) { check_nonzero(65536, 0); }

/* Every page size between, each byte at its first and last position. */
static void ends_every_size(void)
{
	for (size_t ps = 4096; ps <= 65536; ps *= 2) {
		uint8_t *b = page_buf(ps);
		CHECK(b != NULL, "no memory for a %zu-byte page", ps);
		if (!b)
			return;
		CHECK(page_is_zero(b, ps), "all-zero %zu-byte page", ps);
		CHECK(seen(b, ps, 0, 1), "%zu-byte page: first byte missed", ps);
		CHECK(seen(b, ps, ps - 1, 0x80), "%zu-byte page: last byte missed", ps);
		free(b);
	}
}

int main(void)
{
	RUN(all_zero_4k);
	RUN(all_zero_64k);
	RUN(one_byte_4k);
	RUN(one_byte_64k);
	RUN(ends_every_size);
	return check_done();
}
