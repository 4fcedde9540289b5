/* mmbench: times the capture's struct-page pass alone (kernel/memmap.c),
 * as the pipeline runs it: the vmcore's pfn ranges cut into spans of
 * MM_WINDOW pfns, each classified by one of THREADS workers with its own
 * cursor, from no carry. No page is read, compressed or written.
 *
 * usage: mmbench VMCORE [LEVEL [THREADS [ROUNDS [view|pread]]]]
 *        (31, 1, 3, view: struct pages looked at in place, as the capture
 *        does; pread: copied out, the fallback)
 *
 * Prints, per round, the wall time and ns per pfn per thread (wall time x
 * threads / pfns: the cost one CPU pays per pfn when the threads do not
 * slow each other), then the median round and the pfns by class, which
 * must not change with THREADS. Built by tests/unit/unit.mk against the
 * objects of build/kdumpinit (make build/tools/mmbench). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../arch/arch.h"
#include "../../kernel/memmap.h"
#include "../../kernel/vmcore.h"

struct span { uint64_t lo, hi; };

struct bench {
	const struct memmap *m;
	struct span *sp;
	uint64_t nsp;
	_Atomic uint64_t next;
};

struct worker {
	struct bench *b;
	struct mm_cursor c;
	uint64_t count[4][256];
	pthread_t tid;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	static _Thread_local uint8_t cls[MM_WINDOW], fl[MM_WINDOW];

	for (;;) {
		uint64_t i = atomic_fetch_add(&w->b->next, 1);
		if (i >= w->b->nsp)
			break;
		uint32_t n = (uint32_t)(w->b->sp[i].hi - w->b->sp[i].lo);
		w->c.carry = (struct mm_carry){ 0 };
		memmap_classify(&w->c, w->b->sp[i].lo, n, cls, fl);
		/* Four counters a class, taken in turn: one would make each
		 * pfn wait for the last one's increment (runs of one class are
		 * long), and the count is no part of the pass being timed. */
		uint32_t k = 0;
		for (; k + 4 <= n; k += 4) {
			w->count[0][cls[k]]++;
			w->count[1][cls[k + 1]]++;
			w->count[2][cls[k + 2]]++;
			w->count[3][cls[k + 3]]++;
		}
		for (; k < n; k++)
			w->count[0][cls[k]]++;
	}
	return NULL;
}

/* The capture's ranges: PT_LOADs by paddr, overlaps merged, cut into
 * spans at MM_WINDOW-aligned pfns. */
static uint64_t make_spans(const struct vmcore *vc, struct span **out, uint64_t *npfn)
{
	uint32_t *order = calloc(vc->nr_seg ? vc->nr_seg : 1, sizeof *order);
	struct span *rg = calloc(vc->nr_seg ? vc->nr_seg : 1, sizeof *rg);
	uint32_t n = segment_order(vc->seg, vc->nr_seg, order), nr = 0;
	uint64_t shift = 0, cap = 1024, ns = 0;
	struct span *sp = malloc(cap * sizeof *sp);

	while ((1ull << shift) < vc->page_size)
		shift++;
	for (uint32_t k = 0; k < n; k++) {
		const struct kdi_segment *s = &vc->seg[order[k]];
		uint64_t lo = s->paddr >> shift;
		uint64_t hi = (s->paddr + s->filesz + vc->page_size - 1) >> shift;
		if (nr && lo <= rg[nr - 1].hi) {
			if (hi > rg[nr - 1].hi)
				rg[nr - 1].hi = hi;
		} else {
			rg[nr++] = (struct span){ lo, hi };
		}
	}
	*npfn = 0;
	for (uint32_t k = 0; k < nr; k++)
		for (uint64_t p = rg[k].lo; p < rg[k].hi;) {
			uint64_t e = (p / MM_WINDOW + 1) * MM_WINDOW;
			if (e > rg[k].hi)
				e = rg[k].hi;
			if (ns == cap)
				sp = realloc(sp, (cap *= 2) * sizeof *sp);
			sp[ns++] = (struct span){ p, e };
			*npfn += e - p;
			p = e;
		}
	free(order);
	free(rg);
	*out = sp;
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mmbench VMCORE [LEVEL [THREADS [ROUNDS [view|pread]]]]\n");
		return 2;
	}
	unsigned level = argc > 2 ? (unsigned)atoi(argv[2]) : 31;
	unsigned nt = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
	unsigned rounds = argc > 4 ? (unsigned)atoi(argv[4]) : 3;
	int no_view = argc > 5 && !strcmp(argv[5], "pread");
	if (nt < 1)
		nt = 1;
	if (rounds < 1 || rounds > 64)
		rounds = 3;

	struct vmcore vc;
	enum vmcore_err why;
	if (vmcore_open(&vc, argv[1], &why) < 0) {
		fprintf(stderr, "mmbench: %s: %s\n", argv[1], vmcore_strerror(why));
		return 1;
	}
	static struct memmap m;
	uint32_t applied;
	char whyf[400];
	if (memmap_init(&m, &vc, arch_lookup(vc.e_machine), level, &applied, whyf, sizeof whyf) < 0 ||
	    !m.active) {
		fprintf(stderr, "mmbench: no struct pages: %s\n", whyf);
		return 1;
	}
	m.no_view = no_view;
	struct bench b = { .m = &m };
	uint64_t npfn;
	b.nsp = make_spans(&vc, &b.sp, &npfn);
	struct worker *ws = calloc(nt, sizeof *ws);
	double t[64], cpu[64];

	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < nt; i++) {
			memset(ws[i].count, 0, sizeof ws[i].count);
			ws[i].b = &b;
			if (memmap_cursor_init(&ws[i].c, &m) < 0)
				return 1;
		}
		atomic_store(&b.next, 0);
		double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		for (unsigned i = 1; i < nt; i++)
			pthread_create(&ws[i].tid, NULL, run, &ws[i]);
		run(&ws[0]);
		for (unsigned i = 1; i < nt; i++)
			pthread_join(ws[i].tid, NULL);
		t[r] = clock_s(CLOCK_MONOTONIC) - t0;
		cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		for (unsigned i = 0; i < nt; i++)
			memmap_cursor_fini(&ws[i].c);
		printf("round %u: %.3f s, %.1f ns/pfn/thread; CPU %.3f s, %.1f ns/pfn\n", r + 1, t[r],
		       t[r] * 1e9 * nt / npfn, cpu[r], cpu[r] * 1e9 / npfn);
	}
	qsort(t, rounds, sizeof t[0], cmp_double);
	qsort(cpu, rounds, sizeof cpu[0], cmp_double);
	double med = t[rounds / 2], best = t[0];
	printf("%s: level %u (applied %u), %u thread%s, %llu pfns in %llu spans: median %.3f s, "
	       "%.1f ns/pfn/thread, %.1f ns/pfn; best %.1f ns/pfn/thread; CPU median %.1f ns/pfn, "
	       "best %.1f\n", argv[1], level, applied,
	       nt, nt == 1 ? "" : "s",
	       (unsigned long long)npfn, (unsigned long long)b.nsp, med, med * 1e9 * nt / npfn,
	       med * 1e9 / npfn, best * 1e9 * nt / npfn, cpu[rounds / 2] * 1e9 / npfn,
	       cpu[0] * 1e9 / npfn);
	uint64_t total[256] = { 0 };
	for (unsigned i = 0; i < nt; i++)
		for (int c = 0; c < 256; c++)
			for (int j = 0; j < 4; j++)
				total[c] += ws[i].count[j][c];
	printf("kept %llu", (unsigned long long)total[MM_KEEP]);
	for (int c = 0; c < KDI_EX_NCLASSES; c++)
		if (total[c])
			printf(", %s %llu", kdi_class_name[c], (unsigned long long)total[c]);
	printf(" (first pass of each span, not joined)\n");
	memmap_fini(&m);
	vmcore_close(&vc);
	return 0;
}
