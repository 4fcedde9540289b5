/* Unit tests for capture/entropy.h's page_looks_random, which decides the
 * pages LZ4 is not asked to search (stored raw at once). What it must get
 * right, for every page size from 4 to 64 KiB:
 *   - random bytes look random (almost always: the test is a sample);
 *   - what LZ4 compresses does not: zero, text, structures of pointers and
 *     counters, a pointer array, a repeating 32-byte record, random
 *     data repeated once, a page only three quarters random;
 *   - a page it calls random is one LZ4 cannot shrink by more than a few
 *     bytes, so skipping the search loses nothing worth having;
 *   - it reads nothing past the page (the last page before a hole). */
#define CHECK_PREFIX "entropy"
#include "check.h"

#include <lz4.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../capture/entropy.h"

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;

	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = xs(&s);
		memcpy(p + i, &v, 8);
	}
}

/* LZ4's own verdict at acceleration 1: the bytes it saves on this page. */
static long lz4_saves(const uint8_t *p, size_t ps)
{
	static char out[LZ4_COMPRESSBOUND(65536)];
	int n = LZ4_compress_default((const char *)p, out, (int)ps, (int)sizeof out);

	return n > 0 ? (long)ps - n : 0;
}

static void random_looks_random(void)
{
	for (size_t ps = 4096; ps <= 65536; ps *= 2) {
		uint8_t *p = malloc(ps);
		unsigned tries = ps == 4096 ? 2000 : 200, yes = 0;

		CHECK(p != NULL, "no memory");
		if (!p)
			return;
		for (unsigned k = 0; k < tries; k++) {
			fill_random(p, ps, k + 1);
			yes += page_looks_random(p, ps);
		}
		/* 150 of 256 is about 2.7 standard deviations under the mean
		 * of 162: a random page misjudged is merely searched. */
		CHECK(yes >= tries * 98 / 100, "%zu-byte pages: only %u of %u random pages "
		      "looked random", ps, yes, tries);
		free(p);
	}
}

/* Pages LZ4 compresses well, each by a different kind of redundancy. */
static int fill_compressible(uint8_t *p, size_t ps, int kind, uint64_t seed)
{
	static const char text[] = "The crash kernel boots inside a small memory "
		"reservation, and the panicked kernel's memory is exposed as "
		"/proc/vmcore. Pages nobody needs are filtered out. ";
	uint64_t s = seed | 1;

	switch (kind) {
	case 0:		/* zero */
		memset(p, 0, ps);
		return 1;
	case 1:		/* text */
		for (size_t i = 0; i < ps; i++)
			p[i] = (uint8_t)text[(i + seed) % (sizeof text - 1)];
		return 1;
	case 2:		/* structures: kernel pointers, small counters, flags */
		for (size_t i = 0; i < ps; i += 32) {
			uint64_t f[4] = { 0xffff888000000000ull | (xs(&s) & 0xffffff8ull),
					  0xffffffff81000000ull | (xs(&s) & 0xfffff0ull),
					  xs(&s) % 4096, (xs(&s) & 1) << 16 };
			memcpy(p + i, f, 32);
		}
		return 1;
	case 3:		/* a 32-byte random record, repeated (mkvmcore's pattern) */
		fill_random(p, 32, seed);
		for (size_t i = 32; i < ps; i += 32)
			memcpy(p + i, p, 32);
		return 1;
	case 4:		/* three quarters random, a quarter zero */
		fill_random(p, ps, seed);
		memset(p + ps / 2, 0, ps / 4);
		return 1;
	case 5:		/* an array of pointers to 16 random objects */
		for (size_t i = 0; i < ps; i += 8) {
			uint64_t v = (0xffff888100000000ull | ((seed * 0x2545f491u) & 0xffffff)) +
				     (xs(&s) % 16) * 0x240;
			memcpy(p + i, &v, 8);
		}
		return 1;
	case 6:		/* random, its first half repeated: few byte values
			 * come back often, but only half as many are seen */
		fill_random(p, ps / 2, seed);
		memcpy(p + ps / 2, p, ps / 2);
		return 1;
	}
	return 0;
}

static void compressible_does_not(void)
{
	static const char *const name[] = { "zero", "text", "structures", "repeated record",
					    "3/4 random", "pointer array", "half repeated" };
	for (size_t ps = 4096; ps <= 65536; ps *= 2) {
		uint8_t *p = malloc(ps);

		CHECK(p != NULL, "no memory");
		if (!p)
			return;
		for (int kind = 0; fill_compressible(p, ps, kind, 7); kind++) {
			for (uint64_t seed = 1; seed <= 20; seed++) {
				fill_compressible(p, ps, kind, seed);
				/* each kind is one LZ4 does shrink, by an eighth
				 * at least: else this tests nothing */
				CHECK(lz4_saves(p, ps) >= (long)ps / 8, "%zu-byte %s page (seed %llu): "
				      "LZ4 saves only %ld bytes", ps, name[kind],
				      (unsigned long long)seed, lz4_saves(p, ps));
				CHECK(!page_looks_random(p, ps), "%zu-byte %s page (seed %llu) "
				      "looked random; LZ4 saves %ld bytes on it", ps, name[kind],
				      (unsigned long long)seed, lz4_saves(p, ps));
			}
		}
		free(p);
	}
}

/* Whatever it calls random, LZ4 could not have stored much smaller: over
 * random pages and random pages with a zero run of every length up to the
 * point where the test stops calling them random. */
static void random_means_lz4_saves_little(void)
{
	uint8_t p[4096];
	long worst = 0;
	unsigned judged = 0;

	for (size_t run = 0; run <= 2048; run += run < 256 ? 16 : 256) {
		for (uint64_t seed = 1; seed <= 20; seed++) {
			fill_random(p, sizeof p, seed * 977 + run);
			memset(p + (seed * 131) % (sizeof p - run), 0, run);
			if (!page_looks_random(p, sizeof p))
				continue;
			judged++;
			long s = lz4_saves(p, sizeof p);
			if (s > worst)
				worst = s;
		}
	}
	CHECK(judged >= 50, "only %u pages looked random: the test tests nothing", judged);
	/* A zero run long enough to save more than 1/16th of the page is
	 * seen in the sample (its value repeats). */
	CHECK(worst <= 256, "a page that looked random would have saved %ld bytes", worst);
}

/* The page is the last before an unmapped page: any read past it faults. */
static void reads_within_page(void)
{
	long sys = sysconf(_SC_PAGESIZE);
	size_t span = 65536 + (size_t)sys;
	uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	CHECK(mprotect(m + 65536, (size_t)sys, PROT_NONE) == 0, "mprotect");
	for (size_t ps = 4096; ps <= 65536; ps *= 2) {
		uint8_t *p = m + 65536 - ps;
		fill_random(p, ps, ps);
		CHECK(page_looks_random(p, ps), "random %zu-byte page before a hole", ps);
		memset(p, 0, ps);
		CHECK(!page_looks_random(p, ps), "zero %zu-byte page before a hole", ps);
	}
	munmap(m, span);
}

int main(void)
{
	RUN(random_looks_random);
	RUN(compressible_does_not);
	RUN(random_means_lz4_saves_little);
	RUN(reads_within_page);
	return check_done();
}
