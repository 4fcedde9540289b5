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
#include "lz4page.h"
#include "../lib/progress.h"
#include "passes.h"
#include "sink.h"
#include "window.h"
#include "writer.h"
#include "zero.h"

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

	/* The ring's lock also covers the two iterators (passes.c): a worker
	 * takes, under it, either a span to classify or the next block to
	 * encode, in pfn order. Both are short critical sections: the
	 * struct-page pass runs unlocked, in the worker that took the span. */
	struct ring ring;
	struct passes passes;
	struct slot *slots;		/* ring.nslots of them */
	uint64_t seq_base;		/* the writer's seq when the pages begin */
	/* Only the emitter (one worker at a time, lib/ring.h) touches these. */
	uint64_t done;			/* pfns emitted, for progress */
	struct kdi_writer *wr;
	struct capture_result *res;
	struct progress_rule *pg;
};

struct worker {
	struct pipe *p;
	struct pass_worker pw;		/* the block taken, its decisions */
	struct window win;
	LZ4_stream_t *lz4;
	uint8_t *stage;			/* the block's stored pages, contiguous */
	uint32_t stage_len;
	uint8_t *scratch;
	uint32_t *cands;		/* segment candidates for one block */
	uint32_t ncand;
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
	       KDI_DBG_TASKS == 1u << DBG_TASKS && KDI_DBG_DATA == 1u << DBG_DATA &&
	       KDI_DBG_MODDATA == 1u << DBG_MODDATA && KDI_DBG_TSTACKS == 1u << DBG_TSTACKS,
	       "DEBUGGER part bits");

/* ---- layout ---- */

/* What the passes read of in (passes.h). */
static struct passes_in passes_in_of(const struct capture_in *in)
{
	return (struct passes_in){ .filter = in->filter, .kernel = in->kernel, .early = in->early,
				   .memmap = in->memmap };
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
	int raw;
	uint32_t n = lz4_page(w->lz4, page, dst, ps, &raw);
	uint32_t word = raw ? ps : n | KDI_PAGE_LZ4;
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
	if (w->pw.cls[i] == CLS_OTHER)
		return;		/* the other pass's */
	if (w->pw.cls[i] != MM_KEEP) {
		sl->excluded[w->pw.cls[i]]++;
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
	while (j < count && j - i < whole && w->pw.cls[j] == MM_KEEP)
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
				      .flags = KDI_PAGES_LINKED | (w->pw.pass == 2 ? KDI_PAGES_LATER :
								     w->pw.pass == 0 ? KDI_PAGES_EARLY : 0) |
					       (w->pw.pass == 0 && w->pw.tier == 0 ? KDI_PAGES_STARTUP : 0) };
	sl->data_len = 0;
	sl->scanned = sk->scanned;
	for (uint32_t k = 0; k < count; k++)
		sl->scanned += w->pw.cls[k] != CLS_OTHER;
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
		if (w->p->pl->pread && w->pw.cls[i] == MM_KEEP) {
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

static void progress_tick(struct progress_rule *pg, const struct pipe *p, uint64_t done,
			  uint64_t bytes_out, int final)
{
	int pct = p->total_pfns ? (int)(done * 100 / p->total_pfns) : 100;
	double el;

	if (!progress_due(pg, pct, final, &el))
		return;
	double mb = (double)(done << p->shift) / 1048576.0;
	double rate = el > 0 ? mb / el : 0;
	double eta = rate > 0 ? ((double)((p->total_pfns - done) << p->shift) / 1048576.0) / rate : 0;
	msg("capture: %3d%%  %.0f/%.0f MiB scanned, %.1f MiB/s, %.0f MiB written, ETA %.0fs",
	    pct, mb, (double)(p->total_pfns << p->shift) / 1048576.0, rate,
	    bytes_out / 1048576.0, eta);
}

/* ---- the run ---- */

static int write_metadata(struct kdi_writer *wr, struct vmcore *vc, const struct capture_req *rq,
			  const struct capture_in *in)
{
	struct kdi_start st = {
		/* The steps that find the startup tier run once START is
		 * on the device: every dump may have one. */
		.format_version = in->seal ? KDI_FORMAT_TIERS_SEALED : KDI_FORMAT_TIERS,
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
	struct passes_in pi = passes_in_of(in);

	if (passes_memmap_on(&pi))
		h.flags |= KDI_STEPS_MEMMAP_EXCLUDED;
	if (in->early && in->early->n)
		h.flags |= KDI_STEPS_EARLY;
	int r = writer_put(wr, KDI_CH_STEPS, &h, sizeof h, st->text, tl, NULL, 0);
	if (!r && in->early && in->early->n) {
		const struct dbg_pages *e = in->early;
		struct kdi_debugger dbg = { .pfns = e->pfns, .last_pfn = e->r[e->n - 1].hi - 1,
					    .parts = e->parts, .ranges = e->n,
					    .startup_pfns = e->tier[0].pfns, .startup_ranges = e->tier[0].n };
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
	w->pw.p = &p->passes;
	window_init(&w->win, p->vc->fd, p->vc->file_size, p->pl->window, p->pl->pread);
	if (p->in->filter && memmap_cursor_init(&w->pw.mc, p->in->filter) < 0)
		return -ENOMEM;
	if (p->in->kernel && memmap_cursor_init(&w->pw.mk, p->in->kernel) < 0)
		return -ENOMEM;
	w->lz4 = LZ4_createStream();
	w->stage = malloc((size_t)BLOCK_PAGES * p->ps);
	w->scratch = malloc(p->ps);
	w->cands = calloc(p->vc->nr_seg ? p->vc->nr_seg : 1, sizeof *w->cands);
	return (w->lz4 && w->stage && w->scratch && w->cands) ? 0 : -ENOMEM;
}

static void worker_fini(struct worker *w)
{
	memmap_cursor_fini(&w->pw.mc);
	memmap_cursor_fini(&w->pw.mk);
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

/* The passes' iterator and prep step, for the ring (capture/passes.c). */
static int next_job(void *arg, uint64_t *idx)
{
	struct worker *w = arg;
	return passes_next_job(&w->pw, idx);
}

static void prep_job(void *arg)
{
	struct worker *w = arg;
	passes_prep_job(&w->pw);
}

static void fill_job(void *arg, unsigned slot, uint64_t idx)
{
	struct worker *w = arg;
	encode_block(w, &w->p->slots[slot], w->pw.pfn, w->pw.count, &w->pw.sk, idx);
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
	struct passes_in pi = passes_in_of(in);

	/* Per worker (worker_bytes): its output slots and stage, one block each,
	 * LZ4 state, the page tables of its mmap window (8 bytes per 4 KiB
	 * page mapped), its struct-page cursor (a window of struct pages, a
	 * byte and a piece per pfn of it) and two spans of decisions. Fixed:
	 * the write buffers, one more span, and slack for the kernel's own
	 * page cache and our stack (the log is already taken out of
	 * mem_avail). Large writes when there is room for them: 4 MiB each
	 * from 256 MiB free. */
	uint64_t block = (uint64_t)BLOCK_PAGES * ps;
	int big = !mem_avail || mem_avail >= (256u << 20);
	uint32_t wb = big ? WRITE_BUF_MAX : WRITE_BUF_MIN;
	unsigned nwb = in->no_direct ? 2 : big ? WRITE_BUFS_MAX : WRITE_BUFS_MIN;
	uint64_t cursor = in->filter ? (uint64_t)MM_WINDOW * (in->filter->spage + 1 +
							       sizeof(struct mm_piece)) : 0;
	if (in->kernel)
		cursor *= 2;	/* one for each walker */
	uint64_t fixed = nwb * (uint64_t)wb + passes_span_bytes() + (2u << 20);
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
	uint64_t rest = (64u << 10) + cursor + 2 * passes_span_bytes();

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
	snprintf(line, linesz, "plan: MemAvailable %.0f MiB; %u worker%s%s, %s, "
		 "%u KiB blocks, %u-deep queue, %u x %u MiB write buffers%s; about %.1f MiB used%s%s%s",
		 mem_avail / 1048576.0, t, t == 1 ? "" : "s", why,
		 rd, (unsigned)(block >> 10), t > 1 ? SLOTS_PER_WORKER * t : 1, nwb, wb >> 20,
		 in->seal ? ", sealed" : "", peak / 1048576.0,
		 in->early && in->early->n ? "; the debugger's pages first" : "",
		 in->kernel ? (in->early && in->early->n ? ", then the kernel's (level 31), then the rest" :
			       "; the kernel's pages (level 31) first, then the rest") : "",
		 passes_memmap_on(&pi) ? "; the memory map's pages last, those that describe only pages "
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
	struct progress_rule pg;

	progress_rule_start(&pg);
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
	/* The passes walk what the run does, under its ring's lock. */
	p.passes.in = passes_in_of(&run);
	p.passes.ranges = p.ranges;
	p.passes.nranges = p.nranges;
	p.passes.ring = &p.ring;
	if (passes_steps_layout(&p.passes) < 0) {
		warn("no memory for the order the steps chose: the pages go in pfn order");
		run.early = NULL;
		run.memmap = NULL;
		st->flags |= KDI_STEPS_DROPPED;
		p.passes.in = passes_in_of(&run);
	}
	r = write_steps(&wr, &run, st);
	free(st);
	if (!r)
		r = passes_spans_init(&p.passes, pl->threads ? pl->threads : 1);
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
		in->filter->unreadable += p.passes.sp.unread;
		in->filter->no_memmap += p.passes.sp.nomap;
		in->filter->implausible += p.passes.sp.implaus;
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
	free(wbuf);
	ring_fini(&p.ring);
	passes_fini(&p.passes);
	return r;
}
