/* Unit tests for kernel/vmemmap.h's helpers, on hand-made maps: which
 * virtual pages of the memory map hold a pfn's struct page (a 72-byte
 * struct page straddles two of them, a 64-byte one never does), the need
 * bits ORed in and clipped to the map, the backing pfns marked for a span
 * with and without their need (aliased runs: a page mapped twice is needed
 * when either of its places is). */
#define CHECK_PREFIX "vmemmap"
#include "check.h"

#include <stdint.h>

#include "../../kernel/vmemmap.h"

#define MAP 0xffffea0000000000ull	/* x86_64's vmemmap_base without KASLR */
#define VP(pfn, sp) ((MAP + (uint64_t)(pfn) * (sp)) >> 12)

static void vps_64(void)
{
	struct vmemmap v = { .map = MAP, .spage = 64, .shift = 12 };
	uint64_t lo, hi;

	for (uint64_t pfn = 0; pfn < 4096; pfn++) {
		vmemmap_vps(&v, pfn, &lo, &hi);
		CHECK(lo == hi && lo == (MAP >> 12) + pfn / 64, "pfn %llu: pages %#llx-%#llx",
		      (unsigned long long)pfn, (unsigned long long)lo, (unsigned long long)hi);
	}
}

static void vps_72_straddle(void)
{
	struct vmemmap v = { .map = MAP, .spage = 72, .shift = 12 };
	uint64_t lo, hi, straddles = 0;

	/* 4096 / 72: struct page 56 is bytes 4032..4103, across the first
	 * page boundary. */
	vmemmap_vps(&v, 56, &lo, &hi);
	CHECK(lo == MAP >> 12 && hi == lo + 1, "pfn 56: pages %#llx-%#llx", (unsigned long long)lo,
	      (unsigned long long)hi);
	for (uint64_t pfn = 0; pfn < 4096; pfn++) {
		vmemmap_vps(&v, pfn, &lo, &hi);
		uint64_t a = pfn * 72, b = a + 71;
		CHECK(lo == (MAP + a) >> 12 && hi == (MAP + b) >> 12, "pfn %llu", (unsigned long long)pfn);
		straddles += hi != lo;
	}
	/* 4096 struct pages of 72 bytes fill 72 pages, and each boundary
	 * inside them that no struct page starts at is straddled. */
	CHECK(straddles > 0 && straddles < 72, "%llu straddles", (unsigned long long)straddles);
}

static void need_or_clips(void)
{
	uint64_t need[2] = { 0 };
	struct vmemmap v = { .map = MAP, .spage = 64, .shift = 12, .vp0 = 1000, .nvp = 100, .need = need };
	uint64_t w[2] = { ~0ull, ~0ull };

	/* bits for pages 990..1117: only 1000..1099 land */
	vmemmap_need_or(&v, 990, w, 128);
	CHECK_INT(__builtin_popcountll(need[0]) + __builtin_popcountll(need[1]), 100);
	need[0] = need[1] = 0;
	uint64_t one[1] = { 1ull << 5 };
	vmemmap_need_or(&v, 1040, one, 64);
	CHECK(need[0] == 1ull << 45 && !need[1], "page 1045: need %#llx %#llx",
	      (unsigned long long)need[0], (unsigned long long)need[1]);
}

static void marks_and_aliases(void)
{
	uint64_t need[1] = { 0 };
	/* pfns 100-103 hold pages 0-3; 200-201 hold 4-5; 202 holds page 6
	 * and, aliased, page 7 (a second run over the same pfn). */
	struct vm_run run[] = { { 100, 0, 4 }, { 200, 4, 3 }, { 202, 7, 1 } };
	struct vmemmap v = { .map = MAP, .spage = 64, .shift = 12, .vp0 = 0, .nvp = 8,
			     .run = run, .nrun = 3, .need = need };
	uint8_t f[128];

	vmemmap_marks(&v, 96, 128, f, 0);
	int ok = 1;
	for (int i = 0; i < 128; i++) {
		uint64_t pfn = 96 + i;
		int back = (pfn >= 100 && pfn < 104) || (pfn >= 200 && pfn < 203);
		ok &= f[i] == (back ? 1 : 0);
	}
	CHECK(ok, "backing pfns marked 1, the rest 0");
	need[0] = (1ull << 1) | (1ull << 7);	/* page 1, and page 7 (aliased with 6) */
	vmemmap_marks(&v, 96, 128, f, 1);
	CHECK(f[101 - 96] == 2 && f[100 - 96] == 1 && f[102 - 96] == 1, "run 1: %u %u %u",
	      f[100 - 96], f[101 - 96], f[102 - 96]);
	CHECK(f[202 - 96] == 2, "pfn 202 needed through its alias (page 7): %u", f[202 - 96]);
	CHECK(f[200 - 96] == 1 && f[201 - 96] == 1, "pfns 200, 201 unneeded");
	/* a window that starts inside a run */
	vmemmap_marks(&v, 201, 2, f, 1);
	CHECK(f[0] == 1 && f[1] == 2, "window at 201: %u %u", f[0], f[1]);
	/* left out, the whole window over: 100, 102, 103 (pages 0, 2, 3),
	 * 200, 201 (4, 5); 202 is needed through its alias */
	vmemmap_marks(&v, 96, 128, f, 1);
	int unneeded = 0;
	for (int i = 0; i < 128; i++)
		unneeded += f[i] == 1;
	CHECK_INT(unneeded, 5);
}

int main(void)
{
	RUN(vps_64);
	RUN(vps_72_straddle);
	RUN(need_or_clips);
	RUN(marks_and_aliases);
	return check_done();
}
