/* An ordered ring of work slots, for output that must be the same for
 * any thread count: jobs are numbered as they are handed out, job idx
 * works in slot idx % nslots, and finished jobs are emitted strictly in
 * number order by whichever worker finds the next one full. There is no
 * writer thread: the emitter role passes between workers, and a worker
 * sleeps only when its slot still holds the job nslots before it.
 *
 * The ring's lock is also the lock of the caller's job iterator: taking
 * the next job, numbering it and claiming its slot happen in one critical
 * section, so jobs are numbered in the order the iterator yields them.
 * The iterator may instead hand the worker preparatory work (RING_PREP),
 * which runs unlocked, before asking again: work that need not be done
 * in order stays out of the critical section.
 * Each worker, the calling thread usually one of them, runs ring_work. */
#ifndef KDI_RING_H
#define KDI_RING_H

#include <pthread.h>
#include <stdint.h>

/* Called unlocked, by one thread at a time, in idx order, for the job in
 * `slot`; a negative return stops the ring with that error. */
typedef int (*ring_emit_fn)(void *ctx, unsigned slot, uint64_t idx);
/* What ring_next_fn returns. */
enum { RING_END = 0, RING_JOB = 1, RING_PREP = 2 };
/* Called with the lock held: RING_JOB with the next job, kept in the
 * worker's own state, numbered *idx = r->issued++; RING_PREP when the
 * worker is to run ring_prep_fn first; RING_END when there is none. It
 * may wait on a condition variable of its own with r->lock. */
typedef int (*ring_next_fn)(void *worker, uint64_t *idx);
/* Called unlocked: the work RING_PREP gave; the next ring_next_fn call
 * publishes its result. */
typedef void (*ring_prep_fn)(void *worker);
/* Called unlocked: job idx's work, into `slot`. */
typedef void (*ring_fill_fn)(void *worker, unsigned slot, uint64_t idx);

struct ring_slot {
	int state;		/* RS_FREE, RS_BUSY, RS_FULL */
	uint64_t idx;		/* job held (BUSY/FULL) */
	uint64_t next;		/* the only job that may take it next */
};

/* The ring's state (the slots, waiting, issued, emit_next, emitting, stop,
 * err) is read and written under lock, which orders it: plain ints,
 * neither volatile nor _Atomic. s, nslots, emit and ctx are fixed by
 * ring_init. */
struct ring {
	pthread_mutex_t lock;
	pthread_cond_t slot_free;
	struct ring_slot *s;
	unsigned nslots;
	unsigned waiting;	/* workers asleep on slot_free */
	uint64_t issued;	/* jobs numbered so far (the caller counts) */
	uint64_t emit_next;	/* the job the emitter waits for */
	int emitting;
	int stop;		/* no more claims or emits; err says why */
	int err;
	ring_emit_fn emit;
	void *ctx;
};

/* -ENOMEM, or 0. */
int ring_init(struct ring *r, unsigned nslots, ring_emit_fn emit, void *ctx);
void ring_fini(struct ring *r);

/* One worker's loop: takes jobs, fills their slots and hands them back
 * until there is none or the ring stops. Takes the lock itself. */
void ring_work(struct ring *r, ring_next_fn next, ring_prep_fn prep, ring_fill_fn fill,
	       void *worker);

/* Stops the ring, called with r->lock held: claims fail, emits cease,
 * sleepers wake. The first error given is kept (0 stops without one). */
void ring_stop(struct ring *r, int err);

#endif
