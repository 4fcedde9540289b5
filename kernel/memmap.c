#include "memmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"

#define SECTION_MARKED_PRESENT	0x1ull
/* Flag bits below the mem_map address in section_mem_map (five since 4.13,
 * which covers every kernel we support). */
#define SECTION_MAP_MASK	(~0x1full)
/* A struct page pointer must be a kernel address (the arch says where
 * those start). Anything else is corruption. */
static int is_kvaddr(const struct memmap *m, uint64_t a)
{
	return a >= m->km.ac.ops->kva_min;
}

_Static_assert(MM_WINDOW % 512 == 0, "the window must hold whole 512-pfn blocks");

static int kread(struct memmap *m, uint64_t va, void *buf, size_t len)
{
	return kmem_read(&m->km, va, buf, len);
}

/* ---- sections ---- */

/* Coded mem_map of section nr (struct page of pfn P is at coded +
 * P * SIZE(page)), or 0 when the section has none. */
static uint64_t section_map_uncached(struct memmap *m, uint64_t nr)
{
	uint64_t root = nr / m->per_root, entry;
	uint8_t ms[64];

	if (root >= m->nroots || m->ms_size > sizeof ms)
		return 0;
	if (m->per_root > 1) {		/* SPARSEMEM_EXTREME: roots are pointers */
		uint64_t rp;
		if (kread(m, m->roots_va + root * 8, &rp, 8) < 0 || !rp || !is_kvaddr(m, rp))
			return 0;
		entry = rp + (nr % m->per_root) * m->ms_size;
	} else {
		entry = m->roots_va + nr * m->ms_size;
	}
	if (kread(m, entry, ms, m->ms_size) < 0)
		return 0;
	uint64_t map = load_le64(ms + m->ms_map_off);
	if (!(map & SECTION_MARKED_PRESENT))
		return 0;
	map &= SECTION_MAP_MASK;
	/* The decoded pointer for the section's first pfn must be a kernel
	 * address; if not, this entry is garbage. */
	if (!is_kvaddr(m, map + (nr << m->sec_shift) * m->spage))
		return 0;
	return map;
}

static uint64_t section_map(struct memmap *m, uint64_t nr)
{
	if (nr != m->sec_cached) {
		m->sec_map = section_map_uncached(m, nr);
		m->sec_cached = nr;
	}
	return m->sec_map;
}

/* Loads the struct pages of window [wpfn, wpfn+MM_WINDOW). */
static void load_window(struct memmap *m, uint64_t wpfn)
{
	memset(m->win_ok, 0, MM_WINDOW);
	m->win_pfn = wpfn;
	uint64_t per_sec = 1ull << m->sec_shift;

	for (uint64_t p = wpfn; p < wpfn + MM_WINDOW;) {
		uint64_t nr = p >> m->sec_shift;
		uint64_t end = (nr + 1) * per_sec;
		if (end > wpfn + MM_WINDOW)
			end = wpfn + MM_WINDOW;
		uint64_t map = section_map(m, nr);
		if (map) {
			/* Read in leaf-sized pieces; a piece that fails only
			 * loses its own pfns. */
			uint64_t q = p;
			while (q < end) {
				uint64_t va = map + q * m->spage, pa, span;
				uint64_t n = end - q;
				if (m->km.ac.ops->vtop(&m->km.ac, va, &pa, &span) == 0) {
					uint64_t fit = span / m->spage;
					if (fit == 0)
						fit = 1;
					if (n > fit)
						n = fit;
					if (physmem_read(&m->km.pm, pa, m->win + (q - wpfn) * m->spage,
							 n * m->spage) == 0)
						memset(m->win_ok + (q - wpfn), 1, n);
				} else {
					/* unmapped: skip to the next page of struct pages */
					uint64_t next = ((va >> m->shift) + 1) << m->shift;
					n = (next - va + m->spage - 1) / m->spage;
					if (n > end - q)
						n = end - q;
					if (n == 0)
						n = 1;
				}
				q += n;
			}
		}
		p = end;
	}
}

/* ---- one page, makedumpfile's rules (docs/FILTERING.md) ---- */

static int flag(const struct memmap *m, uint64_t flags, enum vi_key k)
{
	if (!vi_has(&m->km.vi, k))
		return 0;
	uint64_t bit = vi_u(&m->km.vi, k);
	return bit < 64 && ((flags >> bit) & 1);
}

static int is_slab(const struct memmap *m, uint64_t flags, uint32_t mapcount)
{
	/* 6.10+: a page type; before: PG_slab. */
	if (vi_has(&m->km.vi, VI_NUM_SLAB_MAPCOUNT) &&
	    mapcount == (uint32_t)vi_u(&m->km.vi, VI_NUM_SLAB_MAPCOUNT))
		return 1;
	return flag(m, flags, VI_NUM_PG_SLAB);
}

static int is_anon(const struct memmap *m, uint64_t mapping, uint64_t flags, uint32_t mapcount)
{
	return (mapping & 1) && !is_slab(m, flags, mapcount);
}

static int is_cache(const struct memmap *m, uint64_t flags)
{
	if (flag(m, flags, VI_NUM_PG_LRU))
		return 1;
	/* PG_swapcache aliases another bit unless PG_swapbacked is set
	 * (kernels since 4.10 have PG_swapbacked). */
	return (!vi_has(&m->km.vi, VI_NUM_PG_SWAPBACKED) || flag(m, flags, VI_NUM_PG_SWAPBACKED)) &&
	       flag(m, flags, VI_NUM_PG_SWAPCACHE);
}

/* classify_one: kept, and counted, because the struct page is garbage. */
#define MM_IMPLAUSIBLE 0xfe
_Static_assert(MM_IMPLAUSIBLE != MM_KEEP && MM_IMPLAUSIBLE >= KDI_EX_NCLASSES, "a class of its own");

/* sp: this pfn's struct page; tail: the next pfn's, or NULL. Returns the
 * class and sets *nr to the pages the decision covers. */
static uint8_t classify_one(const struct memmap *m, uint64_t pfn, const uint8_t *sp,
			    const uint8_t *tail, uint64_t *nr)
{
	const struct vmcoreinfo *vi = &m->km.vi;
	uint64_t flags = load_le64(sp + vi_u(vi, VI_OFF_PAGE_FLAGS));
	uint64_t mapping = load_le64(sp + vi_u(vi, VI_OFF_PAGE_MAPPING));
	uint32_t mapcount = vi_has(vi, VI_OFF_PAGE_MAPCOUNT) ? load_le32(sp + vi_u(vi, VI_OFF_PAGE_MAPCOUNT)) : 0;
	uint64_t private = vi_has(vi, VI_OFF_PAGE_PRIVATE) ? load_le64(sp + vi_u(vi, VI_OFF_PAGE_PRIVATE)) : 0;
	uint64_t order = 0;
	int hugetlb = 0;

	*nr = 1;
	if (tail && vi_has(vi, VI_NUM_PG_HEAD_MASK) && (flags & vi_u(vi, VI_NUM_PG_HEAD_MASK))) {
		if (vi_has(vi, VI_NUM_HUGETLB_MAPCOUNT)) {
			/* 6.9+: order in the low byte of the first tail's flags,
			 * hugetlb a page type of the head. */
			order = load_le64(tail + vi_u(vi, VI_OFF_PAGE_FLAGS)) & 0xff;
			hugetlb = mapcount == (uint32_t)vi_u(vi, VI_NUM_HUGETLB_MAPCOUNT);
		} else if (vi_has(vi, VI_NUM_PG_HUGETLB)) {
			/* 6.6-6.8: the same order byte, hugetlb a tail flag. */
			uint64_t f1 = load_le64(tail + vi_u(vi, VI_OFF_PAGE_FLAGS));
			order = f1 & 0xff;
			hugetlb = vi_u(vi, VI_NUM_PG_HUGETLB) < 64 && ((f1 >> vi_u(vi, VI_NUM_PG_HUGETLB)) & 1);
		} else {
			if (m->order_off >= 0)
				order = tail[m->order_off];
			if (m->dtor_off >= 0 && vi_has(vi, VI_NUM_HUGETLB_DTOR))
				hugetlb = tail[m->dtor_off] == vi_u(vi, VI_NUM_HUGETLB_DTOR);
		}
		/* An order the pfn is not aligned to is not an order. */
		if (order >= 64 || (pfn & ((1ull << order) - 1)))
			order = 0;
	}
	uint64_t head = vi_has(vi, VI_OFF_PAGE_COMPOUND_HEAD) ? load_le64(sp + vi_u(vi, VI_OFF_PAGE_COMPOUND_HEAD)) : 0;
	if (head & 1)
		return MM_KEEP;	/* a tail: decided with its head, if at all */

	uint32_t lv = m->level;
	if ((lv & DL_FREE) && m->has_buddy && !is_slab(m, flags, mapcount) &&
	    mapcount == (uint32_t)vi_u(vi, VI_NUM_BUDDY_MAPCOUNT)) {
		if ((m->max_order && private >= m->max_order) || private >= 32)
			return MM_IMPLAUSIBLE;	/* not a believable free-block order */
		*nr = 1ull << private;
		return KDI_EX_FREE;
	}
	if ((lv & DL_FREE) && vi_has(vi, VI_NUM_UNACCEPTED_MAPCOUNT) && m->max_order &&
	    mapcount == (uint32_t)vi_u(vi, VI_NUM_UNACCEPTED_MAPCOUNT)) {
		*nr = 1ull << (m->max_order - 1);
		return KDI_EX_FREE;
	}
	*nr = 1ull << order;
	int cache = is_cache(m, flags), anon = is_anon(m, mapping, flags, mapcount);
	int priv = flag(m, flags, VI_NUM_PG_PRIVATE);
	if ((lv & DL_CACHE) && cache && !priv && !anon)
		return KDI_EX_CACHE;
	if ((lv & DL_CACHE_PRI) && cache && !anon)
		return priv ? KDI_EX_CACHE_PRIVATE : KDI_EX_CACHE;
	if ((lv & DL_USER) && (anon || hugetlb))
		return KDI_EX_USER;
	if (m->has_hwpoison && flag(m, flags, VI_NUM_PG_HWPOISON))
		return KDI_EX_HWPOISON;
	if (m->has_offline && !is_slab(m, flags, mapcount) &&
	    mapcount == (uint32_t)vi_u(vi, VI_NUM_OFFLINE_MAPCOUNT))
		return KDI_EX_OFFLINE;
	*nr = 1;
	return MM_KEEP;
}

void memmap_classify(struct memmap *m, uint64_t pfn, uint32_t n, uint8_t *cls)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t p = pfn + i;
		if (p < m->carry_end) {
			cls[i] = m->carry_cls;
			continue;
		}
		uint64_t wpfn = p & ~(uint64_t)(MM_WINDOW - 1);
		if (wpfn != m->win_pfn)
			load_window(m, wpfn);
		uint64_t k = p - wpfn;
		if (!m->win_ok[k]) {
			m->unreadable++;
			if (!section_map(m, p >> m->sec_shift))
				m->no_memmap++;	/* a subset of unreadable */
			cls[i] = MM_KEEP;
			continue;
		}
		/* makedumpfile reads struct pages 512 at a time and never looks
		 * past its buffer for a head's first tail: a head on the last
		 * pfn of a 512-block is judged as order 0 with no hugetlb mark.
		 * A real compound head is aligned to its order and cannot sit
		 * there; corrupt data can, and must be judged the same way
		 * (FILTERING.md Q12). Our window is a multiple of 512, so the
		 * tail is always inside it. */
		const uint8_t *sp = m->win + k * m->spage, *tail = NULL;
		if ((p & 511) != 511 && m->win_ok[k + 1])
			tail = sp + m->spage;
		uint64_t nr;
		uint8_t c = classify_one(m, p, sp, tail, &nr);
		if (c == MM_IMPLAUSIBLE) {
			m->implausible++;
			c = MM_KEEP;
		}
		cls[i] = c;
		if (c != MM_KEEP && nr > 1) {
			m->carry_end = p + nr;
			m->carry_cls = c;
		}
	}
}

/* ---- setup ---- */

static int need(const struct vmcoreinfo *vi, const enum vi_key *keys, size_t n, const char **missing)
{
	for (size_t i = 0; i < n; i++)
		if (!vi_has(vi, keys[i])) {
			*missing = vi_name(keys[i]);
			return 0;
		}
	return 1;
}

int memmap_init(struct memmap *m, const struct vmcore *vc, const struct arch_ops *arch,
		uint32_t level, uint32_t *applied, char *why, size_t whysz)
{
	const char *missing = NULL;
	struct vmcoreinfo *vi = &m->km.vi;
	size_t wn = 0;

	memset(m, 0, sizeof *m);
	m->win_pfn = UINT64_MAX;
	m->sec_cached = UINT64_MAX;
	m->order_off = m->dtor_off = -1;
	why[0] = 0;
	*applied = level & DL_ZERO;
	uint32_t want = level & (DL_CACHE | DL_CACHE_PRI | DL_USER | DL_FREE);
	/* The scan runs at every level, 0 included: hwpoison and offline
	 * pages are always excluded (makedumpfile does the same). Reasons are
	 * only reported when the level asked for more than that. */
#define WHY(...) (want ? (wn += snprintf(why + wn, wn < whysz ? whysz - wn : 0, __VA_ARGS__)) : 0)

	int r = kmem_init(&m->km, vc, arch);
	if (r < 0)
		return r;
	if (!m->km.ok) {
		WHY("VMCOREINFO lacks %s (needed to walk page tables)", m->km.missing);
		return 0;
	}
	static const enum vi_key base[] = {
		VI_SYM_MEM_SECTION, VI_SIZE_MEM_SECTION, VI_OFF_MEM_SECTION_MAP,
		VI_NUM_SECTION_SIZE_BITS, VI_NUM_MAX_PHYSMEM_BITS, VI_SIZE_PAGE,
		VI_OFF_PAGE_FLAGS, VI_OFF_PAGE_REFCOUNT, VI_OFF_PAGE_MAPPING,
	};
	if (!need(vi, base, sizeof base / sizeof base[0], &missing)) {
		WHY("VMCOREINFO lacks %s (needed to find struct pages)", missing);
		return 0;
	}
	m->shift = log2_pow2(vc->page_size);
	uint64_t ssb = vi_u(vi, VI_NUM_SECTION_SIZE_BITS), mpb = vi_u(vi, VI_NUM_MAX_PHYSMEM_BITS);
	m->spage = vi_u(vi, VI_SIZE_PAGE);
	m->ms_size = vi_u(vi, VI_SIZE_MEM_SECTION);
	m->ms_map_off = vi_u(vi, VI_OFF_MEM_SECTION_MAP);
	uint64_t offs[] = { vi_u(vi, VI_OFF_PAGE_FLAGS), vi_u(vi, VI_OFF_PAGE_REFCOUNT),
			    vi_u(vi, VI_OFF_PAGE_MAPPING),
			    vi_has(vi, VI_OFF_PAGE_MAPCOUNT) ? vi_u(vi, VI_OFF_PAGE_MAPCOUNT) : 0,
			    vi_has(vi, VI_OFF_PAGE_PRIVATE) ? vi_u(vi, VI_OFF_PAGE_PRIVATE) : 0,
			    vi_has(vi, VI_OFF_PAGE_COMPOUND_HEAD) ? vi_u(vi, VI_OFF_PAGE_COMPOUND_HEAD) : 0 };
	/* Written as "off <= size - 8": off + 8 could wrap. */
	int sane = ssb > m->shift && ssb < 40 && mpb > ssb && mpb <= 57 &&
		   m->spage >= 32 && m->spage <= 256 && m->ms_size >= 8 && m->ms_size <= 64 &&
		   m->ms_map_off <= m->ms_size - 8;
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
		sane = sane && offs[i] <= m->spage - 8;
	if (!sane) {
		WHY("VMCOREINFO struct sizes are out of range (corrupt?)");
		return 0;
	}
	m->sec_shift = ssb - m->shift;
	uint64_t nsections = 1ull << (mpb - ssb);
	uint64_t extreme_roots = (nsections + (vc->page_size / m->ms_size) - 1) / (vc->page_size / m->ms_size);
	m->roots_va = vi_u(vi, VI_SYM_MEM_SECTION);
	if (!vi_has(vi, VI_LEN_MEM_SECTION) || vi_u(vi, VI_LEN_MEM_SECTION) == extreme_roots) {
		m->per_root = vc->page_size / m->ms_size;
		m->nroots = extreme_roots;
	} else {
		m->per_root = 1;
		m->nroots = nsections;
	}
	/* MAX_ORDER is 11 on every kernel we know; beyond 32 it is garbage. */
	if (vi_has(vi, VI_LEN_FREE_AREA) && vi_u(vi, VI_LEN_FREE_AREA) >= 1 &&
	    vi_u(vi, VI_LEN_FREE_AREA) <= 32)
		m->max_order = vi_u(vi, VI_LEN_FREE_AREA);

	/* Compound order/dtor location in the first tail page. */
	if (vi_has(vi, VI_OFF_FOLIO_ORDER) && vi_u(vi, VI_OFF_FOLIO_ORDER) >= m->spage)
		m->order_off = vi_u(vi, VI_OFF_FOLIO_ORDER) - m->spage;
	else if (vi_has(vi, VI_OFF_PAGE_COMPOUND_ORDER))
		m->order_off = vi_u(vi, VI_OFF_PAGE_COMPOUND_ORDER);
	if (vi_has(vi, VI_OFF_FOLIO_DTOR) && vi_u(vi, VI_OFF_FOLIO_DTOR) >= m->spage)
		m->dtor_off = vi_u(vi, VI_OFF_FOLIO_DTOR) - m->spage;
	else if (vi_has(vi, VI_OFF_PAGE_COMPOUND_DTOR))
		m->dtor_off = vi_u(vi, VI_OFF_PAGE_COMPOUND_DTOR);
	if (m->order_off >= (long)m->spage)
		m->order_off = -1;
	if (m->dtor_off >= (long)m->spage)
		m->dtor_off = -1;

	m->has_buddy = vi_has(vi, VI_OFF_PAGE_PRIVATE) && vi_has(vi, VI_OFF_PAGE_MAPCOUNT) &&
		       vi_has(vi, VI_NUM_BUDDY_MAPCOUNT);
	m->has_offline = vi_has(vi, VI_OFF_PAGE_MAPCOUNT) && vi_has(vi, VI_NUM_OFFLINE_MAPCOUNT);
	m->has_hwpoison = vi_has(vi, VI_NUM_PG_HWPOISON);

	uint32_t ok = want;
	if ((want & DL_FREE) && !m->has_buddy) {
		ok &= ~DL_FREE;
		WHY("free pages kept: VMCOREINFO lacks the buddy marker; ");
	}
	static const enum vi_key cachekeys[] = { VI_NUM_PG_LRU, VI_NUM_PG_SWAPCACHE, VI_NUM_PG_PRIVATE };
	if ((want & (DL_CACHE | DL_CACHE_PRI)) && !need(vi, cachekeys, 3, &missing)) {
		ok &= ~(DL_CACHE | DL_CACHE_PRI);
		WHY("cache pages kept: VMCOREINFO lacks %s; ", missing);
	}
	/* From 6.10 PG_slab is gone from VMCOREINFO (slab became a page
	 * type). makedumpfile then falls back to bit 7, its historical
	 * PG_slab; we do the same so the kept sets agree (docs/FILTERING.md
	 * Q1). It only ever makes fewer pages count as anonymous. */
	if (!vi_has(vi, VI_NUM_PG_SLAB)) {
		vi->v[VI_NUM_PG_SLAB] = 7;
		vi->have[VI_NUM_PG_SLAB] = 1;
	}
	if (!vi_has(vi, VI_NUM_PG_HEAD_MASK))
		WHY("compound pages judged page by page: no PG_head_mask; ");
	*applied |= ok;
	m->level = ok;
	m->active = 1;

	m->win = malloc((size_t)MM_WINDOW * m->spage);
	m->win_ok = malloc(MM_WINDOW);
	if (!m->win || !m->win_ok)
		return -ENOMEM;

	/* A first probe: if not one section can be found, the root array
	 * was not where VMCOREINFO said; keep everything rather than guess. */
	int found = 0;
	for (uint64_t nr = 0; nr < nsections && nr < 1u << 16 && !found; nr++)
		found = section_map(m, nr) != 0;
	if (!found) {
		*applied = level & DL_ZERO;
		m->level = 0;
		m->active = 0;
		WHY("no mem_section could be read: struct pages not found, filtering only zero pages");
	}
	return 0;
#undef WHY
}

void memmap_fini(struct memmap *m)
{
	kmem_fini(&m->km);
	free(m->win);
	free(m->win_ok);
	m->win = m->win_ok = NULL;
}
