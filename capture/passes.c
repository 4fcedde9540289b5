/* The passes over the pfns and their decision (capture/passes.h): the
 * spans, their classification and joining, and the block iterator that
 * walks them pass after pass under the ring's lock. */
#include "passes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel/dbgpages.h"
#include "../kernel/vmemmap.h"

/* ---- spans ----
 * The struct-page pass works on spans: the pfns of one range inside one
 * aligned struct-page window (SPAN_PAGES), whole blocks. Any worker may
 * classify any span, in any order, from no carry (memmap_classify); the
 * block iterator, which takes spans in pfn order under the lock, joins
 * each to the run that carries into it (memmap_join: a memset, a rare
 * re-judging of a corrupt memmap) and then only reads per-block counts to
 * fold the all-excluded blocks. Another pass over the same memory with
 * another test for "this block has pages to write" (the kernel
 * pages first) is a second walk of the same spans with another
 * block_keeps. */
#define SPAN_PAGES CAPTURE_SPAN_PFNS
#define SPAN_VP_WORDS ((CAPTURE_SPAN_VPS + 63) / 64)
#define SPAN_BLOCKS (SPAN_PAGES / BLOCK_PAGES)
_Static_assert(SPAN_PAGES % BLOCK_PAGES == 0, "spans hold whole blocks");

/* One block's decisions, counted. */
struct blocksum {
	uint16_t keep;			/* pages to read */
	uint16_t unread;		/* of them, with an unreadable struct page */
	uint16_t nomap;			/* ... of those, in a section without a mem_map */
	uint16_t implaus;		/* of them, with an implausible struct page */
	uint16_t ex[KDI_EX_NCLASSES];	/* excluded, by class */
	uint16_t scan;			/* pfns this pass decides */
};

enum { SP_FREE, SP_BUSY, SP_READY };

struct span {
	int state;			/* SP_FREE, SP_BUSY (being classified), SP_READY */
	int joined;			/* memmap_join done */
	int pass;			/* the pass it was handed out in */
	int tier;			/* ... and its tier, in the EARLY pass */
	uint64_t seq;			/* its number in pfn order */
	uint64_t lo, hi;		/* pfns [lo, hi), one range, one window */
	struct mm_carry out;		/* the run it leaves */
	uint8_t cls[SPAN_PAGES], fl[SPAN_PAGES];
	/* With the kernel's pages first (in->kernel): its decisions too. */
	struct mm_carry kout;
	uint8_t kcls[SPAN_PAGES], kfl[SPAN_PAGES];
	/* With in->early: in the EARLY pass, 1 for a pfn of the tier's
	 * pages; after it, 1 for a pfn the EARLY pass decided (wrote). */
	uint8_t efl[SPAN_PAGES];
	/* With in->memmap: per pfn 0, or 1 for a page of struct pages (2 in
	 * the LATER pass when one of the pfns it describes is kept); and in
	 * the first pass the memory map's virtual pages from vneed_vp on
	 * that hold a struct page of a pfn the filter keeps here. */
	uint8_t vfl[SPAN_PAGES];
	uint64_t vneed_vp;
	uint64_t vneed[SPAN_VP_WORDS];
	struct blocksum sum[SPAN_BLOCKS];	/* by (pfn % SPAN_PAGES) / BLOCK_PAGES */
};

/* ---- layout ---- */

/* The align-aligned pfns that hold runs r[0, n) (sorted by lo), inside the
 * memory the vmcore has: *out, *nout. r is merged in place. */
static int span_windows(const struct passes *p, struct pfn_run *r, uint32_t n, uint64_t align,
			struct pfn_run **out, uint32_t *nout)
{
	uint32_t w = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint64_t lo = r[k].lo - r[k].lo % align;
		uint64_t hi = (r[k].hi + align - 1) / align * align;
		if (w && lo <= r[w - 1].hi)
			r[w - 1].hi = hi > r[w - 1].hi ? hi : r[w - 1].hi;
		else
			r[w++] = (struct pfn_run){ lo, hi };
	}
	/* ... inside the memory the vmcore has (both lists sorted). */
	struct pfn_run *o = calloc(w + p->nranges + 1, sizeof *o);
	uint32_t m = 0, i = 0, j = 0;
	if (!o)
		return -ENOMEM;
	while (i < w && j < p->nranges) {
		uint64_t lo = r[i].lo > p->ranges[j].lo ? r[i].lo : p->ranges[j].lo;
		uint64_t hi = r[i].hi < p->ranges[j].hi ? r[i].hi : p->ranges[j].hi;
		if (lo < hi)
			o[m++] = (struct pfn_run){ lo, hi };
		if (r[i].hi < p->ranges[j].hi)
			i++;
		else
			j++;
	}
	*out = o;
	*nout = m;
	return 0;
}

/* The memory map's pages are decided apart (in->memmap) only where a
 * filter says what the pages they describe are. */
int passes_memmap_on(const struct passes_in *in)
{
	return in->memmap && in->filter;
}

/* The EARLY pass walks from the start of the largest buddy block before
 * each run of the debugger's pages: a pfn's decision can depend on the
 * struct pages before it (a compound page's or a free block's head),
 * which lies at most that far back, aligned to it, unless the run is
 * larger than any the buddy allocator gives (a gigantic hugetlb page).
 * So the debugger's pages are judged as a walk of every window would
 * judge them; the rare run that crosses in from pfns not walked keeps its
 * pages (never drops one). With 4 KiB pages that block is 1024 pages
 * (MAX_ORDER 10, 6.1-7.3; 2^18 from 1 GiB hugetlb pages cross in); with
 * larger pages, whose largest order is the kernel's choice, the whole
 * window. Whole windows cost the EARLY pass a second classification of
 * most of memory at level 31: 4 ms of 10 on a 1.5 GiB guest. */
#define EARLY_ALIGN_4K 1024u
_Static_assert(EARLY_ALIGN_4K % BLOCK_PAGES == 0 && SPAN_PAGES % EARLY_ALIGN_4K == 0,
	       "the EARLY pass's pieces hold whole blocks, inside a window");

static int early_layout(struct passes *p)
{
	uint64_t align = p->in.filter && p->in.filter->shift == 12 ? EARLY_ALIGN_4K : SPAN_PAGES;

	const struct dbg_pages *e = p->in.early;
	struct pfn_run *r = calloc(e->n, sizeof *r);

	p->eoff = calloc(e->n, sizeof *p->eoff);
	p->w0 = calloc((e->pfns + 7) / 8 + 1, 1);
	if (!r || !p->eoff || !p->w0) {
		free(r);
		return -ENOMEM;
	}
	uint64_t off = 0;
	for (uint32_t k = 0; k < e->n; k++) {
		p->eoff[k] = off;
		off += e->r[k].hi - e->r[k].lo;
		r[k] = e->r[k];
	}
	free(r);
	/* Each tier's windows: a window of both is walked twice, deciding
	 * the first tier's pages, then the second's. */
	for (int t = 0; t < DBG_TIERS; t++) {
		const struct dbg_tier *dt = &e->tier[t];
		if (!dt->n)
			continue;
		r = calloc(dt->n, sizeof *r);
		if (!r)
			return -ENOMEM;
		memcpy(r, dt->r, dt->n * sizeof *r);
		int ret = span_windows(p, r, dt->n, align, &p->eranges[t], &p->neranges[t]);
		free(r);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int memmap_layout(struct passes *p)
{
	const struct vmemmap *v = p->in.memmap;
	struct pfn_run *r = calloc(v->nrun, sizeof *r);

	if (!r)
		return -ENOMEM;
	/* Runs are sorted by b; aliased ones overlap, which the merge takes. */
	for (uint32_t k = 0; k < v->nrun; k++)
		r[k] = (struct pfn_run){ v->run[k].b, v->run[k].b + v->run[k].n };
	int ret = span_windows(p, r, v->nrun, SPAN_PAGES, &p->vranges, &p->nvranges);
	free(r);
	return ret;
}

/* The layouts of the optional steps' results. Either may fail for want
 * of memory: then neither is used (said by the caller), and the capture
 * is as without them. */
int passes_steps_layout(struct passes *p)
{
	int r = p->in.early && p->in.early->n ? early_layout(p) : 0;
	if (!r && passes_memmap_on(&p->in))
		r = memmap_layout(p);
	if (r < 0) {
		for (int t = 0; t < DBG_TIERS; t++) {
			free(p->eranges[t]);
			p->eranges[t] = NULL;
			p->neranges[t] = 0;
		}
		free(p->vranges);
		free(p->eoff);
		free(p->w0);
		p->vranges = NULL;
		p->eoff = NULL;
		p->w0 = NULL;
		p->nvranges = 0;
	}
	return r;
}

#define SKIP_MAX 256u		/* blocks folded into one: progress still ticks */

/* The next span of the partition, in pfn order: 0 when there is none. */
static int span_step(struct passes *p, uint64_t *lo, uint64_t *hi)
{
	struct spans *ss = &p->sp;

	if (ss->cl_done)
		return 0;
	if (ss->cl_range >= ss->nrl) {
		ss->cl_done = 1;
		return 0;
	}
	const struct pfn_run *r = &ss->rl[ss->cl_range];
	if (ss->cl_pfn < r->lo)
		ss->cl_pfn = r->lo;
	uint64_t end = (ss->cl_pfn / SPAN_PAGES + 1) * SPAN_PAGES;
	if (end > r->hi)
		end = r->hi;
	*lo = ss->cl_pfn;
	*hi = end;
	ss->cl_pfn = end;
	if (end == r->hi) {
		ss->cl_range++;
		if (ss->cl_range < ss->nrl)
			ss->cl_pfn = ss->rl[ss->cl_range].lo;
		else
			ss->cl_done = 1;
	}
	return 1;
}

static struct blocksum *sum_of(struct span *sp, uint64_t pfn)
{
	return &sp->sum[(pfn % SPAN_PAGES) / BLOCK_PAGES];
}

/* The decision for this pass from the filter's (c) and, with the kernel's
 * pages first, in->kernel's (k). Pass 1 counts, once and for all, what
 * the filter excludes, and writes what both keep; the LATER pass writes
 * what the filter keeps and in->kernel does not. The filter decides what
 * is in the dump: in->kernel only orders it, and may keep a page the
 * filter drops (a free-block head of no believable order stops its
 * rules before the hwpoison test that drops the page at the filter's
 * level). v: a page of struct pages (in->memmap), which the filter keeps
 * and which waits for the LATER pass: kept there if a pfn it describes
 * is (2), else left out as KDI_EX_MEMMAP. */
static inline uint8_t decide(int two, int pass, uint8_t c, uint8_t k, uint8_t e, uint8_t v)
{
	/* The EARLY pass writes the debugger's pages the filter keeps; the
	 * passes after it leave those alone (e: written early). A page of
	 * struct pages is none of the debugger's parts, and waits for the
	 * pages it describes even when a part's range holds it. */
	if (pass == 0)
		return c == MM_KEEP && e && !v ? MM_KEEP : CLS_OTHER;
	if (e)
		return CLS_OTHER;
	if (v && c == MM_KEEP)
		return pass == 1 ? CLS_OTHER : v == 2 ? MM_KEEP : KDI_EX_MEMMAP;
	if (!two)
		return pass == 1 ? c : CLS_OTHER;	/* the LATER pass: the memory map's only */
	if (pass == 1)
		return c != MM_KEEP ? c : k == MM_KEEP ? MM_KEEP : CLS_OTHER;
	return c == MM_KEEP && k != MM_KEEP ? MM_KEEP : CLS_OTHER;
}

/* sp->efl for its pass: the tier's pages in the EARLY pass (the tiers
 * are disjoint), what that pass wrote in the others. */
static void span_marks(const struct passes *p, struct span *sp)
{
	const struct dbg_pages *e = p->in.early;

	memset(sp->efl, 0, sp->hi - sp->lo);
	if (!e || !e->n)
		return;
	if (sp->pass == 0) {
		const struct dbg_tier *dt = &e->tier[sp->tier];
		for (uint32_t k = dbg_tier_seek(dt, sp->lo); k < dt->n && dt->r[k].lo < sp->hi; k++) {
			uint64_t lo = dt->r[k].lo > sp->lo ? dt->r[k].lo : sp->lo;
			uint64_t hi = dt->r[k].hi < sp->hi ? dt->r[k].hi : sp->hi;
			memset(sp->efl + (lo - sp->lo), 1, hi - lo);
		}
		return;
	}
	for (uint32_t k = dbg_pages_seek(e, sp->lo); k < e->n && e->r[k].lo < sp->hi; k++) {
		uint64_t lo = e->r[k].lo > sp->lo ? e->r[k].lo : sp->lo;
		uint64_t hi = e->r[k].hi < sp->hi ? e->r[k].hi : sp->hi;
		for (uint64_t pfn = lo; pfn < hi; pfn++) {
			uint64_t b = p->eoff[k] + (pfn - e->r[k].lo);
			sp->efl[pfn - sp->lo] = (p->w0[b / 8] >> (b % 8)) & 1;
		}
	}
}

/* Under the ring's lock, as the EARLY pass takes a block: what it will
 * write, for the passes after it. */
static void w0_mark(struct passes *p, uint64_t pfn, uint32_t count, const uint8_t *cls)
{
	const struct dbg_pages *e = p->in.early;

	for (uint32_t k = dbg_pages_seek(e, pfn); k < e->n && e->r[k].lo < pfn + count; k++) {
		uint64_t lo = e->r[k].lo > pfn ? e->r[k].lo : pfn;
		uint64_t hi = e->r[k].hi < pfn + count ? e->r[k].hi : pfn + count;
		for (uint64_t q = lo; q < hi; q++)
			if (cls[q - pfn] == MM_KEEP) {
				uint64_t b = p->eoff[k] + (q - e->r[k].lo);
				p->w0[b / 8] |= (uint8_t)(1u << (b % 8));
			}
	}
}

/* Counts the blocks of sp that meet [lo, hi) afresh. */
static void span_count(struct span *sp, uint64_t lo, uint64_t hi, int two, int pass)
{
	if (lo < sp->lo)
		lo = sp->lo;
	if (hi > sp->hi)
		hi = sp->hi;
	for (uint64_t b = lo; b < hi;) {
		uint64_t bs = b - b % BLOCK_PAGES, be = bs + BLOCK_PAGES;
		if (bs < sp->lo)
			bs = sp->lo;
		if (be > sp->hi)
			be = sp->hi;
		struct blocksum *s = sum_of(sp, bs);
		memset(s, 0, sizeof *s);
		for (uint64_t q = bs - sp->lo; q < be - sp->lo; q++) {
			uint8_t c = decide(two, pass, sp->cls[q], sp->kcls[q], sp->efl[q], sp->vfl[q]);
			if (c == MM_KEEP) {
				s->keep++;
				s->unread += sp->fl[q] & MM_FL_UNREAD ? 1 : 0;
				s->nomap += sp->fl[q] & MM_FL_NOMAP ? 1 : 0;
				s->implaus += sp->fl[q] & MM_FL_IMPLAUSIBLE ? 1 : 0;
			} else if (c != CLS_OTHER) {
				s->ex[c]++;
			}
			s->scan += c != CLS_OTHER;
		}
		b = be;
	}
}

/* sp->vneed from the filter's decisions: the virtual pages of the memory
 * map that hold the struct page of a pfn of sp it keeps (or keeps for
 * not knowing: an unreadable struct page). */
static void span_need(const struct passes *p, struct span *sp)
{
	const struct vmemmap *v = p->in.memmap;
	uint64_t a, b, last = UINT64_MAX;

	memset(sp->vneed, 0, sizeof sp->vneed);
	vmemmap_vps(v, sp->lo, &sp->vneed_vp, &b);
	for (uint64_t q = 0; q < sp->hi - sp->lo; q++) {
		if (sp->cls[q] != MM_KEEP)
			continue;
		vmemmap_vps(v, sp->lo + q, &a, &b);
		if (a == last && b == last)
			continue;
		for (uint64_t x = a; x <= b; x++) {
			uint64_t i = x - sp->vneed_vp;	/* < CAPTURE_SPAN_VPS: vmemmap_find's limit */
			sp->vneed[i / 64] |= 1ull << (i % 64);
		}
		last = b;
	}
}

/* The struct-page pass over one span, unlocked: from no carry, whatever
 * came before it (joined later, in order). */
static void span_classify(struct pass_worker *w, struct span *sp)
{
	uint32_t n = (uint32_t)(sp->hi - sp->lo);

	struct passes *p = w->p;

	if (p->in.filter) {
		w->mc.carry = (struct mm_carry){ 0 };
		memmap_classify(&w->mc, sp->lo, n, sp->cls, sp->fl);
		sp->out = w->mc.carry;
	} else {
		memset(sp->cls, MM_KEEP, n);
		memset(sp->fl, 0, n);
		sp->out = (struct mm_carry){ 0 };
	}
	/* The EARLY pass decides by the filter alone. */
	if (p->in.kernel && sp->pass) {
		w->mk.carry = (struct mm_carry){ 0 };
		memmap_classify(&w->mk, sp->lo, n, sp->kcls, sp->kfl);
		sp->kout = w->mk.carry;
	}
	span_marks(p, sp);
	if (passes_memmap_on(&p->in)) {
		vmemmap_marks(p->in.memmap, sp->lo, n, sp->vfl, sp->pass == 2);
		if (sp->pass == 1)
			span_need(p, sp);
	} else {
		memset(sp->vfl, 0, n);
	}
	span_count(sp, sp->lo, sp->hi, p->in.kernel != NULL, sp->pass);
}

/* Under the lock, when the block iterator enters sp: the run carrying in
 * from the spans before it decides sp's first pfns. */
static void span_join(struct pass_worker *w, struct span *sp)
{
	struct spans *ss = &w->p->sp;
	uint32_t touched = 0;

	if (w->p->in.filter)
		memmap_join(&w->mc, ss->carry, sp->lo, (uint32_t)(sp->hi - sp->lo), sp->cls, sp->fl,
			    &sp->out, &touched);
	if (w->p->in.kernel && sp->pass) {
		uint32_t kt = 0;
		memmap_join(&w->mk, ss->kcarry, sp->lo, (uint32_t)(sp->hi - sp->lo), sp->kcls,
			    sp->kfl, &sp->kout, &kt);
		if (kt > touched)
			touched = kt;
		ss->kcarry = sp->kout;
	}
	if (touched)
		span_count(sp, sp->lo, sp->lo + touched, w->p->in.kernel != NULL, ss->pass);
	/* What the first pass keeps, now final: the memory map's pages it
	 * needs. All spans join before the LATER pass begins. */
	if (passes_memmap_on(&w->p->in) && ss->pass == 1) {
		if (touched)
			span_need(w->p, sp);
		vmemmap_need_or(w->p->in.memmap, sp->vneed_vp, sp->vneed, CAPTURE_SPAN_VPS);
	}
	ss->carry = sp->out;
	sp->joined = 1;
}

/* Does the block have pages to read? The test that decides which blocks
 * get a slot; the rest are only counted. */
static int block_keeps(const struct blocksum *s)
{
	return s->keep != 0;
}

static void fold(struct skipped *sk, const struct blocksum *s)
{
	for (int c = 0; c < KDI_EX_NCLASSES; c++)
		sk->excluded[c] += s->ex[c];
	sk->scanned += s->scan;
}

/* The job for the block at ss->it_pfn of sp, or 0 when it folds: a block
 * the filter excludes whole (most of a level-31 dump: free memory comes in
 * long runs) is only counted into ss->pending: it needs no slot, no worker
 * and no wakeup; every SKIP_MAX-th one is a job all the same, so that
 * progress ticks. */
static int take_block(struct pass_worker *w, struct span *sp)
{
	struct spans *ss = &w->p->sp;
	uint64_t pfn = ss->it_pfn;
	uint64_t end = (pfn / BLOCK_PAGES + 1) * BLOCK_PAGES;

	if (end > sp->hi)
		end = sp->hi;
	uint32_t count = (uint32_t)(end - pfn);
	const struct blocksum *s = sum_of(sp, pfn);
	ss->it_pfn = end;
	ss->unread += s->unread;
	ss->nomap += s->nomap;
	ss->implaus += s->implaus;
	if (!block_keeps(s) && ++ss->folded < SKIP_MAX) {
		fold(&ss->pending, s);
		return 0;
	}
	w->pfn = pfn;
	w->count = count;
	w->pass = ss->pass;
	w->tier = ss->tier;
	for (uint32_t i = 0; i < count; i++)
		w->cls[i] = decide(w->p->in.kernel != NULL, ss->pass, sp->cls[pfn - sp->lo + i],
				   sp->kcls[pfn - sp->lo + i], sp->efl[pfn - sp->lo + i],
				   sp->vfl[pfn - sp->lo + i]);
	if (ss->pass == 0)
		w0_mark(w->p, pfn, count, w->cls);
	w->sk = ss->pending;
	memset(&ss->pending, 0, sizeof ss->pending);
	ss->folded = 0;
	return 1;
}

/* The next walk (a pass, or the EARLY pass's next tier) over rl[0, nrl),
 * from its start and no carry. */
static void walk_anew(struct spans *ss, const struct pfn_run *rl, uint32_t nrl)
{
	ss->rl = rl;
	ss->nrl = nrl;
	ss->cl_range = 0;
	ss->cl_pfn = 0;
	ss->cl_done = 0;
	ss->carry = ss->kcarry = (struct mm_carry){ 0 };
	ss->folded = 0;
}

/* The ring's iterator, under its lock (lib/ring.h): publishes the span
 * the worker classified, then gives it the next block to encode, or a
 * span to classify when the block iterator waits for one, or waits
 * itself when every span in reach is being classified. */
int passes_next_job(struct pass_worker *w, uint64_t *idx)
{
	struct passes *p = w->p;
	struct spans *ss = &p->sp;

	if (w->prep) {
		w->prep->state = SP_READY;
		w->prep = NULL;
		if (ss->waiting)
			pthread_cond_broadcast(&ss->ready);
	}
	while (!p->ring->stop) {
		struct span *sp = &ss->s[ss->it_seq % ss->n];
		if (ss->it_seq < ss->cl_seq && sp->state == SP_READY) {
			if (!sp->joined)
				span_join(w, sp);
			while (ss->it_pfn < sp->hi)
				if (take_block(w, sp)) {
					*idx = p->ring->issued++;
					return RING_JOB;
				}
			sp->state = SP_FREE;
			ss->it_seq++;
			if (ss->it_seq < ss->cl_seq)
				ss->it_pfn = ss->s[ss->it_seq % ss->n].lo;
			continue;
		}
		uint64_t lo, hi;
		if (ss->cl_seq < ss->it_seq + ss->n && span_step(p, &lo, &hi)) {
			struct span *np = &ss->s[ss->cl_seq % ss->n];
			np->state = SP_BUSY;
			np->joined = 0;
			np->seq = ss->cl_seq;
			np->pass = ss->pass;
			np->tier = ss->tier;
			np->lo = lo;
			np->hi = hi;
			if (ss->cl_seq == ss->it_seq)
				ss->it_pfn = lo;
			ss->cl_seq++;
			w->prep = np;
			return RING_PREP;
		}
		if (ss->it_seq == ss->cl_seq) {
			/* the end: the last folded blocks still go in order */
			/* After the EARLY pass the first, over every
			 * window; after it, with the kernel's pages first,
			 * the LATER pass over the same spans with the other
			 * decision. Each from no carry. */
			int next_tier = ss->pass == 0 && ss->tier + 1 < DBG_TIERS &&
					p->neranges[ss->tier + 1];
			if (!ss->pending.scanned && next_tier) {
				/* The EARLY pass's next tier, from no carry. */
				ss->tier++;
				walk_anew(ss, p->eranges[ss->tier], p->neranges[ss->tier]);
				continue;
			}
			if (!ss->pending.scanned &&
			    (ss->pass == 0 || (ss->pass == 1 && (p->in.kernel || passes_memmap_on(&p->in))))) {
				ss->pass++;
				ss->tier = 0;
				/* A LATER pass for the memory map alone walks
				 * only the windows that hold it. */
				int vm_only = ss->pass == 2 && !p->in.kernel;
				walk_anew(ss, vm_only ? p->vranges : p->ranges,
					  vm_only ? p->nvranges : p->nranges);
				continue;
			}
			if (!ss->pending.scanned)
				return RING_END;
			w->pfn = 0;
			w->count = 0;
			w->pass = ss->pass;
			w->tier = ss->tier;
			w->sk = ss->pending;
			memset(&ss->pending, 0, sizeof ss->pending);
			ss->folded = 0;
			*idx = p->ring->issued++;
			return RING_JOB;
		}
		ss->waiting++;
		pthread_cond_wait(&ss->ready, &p->ring->lock);
		ss->waiting--;
	}
	return RING_END;
}

void passes_prep_job(struct pass_worker *w)
{
	span_classify(w, w->prep);
}

/* Spans in reach of the classification front: enough that every worker
 * can classify one while the block iterator drains another. */
static unsigned spans_wanted(unsigned threads)
{
	return 2 * threads + 1;
}

int passes_spans_init(struct passes *p, unsigned threads)
{
	struct spans *ss = &p->sp;

	ss->n = spans_wanted(threads);
	/* The EARLY pass first when there is one to walk, from its first
	 * tier with pages. */
	ss->pass = 1;
	ss->rl = p->ranges;
	ss->nrl = p->nranges;
	for (int t = DBG_TIERS - 1; t >= 0; t--)
		if (p->neranges[t]) {
			ss->pass = 0;
			ss->tier = t;
			ss->rl = p->eranges[t];
			ss->nrl = p->neranges[t];
		}
	ss->s = calloc(ss->n, sizeof *ss->s);
	if (!ss->s)
		return -ENOMEM;
	pthread_cond_init(&ss->ready, NULL);
	return 0;
}

static void spans_fini(struct passes *p)
{
	if (!p->sp.s)
		return;
	pthread_cond_destroy(&p->sp.ready);
	free(p->sp.s);
	p->sp.s = NULL;
}

void passes_fini(struct passes *p)
{
	for (int t = 0; t < DBG_TIERS; t++)
		free(p->eranges[t]);
	free(p->vranges);
	free(p->eoff);
	free(p->w0);
	spans_fini(p);
}

size_t passes_span_bytes(void)
{
	return sizeof(struct span);
}
