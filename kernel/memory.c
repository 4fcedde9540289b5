#include "memory.h"

const char *const kdi_class_name[KDI_EX_NCLASSES] = {
	[KDI_EX_ZERO] = "zero",
	[KDI_EX_CACHE] = "cache",
	[KDI_EX_CACHE_PRIVATE] = "cache-private",
	[KDI_EX_USER] = "user",
	[KDI_EX_FREE] = "free",
	[KDI_EX_HWPOISON] = "hwpoison",
	[KDI_EX_OFFLINE] = "offline",
	[KDI_EX_UNREADABLE] = "unreadable",
	[KDI_EX_MEMMAP] = "memmap",
};

int segment_valid(const struct kdi_segment *s)
{
	return s->filesz <= s->memsz && s->memsz <= UINT64_MAX - s->vaddr &&
	       s->paddr <= KDI_PADDR_LIMIT && s->memsz <= KDI_PADDR_LIMIT - s->paddr;
}

int segment_repair(struct kdi_segment *s)
{
	if (segment_valid(s))
		return 0;
	if (s->paddr > KDI_PADDR_LIMIT || s->memsz > KDI_PADDR_LIMIT - s->paddr)
		return -1;
	if (s->memsz > UINT64_MAX - s->vaddr)
		s->vaddr = 0;
	if (s->filesz > s->memsz)
		s->filesz = s->memsz;
	return 1;
}

uint32_t segment_pfn_runs(const struct kdi_segment *seg, const uint32_t *order, uint32_t norder,
			  unsigned shift, struct pfn_run *out)
{
	uint32_t n = 0;

	/* The kernel-text PT_LOAD aliases memory that a RAM PT_LOAD also
	 * covers: each pfn is counted once. */
	for (uint32_t k = 0; k < norder; k++) {
		const struct kdi_segment *s = &seg[order[k]];
		uint64_t lo = s->paddr >> shift;
		uint64_t hi = (s->paddr + s->filesz + (1ull << shift) - 1) >> shift;
		if (n && lo <= out[n - 1].hi) {
			if (hi > out[n - 1].hi)
				out[n - 1].hi = hi;
		} else {
			out[n++] = (struct pfn_run){ lo, hi };
		}
	}
	return n;
}

/* musl has no qsort_r before 1.2.3's; a tiny insertion sort over segment
 * indices is plenty (a vmcore has tens of PT_LOADs), and it is stable. */
uint32_t segment_order(const struct kdi_segment *seg, uint32_t n, uint32_t *order)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < n; i++)
		if (seg[i].filesz)
			order[m++] = i;
	for (uint32_t i = 1; i < m; i++) {
		uint32_t x = order[i], j = i;
		while (j > 0 && seg[order[j - 1]].paddr > seg[x].paddr) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	return m;
}

