/* fuzz_memmap: the struct-page walk (kernel/memmap.c, kernel/kmem.c,
 * kernel/physmem.c, arch/x86_64.c) on a fake vmcore built in memory; the
 * input layout is in fuzz_vmcore_mem.h.
 *
 * As run_capture and the pipeline do: memmap_init, and if it found struct
 * pages, memmap_classify over every pfn with file data in increasing pfn
 * order (segments by paddr, ranges merged), in blocks of 256, at most
 * FZ_MAX_PFNS pfns per input. */
#include "fuzz_vmcore_mem.h"

#include <assert.h>
#include <errno.h>

#include "../../kernel/memmap.h"

#define FZ_MAX_PFNS (1u << 16)
#define FZ_BLOCK 256u

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_vmcore f;
	if (fz_vmcore_build(&f, &memfd, data, size) < 0)
		return 0;
	struct vmcore *vc = &f.vc;
	uint32_t level = f.level, nseg = vc->nr_seg;
	uint64_t ps = vc->page_size;

	static struct memmap mm;
	uint32_t applied = 0;
	char why[400];
	int r = memmap_init(&mm, vc, arch_lookup(vc->e_machine), level, &applied, why, sizeof why);
	assert(r == 0 || r == -ENOMEM);
	assert(memchr(why, 0, sizeof why));
	assert((applied & ~level) == 0);

	if (r == 0 && mm.active) {
		const struct kdi_segment *seg = f.seg;
		uint32_t order[2] = { 0, 1 }, n = 0;
		for (uint32_t i = 0; i < nseg; i++)
			if (seg[i].filesz)
				order[n++] = i;
		if (n == 2 && seg[order[0]].paddr > seg[order[1]].paddr) {
			uint32_t t = order[0];
			order[0] = order[1];
			order[1] = t;
		}
		unsigned shift = 0;
		while ((1ull << shift) < ps)
			shift++;
		uint64_t lo[2], hi[2];
		uint32_t nr = 0;
		for (uint32_t k = 0; k < n; k++) {
			const struct kdi_segment *s = &seg[order[k]];
			uint64_t l = s->paddr >> shift;
			uint64_t h = (s->paddr + s->filesz + ps - 1) >> shift;
			if (nr && l <= hi[nr - 1]) {
				if (h > hi[nr - 1])
					hi[nr - 1] = h;
			} else {
				lo[nr] = l;
				hi[nr] = h;
				nr++;
			}
		}
		uint8_t cls[FZ_BLOCK];
		uint64_t budget = FZ_MAX_PFNS;
		for (uint32_t k = 0; k < nr && budget; k++) {
			for (uint64_t pfn = lo[k]; pfn < hi[k] && budget;) {
				uint64_t end = (pfn / FZ_BLOCK + 1) * FZ_BLOCK;
				if (end > hi[k])
					end = hi[k];
				uint32_t cnt = (uint32_t)(end - pfn);
				if (cnt > budget)
					cnt = (uint32_t)budget;
				memset(cls, 0xaa, sizeof cls);
				memmap_classify(&mm, pfn, cnt, cls);
				for (uint32_t i = 0; i < cnt; i++)
					assert(cls[i] == MM_KEEP || cls[i] < KDI_EX_NCLASSES);
				budget -= cnt;
				pfn += cnt;
			}
		}
	}
	memmap_fini(&mm);
	fz_vmcore_free(&f);
	return 0;
}
