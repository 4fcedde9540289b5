#include "pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include "../dump/seal.h"
#include "../kernel/physmem.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/ring.h"
#include "../lib/util.h"
#include "entropy.h"
#include "sink.h"
#include "window.h"
#include "writer.h"
#include "zero.h"

/* LZ4's acceleration. Measured on a 6.1 dump: 2 and 4 save under 10 % of
 * the time at level 31 and less at level 1, for 2-6 % more output; the
 * output-size budget (1.05x makedumpfile -l) is worth more. */
#define LZ4_ACCEL 1
/* For a page that samples as random (entropy.h): LZ4 takes this as its
 * maximum, probes a position or two and emits the page as literals, which
 * come out longer than the page, so it is stored raw as a search would
 * have stored it, without the search. The call is still made, so the page
 * stays in the stream's history exactly as the reader's dictionary has
 * it (a skipped call would leave LZ4 a dictionary with a hole). */
#define LZ4_ACCEL_SKIP 65537
/* 256 pages = 1 MiB of memory per PAGES chunk: small enough that a few
 * output slots fit a tiny crashkernel reservation, large enough that the
 * 48-byte header and the bitmap are noise. */
#define BLOCK_PAGES 256u
/* Room before a slot's data for its head and size words, so that a
 * sealed chunk's payload is one buffer (struct slot). */
#define SLOT_SEAL_ROOM ((sizeof(struct kdi_pages) + 2 * BLOCK_PAGES / 8 + 4 * BLOCK_PAGES + 15) & ~(size_t)15)
/* Output slots per worker when there are several: how far the workers may
 * run ahead of the block being emitted. Blocks differ in cost (a block of
 * zero pages is a read, one of kept pages a read and LZ4), and with 2 a
 * worker often waited on the other's slow block; with 4, a level-1
 * capture of a real 1.5 GiB guest took 0.285-0.291 s instead of
 * 0.299-0.305 (2 threads, perf stat -r 8, three pairs interleaved); level
 * 31 the same. One worker needs one slot. */
#define SLOTS_PER_WORKER 4u
/* Write buffers: one being filled, the others in flight. A disk takes
 * direct writes faster a few at a time: a level-1 capture to a block
 * device here (loop, direct I/O; medians of 8) took 0.95 s with 3 writes
 * of 4 MiB in flight, 1.04 s with one. */
#define WRITE_BUF_MIN (1u << 20)	/* small reservations */
#define WRITE_BUFS_MIN 3u
#define WRITE_BUF_MAX (4u << 20)
#define WRITE_BUFS_MAX 4u

struct progress;

/* Pages already judged for a block: the all-excluded blocks before it,
 * which never get a slot, are carried by the next block that keeps
 * something (or by an empty one at the end). */
struct skipped {
	uint64_t scanned;
	uint64_t excluded[KDI_EX_NCLASSES];
};

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
	uint64_t seq;			/* its number in pfn order */
	uint64_t lo, hi;		/* pfns [lo, hi), one range, one window */
	struct mm_carry out;		/* the run it leaves */
	uint8_t cls[SPAN_PAGES], fl[SPAN_PAGES];
	/* With the kernel's pages first (in->kernel): its decisions too. */
	struct mm_carry kout;
	uint8_t kcls[SPAN_PAGES], kfl[SPAN_PAGES];
	/* With in->early: in the EARLY pass, 1 for a pfn of the debugger's
	 * set; after it, 1 for a pfn the EARLY pass decided (wrote). */
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

/* Where span i is: ring of nspan, seq % nspan. Under the ring's lock. */
struct spans {
	struct span *s;
	unsigned n;
	/* classification front: the next span to hand out */
	uint64_t cl_seq;
	uint32_t cl_range;
	uint64_t cl_pfn;
	int cl_done;
	/* block iterator: inside span it_seq, at pfn it_pfn */
	uint64_t it_seq;
	uint64_t it_pfn;
	struct mm_carry carry;		/* the run carrying into span it_seq */
	struct mm_carry kcarry;		/* ... in->kernel's */
	/* 0 for the EARLY pass (the debugger's pages, with in->early); 1;
	 * or 2 for the LATER pass: what the rest of the dump level keeps,
	 * once the first has written the pages in->kernel keeps. */
	int pass;
	/* The pfn ranges this pass walks: the vmcore's, or in the EARLY pass
	 * the struct-page windows that hold the debugger's pages. */
	const struct pfn_run *rl;
	uint32_t nrl;
	struct skipped pending;		/* folded blocks not yet given to a job */
	unsigned folded;		/* ... how many */
	uint64_t unread;		/* pfns kept for an unreadable struct page */
	uint64_t nomap;			/* ... of them, in sections without a mem_map */
	uint64_t implaus;		/* pfns kept for an implausible struct page */
	pthread_cond_t ready;		/* a span was classified */
	unsigned waiting;
};

/* What one block becomes: its PAGES chunk, ready to write. */
struct slot {
	struct kdi_pages hdr;
	uint8_t bitmap[BLOCK_PAGES / 8];
	uint8_t zbitmap[BLOCK_PAGES / 8];
	uint32_t sizes[BLOCK_PAGES];
	uint8_t head[sizeof(struct kdi_pages) + 2 * BLOCK_PAGES / 8];
	size_t head_len;
	uint64_t hash;			/* of head, sizes and data */
	uint8_t *data;
	size_t data_len;
	/* A sealed dump: the chunk's payload sealed in place by the worker,
	 * head and sizes moved in front of data (SLOT_SEAL_ROOM) and the tag
	 * after it, under seq seal_seq (the pipe's seq_base + the job's
	 * number: every job is one chunk). buf is data's allocation. */
	uint8_t *buf;
	uint8_t *payload;
	uint32_t payload_len;
	uint64_t seal_seq;
	uint64_t excluded[KDI_EX_NCLASSES];
	uint64_t scanned, stored, bytes_in;
};

struct pipe {
	struct vmcore *vc;
	const struct capture_req *rq;
	const struct capture_plan *pl;
	const struct capture_in *in;
	const struct capture_hooks *hk;
	uint32_t ps;
	unsigned shift;
	uint32_t *order;		/* segments with data, by paddr */
	uint64_t *maxend;		/* running max of paddr+filesz over order[] */
	uint32_t norder;
	struct pfn_run *ranges;
	uint32_t nranges;
	uint64_t total_pfns;
	/* With in->early: the windows the EARLY pass walks, where each of
	 * in->early's runs starts in w0, and w0, a bit per pfn of the set:
	 * written by the EARLY pass (set under the ring's lock as its blocks
	 * are taken, read-only once it is over). */
	struct pfn_run *eranges;
	uint32_t neranges;
	/* With in->memmap: the windows holding its pages, which the LATER
	 * pass walks when it has nothing else to write. */
	struct pfn_run *vranges;
	uint32_t nvranges;
	uint64_t *eoff;
	uint8_t *w0;

	/* The ring's lock also covers the two iterators (below): a worker
	 * takes, under it, either a span to classify or the next block to
	 * encode, in pfn order. Both are short critical sections: the
	 * struct-page pass runs unlocked, in the worker that took the span. */
	struct ring ring;
	struct spans sp;
	struct slot *slots;		/* ring.nslots of them */
	uint64_t seq_base;		/* the writer's seq when the pages begin */
	/* Only the emitter (one worker at a time, lib/ring.h) touches these. */
	uint64_t done;			/* pfns emitted, for progress */
	struct kdi_writer *wr;
	struct capture_result *res;
	struct progress *pg;
};

struct worker {
	struct pipe *p;
	struct window win;
	struct mm_cursor mc;		/* its struct-page reader (with a filter) */
	struct mm_cursor mk;		/* ... for in->kernel */
	int pass;			/* of the block taken */
	struct span *prep;		/* the span it classifies, unlocked */
	LZ4_stream_t *lz4;
	uint8_t *stage;			/* the block's stored pages, contiguous */
	uint32_t stage_len;
	uint8_t *scratch;
	uint32_t *cands;		/* segment candidates for one block */
	uint32_t ncand;
	uint8_t cls[BLOCK_PAGES];	/* filter decision per page of the block */
	uint64_t pfn;			/* the block taken: next_job's answer */
	uint32_t count;
	struct skipped sk;
	pthread_t tid;
};

/* ---- faults ----
 * Touching a bad page of an mmapped /proc/vmcore raises SIGBUS. The page is
 * then retried with pread, and if that fails it is counted unreadable: a
 * crashed machine's memory is allowed to be broken, the capture is not.
 * The guard is physmem's (kernel/physmem.h), the one the struct-page
 * views use: one SIGBUS handler, one per-thread jump point. A worker arms
 * it around its block's touches of the mapping and classifies no pfn in
 * between, so the two uses never nest. */

/* The DEBUGGER record's part bits are the finder's. */
_Static_assert(KDI_DBG_PGTABLES == 1u << DBG_PGTABLES && KDI_DBG_MEMSECTION == 1u << DBG_MEMSECTION &&
	       KDI_DBG_LOG == 1u << DBG_LOG && KDI_DBG_STACKS == 1u << DBG_STACKS &&
	       KDI_DBG_PERCPU == 1u << DBG_PERCPU && KDI_DBG_MODULES == 1u << DBG_MODULES &&
	       KDI_DBG_IMAGE == 1u << DBG_IMAGE && KDI_DBG_UTS == 1u << DBG_UTS &&
	       KDI_DBG_TASKS == 1u << DBG_TASKS,
	       "DEBUGGER part bits");

/* ---- layout ---- */

/* The whole spans that hold runs r[0, n) (sorted by lo), inside the
 * memory the vmcore has: *out, *nout. r is merged in place. */
static int span_windows(const struct pipe *p, struct pfn_run *r, uint32_t n, struct pfn_run **out,
			uint32_t *nout)
{
	uint32_t w = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint64_t lo = r[k].lo - r[k].lo % SPAN_PAGES;
		uint64_t hi = (r[k].hi + SPAN_PAGES - 1) / SPAN_PAGES * SPAN_PAGES;
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
static int memmap_on(const struct capture_in *in)
{
	return in->memmap && in->filter;
}

/* The EARLY pass walks whole struct-page windows: a pfn's decision can
 * depend on the struct pages before it in its window (a compound page's
 * head), never on those of another window unless a run of pages larger
 * than a window crosses into it. So the debugger's pages are judged as a
 * walk of every window would judge them; the rare run that crosses in
 * from a window not walked keeps its pages (never drops one). */
static int early_layout(struct pipe *p)
{
	const struct dbg_pages *e = p->in->early;
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
	int ret = span_windows(p, r, e->n, &p->eranges, &p->neranges);
	free(r);
	return ret;
}

static int memmap_layout(struct pipe *p)
{
	const struct vmemmap *v = p->in->memmap;
	struct pfn_run *r = calloc(v->nrun, sizeof *r);

	if (!r)
		return -ENOMEM;
	/* Runs are sorted by b; aliased ones overlap, which the merge takes. */
	for (uint32_t k = 0; k < v->nrun; k++)
		r[k] = (struct pfn_run){ v->run[k].b, v->run[k].b + v->run[k].n };
	int ret = span_windows(p, r, v->nrun, &p->vranges, &p->nvranges);
	free(r);
	return ret;
}

static int build_layout(struct pipe *p)
{
	struct vmcore *vc = p->vc;

	p->order = calloc(vc->nr_seg, sizeof *p->order);
	p->maxend = calloc(vc->nr_seg, sizeof *p->maxend);
	p->ranges = calloc(vc->nr_seg, sizeof *p->ranges);
	if (!p->order || !p->maxend || !p->ranges)
		return -ENOMEM;
	p->norder = segment_order(vc->seg, vc->nr_seg, p->order);
	for (uint32_t k = 0; k < p->norder; k++) {
		const struct kdi_segment *s = &vc->seg[p->order[k]];
		uint64_t e = s->paddr + s->filesz;
		p->maxend[k] = k && p->maxend[k - 1] > e ? p->maxend[k - 1] : e;
	}

	/* Each pfn is stored once, however many segments hold it. */
	p->nranges = segment_pfn_runs(vc->seg, p->order, p->norder, p->shift, p->ranges);
	for (uint32_t i = 0; i < p->nranges; i++)
		p->total_pfns += p->ranges[i].hi - p->ranges[i].lo;
	return 0;
}

/* The layouts of the optional steps' results. Either may fail for want
 * of memory: then neither is used (said by the caller), and the capture
 * is as without them. */
static int steps_layout(struct pipe *p)
{
	int r = p->in->early && p->in->early->n ? early_layout(p) : 0;
	if (!r && memmap_on(p->in))
		r = memmap_layout(p);
	if (r < 0) {
		free(p->eranges);
		free(p->vranges);
		free(p->eoff);
		free(p->w0);
		p->eranges = p->vranges = NULL;
		p->eoff = NULL;
		p->w0 = NULL;
		p->neranges = p->nvranges = 0;
	}
	return r;
}

#define SKIP_MAX 256u		/* blocks folded into one: progress still ticks */

/* The next span of the partition, in pfn order: 0 when there is none. */
static int span_step(struct pipe *p, uint64_t *lo, uint64_t *hi)
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

/* A page another pass decides: neither read nor counted in this one. */
#define CLS_OTHER 0xfe
_Static_assert(KDI_EX_NCLASSES < CLS_OTHER && CLS_OTHER != MM_KEEP, "CLS_OTHER is free");

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

/* sp->efl for its pass: the debugger's set in the EARLY pass, what that
 * pass wrote in the others. */
static void span_marks(const struct pipe *p, struct span *sp)
{
	const struct dbg_pages *e = p->in->early;

	memset(sp->efl, 0, sp->hi - sp->lo);
	if (!e || !e->n)
		return;
	for (uint32_t k = dbg_pages_seek(e, sp->lo); k < e->n && e->r[k].lo < sp->hi; k++) {
		uint64_t lo = e->r[k].lo > sp->lo ? e->r[k].lo : sp->lo;
		uint64_t hi = e->r[k].hi < sp->hi ? e->r[k].hi : sp->hi;
		for (uint64_t pfn = lo; pfn < hi; pfn++) {
			uint64_t b = p->eoff[k] + (pfn - e->r[k].lo);
			sp->efl[pfn - sp->lo] = sp->pass == 0 ? 1 : (p->w0[b / 8] >> (b % 8)) & 1;
		}
	}
}

/* Under the ring's lock, as the EARLY pass takes a block: what it will
 * write, for the passes after it. */
static void w0_mark(struct pipe *p, uint64_t pfn, uint32_t count, const uint8_t *cls)
{
	const struct dbg_pages *e = p->in->early;

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
static void span_need(const struct pipe *p, struct span *sp)
{
	const struct vmemmap *v = p->in->memmap;
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
static void span_classify(struct worker *w, struct span *sp)
{
	uint32_t n = (uint32_t)(sp->hi - sp->lo);

	struct pipe *p = w->p;

	if (p->in->filter) {
		w->mc.carry = (struct mm_carry){ 0 };
		memmap_classify(&w->mc, sp->lo, n, sp->cls, sp->fl);
		sp->out = w->mc.carry;
	} else {
		memset(sp->cls, MM_KEEP, n);
		memset(sp->fl, 0, n);
		sp->out = (struct mm_carry){ 0 };
	}
	/* The EARLY pass decides by the filter alone. */
	if (p->in->kernel && sp->pass) {
		w->mk.carry = (struct mm_carry){ 0 };
		memmap_classify(&w->mk, sp->lo, n, sp->kcls, sp->kfl);
		sp->kout = w->mk.carry;
	}
	span_marks(p, sp);
	if (memmap_on(p->in)) {
		vmemmap_marks(p->in->memmap, sp->lo, n, sp->vfl, sp->pass == 2);
		if (sp->pass == 1)
			span_need(p, sp);
	} else {
		memset(sp->vfl, 0, n);
	}
	span_count(sp, sp->lo, sp->hi, p->in->kernel != NULL, sp->pass);
}

/* Under the lock, when the block iterator enters sp: the run carrying in
 * from the spans before it decides sp's first pfns. */
static void span_join(struct worker *w, struct span *sp)
{
	struct spans *ss = &w->p->sp;
	uint32_t touched = 0;

	if (w->p->in->filter)
		memmap_join(&w->mc, ss->carry, sp->lo, (uint32_t)(sp->hi - sp->lo), sp->cls, sp->fl,
			    &sp->out, &touched);
	if (w->p->in->kernel && sp->pass) {
		uint32_t kt = 0;
		memmap_join(&w->mk, ss->kcarry, sp->lo, (uint32_t)(sp->hi - sp->lo), sp->kcls,
			    sp->kfl, &sp->kout, &kt);
		if (kt > touched)
			touched = kt;
		ss->kcarry = sp->kout;
	}
	if (touched)
		span_count(sp, sp->lo, sp->lo + touched, w->p->in->kernel != NULL, ss->pass);
	/* What the first pass keeps, now final: the memory map's pages it
	 * needs. All spans join before the LATER pass begins. */
	if (memmap_on(w->p->in) && ss->pass == 1) {
		if (touched)
			span_need(w->p, sp);
		vmemmap_need_or(w->p->in->memmap, sp->vneed_vp, sp->vneed, CAPTURE_SPAN_VPS);
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
static int take_block(struct worker *w, struct span *sp)
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
	for (uint32_t i = 0; i < count; i++)
		w->cls[i] = decide(w->p->in->kernel != NULL, ss->pass, sp->cls[pfn - sp->lo + i],
				   sp->kcls[pfn - sp->lo + i], sp->efl[pfn - sp->lo + i],
				   sp->vfl[pfn - sp->lo + i]);
	if (ss->pass == 0)
		w0_mark(w->p, pfn, count, w->cls);
	w->sk = ss->pending;
	memset(&ss->pending, 0, sizeof ss->pending);
	ss->folded = 0;
	return 1;
}

/* The ring's iterator, under its lock (lib/ring.h): publishes the span
 * the worker classified, then gives it the next block to encode, or a
 * span to classify when the block iterator waits for one, or waits
 * itself when every span in reach is being classified. */
static int next_job(void *arg, uint64_t *idx)
{
	struct worker *w = arg;
	struct pipe *p = w->p;
	struct spans *ss = &p->sp;

	if (w->prep) {
		w->prep->state = SP_READY;
		w->prep = NULL;
		if (ss->waiting)
			pthread_cond_broadcast(&ss->ready);
	}
	while (!p->ring.stop) {
		struct span *sp = &ss->s[ss->it_seq % ss->n];
		if (ss->it_seq < ss->cl_seq && sp->state == SP_READY) {
			if (!sp->joined)
				span_join(w, sp);
			while (ss->it_pfn < sp->hi)
				if (take_block(w, sp)) {
					*idx = p->ring.issued++;
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
			if (!ss->pending.scanned &&
			    (ss->pass == 0 || (ss->pass == 1 && (p->in->kernel || memmap_on(p->in))))) {
				ss->pass++;
				/* A LATER pass for the memory map alone walks
				 * only the windows that hold it. */
				int vm_only = ss->pass == 2 && !p->in->kernel;
				ss->rl = vm_only ? p->vranges : p->ranges;
				ss->nrl = vm_only ? p->nvranges : p->nranges;
				ss->cl_range = 0;
				ss->cl_pfn = 0;
				ss->cl_done = 0;
				ss->carry = ss->kcarry = (struct mm_carry){ 0 };
				ss->folded = 0;
				continue;
			}
			if (!ss->pending.scanned)
				return RING_END;
			w->pfn = 0;
			w->count = 0;
			w->pass = ss->pass;
			w->sk = ss->pending;
			memset(&ss->pending, 0, sizeof ss->pending);
			ss->folded = 0;
			*idx = p->ring.issued++;
			return RING_JOB;
		}
		ss->waiting++;
		pthread_cond_wait(&ss->ready, &p->ring.lock);
		ss->waiting--;
	}
	return RING_END;
}

static void prep_job(void *arg)
{
	struct worker *w = arg;
	span_classify(w, w->prep);
}

/* ---- one page ---- */

/* Segments overlapping pfns [pfn, pfn+count). */
static uint32_t block_cands(struct worker *w, uint64_t pfn, uint32_t count)
{
	struct pipe *p = w->p;
	uint64_t lo = pfn << p->shift, hi = (pfn + count) << p->shift;
	uint32_t n = 0, a = 0, b = p->norder;

	/* Skip, by binary search, every segment that ends at or before lo:
	 * a vmcore may have tens of thousands of PT_LOADs. */
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (p->maxend[mid] > lo)
			b = mid;
		else
			a = mid + 1;
	}
	for (uint32_t k = a; k < p->norder; k++) {
		const struct kdi_segment *s = &p->vc->seg[p->order[k]];
		if (s->paddr >= hi)
			break;
		if (s->paddr + s->filesz > lo)
			w->cands[n++] = p->order[k];
	}
	return n;
}

/* The block's segment that holds the whole page at pa, with the page's
 * offset in the vmcore file in *foff; NULL when none does (the page is
 * split across page-unaligned segment ends, or not there). */
static const struct kdi_segment *whole_page_seg(const struct worker *w, uint64_t pa,
						uint64_t *foff)
{
	const struct vmcore *vc = w->p->vc;

	for (uint32_t k = 0; k < w->ncand; k++) {
		const struct kdi_segment *s = &vc->seg[w->cands[k]];
		if (s->paddr <= pa && s->paddr + s->filesz >= pa + w->p->ps) {
			*foff = vc->seg_offset[w->cands[k]] + (pa - s->paddr);
			return s;
		}
	}
	return NULL;
}

/* Bytes of pfn, or NULL when unreadable. Fast path: one segment holds the
 * whole page, return a pointer into the window. Otherwise assemble the
 * pieces (page-unaligned segment ends) in scratch, zero-filled. */
static const uint8_t *page_bytes(struct worker *w, uint64_t pfn)
{
	struct pipe *p = w->p;
	struct vmcore *vc = p->vc;
	uint64_t pa = pfn << p->shift, pe = pa + p->ps, foff;
	int e, pieces = 0;

	if (whole_page_seg(w, pa, &foff))
		return window_get(&w->win, foff, p->ps, &e);
	memset(w->scratch, 0, p->ps);
	for (uint32_t k = 0; k < w->ncand; k++) {
		const struct kdi_segment *s = &vc->seg[w->cands[k]];
		uint64_t lo = MAX(pa, s->paddr), hi = MIN(pe, s->paddr + s->filesz);
		if (lo >= hi)
			continue;
		const uint8_t *src = window_get(&w->win, vc->seg_offset[w->cands[k]] + (lo - s->paddr),
						hi - lo, &e);
		if (!src)
			return NULL;
		memcpy(w->scratch + (lo - pa), src, hi - lo);
		pieces++;
	}
	return pieces ? w->scratch : NULL;
}

/* ---- one block ---- */

/* A kept page, already in the stage at its place (stage + stage_len):
 * compress it into the slot. */
static void store_page(struct worker *w, struct slot *sl, uint32_t i)
{
	uint32_t ps = w->p->ps;
	uint8_t *page = w->stage + w->stage_len;
	uint8_t *dst = sl->data + sl->data_len;

	w->stage_len += ps;
	int acc = page_looks_random(page, ps) ? LZ4_ACCEL_SKIP : LZ4_ACCEL;
	int n = LZ4_compress_fast_continue(w->lz4, (const char *)page, (char *)dst, ps,
					   LZ4_COMPRESSBOUND(ps), acc);
	uint32_t word;
	if (n > 0 && (uint32_t)n < ps) {
		word = (uint32_t)n | KDI_PAGE_LZ4;
	} else {
		/* Incompressible: stored raw. It stays in LZ4's history, as
		 * it is in the reader's. A failed call (never, with a bound-
		 * sized output) leaves the stream undefined: restart it. */
		if (n <= 0)
			LZ4_initStream(w->lz4, sizeof *w->lz4);
		memcpy(dst, page, ps);
		n = ps;
		word = ps;
	}
	sl->data_len += n;
	sl->sizes[sl->hdr.nstored++] = word;
	sl->bitmap[i / 8] |= 1u << (i % 8);
	sl->stored++;
	sl->bytes_in += ps;
}

static void count_zero(struct slot *sl, uint32_t i)
{
	sl->excluded[KDI_EX_ZERO]++;
	sl->zbitmap[i / 8] |= 1u << (i % 8);
	sl->hdr.nzero++;
}

/* One page: read, judge, compress into the slot. */
static void encode_page_body(struct worker *w, struct slot *sl, uint64_t pfn, uint32_t i)
{
	struct pipe *p = w->p;
	uint32_t ps = p->ps;

	/* Filtered pages are never read: that is most of the saving. */
	if (w->cls[i] == CLS_OTHER)
		return;		/* the other pass's */
	if (w->cls[i] != MM_KEEP) {
		sl->excluded[w->cls[i]]++;
		return;
	}
	const uint8_t *src = page_bytes(w, pfn);

	if (!src) {
		sl->excluded[KDI_EX_UNREADABLE]++;
		return;
	}
	if ((p->rq->level & 1) && page_is_zero(src, ps)) {
		count_zero(sl, i);
		return;
	}
	/* The last touch of the mapping: from here on a fault cannot strike,
	 * and LZ4 sees the block's pages as one contiguous stream, the same
	 * whatever the window, the thread count or the read path. */
	memcpy(w->stage + w->stage_len, src, ps);
	store_page(w, sl, i);
}

/* The pread path: the run of kept pages from i on that one segment holds
 * whole is read with one pread straight into the stage, where each page
 * is judged and compressed in place (a zero page is dropped by moving the
 * next ones down), so the stage ends up as the per-page path makes it.
 * Returns the pages done, 0 to leave page i to the per-page path (a page
 * split across segments, or a read that did not return everything: that
 * path finds which page is bad). */
static uint32_t read_run(struct worker *w, struct slot *sl, uint64_t pfn, uint32_t i,
			 uint32_t count)
{
	struct pipe *p = w->p;
	struct vmcore *vc = p->vc;
	uint32_t ps = p->ps, j = i;
	uint64_t pa = (pfn + i) << p->shift, foff;
	const struct kdi_segment *s = whole_page_seg(w, pa, &foff);

	if (!s)
		return 0;
	uint64_t whole = (s->paddr + s->filesz - pa) / ps;	/* >= 1 */
	while (j < count && j - i < whole && w->cls[j] == MM_KEEP)
		j++;
	uint8_t *run = w->stage + w->stage_len;
	size_t len = (size_t)(j - i) * ps;
	if (foff + len > vc->file_size || read_full_at(vc->fd, run, len, foff) != (ssize_t)len)
		return 0;
	for (uint32_t k = i; k < j; k++) {
		const uint8_t *src = run + (size_t)(k - i) * ps;
		if ((p->rq->level & 1) && page_is_zero(src, ps)) {
			count_zero(sl, k);
			continue;
		}
		uint8_t *page = w->stage + w->stage_len;
		if (page != src)	/* whole pages apart: no overlap */
			memcpy(page, src, ps);
		store_page(w, sl, k);
	}
	return j - i;
}

/* The SIGBUS guard covers every touch of the mapping (the page's pieces,
 * the zero test, the copy to the stage), set once per block: sigsetjmp
 * without the signal mask is no system call, and SA_NODEFER leaves the
 * mask alone. Slot and stage are only updated after the last touch, so a
 * fault leaves nothing half-done: the page is retried with pread, and a
 * page that faults again is unreadable. */
static void encode_block(struct worker *w, struct slot *sl, uint64_t pfn, uint32_t count,
			 const struct skipped *sk, uint64_t idx)
{
	sigjmp_buf jb;
	/* volatile for sigsetjmp (C11 7.13.2.1): both change between it and
	 * the siglongjmp. Only this thread sees them. */
	volatile uint32_t i = 0;
	volatile int64_t faulted = -1;

	memset(sl->bitmap, 0, sizeof sl->bitmap);
	memset(sl->zbitmap, 0, sizeof sl->zbitmap);
	memcpy(sl->excluded, sk->excluded, sizeof sl->excluded);
	sl->hdr = (struct kdi_pages){ .pfn = pfn, .count = count,
				      .flags = KDI_PAGES_LINKED | (w->pass == 2 ? KDI_PAGES_LATER :
								     w->pass == 0 ? KDI_PAGES_EARLY : 0) };
	sl->data_len = 0;
	sl->scanned = sk->scanned;
	for (uint32_t k = 0; k < count; k++)
		sl->scanned += w->cls[k] != CLS_OTHER;
	sl->stored = sl->bytes_in = 0;
	w->stage_len = 0;
	w->ncand = block_cands(w, pfn, count);
	/* A full reset, 16 KiB once per block: after the _fast one LZ4's
	 * output still depends on what the worker compressed before, and the
	 * dump must be the same whichever worker took the block. */
	LZ4_initStream(w->lz4, sizeof *w->lz4);

	if (sigsetjmp(jb, 0)) {
		physmem_guard(NULL);
		window_force_pread(&w->win);
		if (faulted == (int64_t)i) {
			sl->excluded[KDI_EX_UNREADABLE]++;
			i++;
		} else {
			faulted = i;
		}
	}
	physmem_guard(&jb);
	for (; i < count; i++) {
		if (w->p->pl->pread && w->cls[i] == MM_KEEP) {
			uint32_t n = read_run(w, sl, pfn, i, count);
			if (n) {
				i += n - 1;
				continue;
			}
		}
		encode_page_body(w, sl, pfn + i, i);
	}
	physmem_guard(NULL);
	if (!sl->hdr.nstored && !sl->hdr.nzero)
		return;		/* emit_block writes no PAGES chunk for it */

	/* The chunk's head and payload hash, made here in the worker so the
	 * emitter only copies. */
	size_t bl = pages_bitmap_len(count), hl = sizeof sl->hdr + bl;
	memcpy(sl->head, &sl->hdr, sizeof sl->hdr);
	memcpy(sl->head + sizeof sl->hdr, sl->bitmap, bl);
	if (sl->hdr.nzero) {
		memcpy(sl->head + hl, sl->zbitmap, bl);
		hl += bl;
	}
	sl->head_len = hl;
	if (w->p->in->seal) {
		/* Sealed here, in parallel, under the seq the chunk will get
		 * (the writer seals it again in the rare case it does not: a
		 * GAP came first). */
		size_t sz = 4 * (size_t)sl->hdr.nstored;
		uint8_t *pl = sl->data - sz - hl;
		memcpy(pl, sl->head, hl);
		memcpy(pl + hl, sl->sizes, sz);
		uint32_t len = (uint32_t)(hl + sz + sl->data_len);
		sl->seal_seq = __atomic_load_n(&w->p->seq_base, __ATOMIC_RELAXED) + idx;
		struct seal_where wh = { .dump_id = w->p->wr->dump_id, .seq = sl->seal_seq,
					 .type = KDI_CH_PAGES, .len = len };
		/* In its parts (format.h): a reader indexes it without
		 * opening its pages. The head is ours: it cannot fail. */
		pages_seal(w->p->in->seal, &wh, pl);
		sl->payload = pl;
		sl->payload_len = len + chunk_tags_len(KDI_CH_PAGES, KDI_FORMAT_AEGIS);
		sl->hash = payload_hash(pl, sl->payload_len, NULL, 0, NULL, 0);
		return;
	}
	sl->hash = payload_hash(sl->head, hl, sl->sizes, 4 * (size_t)sl->hdr.nstored,
				sl->data, sl->data_len);
}

/* ---- progress ---- */

struct progress {
	double t0, last_t;
	int last_pct;
};

static void progress_tick(struct progress *pg, const struct pipe *p, uint64_t done,
			  uint64_t bytes_out, int final)
{
	double t = now_mono();
	int pct = p->total_pfns ? (int)(done * 100 / p->total_pfns) : 100;

	/* One line per 5% step, never more than one a second, and one at
	 * least every 10 s so a slow capture visibly lives. Plain lines, no
	 * carriage returns: serial consoles and logs stay readable. */
	if (!final) {
		double since = t - pg->last_t;
		if (since < 1.0)
			return;
		if (pct / 5 == pg->last_pct / 5 && since < 10.0)
			return;
	}
	double el = t - pg->t0, mb = (double)(done << p->shift) / 1e6;
	double rate = el > 0 ? mb / el : 0;
	double eta = rate > 0 ? ((double)((p->total_pfns - done) << p->shift) / 1e6) / rate : 0;
	msg("capture: %3d%%  %.0f/%.0f MB scanned, %.1f MB/s, %.0f MB written, ETA %.0fs",
	    pct, mb, (double)(p->total_pfns << p->shift) / 1e6, rate,
	    bytes_out / 1e6, eta);
	pg->last_t = t;
	pg->last_pct = pct;
}

/* ---- the run ---- */

static int write_metadata(struct kdi_writer *wr, struct vmcore *vc, const struct capture_req *rq,
			  const struct capture_in *in)
{
	struct kdi_start st = {
		.format_version = in->seal ? KDI_FORMAT_AEGIS : KDI_FORMAT_PLAIN,
		.page_size = vc->page_size,
		.e_machine = vc->e_machine,
		.ei_class = 2, .ei_data = 1,
		.dump_level = rq->level,
		.start_time = (uint64_t)time(NULL),
		.nr_segments = vc->nr_seg,
		/* Not KDI_START_MEMMAP_EXCLUDED: that step runs after START
		 * is on the device, and STEPS says how it went. */
	};
	memcpy(st.sb_uuid, in->sb_uuid, 16);
	snprintf(st.tool, sizeof st.tool, "kdumpinit %s", KDI_VERSION);

	int r = writer_put(wr, KDI_CH_START, &st, sizeof st, NULL, 0, NULL, 0);
	if (!r)
		r = writer_put(wr, KDI_CH_CHAIN, &in->chain, sizeof in->chain, NULL, 0, NULL, 0);
	/* Sealed: from here on the writer seals every chunk but END's tag;
	 * SEAL says how to find the key, and what stays readable. */
	if (!r && in->seal) {
		struct kdi_seal sl = { .scheme = KDI_SEAL_SCHEME };
		memcpy(sl.eph_pk, in->seal->eph_pk, sizeof sl.eph_pk);
		memcpy(sl.key_id, in->seal->key_id, sizeof sl.key_id);
		snprintf(sl.release, sizeof sl.release, "%s", in->release ? in->release : "");
		r = writer_put(wr, KDI_CH_SEAL, &sl, sizeof sl, NULL, 0, NULL, 0);
	}
	if (!r)
		r = writer_put(wr, KDI_CH_NOTES, vc->notes, vc->notes_len, NULL, 0, NULL, 0);
	if (!r)
		r = writer_put(wr, KDI_CH_VMCOREINFO, vc->vmcoreinfo, vc->vmcoreinfo_len,
			       NULL, 0, NULL, 0);
	/* Segments go as they are in the vmcore, with the original filesz so
	 * save can rebuild the same program headers. */
	if (!r)
		r = writer_put(wr, KDI_CH_SEGMENTS, vc->seg,
			       (size_t)vc->nr_seg * sizeof *vc->seg, NULL, 0, NULL, 0);
	/* The filter's VMCOREINFO keys the note lacked go with the settings,
	 * which `info` shows: what the level could not exclude is then
	 * explained by the dump itself. Under 4 KiB, as readers expect. */
	char settings[4000];
	const char *miss = in->filter && in->filter->missing_keys[0] ? in->filter->missing_keys : NULL;
	const char *set = rq->settings && rq->settings[0] ? rq->settings : NULL;
	snprintf(settings, sizeof settings, "%s%s%s%s%s", set ? set : "", set && miss ? "; " : "",
		 miss ? "filter: VMCOREINFO lacks " : "", miss ? miss : "",
		 miss ? " (their pages kept)" : "");
	if (!r && settings[0])
		r = writer_put(wr, KDI_CH_SETTINGS, settings, strlen(settings), NULL, 0, NULL, 0);
	/* The log goes before the pages: a dump cut short still explains the
	 * crash. A log too large for one chunk keeps its newest part. */
	if (!r && in->dmesg && in->dmesg_len) {
		size_t n = in->dmesg_len, skip = n > KDI_CHUNK_MAX ? n - KDI_CHUNK_MAX : 0;
		r = writer_put(wr, KDI_CH_DMESG, in->dmesg + skip, n - skip, NULL, 0, NULL, 0);
	}
	if (!r)
		r = writer_flush(wr);
	return r;
}

/* What the optional steps did, and what the EARLY pass is to cover (for
 * info on a dump cut short): after the log, before the pages. */
static int write_steps(struct kdi_writer *wr, const struct capture_in *in,
		       const struct capture_steps_out *st)
{
	struct kdi_steps h = { .flags = st->flags, .attempt = st->attempt ? st->attempt : 1 };
	size_t tl = st->len < KDI_STEPS_TEXT_MAX ? st->len : KDI_STEPS_TEXT_MAX;

	if (memmap_on(in))
		h.flags |= KDI_STEPS_MEMMAP_EXCLUDED;
	if (in->early && in->early->n)
		h.flags |= KDI_STEPS_EARLY;
	int r = writer_put(wr, KDI_CH_STEPS, &h, sizeof h, st->text, tl, NULL, 0);
	if (!r && in->early && in->early->n) {
		const struct dbg_pages *e = in->early;
		struct kdi_debugger dbg = { .pfns = e->pfns, .last_pfn = e->r[e->n - 1].hi - 1,
					    .parts = e->parts, .ranges = e->n };
		r = writer_put(wr, KDI_CH_DEBUGGER, &dbg, sizeof dbg, NULL, 0, NULL, 0);
	}
	return r;
}

void capture_live_stage(struct capture_live *l, enum capture_stage s)
{
	if (!l)
		return;
	atomic_store_explicit(&l->stage, s, memory_order_relaxed);
	atomic_fetch_add_explicit(&l->heartbeat, 1, memory_order_relaxed);
}

static int emit_block(struct kdi_writer *wr, struct slot *sl, struct capture_result *res)
{
	struct kdi_end *e = &res->end;

	for (int c = 0; c < KDI_EX_NCLASSES; c++)
		e->excluded[c] += sl->excluded[c];
	e->pages_total += sl->scanned;
	int r;
	if (!sl->hdr.nstored && !sl->hdr.nzero) {
		/* Nothing kept, nothing to say: no chunk at all; but a sealed
		 * dump has a chunk for every job, so that the workers know
		 * each one's seq: an empty PAD. */
		if (!wr->seal)
			return 0;
		r = writer_put(wr, KDI_CH_PAD, NULL, 0, NULL, 0, NULL, 0);
	} else if (wr->seal) {
		r = writer_put_sealed(wr, KDI_CH_PAGES, sl->payload, sl->payload_len, sl->hash,
				      sl->seal_seq);
	} else {
		r = writer_put_hashed(wr, KDI_CH_PAGES, &sl->hash, sl->head, sl->head_len,
				      sl->sizes, 4 * (size_t)sl->hdr.nstored, sl->data, sl->data_len);
	}
	if (r < 0) {
		/* Not stored after all: count those pages as lost. */
		e->pages_total -= sl->scanned;
		for (int c = 0; c < KDI_EX_NCLASSES; c++)
			e->excluded[c] -= sl->excluded[c];
		return r;
	}
	e->pages_stored += sl->stored;
	e->bytes_in += sl->bytes_in;
	return 0;
}

/* Spans in reach of the classification front: enough that every worker
 * can classify one while the block iterator drains another. */
static unsigned spans_wanted(unsigned threads)
{
	return 2 * threads + 1;
}

static int spans_init(struct pipe *p, unsigned threads)
{
	struct spans *ss = &p->sp;

	ss->n = spans_wanted(threads);
	/* The EARLY pass first when there is one to walk. */
	ss->pass = p->neranges ? 0 : 1;
	ss->rl = p->neranges ? p->eranges : p->ranges;
	ss->nrl = p->neranges ? p->neranges : p->nranges;
	ss->s = calloc(ss->n, sizeof *ss->s);
	if (!ss->s)
		return -ENOMEM;
	pthread_cond_init(&ss->ready, NULL);
	return 0;
}

static void spans_fini(struct pipe *p)
{
	if (!p->sp.s)
		return;
	pthread_cond_destroy(&p->sp.ready);
	free(p->sp.s);
	p->sp.s = NULL;
}

static int slots_alloc(struct pipe *p, unsigned n)
{
	p->slots = calloc(n, sizeof *p->slots);
	if (!p->slots)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		p->slots[i].buf = malloc(SLOT_SEAL_ROOM + (size_t)BLOCK_PAGES * p->ps +
					 LZ4_COMPRESSBOUND(p->ps) + chunk_tags_len(KDI_CH_PAGES, KDI_FORMAT_AEGIS));
		if (!p->slots[i].buf)
			return -ENOMEM;
		p->slots[i].data = p->slots[i].buf + SLOT_SEAL_ROOM;
	}
	return 0;
}

static int worker_init(struct worker *w, struct pipe *p)
{
	memset(w, 0, sizeof *w);
	w->p = p;
	window_init(&w->win, p->vc->fd, p->vc->file_size, p->pl->window, p->pl->pread);
	if (p->in->filter && memmap_cursor_init(&w->mc, p->in->filter) < 0)
		return -ENOMEM;
	if (p->in->kernel && memmap_cursor_init(&w->mk, p->in->kernel) < 0)
		return -ENOMEM;
	w->lz4 = LZ4_createStream();
	w->stage = malloc((size_t)BLOCK_PAGES * p->ps);
	w->scratch = malloc(p->ps);
	w->cands = calloc(p->vc->nr_seg ? p->vc->nr_seg : 1, sizeof *w->cands);
	return (w->lz4 && w->stage && w->scratch && w->cands) ? 0 : -ENOMEM;
}

static void worker_fini(struct worker *w)
{
	memmap_cursor_fini(&w->mc);
	memmap_cursor_fini(&w->mk);
	window_fini(&w->win);
	LZ4_freeStream(w->lz4);
	free(w->stage);
	free(w->scratch);
	free(w->cands);
}

/* ---- workers ----
 * Every worker, the calling thread included, loops: take the next block
 * (its span classified already, by whichever worker, and joined in pfn
 * order) or a span to classify, claim the block's slot, encode it
 * unlocked, and hand it back to the ring, which writes blocks strictly in
 * order (lib/ring.h). Spans are a fixed partition and their joins exact,
 * so the dump is the same for any thread count. */

/* The ring's emitter: blocks arrive here one at a time, in order. */
static int emit_slot(void *ctx, unsigned slot, uint64_t idx)
{
	struct pipe *p = ctx;
	struct slot *sl = &p->slots[slot];

	int r = emit_block(p->wr, sl, p->res);
	/* A GAP took a seq before this chunk: the workers seal what comes
	 * next under the seqs it will really get, so the writer need not
	 * seal every later chunk again. */
	if (!r && p->wr->seal)
		__atomic_store_n(&p->seq_base, p->wr->seq - 1 - idx, __ATOMIC_RELAXED);
	p->done += sl->scanned;
	if (p->hk->live) {
		struct capture_live *l = p->hk->live;
		atomic_store_explicit(&l->pages, p->res->end.pages_stored, memory_order_relaxed);
		atomic_store_explicit(&l->flushed, p->wr->flushed, memory_order_relaxed);
		atomic_fetch_add_explicit(&l->heartbeat, 1, memory_order_relaxed);
	}
	if (p->hk->progress)
		progress_tick(p->pg, p, p->done, p->wr->pos, 0);
	return r;
}

static void fill_job(void *arg, unsigned slot, uint64_t idx)
{
	struct worker *w = arg;
	encode_block(w, &w->p->slots[slot], w->pfn, w->count, &w->sk, idx);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	ring_work(&w->p->ring, next_job, prep_job, fill_job, w);
	return NULL;
}

/* n workers: the caller and n-1 threads. Returns the emitter's error. */
static int run_workers(struct pipe *p, unsigned n)
{
	struct worker *ws = calloc(n, sizeof *ws);
	unsigned started = 1;
	int r = ws ? 0 : -ENOMEM;

	for (unsigned i = 0; !r && i < n; i++)
		r = worker_init(&ws[i], p);
	for (unsigned i = 1; !r && i < n; i++) {
		if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) != 0)
			break;	/* fewer workers, same output */
		started++;
	}
	if (!r)
		worker_main(&ws[0]);
	int map_errno = 0;
	for (unsigned i = 1; i < started; i++)
		pthread_join(ws[i].tid, NULL);
	for (unsigned i = 0; ws && i < n; i++)
		if (ws[i].win.map_errno)
			map_errno = ws[i].win.map_errno;
	if (map_errno)
		warn("mmap of the vmcore failed (%s): read it with pread instead",
		     errstr(map_errno));
	for (unsigned i = 0; ws && i < n; i++)
		worker_fini(&ws[i]);
	free(ws);
	return r < 0 ? r : p->ring.err;
}

/* The read path, decided once: what rq asks, else by the input. */
static int reads_with_pread(const struct capture_req *rq, const struct vmcore *vc)
{
	return rq->read_mode == READ_PREAD || (rq->read_mode == READ_AUTO && !vc->is_proc);
}

/* What one of t workers holds: its stage and output slots of one block
 * each (two slots counted for a lone worker, which uses one: the plan
 * stays what it was before the slots grew) and the rest. */
static uint64_t worker_bytes(unsigned t, uint64_t block, uint64_t rest)
{
	return (1 + (t > 1 ? SLOTS_PER_WORKER : 2)) * block + rest;
}

void capture_plan(const struct capture_req *rq, const struct vmcore *vc,
		  const struct capture_in *in, uint64_t mem_avail, struct capture_plan *pl,
		  char *line, size_t linesz)
{
	uint32_t ps = vc->page_size;

	/* Per worker (worker_bytes): its output slots and stage, one block each,
	 * LZ4 state, the page tables of its mmap window (8 bytes per 4 KiB
	 * page mapped), its struct-page cursor (a window of struct pages, a
	 * byte and a piece per pfn of it) and two spans of decisions. Fixed:
	 * the write buffers, one more span, and slack for the kernel's own
	 * page cache and our stack (the log is already taken out of
	 * mem_avail). Large writes when there is room for them: 4 MiB each
	 * from 256 MB free. */
	uint64_t block = (uint64_t)BLOCK_PAGES * ps;
	int big = !mem_avail || mem_avail >= (256u << 20);
	uint32_t wb = big ? WRITE_BUF_MAX : WRITE_BUF_MIN;
	unsigned nwb = in->no_direct ? 2 : big ? WRITE_BUFS_MAX : WRITE_BUFS_MIN;
	uint64_t cursor = in->filter ? (uint64_t)MM_WINDOW * (in->filter->spage + 1 +
							       sizeof(struct mm_piece)) : 0;
	if (in->kernel)
		cursor *= 2;	/* one for each walker */
	uint64_t fixed = nwb * (uint64_t)wb + sizeof(struct span) + (2u << 20);
	/* A sealed dump: the writer's buffer that the metadata chunks are
	 * sealed in (capture/writer.c; the log is the largest), held to the
	 * end, counted as one block's payload (the pages are sealed in
	 * place, in the slots). */
	if (in->seal)
		fixed += block + 2 * BLOCK_PAGES;
	uint64_t window = rq->window ? rq->window : 64u << 20;
	uint64_t margin = mem_avail / 4 > (4u << 20) ? mem_avail / 4 : (4u << 20);
	unsigned want = rq->threads ? rq->threads : 1, t = want;
	int cpu_bound = rq->cpus && t > rq->cpus;
	if (cpu_bound)
		t = rq->cpus;
	uint64_t rest = (64u << 10) + cursor + 2 * sizeof(struct span);

	if (mem_avail) {
		uint64_t budget = mem_avail > margin + fixed ? mem_avail - margin - fixed : 0;
		/* Shrink the window before the parallelism: 16 MiB still maps
		 * thousands of pages per call. */
		while (window > (16u << 20) && window / 512 > budget / 8)
			window /= 2;
		while (t > 1 && t * worker_bytes(t, block, rest + window / 512) > budget)
			t--;
	}
	*pl = (struct capture_plan){ .threads = t, .window = window, .write_buf = wb,
				     .write_bufs = nwb, .pread = reads_with_pread(rq, vc) };
	uint64_t peak = fixed + (uint64_t)t * worker_bytes(t, block, rest + window / 512);
	char rd[48];
	if (pl->pread)
		snprintf(rd, sizeof rd, "pread into the stage");
	else
		snprintf(rd, sizeof rd, "%u MiB mmap windows", (unsigned)(window >> 20));
	char why[48] = "";
	if (t < want)
		snprintf(why, sizeof why, cpu_bound && t == rq->cpus ? " (of %u asked: %u CPUs)" :
			 " (of %u asked: memory-bound)", want, rq->cpus);
	snprintf(line, linesz, "plan: MemAvailable %.0f MB; %u worker%s%s, %s, "
		 "%u KiB blocks, %u-deep queue, %u x %u MiB write buffers%s; about %.1f MB used%s%s%s",
		 mem_avail / 1e6, t, t == 1 ? "" : "s", why,
		 rd, (unsigned)(block >> 10), t > 1 ? SLOTS_PER_WORKER * t : 1, nwb, wb >> 20,
		 in->seal ? ", sealed" : "", peak / 1e6,
		 in->early && in->early->n ? "; the debugger's pages first" : "",
		 in->kernel ? (in->early && in->early->n ? ", then the kernel's (level 31), then the rest" :
			       "; the kernel's pages (level 31) first, then the rest") : "",
		 memmap_on(in) ? "; the memory map's pages last, those that describe only pages "
					    "left out left out" : "");
}

int capture_dump(struct vmcore *vc, const struct capture_req *rq, const struct capture_plan *pl,
		 const struct capture_in *in, const struct capture_hooks *hk,
		 struct capture_result *res)
{
	static const struct capture_hooks none;
	struct pipe p = { .vc = vc, .rq = rq, .pl = pl, .in = in, .hk = hk ? hk : &none,
			  .ps = vc->page_size };
	struct kdi_writer wr = { 0 };
	struct progress pg = { .t0 = now_mono(), .last_pct = -100 };
	size_t wbsz = pl->write_buf ? pl->write_buf : WRITE_BUF_MIN;
	uint8_t *wbuf = malloc(wbsz);
	struct sink sk;
	int have_sink = 0, r;

	memset(res, 0, sizeof *res);
	pg.last_t = pg.t0;
	p.shift = log2_pow2(p.ps);
	/* Without it a bad page of the vmcore kills us; the capture goes on
	 * as before (and says so), since most vmcores have none. */
	r = physmem_guard_install();
	if (r < 0)
		warn("no SIGBUS guard (%s): a bad page of the vmcore will end the capture", strerror(-r));

	unsigned nslots = pl->threads > 1 ? SLOTS_PER_WORKER * pl->threads : 1;
	r = wbuf ? build_layout(&p) : -ENOMEM;
	if (!r)
		r = ring_init(&p.ring, nslots, emit_slot, &p);
	if (!r)
		r = slots_alloc(&p, nslots);
	if (r < 0)
		goto out;

	writer_init(&wr, in->fd, in->base, in->limit, wbuf, wbsz, 0);
	if (p.hk->live)
		atomic_store_explicit(&p.hk->live->dump_id, wr.dump_id, memory_order_relaxed);
	if (in->seal)
		writer_seal(&wr, in->seal);
	if (in->grow_file)
		writer_grow_file(&wr, in->trim_file);
	/* A ring of buffers with writes in flight, O_DIRECT where the target
	 * allows it; plain buffered writes if the sink cannot be had. */
	have_sink = sink_open(&sk, in->fd, wbsz, pl->write_bufs ? pl->write_bufs : 2,
			      in->no_direct) == 0;
	if (have_sink)
		writer_use_sink(&wr, &sk);
	res->direct = have_sink && sk.direct;	/* the tail may go buffered */
	res->dump_id = wr.dump_id;
	r = write_metadata(&wr, vc, rq, in);
	if (r < 0)
		goto out;	/* not even the header fits or writes: no dump */
	if (have_sink)
		sink_flush_soon(&sk);	/* the crash's log durable before any page */
	if (p.hk->live)
		atomic_store_explicit(&p.hk->live->flushed, wr.flushed, memory_order_relaxed);
	capture_live_stage(p.hk->live, CAPTURE_LOG_WRITTEN);

	/* Only now the steps that improve the dump without being needed for
	 * it: whatever they cost, the crash's log is already on the device.
	 * They work on a copy of in, which the run then uses. */
	struct capture_in run = *in;
	struct capture_steps_out *st = calloc(1, sizeof *st);
	if (!st) {
		r = -ENOMEM;
		goto end;
	}
	st->attempt = in->steps_attempt;
	if (in->steps)
		in->steps(in->steps_arg, &run, st);
	p.in = &run;
	if (steps_layout(&p) < 0) {
		warn("no memory for the order the steps chose: the pages go in pfn order");
		run.early = NULL;
		run.memmap = NULL;
		st->flags |= KDI_STEPS_DROPPED;
	}
	r = write_steps(&wr, &run, st);
	free(st);
	if (!r)
		r = spans_init(&p, pl->threads ? pl->threads : 1);
	if (r < 0)
		goto end;
	capture_live_stage(p.hk->live, CAPTURE_PAGES);

	p.wr = &wr;
	p.res = res;
	p.pg = &pg;
	/* Every job is one chunk from here on: a sealed chunk's seq is
	 * seq_base + its job number. */
	p.seq_base = wr.seq;
	r = run_workers(&p, pl->threads ? pl->threads : 1);
	if (in->filter) {
		in->filter->unreadable += p.sp.unread;
		in->filter->no_memmap += p.sp.nomap;
		in->filter->implausible += p.sp.implaus;
	}

end:;
	struct kdi_end *e = &res->end;
	if (vc->truncated)
		e->status |= KDI_ST_INPUT_TRUNCATED | KDI_ST_INCOMPLETE;
	if (e->excluded[KDI_EX_UNREADABLE])
		e->status |= KDI_ST_READ_ERRORS | KDI_ST_INCOMPLETE;
	if (r == -ENOSPC)
		e->status |= KDI_ST_DEVICE_FULL | KDI_ST_INCOMPLETE;
	else if (r < 0)
		e->status |= KDI_ST_ABORTED | KDI_ST_INCOMPLETE;
	if (r < 0 && r != -ENOSPC && r != -ECANCELED)
		res->write_error = r;
	e->end_time = (uint64_t)time(NULL);

	/* Whatever happened above, try to close the stream: an END record
	 * turns "incomplete, reason unknown" into a stated reason. */
	int fr = writer_flush(&wr);
	if (fr == -ENOSPC && !(e->status & KDI_ST_DEVICE_FULL)) {
		e->status |= KDI_ST_DEVICE_FULL | KDI_ST_INCOMPLETE;
	}
	int er = writer_put_end(&wr, e);
	if (!er)
		er = writer_flush(&wr);
	/* Writes gone around (GAP): the END put says so too. */
	if (wr.gaps)
		e->status |= KDI_ST_WRITE_ERRORS | KDI_ST_INCOMPLETE;
	res->gaps = wr.gaps;
	res->gap_bytes = wr.gap_bytes;
	if (er < 0 && !res->write_error)
		res->write_error = er;
	if (!er)
		writer_trim(&wr);	/* only gives space back: a failure leaves zeros after END */
	if (!er && have_sink)
		er = sink_flush_stop(&sk);	/* what a flush on the way saw */
	if (!er && fdatasync(in->fd) < 0)
		er = -errno;
	res->end.bytes_out = wr.pos;
	res->fs_full = wr.fs_full;
	res->end.nr_chunks = wr.seq;
	res->seconds = now_mono() - pg.t0;
	if (p.hk->live)
		atomic_store_explicit(&p.hk->live->flushed, wr.flushed, memory_order_relaxed);
	capture_live_stage(p.hk->live, CAPTURE_ENDED);
	if (p.hk->progress)
		progress_tick(&pg, &p, res->end.pages_total, wr.pos, 1);
	r = er;
out:
	if (have_sink)
		sink_close(&sk);
	writer_fini(&wr);
	for (unsigned i = 0; p.slots && i < p.ring.nslots; i++)
		free(p.slots[i].buf);
	free(p.slots);
	free(p.order);
	free(p.maxend);
	free(p.ranges);
	free(p.eranges);
	free(p.vranges);
	free(p.eoff);
	free(p.w0);
	free(wbuf);
	ring_fini(&p.ring);
	spans_fini(&p);
	return r;
}
