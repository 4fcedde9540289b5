#include "physmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/io.h"

int physmem_init(struct physmem *pm, const struct vmcore *vc)
{
	memset(pm, 0, sizeof *pm);
	pm->vc = vc;
	pm->order = calloc(vc->nr_seg ? vc->nr_seg : 1, sizeof *pm->order);
	if (!pm->order)
		return -ENOMEM;
	pm->n = segment_order(vc->seg, vc->nr_seg, pm->order);
	return 0;
}

void physmem_fini(struct physmem *pm)
{
	free(pm->order);
	pm->order = NULL;
}

/* The index in vc->seg of a segment holding all of [paddr, paddr+len),
 * or -1. */
static long holder(const struct physmem *pm, uint64_t paddr, size_t len)
{
	const struct vmcore *vc = pm->vc;

	if (paddr + len < paddr)
		return -1;
	/* Binary search for the last segment starting at or below paddr;
	 * overlapping (aliased) segments hold the same bytes, so any one that
	 * covers the range will do: scan back a little for one that does. */
	uint32_t lo = 0, hi = pm->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (vc->seg[pm->order[mid]].paddr <= paddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t k = lo; k-- > 0;) {
		const struct kdi_segment *s = &vc->seg[pm->order[k]];
		if (paddr >= s->paddr && paddr + len <= s->paddr + s->filesz)
			return pm->order[k];
		if (lo - k > 8)
			break;
	}
	return -1;
}

int physmem_holds(const struct physmem *pm, uint64_t paddr, size_t len)
{
	return holder(pm, paddr, len) >= 0;
}

int physmem_read(struct physmem *pm, uint64_t paddr, void *buf, size_t len)
{
	const struct vmcore *vc = pm->vc;
	long k = holder(pm, paddr, len);

	if (k < 0)
		return -EFAULT;
	pm->reads++;
	ssize_t n = read_full_at(vc->fd, buf, len, vc->seg_offset[k] + (paddr - vc->seg[k].paddr));
	return n == (ssize_t)len ? 0 : -EIO;
}
