/* Unit tests for lib/ring.c, the ordered work ring the capture pipeline
 * and save --format kdump run on: with any number of workers and slots,
 * every job is emitted exactly once, strictly in number order, from the
 * slot it was filled in; an emit error stops every worker (none hangs)
 * and nothing after the failed job is emitted. Jobs take uneven time, so
 * they finish out of order and the emitter role moves between workers.
 * The iterator may hand out preparatory work (RING_PREP) between jobs: it
 * runs once per time given, and jobs stay in order around it. */
#define CHECK_PREFIX "ring"
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "../../lib/ring.h"

#define MAXSLOTS 16

struct test {
	struct ring ring;
	uint64_t njobs;			/* the iterator: jobs 0..njobs-1 */
	uint64_t handed;
	uint64_t filled;		/* atomically: jobs any worker filled */
	uint64_t slot_job[MAXSLOTS];	/* what the worker wrote into a slot */
	/* Emitter's record; only the emitter touches it. */
	uint64_t emitted, bad_order, bad_slot;
	uint64_t fail_at;		/* emit returns -EIO for this job */
	int concurrent, max_concurrent;	/* emitters at once (must stay 1) */
	uint64_t prep_every;		/* RING_PREP before every such job (0: never) */
	uint64_t prep_for;		/* the job the last RING_PREP came before, + 1 */
	uint64_t preps_given, preps_done;
};

/* A few microseconds of uneven work, so that jobs finish out of order. */
static void work(uint64_t idx)
{
	struct timespec ts = { 0, (long)((idx * 2654435761u) % 7) * 20000 };
	nanosleep(&ts, NULL);
}

static int emit(void *ctx, unsigned slot, uint64_t idx)
{
	struct test *t = ctx;

	if (__atomic_add_fetch(&t->concurrent, 1, __ATOMIC_SEQ_CST) > t->max_concurrent)
		t->max_concurrent = t->concurrent;
	if (idx != t->emitted)
		t->bad_order++;
	if (slot != idx % t->ring.nslots || t->slot_job[slot] != idx)
		t->bad_slot++;
	int r = 0;
	if (idx == t->fail_at)
		r = -EIO;
	else
		t->emitted++;
	if (idx % 5 == 0)
		work(idx);	/* a slow write: others fill slots meanwhile */
	__atomic_sub_fetch(&t->concurrent, 1, __ATOMIC_SEQ_CST);
	return r;
}

static int next(void *arg, uint64_t *idx)
{
	struct test *t = arg;

	if (t->handed >= t->njobs)
		return RING_END;
	if (t->prep_every && t->handed % t->prep_every == 0 && t->prep_for != t->handed + 1) {
		t->prep_for = t->handed + 1;
		t->preps_given++;
		return RING_PREP;
	}
	t->handed++;
	*idx = t->ring.issued++;
	return 1;
}

static void fill(void *arg, unsigned slot, uint64_t idx)
{
	struct test *t = arg;

	work(idx);
	t->slot_job[slot] = idx;
	__atomic_add_fetch(&t->filled, 1, __ATOMIC_SEQ_CST);
}

static void prep(void *arg)
{
	struct test *t = arg;

	work(t->preps_done * 3 + 1);
	__atomic_add_fetch(&t->preps_done, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	struct test *t = arg;
	ring_work(&t->ring, next, prep, fill, t);
	return NULL;
}

/* Runs nthreads workers (the caller one of them) over njobs; returns the
 * ring's error. */
static int run_prep(struct test *t, unsigned nthreads, unsigned nslots, uint64_t njobs,
		    uint64_t fail_at, uint64_t prep_every)
{
	pthread_t tid[8];
	unsigned started = 0;

	memset(t, 0, sizeof *t);
	t->prep_every = prep_every;
	t->njobs = njobs;
	t->fail_at = fail_at;
	if (ring_init(&t->ring, nslots, emit, t) < 0)
		return -ENOMEM;
	for (unsigned i = 1; i < nthreads; i++)
		if (pthread_create(&tid[started], NULL, worker, t) == 0)
			started++;
	worker(t);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	int err = t->ring.err;
	ring_fini(&t->ring);
	return err;
}

static int run(struct test *t, unsigned nthreads, unsigned nslots, uint64_t njobs, uint64_t fail_at)
{
	return run_prep(t, nthreads, nslots, njobs, fail_at, 0);
}

static void all_jobs_in_order(void)
{
	static const unsigned shapes[][2] = { { 1, 1 }, { 1, 2 }, { 2, 4 }, { 3, 6 }, { 4, 3 },
					      { 8, 16 }, { 2, 1 } };
	struct test t;

	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		unsigned nt = shapes[i][0], ns = shapes[i][1];
		int r = run(&t, nt, ns, 2000, UINT64_MAX);
		CHECK(r == 0, "%u threads, %u slots: error %d", nt, ns, r);
		CHECK(t.emitted == 2000, "%u threads, %u slots: %llu of 2000 jobs emitted", nt, ns,
		      (unsigned long long)t.emitted);
		CHECK(!t.bad_order, "%u threads, %u slots: %llu jobs emitted out of order", nt, ns,
		      (unsigned long long)t.bad_order);
		CHECK(!t.bad_slot, "%u threads, %u slots: %llu jobs emitted from the wrong slot", nt,
		      ns, (unsigned long long)t.bad_slot);
		CHECK(t.max_concurrent == 1, "%u threads, %u slots: %d emitters at once", nt, ns,
		      t.max_concurrent);
	}
}

/* Preparatory work between jobs (the capture classifies spans so): each
 * given once runs once, and the jobs still come out in order. */
static void prep_between_jobs(void)
{
	static const unsigned threads[] = { 1, 2, 3, 8 };
	struct test t;

	for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
		int r = run_prep(&t, threads[i], 2 * threads[i], 1000, UINT64_MAX, 7);
		CHECK(r == 0, "%u threads: error %d", threads[i], r);
		CHECK(t.emitted == 1000, "%u threads: %llu of 1000 jobs emitted", threads[i],
		      (unsigned long long)t.emitted);
		CHECK(!t.bad_order && !t.bad_slot, "%u threads: emitted out of order", threads[i]);
		CHECK(t.preps_given == 143 && t.preps_done == 143,
		      "%u threads: %llu preps given, %llu done, want 143", threads[i],
		      (unsigned long long)t.preps_given, (unsigned long long)t.preps_done);
	}
}

static void no_jobs(void)
{
	struct test t;
	int r = run(&t, 3, 6, 0, UINT64_MAX);
	CHECK_INT(r, 0);
	CHECK_INT(t.emitted, 0);
}

/* The capture stops on a write error: the job that failed and everything
 * after it are not emitted, every worker returns (run() would hang
 * otherwise, and run.sh's timeout would say so), the error is kept. */
static void emit_error_stops_all(void)
{
	static const unsigned threads[] = { 1, 2, 4, 8 };
	struct test t;

	for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
		int r = run(&t, threads[i], 2 * threads[i], 5000, 37);
		CHECK(r == -EIO, "%u threads: error %d, want -EIO", threads[i], r);
		CHECK(t.emitted == 37, "%u threads: %llu jobs emitted before the failed one, want 37",
		      threads[i], (unsigned long long)t.emitted);
		CHECK(!t.bad_order, "%u threads: emitted out of order", threads[i]);
	}
}

/* A ring stopped from outside takes no job, and keeps the first error. */
static void stop_keeps_first_error(void)
{
	struct test t;
	memset(&t, 0, sizeof t);
	t.njobs = 10;
	t.fail_at = UINT64_MAX;
	CHECK_INT(ring_init(&t.ring, 2, emit, &t), 0);
	pthread_mutex_lock(&t.ring.lock);
	ring_stop(&t.ring, -ENOSPC);
	ring_stop(&t.ring, -EIO);
	pthread_mutex_unlock(&t.ring.lock);
	worker(&t);
	CHECK_INT(t.ring.err, -ENOSPC);
	CHECK_INT(t.filled, 0);
	CHECK_INT(t.emitted, 0);
	ring_fini(&t.ring);
}

int main(void)
{
	RUN(all_jobs_in_order);
	RUN(prep_between_jobs);
	RUN(no_jobs);
	RUN(emit_error_stops_all);
	RUN(stop_keeps_first_error);
	return check_done();
}
