#include "memmap.h"

#include <errno.h>
#include <setjmp.h>
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

#ifndef MM_PREFETCH
#define MM_PREFETCH 32		/* struct pages ahead */
#endif

_Static_assert(MM_WINDOW % 512 == 0, "the window must hold whole 512-pfn blocks");

/* ---- a cursor's reads: its own translation cache and read count ---- */

static int cur_env_read(const struct arch_env *env, uint64_t pa, void *buf, size_t len)
{
	struct mm_cursor *c = env->ctx;
	return physmem_read(&c->pm, pa, buf, len);
}

/* Translation reads only memory; VMCOREINFO was read at init. */
static int cur_env_number(const struct arch_env *env, const char *key, uint64_t *v)
{
	(void)env; (void)key; (void)v;
	return -ENOENT;
}

/* The reading half of a cursor: what section lookups need. */
static void cursor_reader(struct mm_cursor *c, const struct memmap *m)
{
	memset(c, 0, sizeof *c);
	c->m = m;
	c->pm = m->km.pm;
	c->env = (struct arch_env){ .number = cur_env_number, .read = cur_env_read, .ctx = c };
	c->ac = m->km.ac;
	c->ac.env = &c->env;
	c->ac.cache_len = 0;
	c->sec_cached = UINT64_MAX;
	c->win_pfn = UINT64_MAX;
}

static int kread(struct mm_cursor *c, uint64_t va, void *buf, size_t len)
{
	return kmem_vread(&c->ac, &c->pm, va, buf, len);
}

/* ---- sections ---- */

/* Coded mem_map of section nr (struct page of pfn P is at coded +
 * P * SIZE(page)), or 0 when the section has none. */
static uint64_t section_map_uncached(struct mm_cursor *c, uint64_t nr)
{
	const struct memmap *m = c->m;
	uint64_t root = nr / m->per_root, entry;
	uint8_t ms[64];

	if (root >= m->nroots || m->ms_size > sizeof ms)
		return 0;
	if (m->per_root > 1) {		/* SPARSEMEM_EXTREME: roots are pointers */
		uint64_t rp;
		if (kread(c, m->roots_va + root * 8, &rp, 8) < 0 || !rp || !is_kvaddr(m, rp))
			return 0;
		entry = rp + (nr % m->per_root) * m->ms_size;
	} else {
		entry = m->roots_va + nr * m->ms_size;
	}
	if (kread(c, entry, ms, m->ms_size) < 0)
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

static uint64_t section_map(struct mm_cursor *c, uint64_t nr)
{
	if (nr != c->sec_cached) {
		c->sec_map = section_map_uncached(c, nr);
		c->sec_cached = nr;
	}
	return c->sec_map;
}

/* Finds where the struct pages of window [wpfn, wpfn+MM_WINDOW) are;
 * chunk_in reads them. Which pfns are readable depends on the window's
 * place only (windows are aligned), not on who asks or when: every cursor
 * sees the same. A piece is readable when the dump holds all of it (as if
 * read in one go); an I/O error when a chunk of it is read loses only that
 * chunk's pfns. */
static void load_window(struct mm_cursor *c, uint64_t wpfn)
{
	const struct memmap *m = c->m;

	memset(c->win_ok, 0, MM_WINDOW);
	memset(c->chunk_read, 0, sizeof c->chunk_read);
	c->npiece = 0;
	c->win_pfn = wpfn;
	uint64_t per_sec = 1ull << m->sec_shift;

	for (uint64_t p = wpfn; p < wpfn + MM_WINDOW;) {
		uint64_t nr = p >> m->sec_shift;
		uint64_t end = (nr + 1) * per_sec;
		if (end > wpfn + MM_WINDOW)
			end = wpfn + MM_WINDOW;
		uint64_t map = section_map(c, nr);
		if (map) {
			/* Leaf-sized pieces; one the dump lacks only loses its
			 * own pfns. */
			uint64_t q = p;
			while (q < end) {
				uint64_t va = map + q * m->spage, pa, span;
				uint64_t n = end - q;
				if (c->ac.ops->vtop(&c->ac, va, &pa, &span) == 0) {
					uint64_t fit = span / m->spage;
					if (fit == 0)
						fit = 1;
					if (n > fit)
						n = fit;
					if (physmem_holds(&c->pm, pa, n * m->spage)) {
						memset(c->win_ok + (q - wpfn), 1, n);
						c->piece[c->npiece++] = (struct mm_piece){
							(uint32_t)(q - wpfn), (uint32_t)(q - wpfn + n), pa };
					}
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
	c->wbase = c->win;
	c->pf = MM_WINDOW;	/* copies are in cache: no prefetch */
	if (!c->npiece || c->view.off_errno)
		return;
	/* In place when the pieces lie end to end: one range of the dump. */
	const struct mm_piece *pc = c->piece, *last = &c->piece[c->npiece - 1];
	for (uint32_t i = 1; i < c->npiece; i++)
		if (pc[i].pa != pc[0].pa + (uint64_t)(pc[i].lo - pc[0].lo) * m->spage)
			return;
	const uint8_t *v = physmem_view(&c->pm, &c->view, pc[0].pa,
					(size_t)(last->hi - pc[0].lo) * m->spage);
	if (!v)
		return;
	/* wbase may point before the mapping (pieces[0].lo > 0); only
	 * pfns of the pieces, inside it, are ever read through it. */
	c->wbase = (const uint8_t *)((uintptr_t)v - (uintptr_t)pc[0].lo * m->spage);
	c->pf = 0;
	memset(c->chunk_read, 1, sizeof c->chunk_read);
}

/* Reads chunk ch of the window (pieces are in pfn order). */
static void chunk_in(struct mm_cursor *c, uint32_t ch)
{
	const struct memmap *m = c->m;
	uint32_t lo = ch * MM_CHUNK, hi = lo + MM_CHUNK;

	c->chunk_read[ch] = 1;
	for (uint32_t i = 0; i < c->npiece; i++) {
		const struct mm_piece *pc = &c->piece[i];
		if (pc->hi <= lo)
			continue;
		if (pc->lo >= hi)
			break;
		uint32_t a = pc->lo > lo ? pc->lo : lo, b = pc->hi < hi ? pc->hi : hi;
		if (physmem_read(&c->pm, pc->pa + (uint64_t)(a - pc->lo) * m->spage,
				 c->win + (uint64_t)a * m->spage, (size_t)(b - a) * m->spage) < 0)
			memset(c->win_ok + a, 0, b - a);
	}
}

/* Struct page k of the window is there to be read: 1, or 0. */
static inline int have(struct mm_cursor *c, uint64_t k)
{
	uint32_t ch = (uint32_t)(k / MM_CHUNK);

	if (!c->chunk_read[ch])
		chunk_in(c, ch);
	return c->win_ok[k];
}

/* ---- one page, makedumpfile's rules (docs/FILTERING.md) ---- */

static uint64_t field64(const uint8_t *sp, long off)
{
	return off >= 0 ? load_le64(sp + off) : 0;
}

static uint32_t field32(const uint8_t *sp, long off)
{
	return off >= 0 ? load_le32(sp + off) : 0;
}

static int is_slab(const struct mm_rules *r, uint64_t flags, uint32_t mapcount)
{
	/* 6.10+: a page type; before: PG_slab. */
	return (r->slab_type_known && mapcount == r->slab_type) || (flags & r->slab);
}

/* classify_one: kept, and counted, because the struct page is garbage. */
#define MM_IMPLAUSIBLE 0xfe
_Static_assert(MM_IMPLAUSIBLE != MM_KEEP && MM_IMPLAUSIBLE >= KDI_EX_NCLASSES, "a class of its own");

/* sp: this pfn's struct page; tail: the next pfn's, or NULL. Returns the
 * class and sets *nr to the pages the decision covers. */
static uint8_t classify_one(const struct memmap *m, uint64_t pfn, const uint8_t *sp,
			    const uint8_t *tail, uint64_t *nr)
{
	const struct mm_rules *r = &m->r;
	uint64_t flags = load_le64(sp + r->o_flags);
	uint32_t mapcount = field32(sp, r->o_mapcount);
	uint64_t order = 0;
	int hugetlb = 0;

	*nr = 1;
	if (r->none)
		return MM_KEEP;
	/* a tail: decided with its head, if at all. Bit 0 marks it in both
	 * compound_head and 7.1's compound_info (whose other bits are a
	 * mask, not a pointer, under HVO: never read here). */
	if (field64(sp, r->o_head) & 1)
		return MM_KEEP;
	if (tail && (flags & r->head_mask)) {
		switch (r->huge) {
		case MM_HUGE_TYPE:
			/* 6.9+: order in the low byte of the first tail's flags,
			 * hugetlb a page type of the head. */
			order = load_le64(tail + r->o_flags) & 0xff;
			hugetlb = r->hugetlb_known && mapcount == r->hugetlb_type;
			break;
		case MM_HUGE_FLAG1: {
			/* 6.6-6.8: the same order byte, hugetlb a tail flag. */
			uint64_t f1 = load_le64(tail + r->o_flags);
			order = f1 & 0xff;
			hugetlb = (f1 & r->hugetlb_flag1) != 0;
			break;
		}
		case MM_HUGE_DTOR:
			if (m->order_off >= 0)
				order = tail[m->order_off];
			if (r->hugetlb_known)
				hugetlb = tail[m->dtor_off] == r->hugetlb_dtor;
			break;
		}
		/* An order the pfn is not aligned to is not an order. */
		if (order >= 64 || (pfn & ((1ull << order) - 1)))
			order = 0;
	}

	uint32_t lv = m->level;
	/* Without a slab marker every page might be slab: has_buddy and
	 * has_offline are off then, and mapping bit 0 means "maybe anon". */
	int slab = r->slab_known ? is_slab(r, flags, mapcount) : 1;
	if ((lv & DL_FREE) && m->has_buddy && !slab && mapcount == r->buddy_type) {
		uint64_t private = field64(sp, r->o_private);
		if ((m->max_order && private >= m->max_order) || private >= 32)
			return MM_IMPLAUSIBLE;	/* not a believable free-block order */
		*nr = 1ull << private;
		return KDI_EX_FREE;
	}
	if ((lv & DL_FREE) && r->unaccepted_known && m->max_order &&
	    mapcount == r->unaccepted_type) {
		*nr = 1ull << (m->max_order - 1);
		return KDI_EX_FREE;
	}
	*nr = 1ull << order;
	/* PG_swapcache aliases another bit unless PG_swapbacked is set
	 * (kernels since 4.10 have PG_swapbacked; without it the alias
	 * cannot be told apart, and only PG_lru counts). */
	int cache = (flags & r->lru) ||
		    (r->swapbacked_known && (flags & r->swapbacked) && (flags & r->swapcache));
	int mbit = (field64(sp, r->o_mapping) & 1) != 0;
	int anon = mbit && !slab;			/* proven anonymous */
	int maybe_anon = mbit && (!slab || !r->slab_known);
	int priv = (flags & r->private_) != 0;
	if ((lv & DL_CACHE) && cache && !priv && !maybe_anon)
		return KDI_EX_CACHE;
	if ((lv & DL_CACHE_PRI) && cache && !maybe_anon)
		return priv ? KDI_EX_CACHE_PRIVATE : KDI_EX_CACHE;
	if ((lv & DL_USER) && (anon || hugetlb))
		return KDI_EX_USER;
	if (flags & r->hwpoison)
		return KDI_EX_HWPOISON;
	if (m->has_offline && !slab && mapcount == r->offline_type)
		return KDI_EX_OFFLINE;
	/* Kept. With no tail marker a head keeps its tails as one run, as
	 * the marker would have kept them one by one. */
	*nr = r->tails_by_head ? 1ull << order : 1;
	return MM_KEEP;
}

/* ---- runs of pfns ---- */

static void classify_run(struct mm_cursor *c, uint64_t pfn, uint32_t n, uint8_t *cls, uint8_t *fl)
{
	const struct memmap *m = c->m;
	uint64_t spage = m->spage;

	for (uint32_t i = 0; i < n;) {
		uint64_t p = pfn + i;
		if (p < c->carry.end) {
			/* inside a run: no struct page to read */
			uint64_t left = c->carry.end - p;
			uint32_t k = left < n - i ? (uint32_t)left : n - i;
			memset(cls + i, c->carry.cls, k);
			memset(fl + i, MM_FL_CONT, k);
			i += k;
			continue;
		}
		uint64_t wpfn = p & ~(uint64_t)(MM_WINDOW - 1);
		if (wpfn != c->win_pfn)
			load_window(c, wpfn);
		uint64_t wend = wpfn + MM_WINDOW - pfn;	/* as an index */
		uint32_t lim = wend < n ? (uint32_t)wend : n;
		/* A struct page is a cache line read once, from memory: keep
		 * the next MM_PREFETCH of the window asked for (a prefetch where
		 * there is nothing is harmless). c->pf: the first not asked for
		 * yet; past a long run, all of them at once. */
		uint64_t pf = c->pf > p - wpfn ? c->pf : p - wpfn;
		for (; i < lim; i++) {
			p = pfn + i;
			uint64_t k = p - wpfn;
			for (uint64_t e = k + MM_PREFETCH < MM_WINDOW ? k + MM_PREFETCH : MM_WINDOW; pf < e; pf++)
				__builtin_prefetch(c->wbase + pf * spage);
			if (!have(c, k)) {
				cls[i] = MM_KEEP;
				fl[i] = MM_FL_UNREAD;
				if (!section_map(c, p >> m->sec_shift))
					fl[i] |= MM_FL_NOMAP;	/* no (valid) mem_map there */
				continue;
			}
			/* makedumpfile reads struct pages 512 at a time and never
			 * looks past its buffer for a head's first tail: a head on
			 * the last pfn of a 512-block is judged as order 0 with no
			 * hugetlb mark. A real compound head is aligned to its order
			 * and cannot sit there; corrupt data can, and must be
			 * judged the same way (FILTERING.md Q12). Our window is a
			 * multiple of 512, so the tail is always inside it. */
			const uint8_t *sp = c->wbase + k * spage, *tail = NULL;
			if ((p & 511) != 511 && have(c, k + 1))
				tail = sp + spage;
			uint64_t nr;
			uint8_t cl = classify_one(m, p, sp, tail, &nr);
			fl[i] = 0;
			if (cl == MM_IMPLAUSIBLE) {
				fl[i] = MM_FL_IMPLAUSIBLE;
				cl = MM_KEEP;
			}
			cls[i] = cl;
			if (nr > 1) {
				c->carry = (struct mm_carry){ .end = p + nr, .cls = cl };
				i++;
				break;	/* the run's pfns in one go */
			}
		}
		c->pf = (uint32_t)pf;
	}
}

/* A fault in the view (SIGBUS) undoes the whole call: the cursor gives
 * views up, reloads the window with pread, and starts again from the
 * carry it was given, so a fault changes nothing but the read path (an
 * unreadable chunk is then what pread says, as it always was). */
void memmap_classify(struct mm_cursor *c, uint64_t pfn, uint32_t n, uint8_t *cls, uint8_t *fl)
{
	if (c->view.off_errno) {
		classify_run(c, pfn, n, cls, fl);
		return;
	}
	sigjmp_buf jb;
	const struct mm_carry carry0 = c->carry;	/* not written after sigsetjmp */
	if (sigsetjmp(jb, 0)) {
		physmem_guard(NULL);
		physmem_view_off(&c->view, EFAULT);
		c->view.faults++;
		c->win_pfn = UINT64_MAX;
		c->carry = carry0;
		classify_run(c, pfn, n, cls, fl);
		return;
	}
	physmem_guard(&jb);
	classify_run(c, pfn, n, cls, fl);
	physmem_guard(NULL);
}

void memmap_join(struct mm_cursor *c, struct mm_carry in, uint64_t pfn, uint32_t n,
		 uint8_t *cls, uint8_t *fl, struct mm_carry *out, uint32_t *touched)
{
	*touched = 0;
	if (in.end <= pfn || !n)
		return;		/* nothing carries in: the first pass stands */
	uint64_t end = pfn + n;
	uint32_t k = in.end < end ? (uint32_t)(in.end - pfn) : n;
	memset(cls, in.cls, k);
	memset(fl, MM_FL_CONT, k);
	*touched = k;
	if (k == n) {
		*out = in;	/* the run covers it all and goes on */
		return;
	}
	/* Where the run ends the first pass was free of any run (it judged
	 * that pfn afresh, as the in-order pass does): from there on both
	 * agree. Otherwise a run the first pass began under ours goes on past
	 * its end, which the in-order pass never began: judge the rest again. */
	if (!(fl[k] & MM_FL_CONT))
		return;
	c->carry = (struct mm_carry){ 0 };
	memmap_classify(c, pfn + k, n - k, cls + k, fl + k);
	*out = c->carry;
	*touched = n;
}

/* ---- setup ---- */

/* A flag's mask: 0 when VMCOREINFO lacks it or it is no bit of a word. */
static uint64_t flag_mask(const struct vmcoreinfo *vi, enum vi_key k)
{
	if (!vi_has(vi, k) || vi_u(vi, k) >= 64)
		return 0;
	return 1ull << vi_u(vi, k);
}

static long offset_or_absent(const struct vmcoreinfo *vi, enum vi_key k)
{
	return vi_has(vi, k) ? (long)vi_u(vi, k) : -1;
}

/* The lookups classify_one would make per pfn, made once, and which of
 * its decisions the note gives the inputs for (the rest keep their
 * pages). Marks the keys whose absence costs a decision. */
static void set_rules(struct memmap *m)
{
	const struct vmcoreinfo *vi = &m->km.vi;
	struct mm_rules *r = &m->r;
	uint8_t *miss = m->key_missing;
	int has_mapcount = vi_has(vi, VI_OFF_PAGE_MAPCOUNT);

	r->o_flags = (long)vi_u(vi, VI_OFF_PAGE_FLAGS);
	r->o_mapping = (long)vi_u(vi, VI_OFF_PAGE_MAPPING);
	r->o_mapcount = offset_or_absent(vi, VI_OFF_PAGE_MAPCOUNT);
	r->o_private = offset_or_absent(vi, VI_OFF_PAGE_PRIVATE);
	r->o_head = offset_or_absent(vi, VI_OFF_PAGE_COMPOUND_HEAD);
	r->head_mask = vi_has(vi, VI_NUM_PG_HEAD_MASK) ? vi_u(vi, VI_NUM_PG_HEAD_MASK) : 0;
	r->lru = flag_mask(vi, VI_NUM_PG_LRU);
	r->swapcache = flag_mask(vi, VI_NUM_PG_SWAPCACHE);
	r->swapbacked_known = vi_has(vi, VI_NUM_PG_SWAPBACKED);
	r->swapbacked = flag_mask(vi, VI_NUM_PG_SWAPBACKED);
	r->private_ = flag_mask(vi, VI_NUM_PG_PRIVATE);
	r->hwpoison = m->has_hwpoison ? flag_mask(vi, VI_NUM_PG_HWPOISON) : 0;
	r->slab_type_known = vi_has(vi, VI_NUM_SLAB_MAPCOUNT);
	r->slab_type = (uint32_t)vi_u(vi, VI_NUM_SLAB_MAPCOUNT);
	r->buddy_type = (uint32_t)vi_u(vi, VI_NUM_BUDDY_MAPCOUNT);
	r->offline_type = (uint32_t)vi_u(vi, VI_NUM_OFFLINE_MAPCOUNT);
	r->unaccepted_known = has_mapcount && vi_has(vi, VI_NUM_UNACCEPTED_MAPCOUNT);
	r->unaccepted_type = (uint32_t)vi_u(vi, VI_NUM_UNACCEPTED_MAPCOUNT);
	r->hugetlb_type = (uint32_t)vi_u(vi, VI_NUM_HUGETLB_MAPCOUNT);
	r->hugetlb_dtor = vi_u(vi, VI_NUM_HUGETLB_DTOR);

	/* Slab: a page type from 6.10, PG_slab before. With the type, a
	 * missing PG_slab means bit 7, as makedumpfile reads it (FILTERING.md
	 * Q1: it only makes fewer pages anonymous). With neither, or the
	 * type without _mapcount to compare it with, no page is proven not
	 * slab. */
	if (vi_has(vi, VI_NUM_SLAB_MAPCOUNT)) {
		r->slab_known = has_mapcount;
		r->slab = vi_has(vi, VI_NUM_PG_SLAB) ? flag_mask(vi, VI_NUM_PG_SLAB) : 1ull << 7;
	} else if (vi_has(vi, VI_NUM_PG_SLAB)) {
		r->slab_known = 1;
		r->slab = flag_mask(vi, VI_NUM_PG_SLAB);
	} else {
		miss[VI_NUM_PG_SLAB] = miss[VI_NUM_SLAB_MAPCOUNT] = 1;
	}

	/* Hugetlb and the compound order: which generation the note is,
	 * by the keys it has (6.9+ page type, 6.6-6.8 flag, before that
	 * the destructor byte beside the order byte in the first tail). */
	int order_known = 1;
	if (vi_has(vi, VI_NUM_HUGETLB_MAPCOUNT)) {
		r->huge = MM_HUGE_TYPE;
		r->hugetlb_known = has_mapcount;
	} else if (vi_has(vi, VI_NUM_PG_HUGETLB)) {
		r->huge = MM_HUGE_FLAG1;
		r->hugetlb_flag1 = flag_mask(vi, VI_NUM_PG_HUGETLB);
		r->hugetlb_known = 1;
	} else {
		r->huge = MM_HUGE_DTOR;
		order_known = m->order_off >= 0;
		if (!order_known)
			miss[VI_OFF_FOLIO_ORDER] = miss[VI_OFF_PAGE_COMPOUND_ORDER] = 1;
		if (!vi_has(vi, VI_NUM_HUGETLB_DTOR))
			miss[VI_NUM_HUGETLB_MAPCOUNT] = miss[VI_NUM_PG_HUGETLB] =
				miss[VI_NUM_HUGETLB_DTOR] = 1;
		else if (m->dtor_off < 0)
			miss[VI_OFF_FOLIO_DTOR] = miss[VI_OFF_PAGE_COMPOUND_DTOR] = 1;
		r->hugetlb_known = m->dtor_off >= 0 && vi_has(vi, VI_NUM_HUGETLB_DTOR);
	}

	/* Tails: bit 0 of compound_head (compound_info from 7.1). Without
	 * it a tail looks like a page of its own and its fields (a folio's
	 * counters where mapping is) decide wrongly; its head can still
	 * keep it, when heads and their order can be told. */
	if (!vi_has(vi, VI_OFF_PAGE_COMPOUND_HEAD)) {
		miss[VI_OFF_PAGE_COMPOUND_HEAD] = 1;
		if (r->head_mask && order_known)
			r->tails_by_head = 1;
		else
			r->none = 1;
	}
	if (!vi_has(vi, VI_NUM_PG_HEAD_MASK))
		miss[VI_NUM_PG_HEAD_MASK] = 1;
}

static int need(const struct vmcoreinfo *vi, const enum vi_key *keys, size_t n, uint8_t *miss)
{
	int ok = 1;

	for (size_t i = 0; i < n; i++)
		if (!vi_has(vi, keys[i])) {
			miss[keys[i]] = 1;
			ok = 0;
		}
	return ok;
}

/* "kernel 7.4: newer than the newest tested, 7.3; " when OSRELEASE says
 * so. Only said: the keys decide what is filtered, never the version. */
static size_t say_release(const struct vmcoreinfo *vi, char *out, size_t sz)
{
	unsigned maj, min;

	if (vmcoreinfo_release(vi, &maj, &min) < 0)
		return 0;
	if (maj < MM_NEWEST_TESTED_MAJOR ||
	    (maj == MM_NEWEST_TESTED_MAJOR && min <= MM_NEWEST_TESTED_MINOR))
		return 0;
	int n = snprintf(out, sz, "kernel %u.%u: newer than the newest tested, %u.%u; ", maj, min,
			 MM_NEWEST_TESTED_MAJOR, MM_NEWEST_TESTED_MINOR);
	return n < 0 ? 0 : (size_t)n;
}

/* The missing keys, once: "VMCOREINFO lacks A, B: what A means; what B
 * means; " (each meaning once), and the names alone in missing_keys. */
static size_t say_keys(struct memmap *m, char *out, size_t sz)
{
	size_t n = 0, kn = 0;
	char *names = m->missing_keys;
	const size_t nsz = sizeof m->missing_keys;
	int any = 0;

#define PUT(buf, len, size, ...) ((len) += snprintf((buf) + ((len) < (size) ? (len) : (size)), \
					(len) < (size) ? (size) - (len) : 0, __VA_ARGS__))
	names[0] = 0;
	for (int k = 0; k < VI_NKEYS; k++) {
		enum vi_policy p = vi_policy((enum vi_key)k);
		if (!m->key_missing[k] || (p != VI_P_KEEP && p != VI_P_DERIVED))
			continue;
		/* Both names of a renamed key: either would have done. */
		const char *alias = vi_alias((enum vi_key)k);
		PUT(out, n, sz, "%s%s%s%s", any ? ", " : "VMCOREINFO lacks ", vi_name((enum vi_key)k),
		    alias ? " or " : "", alias ? alias : "");
		PUT(names, kn, nsz, "%s%s%s%s", any ? ", " : "", vi_name((enum vi_key)k),
		    alias ? " or " : "", alias ? alias : "");
		any = 1;
	}
	if (!any)
		return 0;
	PUT(out, n, sz, ": ");
	for (int k = 0; k < VI_NKEYS; k++) {
		enum vi_policy p = vi_policy((enum vi_key)k);
		const char *t = vi_miss((enum vi_key)k);
		if (!m->key_missing[k] || (p != VI_P_KEEP && p != VI_P_DERIVED) || !t)
			continue;
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = m->key_missing[j] && vi_miss((enum vi_key)j) &&
			      !strcmp(vi_miss((enum vi_key)j), t);
		if (!dup)
			PUT(out, n, sz, "%s; ", t);
	}
#undef PUT
	if (kn >= nsz)
		snprintf(names + nsz - 5, 5, "...");
	return n < sz ? n : sz;
}

static int setup(struct memmap *m, const struct vmcore *vc, const struct arch_ops *arch,
		 uint32_t level, uint32_t *applied, char *why, size_t whysz)
{
	struct vmcoreinfo *vi = &m->km.vi;
	size_t wn = 0;

	memset(m, 0, sizeof *m);
	m->order_off = m->dtor_off = -1;
	why[0] = 0;
	*applied = level & DL_ZERO;
	uint32_t want = level & (DL_CACHE | DL_CACHE_PRI | DL_USER | DL_FREE);
	/* The scan runs at every level, 0 included: hwpoison and offline
	 * pages are always excluded (makedumpfile does the same). Missing
	 * keys are said at every level; reasons for dropping level bits
	 * only when the level asked for more than that. */
#define WHY(...) (want ? (wn += snprintf(why + wn, wn < whysz ? whysz - wn : 0, __VA_ARGS__)) : 0)
#define KEYS() (wn += say_release(vi, why + (wn < whysz ? wn : whysz), wn < whysz ? whysz - wn : 0), \
		wn += say_keys(m, why + (wn < whysz ? wn : whysz), wn < whysz ? whysz - wn : 0))

	int r = kmem_init(&m->km, vc, arch);
	if (r < 0)
		return r;
	for (int k = 0; k < VI_NKEYS; k++)
		if (m->km.asked_missing[k])
			m->key_missing[k] = 1;
	if (!m->km.ok) {
		enum vi_key k = m->km.missing ? vi_lookup(m->km.missing) : VI_NKEYS;
		if (k != VI_NKEYS) {
			m->key_missing[k] = 1;
			KEYS();
			/* A DERIVED key whose fallback failed too (no kernel-text
			 * PT_LOAD for phys_base): its meaning is not what happened. */
			if (strcmp(vi_miss(k) ? vi_miss(k) : "", VI_WALK) && wn < whysz)
				wn += snprintf(why + wn, whysz - wn, "%s; ", VI_WALK);
		} else {
			KEYS();
			WHY("VMCOREINFO lacks %s (needed to walk page tables)", m->km.missing);
		}
		return 0;
	}
	static const enum vi_key base[] = {
		VI_SYM_MEM_SECTION, VI_SIZE_MEM_SECTION, VI_OFF_MEM_SECTION_MAP,
		VI_NUM_SECTION_SIZE_BITS, VI_NUM_MAX_PHYSMEM_BITS, VI_SIZE_PAGE,
		VI_OFF_PAGE_FLAGS, VI_OFF_PAGE_MAPPING,
	};
	if (!need(vi, base, sizeof base / sizeof base[0], m->key_missing)) {
		KEYS();
		return 0;
	}
	m->shift = log2_pow2(vc->page_size);
	uint64_t ssb = vi_u(vi, VI_NUM_SECTION_SIZE_BITS), mpb = vi_u(vi, VI_NUM_MAX_PHYSMEM_BITS);
	m->spage = vi_u(vi, VI_SIZE_PAGE);
	m->ms_size = vi_u(vi, VI_SIZE_MEM_SECTION);
	m->ms_map_off = vi_u(vi, VI_OFF_MEM_SECTION_MAP);
	uint64_t offs[] = { vi_u(vi, VI_OFF_PAGE_FLAGS), vi_u(vi, VI_OFF_PAGE_MAPPING),
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
		KEYS();
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

	m->has_hwpoison = vi_has(vi, VI_NUM_PG_HWPOISON);
	set_rules(m);
	static const enum vi_key buddykeys[] = {
		VI_OFF_PAGE_MAPCOUNT, VI_OFF_PAGE_PRIVATE, VI_NUM_BUDDY_MAPCOUNT,
	};
	static const enum vi_key offlinekeys[] = { VI_OFF_PAGE_MAPCOUNT, VI_NUM_OFFLINE_MAPCOUNT };
	static const enum vi_key cachekeys[] = { VI_NUM_PG_LRU, VI_NUM_PG_SWAPCACHE, VI_NUM_PG_PRIVATE };
	static const enum vi_key otherkeys[] = {
		VI_NUM_PG_SWAPBACKED, VI_NUM_PG_HWPOISON, VI_LEN_FREE_AREA, VI_LEN_MEM_SECTION,
	};
	m->has_buddy = need(vi, buddykeys, 3, m->key_missing) && m->r.slab_known;
	m->has_offline = need(vi, offlinekeys, 2, m->key_missing) && m->r.slab_known;
	int cache_ok = need(vi, cachekeys, 3, m->key_missing);
	(void)need(vi, otherkeys, 4, m->key_missing);
	KEYS();

	uint32_t ok = want;
	if (m->r.none) {
		ok = 0;
		m->has_buddy = m->has_offline = m->has_hwpoison = 0;
		m->r.hwpoison = 0;
		WHY("tail pages cannot be told: no page excluded by its struct page; ");
	}
	if ((ok & DL_FREE) && !m->has_buddy) {
		ok &= ~DL_FREE;
		WHY("free pages kept; ");
	}
	if ((ok & (DL_CACHE | DL_CACHE_PRI)) && !cache_ok) {
		ok &= ~(DL_CACHE | DL_CACHE_PRI);
		WHY("cache pages kept; ");
	}
	if ((ok & DL_USER) && !m->r.slab_known && !m->r.hugetlb_known) {
		ok &= ~DL_USER;
		WHY("user pages kept; ");
	}
	*applied |= ok;
	m->level = ok;
	m->active = 1;

	/* A first probe: if not one section can be found, the root array
	 * was not where VMCOREINFO said; keep everything rather than guess. */
	struct mm_cursor probe;
	int found = 0;
	cursor_reader(&probe, m);
	for (uint64_t nr = 0; nr < nsections && nr < 1u << 16 && !found; nr++)
		found = section_map(&probe, nr) != 0;
	if (!found) {
		*applied = level & DL_ZERO;
		m->level = 0;
		m->active = 0;
		WHY("no mem_section could be read: struct pages not found, filtering only zero pages");
	}
	return 0;
#undef KEYS
#undef WHY
}

int memmap_init(struct memmap *m, const struct vmcore *vc, const struct arch_ops *arch,
		uint32_t level, uint32_t *applied, char *why, size_t whysz)
{
	if (!whysz)
		return -EINVAL;
	int r = setup(m, vc, arch, level, applied, why, whysz);
	/* One line: no separator left at its end. */
	size_t len = strnlen(why, whysz - 1);
	why[len] = 0;
	while (len >= 2 && why[len - 2] == ';' && why[len - 1] == ' ')
		why[len -= 2] = 0;
	return r;
}

void memmap_fini(struct memmap *m)
{
	kmem_fini(&m->km);
}

int memmap_cursor_init(struct mm_cursor *c, const struct memmap *m)
{
	cursor_reader(c, m);
	physmem_view_init(&c->view, (uint64_t)MM_VIEW_WINDOWS * MM_WINDOW * m->spage, m->no_view);
	c->win = malloc((size_t)MM_WINDOW * (m->spage ? m->spage : 1));
	c->win_ok = malloc(MM_WINDOW);
	c->piece = malloc(MM_WINDOW * sizeof *c->piece);
	if (!c->win || !c->win_ok || !c->piece) {
		memmap_cursor_fini(c);
		return -ENOMEM;
	}
	return 0;
}

uint64_t memmap_section(struct mm_cursor *c, uint64_t nr)
{
	return section_map(c, nr);
}

void memmap_cursor_fini(struct mm_cursor *c)
{
	free(c->win);
	free(c->win_ok);
	free(c->piece);
	physmem_view_fini(&c->view);
	c->win = c->win_ok = NULL;
	c->piece = NULL;
}
