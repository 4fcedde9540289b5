/* The crashed kernel's memory as the dump records it: its PT_LOAD
 * segments, the rule every segment must keep, and the classes of pages a
 * capture leaves out. The kernel layer (vmcore, memmap) finds them; the
 * on-device format (dump/format.h) stores them as they are, so the struct
 * is the device layout (little-endian, docs/FORMAT.md). */
#ifndef KDI_MEMORY_H
#define KDI_MEMORY_H

#include <stdint.h>

struct kdi_segment {
	uint64_t paddr;
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t filesz;		/* bytes backed by the vmcore file */
	uint32_t p_flags;
	uint32_t pad;
};
_Static_assert(sizeof(struct kdi_segment) == 40, "segment layout");

#define KDI_MAX_SEGMENTS	65536u
/* The crashed kernel's notes are stored as one chunk of the dump: at most
 * this much (dump/format.h checks it against KDI_CHUNK_MAX). */
#define KDI_NOTES_MAX		(64u << 20)
/* No physical address space reaches 2^56 (x86_64 5-level paging has 52
 * bits, arm64 52): a segment above it is garbage, not memory. */
#define KDI_PADDR_LIMIT		(1ull << 56)

/* The one rule for a segment, which the capture applies before it writes
 * one and every reader when it reads one back: filesz <= memsz, neither
 * the physical nor the virtual range wraps, the physical end is at most
 * KDI_PADDR_LIMIT. 1 valid, 0 not. */
int segment_valid(const struct kdi_segment *s);
/* What the capture does with a segment that breaks the rule: a vmcore's
 * bad PT_LOAD must cost that segment, never the whole dump. 0 valid as
 * it is; 1 repaired: filesz cut to memsz, or a virtual range that wraps
 * (its vaddr means nothing; the pages are found by paddr) replaced by
 * vaddr 0, "no virtual address"; -1 drop it: its physical range wraps or
 * reaches past KDI_PADDR_LIMIT, where no memory is. */
int segment_repair(struct kdi_segment *s);
/* The order readers walk memory in: fills order[] (room for n) with the
 * indices of the segments of seg[0..n) that have data (filesz), by paddr,
 * equal paddrs in index order. Returns how many. */
uint32_t segment_order(const struct kdi_segment *seg, uint32_t n, uint32_t *order);

struct pfn_run { uint64_t lo, hi; };	/* pfns [lo, hi) */

/* The pfns the segments order[0, norder) hold data for (segment_order's
 * order), each file part rounded out to whole pages of 1 << shift bytes,
 * overlaps and touching runs merged: what a capture scans, in increasing
 * pfn order, into out (room for norder). Returns how many runs. */
uint32_t segment_pfn_runs(const struct kdi_segment *seg, const uint32_t *order, uint32_t norder,
			  unsigned shift, struct pfn_run *out);

/* What a page of the crashed kernel is, when it is not written: why the
 * filter left it out. Indexes the dump's kdi_end.excluded[]. */
enum kdi_class {
	KDI_EX_ZERO,
	KDI_EX_CACHE,
	KDI_EX_CACHE_PRIVATE,
	KDI_EX_USER,
	KDI_EX_FREE,
	KDI_EX_HWPOISON,
	KDI_EX_OFFLINE,
	KDI_EX_UNREADABLE,	/* the vmcore would not give the bytes */
	/* struct pages that describe only pages left out (format version 4;
	 * kernel/vmemmap.h) */
	KDI_EX_MEMMAP,
	KDI_EX_NCLASSES
};
extern const char *const kdi_class_name[KDI_EX_NCLASSES];

#endif
