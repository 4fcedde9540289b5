#include "ring.h"

#include <errno.h>
#include <stdlib.h>

enum { RS_FREE, RS_BUSY, RS_FULL };

int ring_init(struct ring *r, unsigned nslots, ring_emit_fn emit, void *ctx)
{
	*r = (struct ring){ .nslots = nslots, .emit = emit, .ctx = ctx };
	r->s = calloc(nslots ? nslots : 1, sizeof *r->s);
	if (!r->s)
		return -ENOMEM;
	for (unsigned i = 0; i < nslots; i++)
		r->s[i].next = i;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->slot_free, NULL);
	return 0;
}

void ring_fini(struct ring *r)
{
	if (!r->s)
		return;
	pthread_cond_destroy(&r->slot_free);
	pthread_mutex_destroy(&r->lock);
	free(r->s);
	r->s = NULL;
}

/* Waits until job idx may use its slot, and marks it busy. -ECANCELED
 * when the ring is stopped. */
static int ring_claim(struct ring *r, uint64_t idx)
{
	struct ring_slot *s = &r->s[idx % r->nslots];

	while (!r->stop && !(s->state == RS_FREE && s->next == idx)) {
		r->waiting++;
		pthread_cond_wait(&r->slot_free, &r->lock);
		r->waiting--;
	}
	if (r->stop)
		return -ECANCELED;
	s->state = RS_BUSY;
	s->idx = idx;
	return 0;
}

void ring_stop(struct ring *r, int err)
{
	if (!r->stop)
		r->err = err;
	r->stop = 1;
	if (r->waiting)
		pthread_cond_broadcast(&r->slot_free);
}

/* Job idx is filled: emit it and every full job after it, unless another
 * worker is already emitting (it will find them). Drops the lock while
 * emitting. */
static void ring_done(struct ring *r, uint64_t idx)
{
	r->s[idx % r->nslots].state = RS_FULL;
	if (r->emitting)
		return;		/* that worker will find our job too */
	r->emitting = 1;
	for (;;) {
		unsigned slot = r->emit_next % r->nslots;
		struct ring_slot *s = &r->s[slot];
		if (r->stop || s->state != RS_FULL || s->idx != r->emit_next)
			break;
		pthread_mutex_unlock(&r->lock);
		int e = r->emit(r->ctx, slot, r->emit_next);
		pthread_mutex_lock(&r->lock);
		s->state = RS_FREE;
		s->next = r->emit_next + r->nslots;
		r->emit_next++;
		if (e < 0)
			ring_stop(r, e);
		else if (r->waiting)
			pthread_cond_broadcast(&r->slot_free);
	}
	r->emitting = 0;
}

/* A worker leaves its loop: if the ring stopped, nobody may stay asleep
 * on a slot that will never free. */
static void ring_leave(struct ring *r)
{
	if (r->stop && r->waiting)
		pthread_cond_broadcast(&r->slot_free);
}

void ring_work(struct ring *r, ring_next_fn next, ring_prep_fn prep, ring_fill_fn fill,
	       void *worker)
{
	uint64_t idx;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		int k = next(worker, &idx);
		if (k == RING_PREP && prep) {
			pthread_mutex_unlock(&r->lock);
			prep(worker);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		if (k != RING_JOB || ring_claim(r, idx) != 0)
			break;
		pthread_mutex_unlock(&r->lock);
		fill(worker, idx % r->nslots, idx);
		pthread_mutex_lock(&r->lock);
		ring_done(r, idx);
	}
	ring_leave(r);
	pthread_mutex_unlock(&r->lock);
}
