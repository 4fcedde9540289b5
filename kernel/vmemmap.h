/* The memory map's own pages: which physical pages hold the crashed
 * kernel's struct pages, and which struct pages a dump needs. On a large
 * machine at level 31 most of what the filter keeps is the memory map
 * (64 bytes per 4 KiB page: 32 GB on 2 TB), and almost all of it
 * describes free or user pages that the dump leaves out anyway. A page
 * of struct pages is left out when every pfn it describes is left out by
 * the filter; the struct page of a kept page, of a page kept because its
 * struct page could not be read, and of a pfn the dump does not have,
 * stays (docs/FILTERING.md, "The memory map's pages").
 *
 * Found once from the page tables, before the capture: the pipeline
 * defers these pages to its last pass, when every pfn they describe has
 * been judged (capture/passes.c). */
#ifndef KDI_VMEMMAP_H
#define KDI_VMEMMAP_H

#include <stddef.h>
#include <stdint.h>

#include "memmap.h"
#include "vmcore.h"

/* Backing pfns [b, b + n) hold the struct pages at virtual pages
 * [vp, vp + n) (a virtual page is va >> PAGE_SHIFT). */
struct vm_run { uint64_t b, vp, n; };

/* More pieces than this and the map is not worth its memory: a real
 * vmemmap is 2 MiB (or 1 GiB) leaves, a few per node. */
#define VM_MAX_RUNS (1u << 18)

struct vmemmap {
	uint64_t map;		/* the coded mem_map every section shares */
	uint64_t spage;		/* SIZE(page) */
	unsigned shift;		/* PAGE_SHIFT */
	uint64_t vp0, nvp;	/* the struct pages' virtual pages: [vp0, vp0 + nvp) */
	struct vm_run *run;	/* sorted by b, disjoint */
	uint32_t nrun;
	uint64_t pages;		/* backing pfns, in the dump or not */
	uint64_t aliased;	/* backing pfns mapped at several virtual pages: kept */
	uint64_t skipped;	/* sections whose mem_map is not the array's (corrupt) */
	/* Bit vp - vp0: the virtual page holds the struct page of a pfn the
	 * dump keeps, or of one it does not have. Set before the capture for
	 * pfns it does not have (and for aliased pages), then by the capture
	 * as it judges pfns, under its lock; read once all are judged. */
	uint64_t *need;
};

/* Finds the backing of the struct pages of every section that holds a
 * pfn of vc (m active, translation working). 0 with v->nrun > 0;
 * -ENOTSUP with one line in why (no translation, a memory map that is
 * not one virtual array, more than VM_MAX_RUNS pieces, a SIZE(page)
 * whose pages a capture's span cannot note in max_vp_per_span virtual
 * pages); -ENOMEM. */
int vmemmap_find(struct vmemmap *v, const struct memmap *m, const struct vmcore *vc,
		 uint64_t span_pfns, unsigned max_vp_per_span, char *why, size_t whysz);
void vmemmap_free(struct vmemmap *v);

/* The virtual pages that hold pfn's struct page: [*lo, *hi], absolute. */
static inline void vmemmap_vps(const struct vmemmap *v, uint64_t pfn, uint64_t *lo, uint64_t *hi)
{
	uint64_t va = v->map + pfn * v->spage;
	*lo = va >> v->shift;
	*hi = (va + v->spage - 1) >> v->shift;
}

/* For pfns [lo, lo + n): vfl[i] 0 when not a backing pfn, else 1, or 2
 * when with_need and its virtual page is needed (a backing pfn's
 * decision once every pfn has been judged). */
void vmemmap_marks(const struct vmemmap *v, uint64_t lo, uint32_t n, uint8_t *vfl, int with_need);

/* ORs bits [0, nbits) of w, which stand for virtual pages vp, vp+1, ...,
 * into v->need (those outside [vp0, vp0 + nvp) are dropped). */
void vmemmap_need_or(struct vmemmap *v, uint64_t vp, const uint64_t *w, unsigned nbits);

#endif
