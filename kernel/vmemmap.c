#include "vmemmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"

/* The pfn runs the dump has: what the capture walks. */
static int dump_runs(const struct vmcore *vc, unsigned shift, struct pfn_run **out, uint32_t *n)
{
	uint32_t *order = calloc(vc->nr_seg ? vc->nr_seg : 1, sizeof *order);
	struct pfn_run *r = calloc(vc->nr_seg ? vc->nr_seg : 1, sizeof *r);

	if (!order || !r) {
		free(order);
		free(r);
		return -ENOMEM;
	}
	*n = segment_pfn_runs(vc->seg, order, segment_order(vc->seg, vc->nr_seg, order), shift, r);
	free(order);
	*out = r;
	return 0;
}

static int add_run(struct vmemmap *v, uint32_t *cap, uint64_t b, uint64_t vp, uint64_t n)
{
	if (v->nrun) {
		struct vm_run *l = &v->run[v->nrun - 1];
		if (l->b + l->n == b && l->vp + l->n == vp) {
			l->n += n;
			return 0;
		}
	}
	if (v->nrun == VM_MAX_RUNS)
		return -E2BIG;
	if (v->nrun == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 64;
		struct vm_run *nr = realloc(v->run, (size_t)nc * sizeof *nr);
		if (!nr)
			return -ENOMEM;
		v->run = nr;
		*cap = nc;
	}
	v->run[v->nrun++] = (struct vm_run){ b, vp, n };
	return 0;
}

static void set_bits(uint64_t *w, uint64_t lo, uint64_t hi)	/* bits [lo, hi) */
{
	for (uint64_t i = lo; i < hi;) {
		if (i % 64 == 0 && hi - i >= 64) {
			w[i / 64] = ~0ull;
			i += 64;
		} else {
			w[i / 64] |= 1ull << (i % 64);
			i++;
		}
	}
}

/* Marks the virtual pages of pfns [lo, hi) needed, clipped to the map. */
static void need_pfns(struct vmemmap *v, uint64_t lo, uint64_t hi)
{
	uint64_t a, b, x, y;

	if (lo >= hi)
		return;
	vmemmap_vps(v, lo, &a, &x);
	vmemmap_vps(v, hi - 1, &y, &b);
	if (a < v->vp0)
		a = v->vp0;
	if (b >= v->vp0 + v->nvp)
		b = v->vp0 + v->nvp - 1;
	if (a <= b)
		set_bits(v->need, a - v->vp0, b - v->vp0 + 1);
}

static int by_b(const void *x, const void *y)
{
	const struct vm_run *a = x, *b = y;
	return a->b < b->b ? -1 : a->b > b->b;
}

int vmemmap_find(struct vmemmap *v, const struct memmap *m, const struct vmcore *vc,
		 uint64_t span_pfns, unsigned max_vp_per_span, char *why, size_t whysz)
{
	struct mm_cursor c;
	struct pfn_run *r = NULL;
	uint32_t nr = 0, cap = 0;
	int ret;

	memset(v, 0, sizeof *v);
	why[0] = 0;
	if (!m->active || !m->km.ok) {
		snprintf(why, whysz, "the struct pages cannot be found");
		return -ENOTSUP;
	}
	v->spage = m->spage;
	v->shift = m->shift;
	uint64_t ps = 1ull << v->shift;
	if (!v->spage || span_pfns * v->spage / ps + 2 > max_vp_per_span) {
		snprintf(why, whysz, "SIZE(page) %llu is more than a capture's span can note",
			 (unsigned long long)v->spage);
		return -ENOTSUP;
	}
	ret = dump_runs(vc, v->shift, &r, &nr);
	if (ret < 0)
		return ret;
	ret = memmap_cursor_init(&c, m);
	if (ret < 0) {
		free(r);
		return ret;
	}

	/* Every section that holds a pfn of the dump, in order, with its
	 * coded mem_map. */
	struct sec { uint64_t nr, map; } *sec = NULL;
	size_t nsec = 0, scap = 0;
	uint64_t last_nr = UINT64_MAX;
	for (uint32_t i = 0; i < nr && !ret; i++) {
		for (uint64_t s = r[i].lo >> m->sec_shift; s <= (r[i].hi - 1) >> m->sec_shift; s++) {
			if (s == last_nr)
				continue;
			last_nr = s;
			uint64_t map = memmap_section(&c, s);
			if (!map)
				continue;
			if (nsec == scap) {
				size_t ns = scap ? 2 * scap : 64;
				struct sec *x = realloc(sec, ns * sizeof *x);
				if (!x) {
					ret = -ENOMEM;
					break;
				}
				sec = x;
				scap = ns;
			}
			sec[nsec++] = (struct sec){ s, map };
		}
	}
	/* With SPARSEMEM_VMEMMAP every section codes the same map: one
	 * virtual array. A section that says otherwise is corrupt, and its
	 * struct pages are left out of the map (they stay in the dump); with
	 * no majority there is no array (SPARSEMEM without VMEMMAP puts each
	 * section's array where it was allocated, beside other data). */
	size_t votes = 0;
	for (size_t i = 0; i < nsec; i++) {
		if (!votes)
			v->map = sec[i].map;
		votes += sec[i].map == v->map ? 1 : (size_t)-1;
	}
	size_t agree = 0;
	for (size_t i = 0; i < nsec; i++)
		agree += sec[i].map == v->map;
	if (!ret && nsec && agree * 2 <= nsec) {
		snprintf(why, whysz, "the memory map is not one virtual array (no vmemmap)");
		ret = -ENOTSUP;
	}
	v->skipped = nsec - agree;

	/* Their struct pages' virtual range, leaf by leaf. */
	uint64_t per_sec = 1ull << m->sec_shift, next_vp = 0;
	uint64_t first_pfn = UINT64_MAX, end_pfn = 0;
	for (size_t i = 0; i < nsec && !ret; i++) {
		uint64_t s = sec[i].nr;
		if (sec[i].map != v->map)
			continue;
		if (s * per_sec < first_pfn)
			first_pfn = s * per_sec;
		end_pfn = (s + 1) * per_sec;
		uint64_t va = v->map + s * per_sec * v->spage, va_end = va + per_sec * v->spage;
		uint64_t vp = va >> v->shift, vp_end = (va_end + ps - 1) >> v->shift;
		if (vp < next_vp)
			vp = next_vp;	/* shared with the section before */
		while (vp < vp_end && !ret) {
			uint64_t pa, span, n = 1;
			if (m->km.ac.ops->vtop(&c.ac, vp << v->shift, &pa, &span) == 0) {
				n = span >> v->shift;
				if (n == 0)
					n = 1;
				if (n > vp_end - vp)
					n = vp_end - vp;
				ret = add_run(v, &cap, pa >> v->shift, vp, n);
			}
			vp += n;
		}
		next_vp = vp_end;
	}
	free(sec);
	memmap_cursor_fini(&c);
	if (ret == -E2BIG)
		snprintf(why, whysz, "the memory map is in more than %u pieces", VM_MAX_RUNS);
	if (!ret && !v->nrun) {
		snprintf(why, whysz, "no struct page is mapped");
		ret = -ENOTSUP;
	}
	if (ret < 0) {
		if (ret == -E2BIG)
			ret = -ENOTSUP;
		free(r);
		vmemmap_free(v);
		return ret;
	}

	v->vp0 = v->run[0].vp;
	v->nvp = v->run[v->nrun - 1].vp + v->run[v->nrun - 1].n - v->vp0;
	v->need = calloc((v->nvp + 63) / 64, 8);
	if (!v->need) {
		free(r);
		vmemmap_free(v);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < v->nrun; i++)
		v->pages += v->run[i].n;

	/* pfns the dump does not have, in the sections walked: their struct
	 * pages stay (a debugger asking about such a pfn finds why). */
	uint64_t at = first_pfn;
	for (uint32_t i = 0; i < nr; i++) {
		if (r[i].lo > at)
			need_pfns(v, at, r[i].lo < end_pfn ? r[i].lo : end_pfn);
		if (r[i].hi > at)
			at = r[i].hi;
	}
	if (at < end_pfn)
		need_pfns(v, at, end_pfn);
	free(r);

	/* A physical page mapped at two virtual pages (vmemmap optimisation
	 * of huge pages shares one page of tail struct pages) is kept. */
	qsort(v->run, v->nrun, sizeof *v->run, by_b);
	uint64_t reach = 0;
	uint32_t reach_i = 0;
	for (uint32_t i = 0; i < v->nrun; i++) {
		if (i && v->run[i].b < reach) {
			struct vm_run *o = &v->run[reach_i];
			set_bits(v->need, o->vp - v->vp0, o->vp - v->vp0 + o->n);
			set_bits(v->need, v->run[i].vp - v->vp0, v->run[i].vp - v->vp0 + v->run[i].n);
			v->aliased += v->run[i].n;
		}
		if (v->run[i].b + v->run[i].n > reach) {
			reach = v->run[i].b + v->run[i].n;
			reach_i = i;
		}
	}
	return 0;
}

void vmemmap_free(struct vmemmap *v)
{
	free(v->run);
	free(v->need);
	v->run = NULL;
	v->need = NULL;
	v->nrun = 0;
}

/* The first run that ends after pfn. */
static uint32_t seek(const struct vmemmap *v, uint64_t pfn)
{
	uint32_t a = 0, b = v->nrun;

	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (v->run[mid].b + v->run[mid].n <= pfn)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

void vmemmap_marks(const struct vmemmap *v, uint64_t lo, uint32_t n, uint8_t *vfl, int with_need)
{
	memset(vfl, 0, n);
	/* Aliased runs overlap: each marks what it covers. */
	uint32_t k = seek(v, lo);
	while (k > 0 && v->run[k - 1].b + v->run[k - 1].n > lo)
		k--;
	for (; k < v->nrun && v->run[k].b < lo + n; k++) {
		const struct vm_run *x = &v->run[k];
		uint64_t a = x->b > lo ? x->b : lo;
		uint64_t e = x->b + x->n < lo + n ? x->b + x->n : lo + n;
		for (uint64_t p = a; p < e; p++) {
			uint64_t bit = x->vp + (p - x->b) - v->vp0;
			int need = with_need && ((v->need[bit / 64] >> (bit % 64)) & 1);
			uint8_t f = need ? 2 : 1;
			if (f > vfl[p - lo])
				vfl[p - lo] = f;
		}
	}
}

void vmemmap_need_or(struct vmemmap *v, uint64_t vp, const uint64_t *w, unsigned nbits)
{
	for (unsigned i = 0; i < nbits; i++) {
		if (!((w[i / 64] >> (i % 64)) & 1))
			continue;
		if (vp + i < v->vp0 || vp + i >= v->vp0 + v->nvp)
			continue;
		uint64_t bit = vp + i - v->vp0;
		v->need[bit / 64] |= 1ull << (bit % 64);
	}
}
