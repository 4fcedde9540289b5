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
 *
 * A worker's loop:
 *	pthread_mutex_lock(&r->lock);
 *	while (next job, under the lock) {
 *		uint64_t idx = r->issued++;
 *		if (ring_claim(r, idx) < 0) break;
 *		pthread_mutex_unlock(&r->lock);
 *		fill slot idx % r->nslots;
 *		pthread_mutex_lock(&r->lock);
 *		ring_done(r, idx);
 *	}
 *	ring_leave(r);
 *	pthread_mutex_unlock(&r->lock);
 */
#ifndef KDI_RING_H
#define KDI_RING_H

#include <pthread.h>
#include <stdint.h>

/* Called unlocked, by one thread at a time, in idx order, for the job in
 * `slot`; a negative return stops the ring with that error. */
typedef int (*ring_emit_fn)(void *ctx, unsigned slot, uint64_t idx);

struct ring_slot {
	int state;		/* RS_FREE, RS_BUSY, RS_FULL */
	uint64_t idx;		/* job held (BUSY/FULL) */
	uint64_t next;		/* the only job that may take it next */
};

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

/* The rest is called with r->lock held. */

/* Waits until job idx may use its slot, and marks it busy. -ECANCELED
 * when the ring is stopped. */
int ring_claim(struct ring *r, uint64_t idx);
/* Job idx is filled: emit it and every full job after it, unless another
 * worker is already emitting (it will find them). Drops the lock while
 * emitting. */
void ring_done(struct ring *r, uint64_t idx);
/* Stops the ring: claims fail, emits cease, sleepers wake. The first
 * error given is kept (0 stops without one). */
void ring_stop(struct ring *r, int err);
/* A worker leaves its loop: if the ring stopped, nobody may stay asleep
 * on a slot that will never free. */
void ring_leave(struct ring *r);

#endif
