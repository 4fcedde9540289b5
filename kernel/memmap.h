/* Page filtering: makedumpfile's dump levels, decided from the crashed
 * kernel's struct pages (docs/FILTERING.md). Each cursor reads struct
 * pages one small window at a time, so memory does not grow with RAM. A
 * page is only excluded when its struct page proves it excludable.
 * Decisions depend on pfn order only through runs (compound pages, free
 * blocks) that carry over; memmap_join settles those where separately
 * classified pieces meet, so cursors may work on pieces in parallel. */
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

#define MM_WINDOW 4096u		/* struct pages per window */
#define MM_CHUNK 256u		/* struct pages per read, when needed */
#define MM_VIEW_WINDOWS 4u	/* windows' worth of struct pages a view maps */

/* Per pfn, beside its class (memmap_classify's fl[]). */
#define MM_FL_CONT	1	/* decided by a run that began at an earlier pfn */
#define MM_FL_UNREAD	2	/* kept: its struct page could not be read */
#define MM_FL_NOMAP	4	/* ... in a section without a (valid) mem_map */
#define MM_FL_IMPLAUSIBLE 8	/* kept: its struct page made no sense */

/* What memmap_init found: read-only while pages are classified, so any
 * number of cursors may share it. */
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
	/* The rules' inputs, looked up once (classify_one runs per pfn):
	 * offsets in struct page (-1: absent, the field reads as 0), flag
	 * masks (0: the flag is unknown), page-type values. */
	struct mm_rules {
		long o_flags, o_mapping, o_mapcount, o_private, o_head;
		uint64_t head_mask, lru, swapcache, swapbacked, private_, slab, hwpoison;
		int swapbacked_known;
		int slab_type_known, unaccepted_known;
		/* Decisions whose inputs the note lacks make no exclusion:
		 * slab_known 0 leaves every page that might be slab (free,
		 * offline, anonymous) kept; hugetlb_known 0 every hugetlb
		 * head; tails_by_head: no tail marker, so a kept head keeps
		 * its tails as a run; none: tails cannot be told at all, no
		 * struct page decides anything. */
		int slab_known, hugetlb_known, tails_by_head, none;
		uint32_t slab_type, buddy_type, offline_type, unaccepted_type, hugetlb_type;
		/* where a compound head's order and hugetlb mark are */
		enum { MM_HUGE_DTOR, MM_HUGE_FLAG1, MM_HUGE_TYPE } huge;
		uint64_t hugetlb_flag1;	/* 6.6-6.8: PG_hugetlb in the first tail */
		int dtor_known;
		uint64_t hugetlb_dtor;
	} r;
	/* statistics, filled in by whoever ran the classification */
	uint64_t unreadable;	/* pfns kept because their struct page was not readable */
	uint64_t no_memmap;	/* of those, pfns whose section has no (valid) mem_map */
	uint64_t implausible;	/* pfns kept because their struct page made no sense */
	int no_view;		/* cursors read struct pages with pread only */
	/* The filter's keys the note lacks (vmcoreinfo.h's policy KEEP or
	 * DERIVED), and their names joined by ", " for the dump's record. */
	uint8_t key_missing[VI_NKEYS];
	char missing_keys[256];
};

/* The newest kernel whose layout kdumpinit was tested on: a newer one is
 * named on the console (its keys are checked all the same). */
#define MM_NEWEST_TESTED_MAJOR 7
#define MM_NEWEST_TESTED_MINOR 3

/* A run that carries on past the pfn that began it: pfns below end take
 * cls. end <= pfn means none. */
struct mm_carry {
	uint64_t end;
	uint8_t cls;
};

/* One reader of struct pages: its own window, section and translation
 * caches and carry, over a shared struct memmap. One per thread. */
struct mm_cursor {
	const struct memmap *m;
	struct physmem pm;	/* m's, copied: its read count is ours */
	struct arch_env env;	/* reads through pm */
	struct arch_ctx ac;	/* m's, copied: its leaf cache is ours */
	uint64_t sec_cached, sec_map;	/* last section looked up */
	uint64_t win_pfn;	/* first pfn of the window, or UINT64_MAX */
	uint8_t *win;
	uint8_t *win_ok;	/* per pfn: struct page is in the dump (and read, once
				   its chunk is) */
	/* The window's pieces (a leaf of struct pages each), read a chunk
	 * at a time when a pfn in it is judged: inside a run none is. */
	struct mm_piece { uint32_t lo, hi; uint64_t pa; } *piece;
	uint32_t npiece;
	uint8_t chunk_read[MM_WINDOW / MM_CHUNK];
	/* Struct page k of the window is at wbase + k * SIZE(page): win, or
	 * the window's bytes in place, in view, when its pieces lie end to
	 * end in one segment (the usual case: a 2 MiB vmemmap leaf holds 8
	 * windows). Then no chunk needs reading. */
	const uint8_t *wbase;
	uint32_t pf;		/* the window's first struct page not prefetched */
	struct pm_view view;
	struct mm_carry carry;
};

/* Sets up the walker for `level`. Returns the levels it can apply in
 * *applied (bits it cannot prove stay off) and in why (one line) a kernel
 * newer than MM_NEWEST_TESTED, the filter's VMCOREINFO keys the note
 * lacks with what that keeps (at any level), and a reason for each level
 * bit it dropped. 0, or -ENOMEM. */
int memmap_init(struct memmap *m, const struct vmcore *vc, const struct arch_ops *arch,
		uint32_t level, uint32_t *applied, char *why, size_t whysz);
void memmap_fini(struct memmap *m);

/* A cursor over m (active), with no carry. 0 or -ENOMEM. It looks at
 * struct pages in place (a view) unless m->no_view is set, and falls back
 * to reading them for good at the first fault there. */
int memmap_cursor_init(struct mm_cursor *c, const struct memmap *m);
void memmap_cursor_fini(struct mm_cursor *c);
/* Decision for pfns [pfn, pfn+n), in pfn order from c->carry, which it
 * updates: cls[i] is MM_KEEP or the enum kdi_class that excludes it,
 * fl[i] its MM_FL_ bits. Calls with increasing pfn over the ranges give
 * makedumpfile's decisions; a call may also start anywhere with no carry
 * (c->carry.end = 0), and memmap_join makes that right. */
void memmap_classify(struct mm_cursor *c, uint64_t pfn, uint32_t n, uint8_t *cls, uint8_t *fl);
/* [pfn, pfn+n) was classified from no carry, leaving *out. Makes it what
 * classifying in order would have given had `in` carried into pfn, and
 * *out what it leaves then. *touched: how many pfns from pfn changed (or
 * may have). Reads struct pages (with c) only when a run of in ends
 * inside a run the first pass saw (never in a kernel's own memmap). */
void memmap_join(struct mm_cursor *c, struct mm_carry in, uint64_t pfn, uint32_t n,
		 uint8_t *cls, uint8_t *fl, struct mm_carry *out, uint32_t *touched);
/* The coded mem_map of section nr, through c's caches: the struct page
 * of pfn P is at it + P * SIZE(page). 0 when the section has none (or
 * its entry is garbage). */
uint64_t memmap_section(struct mm_cursor *c, uint64_t nr);

#endif
