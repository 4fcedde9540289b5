/* VMCOREINFO: the crashed kernel's description of itself (symbols, struct
 * sizes and offsets, constants). Parsed once, table-driven. Every value is
 * optional: code that needs a missing one keeps pages, it never guesses. */
#ifndef KDI_VMCOREINFO_H
#define KDI_VMCOREINFO_H

#include <stddef.h>
#include <stdint.h>

/* Every key kdumpinit reads, in one table. Columns:
 *   id      VI_<id>
 *   text    its name in the note, as the newest kernel spells it
 *   base    how its value is written (16: hex without 0x; 0: C rules)
 *   alias   the same value under the name older kernels gave it, or NULL
 *   policy  what the page filter does when the note has neither name:
 *             NONE     the filter does not read it
 *             KEEP     the pages it would decide are kept (the filter
 *                      excludes a page only by a decision whose inputs the
 *                      dump provides); said on the console and in the dump
 *             DERIVED  taken from elsewhere in the dump; said all the same
 *             QUIET    kernels that lack it lack what it describes (a
 *                      feature added late, or configured out): kept, and
 *                      not said
 *   miss    what that means, for the console (the filter's keys only)
 * Generations that replace a key by another with a different meaning
 * (PG_slab -> PAGE_SLAB_MAPCOUNT_VALUE, HUGETLB_PAGE_DTOR -> PG_hugetlb ->
 * PAGE_HUGETLB_MAPCOUNT_VALUE) are separate rows: memmap_init decides
 * which generation a note is by which keys it has, never by OSRELEASE.
 * docs/FILTERING.md §7 has the versions and kernel commits. */
#define VI_STRUCT "struct pages cannot be found: only zero pages filtered"
#define VI_WALK "page tables cannot be walked: only zero pages filtered"
#define VI_KEYS(X)							\
	X(PAGESIZE, "PAGESIZE", 10, NULL, NONE, NULL)			\
	X(KERNELOFFSET, "KERNELOFFSET", 16, NULL, NONE, NULL)		\
	X(CRASHTIME, "CRASHTIME", 10, NULL, NONE, NULL)			\
	X(SYM_MEM_SECTION, "SYMBOL(mem_section)", 16, NULL, KEEP, VI_STRUCT) \
	X(SYM_INIT_TOP_PGT, "SYMBOL(init_top_pgt)", 16, NULL, KEEP, VI_WALK) \
	X(SYM_SWAPPER_PG_DIR, "SYMBOL(swapper_pg_dir)", 16, NULL, KEEP, VI_WALK) \
	X(SYM_PRB, "SYMBOL(prb)", 16, NULL, NONE, NULL)			\
	X(SYM_VMEMMAP, "SYMBOL(vmemmap)", 16, NULL, NONE, NULL)		\
	X(SYM_MEM_MAP, "SYMBOL(mem_map)", 16, NULL, NONE, NULL)		\
	X(SYM_INIT_UTS_NS, "SYMBOL(init_uts_ns)", 16, NULL, NONE, NULL)	\
	X(OFF_UTS_NAME, "OFFSET(uts_namespace.name)", 10, NULL, NONE, NULL) \
	X(SIZE_PAGE, "SIZE(page)", 10, NULL, KEEP, VI_STRUCT)		\
	X(SIZE_MEM_SECTION, "SIZE(mem_section)", 10, NULL, KEEP, VI_STRUCT) \
	X(OFF_PAGE_FLAGS, "OFFSET(page.flags)", 10, NULL, KEEP, VI_STRUCT) \
	X(OFF_PAGE_REFCOUNT, "OFFSET(page._refcount)", 10, NULL, NONE, NULL) \
	X(OFF_PAGE_MAPPING, "OFFSET(page.mapping)", 10, NULL, KEEP, VI_STRUCT) \
	X(OFF_PAGE_LRU, "OFFSET(page.lru)", 10, NULL, NONE, NULL)	\
	X(OFF_PAGE_MAPCOUNT, "OFFSET(page._mapcount)", 10, NULL, KEEP,	\
	  "free, offline and unaccepted pages kept; typed hugetlb and slab pages cannot be told")		\
	X(OFF_PAGE_PRIVATE, "OFFSET(page.private)", 10, NULL, KEEP, "free pages kept") \
	X(OFF_PAGE_COMPOUND_DTOR, "OFFSET(page.compound_dtor)", 10, NULL, KEEP, \
	  "hugetlb pages cannot be told")			\
	X(OFF_PAGE_COMPOUND_ORDER, "OFFSET(page.compound_order)", 10, NULL, KEEP, \
	  "compound pages judged page by page")		\
	X(OFF_PAGE_COMPOUND_HEAD, "OFFSET(page.compound_info)", 10,	\
	  "OFFSET(page.compound_head)", KEEP,					\
	  "tail pages kept with their head")	\
	X(OFF_FOLIO_DTOR, "OFFSET(folio._folio_dtor)", 10, NULL, KEEP,	\
	  "hugetlb pages cannot be told")			\
	X(OFF_FOLIO_ORDER, "OFFSET(folio._folio_order)", 10, NULL, KEEP, \
	  "compound pages judged page by page")		\
	X(OFF_MEM_SECTION_MAP, "OFFSET(mem_section.section_mem_map)", 10, NULL, KEEP, VI_STRUCT) \
	X(LEN_MEM_SECTION, "LENGTH(mem_section)", 10, NULL, DERIVED,	\
	  "SPARSEMEM_EXTREME assumed, as makedumpfile does")		\
	X(LEN_FREE_AREA, "LENGTH(zone.free_area)", 10, NULL, KEEP,	\
	  "free-block orders unchecked; unaccepted pages kept")		\
	X(NUM_SECTION_SIZE_BITS, "NUMBER(SECTION_SIZE_BITS)", 0, NULL, KEEP, VI_STRUCT) \
	X(NUM_MAX_PHYSMEM_BITS, "NUMBER(MAX_PHYSMEM_BITS)", 0, NULL, KEEP, VI_STRUCT) \
	X(NUM_PHYS_BASE, "NUMBER(phys_base)", 0, NULL, DERIVED,		\
	  "taken from the kernel-text PT_LOAD, if the dump has one") \
	X(NUM_L5_ENABLED, "NUMBER(pgtable_l5_enabled)", 0, NULL, KEEP, VI_WALK) \
	X(NUM_SME_MASK, "NUMBER(sme_mask)", 0, NULL, KEEP, VI_WALK)	\
	X(NUM_KIMAGE_VOFFSET, "NUMBER(kimage_voffset)", 0, NULL, KEEP, VI_WALK) \
	X(NUM_PHYS_OFFSET, "NUMBER(PHYS_OFFSET)", 0, NULL, KEEP, VI_WALK) \
	X(NUM_VA_BITS, "NUMBER(VA_BITS)", 0, NULL, DERIVED, "TCR_EL1_T1SZ used alone")	\
	X(NUM_TCR_EL1_T1SZ, "NUMBER(TCR_EL1_T1SZ)", 0, NULL, DERIVED, "taken from VA_BITS") \
	X(NUM_PG_LRU, "NUMBER(PG_lru)", 0, NULL, KEEP, "page-cache pages kept") \
	X(NUM_PG_PRIVATE, "NUMBER(PG_private)", 0, NULL, KEEP, "page-cache pages kept") \
	X(NUM_PG_SWAPCACHE, "NUMBER(PG_swapcache)", 0, NULL, KEEP, "page-cache pages kept") \
	X(NUM_PG_SWAPBACKED, "NUMBER(PG_swapbacked)", 0, NULL, KEEP,	\
	  "swap-cache pages off the LRU kept")				\
	X(NUM_PG_SLAB, "NUMBER(PG_slab)", 0, NULL, KEEP,		\
	  "slab pages cannot be told: free, offline and anonymous pages kept") \
	X(NUM_PG_HWPOISON, "NUMBER(PG_hwpoison)", 0, NULL, KEEP, "hwpoison pages kept") \
	X(NUM_PG_HEAD_MASK, "NUMBER(PG_head_mask)", 0, NULL, KEEP,	\
	  "compound heads cannot be told: compound pages judged page by page") \
	X(NUM_PG_HUGETLB, "NUMBER(PG_hugetlb)", 0, NULL, KEEP,		\
	  "hugetlb pages cannot be told")			\
	X(NUM_BUDDY_MAPCOUNT, "NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)", 0, NULL, KEEP, "free pages kept") \
	X(NUM_OFFLINE_MAPCOUNT, "NUMBER(PAGE_OFFLINE_MAPCOUNT_VALUE)", 0, NULL, KEEP, \
	  "offline pages kept")						\
	X(NUM_SLAB_MAPCOUNT, "NUMBER(PAGE_SLAB_MAPCOUNT_VALUE)", 0, NULL, KEEP, \
	  "slab pages cannot be told: free, offline and anonymous pages kept") \
	X(NUM_HUGETLB_MAPCOUNT, "NUMBER(PAGE_HUGETLB_MAPCOUNT_VALUE)", 0, NULL, KEEP, \
	  "hugetlb pages cannot be told")				\
	X(NUM_UNACCEPTED_MAPCOUNT, "NUMBER(PAGE_UNACCEPTED_MAPCOUNT_VALUE)", 0, NULL, QUIET, \
	  "unaccepted pages kept") \
	X(NUM_HUGETLB_DTOR, "NUMBER(HUGETLB_PAGE_DTOR)", 0, NULL, KEEP,	\
	  "hugetlb pages cannot be told")			\
	X(SIZE_PRB, "SIZE(printk_ringbuffer)", 10, NULL, NONE, NULL)	\
	X(OFF_PRB_DESC_RING, "OFFSET(printk_ringbuffer.desc_ring)", 10, NULL, NONE, NULL) \
	X(OFF_PRB_TEXT_RING, "OFFSET(printk_ringbuffer.text_data_ring)", 10, NULL, NONE, NULL) \
	X(OFF_DR_COUNT_BITS, "OFFSET(prb_desc_ring.count_bits)", 10, NULL, NONE, NULL) \
	X(OFF_DR_DESCS, "OFFSET(prb_desc_ring.descs)", 10, NULL, NONE, NULL) \
	X(OFF_DR_INFOS, "OFFSET(prb_desc_ring.infos)", 10, NULL, NONE, NULL) \
	X(OFF_DR_HEAD_ID, "OFFSET(prb_desc_ring.head_id)", 10, NULL, NONE, NULL) \
	X(OFF_DR_TAIL_ID, "OFFSET(prb_desc_ring.tail_id)", 10, NULL, NONE, NULL) \
	X(SIZE_PRB_DESC, "SIZE(prb_desc)", 10, NULL, NONE, NULL)	\
	X(OFF_DESC_STATE, "OFFSET(prb_desc.state_var)", 10, NULL, NONE, NULL) \
	X(OFF_DESC_TEXT_LPOS, "OFFSET(prb_desc.text_blk_lpos)", 10, NULL, NONE, NULL) \
	X(OFF_LPOS_BEGIN, "OFFSET(prb_data_blk_lpos.begin)", 10, NULL, NONE, NULL) \
	X(OFF_LPOS_NEXT, "OFFSET(prb_data_blk_lpos.next)", 10, NULL, NONE, NULL) \
	X(SIZE_PRINTK_INFO, "SIZE(printk_info)", 10, NULL, NONE, NULL)	\
	X(OFF_INFO_SEQ, "OFFSET(printk_info.seq)", 10, NULL, NONE, NULL) \
	X(OFF_INFO_TS, "OFFSET(printk_info.ts_nsec)", 10, NULL, NONE, NULL) \
	X(OFF_INFO_TEXT_LEN, "OFFSET(printk_info.text_len)", 10, NULL, NONE, NULL) \
	X(OFF_TR_SIZE_BITS, "OFFSET(prb_data_ring.size_bits)", 10, NULL, NONE, NULL) \
	X(OFF_TR_DATA, "OFFSET(prb_data_ring.data)", 10, NULL, NONE, NULL) \
	X(OFF_ATOMIC_COUNTER, "OFFSET(atomic_long_t.counter)", 10, NULL, NONE, NULL)

enum vi_policy { VI_P_NONE, VI_P_KEEP, VI_P_DERIVED, VI_P_QUIET };

enum vi_key {
#define VI_ENUM(id, text, base, alias, policy, miss) VI_##id,
	VI_KEYS(VI_ENUM)
#undef VI_ENUM
	VI_NKEYS
};

struct vmcoreinfo {
	char osrelease[65];		/* utsname's size: a longer value is cut */
	uint8_t have_osrelease;		/* an OSRELEASE line, even an empty one */
	uint64_t v[VI_NKEYS];		/* raw bits; NUMBER()s may be negative */
	uint8_t have[VI_NKEYS];
	unsigned bad_lines;		/* known keys whose value did not parse */
};

/* Parses the note text (NUL-terminated). Unknown keys are ignored; a known
 * key with a malformed value is treated as absent and counted. A key given
 * twice keeps its first line, good or bad, as vmcoreinfo_get does. */
void vmcoreinfo_parse(struct vmcoreinfo *vi, const char *text);
/* Value of the first line "KEY=value", copied (cut to fit) into out;
 * -ENOENT, or -EINVAL for outsz 0. For keys the table does not hold
 * (OSRELEASE and CRASHTIME are in it: read vi->osrelease, VI_CRASHTIME). */
int vmcoreinfo_get(const char *text, const char *key, char *out, size_t outsz);
/* The value of KEY as the note spells it ("NUMBER(phys_base)"): the
 * parsed table's for the keys it has, else the line in text (may be NULL)
 * read the same way. 0, or -ENOENT (absent or malformed). For arch/. */
int vmcoreinfo_number(const struct vmcoreinfo *vi, const char *text, const char *key, uint64_t *v);
/* The release's major and minor numbers ("6.1.0-57-amd64": 6 and 1).
 * 0, or -ENOENT (no OSRELEASE, or one that does not start so). */
int vmcoreinfo_release(const struct vmcoreinfo *vi, unsigned *major, unsigned *minor);
static inline int vi_has(const struct vmcoreinfo *vi, enum vi_key k) { return vi->have[k]; }
static inline uint64_t vi_u(const struct vmcoreinfo *vi, enum vi_key k) { return vi->v[k]; }
/* The key's name as the newest kernel spells it ("?" out of range), the
 * older name of the same value (NULL if none), what the filter does
 * without it and what that means (NULL for keys it does not read). */
const char *vi_name(enum vi_key k);
const char *vi_alias(enum vi_key k);
enum vi_policy vi_policy(enum vi_key k);
const char *vi_miss(enum vi_key k);
/* The key whose name or alias is text, or VI_NKEYS. */
enum vi_key vi_lookup(const char *text);

#endif
