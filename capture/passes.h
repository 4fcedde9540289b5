/* The capture's passes over the pfns (capture/passes.c): EARLY (the
 * debugger's pages), the first, LATER (the rest of the level, the memory
 * map's pages), and the decision that says, per pfn, which pass writes
 * it. They hand the pipeline one block at a time, in pfn order, as the
 * iterator of its ring (lib/ring.h); the pipeline reads and encodes it. */
#ifndef KDI_PASSES_H
#define KDI_PASSES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../dump/format.h"
#include "../kernel/dbgpages.h"
#include "../kernel/memmap.h"
#include "../kernel/memory.h"
#include "../lib/ring.h"

/* The struct-page pass works on spans of this many pfns, and notes for
 * each which of the memory map's virtual pages it needs in at most
 * CAPTURE_SPAN_VPS bits (vmemmap_find's limits). */
#define CAPTURE_SPAN_PFNS MM_WINDOW
#define CAPTURE_SPAN_VPS 320u

/* 256 pages = 1 MiB of memory per PAGES chunk: small enough that a few
 * output slots fit a tiny crashkernel reservation, large enough that the
 * 48-byte header and the bitmap are noise. */
#define BLOCK_PAGES 256u

/* Pages already judged for a block: the all-excluded blocks before it,
 * which never get a slot, are carried by the next block that keeps
 * something (or by an empty one at the end). */
struct skipped {
	uint64_t scanned;
	uint64_t excluded[KDI_EX_NCLASSES];
};

/* A page another pass decides: neither read nor counted in this one. */
#define CLS_OTHER 0xfe
_Static_assert(KDI_EX_NCLASSES < CLS_OTHER && CLS_OTHER != MM_KEEP, "CLS_OTHER is free");

struct dbg_pages;
struct vmemmap;
struct span;

/* What the passes read of the run's struct capture_in (pipeline.h, above
 * them: a copy, so that this header includes nothing of the pipeline). */
struct passes_in {
	struct memmap *filter;
	struct memmap *kernel;
	const struct dbg_pages *early;
	struct vmemmap *memmap;
};

/* Where span i is: ring of nspan, seq % nspan. Under the ring's lock.
 * Here, not in passes.c, because struct passes holds it whole. */
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
	/* In the EARLY pass, the tier of the debugger's pages it writes
	 * (kernel/dbgpages.h): the startup set, then the rest. */
	int tier;
	/* The pfn ranges this pass walks: the vmcore's, or in the EARLY pass
	 * the struct-page windows that hold the tier's pages. */
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

/* The passes' state, one per run. The pipeline sets in, ranges and ring
 * (it owns them) before passes_steps_layout; the rest is the module's.
 * Whole here because struct pipe holds it and reads sp's counts at the end. */
struct passes {
	struct passes_in in;
	const struct pfn_run *ranges;	/* the vmcore's pfns, each once */
	uint32_t nranges;
	struct ring *ring;		/* its lock covers the iterators */
	/* With in->early: the windows the EARLY pass walks for each tier,
	 * where each of in->early's runs starts in w0, and w0, a bit per pfn
	 * of the set: written by the EARLY pass (set under the ring's lock
	 * as its blocks are taken, read-only once it is over). */
	struct pfn_run *eranges[DBG_TIERS];
	uint32_t neranges[DBG_TIERS];
	/* With in->memmap: the windows holding its pages, which the LATER
	 * pass walks when it has nothing else to write. */
	struct pfn_run *vranges;
	uint32_t nvranges;
	uint64_t *eoff;
	uint8_t *w0;
	struct spans sp;
};

/* A worker's part in the passes: its struct-page readers, and the block
 * passes_next_job gave it (or the span to classify). Whole here because
 * each pipeline worker holds one and encodes the block from cls and pass. */
struct pass_worker {
	struct passes *p;
	struct mm_cursor mc;		/* its struct-page reader (with a filter) */
	struct mm_cursor mk;		/* ... for in->kernel */
	int pass;			/* of the block taken */
	int tier;			/* ... and its tier, in the EARLY pass */
	struct span *prep;		/* the span it classifies, unlocked */
	uint8_t cls[BLOCK_PAGES];	/* filter decision per page of the block */
	uint64_t pfn;			/* the block taken: next_job's answer */
	uint32_t count;
	struct skipped sk;
};

/* Whether in->memmap's pages are decided apart (passes.c says when). */
int passes_memmap_on(const struct passes_in *in);

/* The layouts of the optional steps' results (p->in's early and memmap).
 * Returns 0, or -ENOMEM with neither laid out (the caller then drops
 * both from p->in). */
int passes_steps_layout(struct passes *p);

/* The spans for threads workers, and the first pass to walk: 0 or
 * -ENOMEM. */
int passes_spans_init(struct passes *p, unsigned threads);

/* Frees what the layouts and passes_spans_init allocated; safe on a
 * zeroed p. */
void passes_fini(struct passes *p);

/* The ring's iterator and its prep step (lib/ring.h), for w. */
int passes_next_job(struct pass_worker *w, uint64_t *idx);
void passes_prep_job(struct pass_worker *w);

/* What one span holds, for the memory plan. */
size_t passes_span_bytes(void);

#endif
