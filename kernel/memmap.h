/* Page filtering: makedumpfile's dump levels, decided from the crashed
 * kernel's struct pages (docs/FILTERING.md). Reads struct pages one small
 * window at a time, in pfn order, so memory does not grow with RAM. A page
 * is only excluded when its struct page proves it excludable. */
#ifndef KDI_MEMMAP_H
#define KDI_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

#include "memory.h"
#include "kmem.h"

#define MM_KEEP 0xff		/* classify(): the page stays */

#define DL_ZERO		1
#define DL_CACHE	2
#define DL_CACHE_PRI	4
#define DL_USER		8
#define DL_FREE		16

#define MM_WINDOW 4096u		/* struct pages per read window */

struct memmap {
	struct kmem km;		/* VMCOREINFO, page tables, physical reads */
	uint32_t level;		/* levels this walker applies (subset) */
	int active;		/* struct pages found: classify() may be used */
	unsigned shift;		/* PAGE_SHIFT */
	unsigned sec_shift;	/* pfn bits per section */
	uint64_t roots_va, nroots, per_root, ms_size, ms_map_off;
	uint64_t spage;		/* SIZE(page) */
	uint64_t max_order;	/* LENGTH(zone.free_area) */
	int has_buddy, has_offline, has_hwpoison;
	long order_off, dtor_off; /* in the first tail page; -1 if unknown */
	uint64_t sec_cached, sec_map;	/* last section looked up */
	/* struct page window */
	uint64_t win_pfn;	/* first pfn of the window, or UINT64_MAX */
	uint8_t *win;
	uint8_t *win_ok;	/* per pfn: struct page was read */
	/* an exclusion that runs on past the pfn that started it */
	uint64_t carry_end;
	uint8_t carry_cls;
	/* statistics */
	uint64_t unreadable;	/* pfns kept because their struct page was not readable */
	uint64_t no_memmap;	/* of those, pfns whose section has no (valid) mem_map */
	uint64_t implausible;	/* pfns kept because their struct page made no sense */
};

/* Sets up the walker for `level`. Returns the levels it can apply in
 * *applied (bits it cannot prove stay off) and a reason for each bit it
 * dropped in why (one line). 0, or -ENOMEM. */
int memmap_init(struct memmap *m, const struct vmcore *vc, const struct arch_ops *arch,
		uint32_t level, uint32_t *applied, char *why, size_t whysz);
void memmap_fini(struct memmap *m);
/* Decision for pfns [pfn, pfn+n), called with increasing pfn: cls[i] is
 * MM_KEEP or the enum kdi_class that excludes it. */
void memmap_classify(struct memmap *m, uint64_t pfn, uint32_t n, uint8_t *cls);

#endif
