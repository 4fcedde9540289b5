#include "kmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TLB_N 512u	/* 2 MiB of 4 KiB pages: a finder's working set */

static int env_number(const struct arch_env *env, const char *key, uint64_t *v)
{
	struct kmem *km = env->ctx;
	int r = vmcoreinfo_number(&km->vi, km->vi_text, key, v);
	enum vi_key k = vi_lookup(key);
	if (r < 0 && k != VI_NKEYS)
		km->asked_missing[k] = 1;
	return r;
}

/* Counts one unit; -ETIME once the budget is spent. */
static int spend(struct kmem *km, uint64_t units)
{
	km->work += units;
	return km->work_limit && km->work > km->work_limit ? -ETIME : 0;
}

static int env_read(const struct arch_env *env, uint64_t pa, void *buf, size_t len)
{
	struct kmem *km = env->ctx;
	int r = spend(km, 1);
	return r ? r : physmem_read(&km->pm, pa, buf, len);
}

int kmem_init(struct kmem *km, const struct vmcore *vc, const struct arch_ops *arch)
{
	memset(km, 0, sizeof *km);
	vmcoreinfo_parse(&km->vi, vc->vmcoreinfo);
	km->vi_text = vc->vmcoreinfo;
	km->env = (struct arch_env){ .number = env_number, .read = env_read, .ctx = km };
	int r = physmem_init(&km->pm, vc);
	if (r < 0)
		return r;
	if (!arch || !arch->init) {
		km->missing = "an architecture table for this machine";
		return 0;
	}
	km->ac.ops = arch;
	km->ac.env = &km->env;
	if (arch->init(&km->ac, &km->env, &km->missing) < 0) {
		if (!km->missing)
			km->missing = "page-table data";
		return 0;
	}
	/* A default the arch fell back to is a guess about the page tables
	 * (4 levels, no encryption bit): with a KEEP key missing, no walk. */
	for (int k = 0; k < VI_NKEYS; k++)
		if (km->asked_missing[k] && vi_policy((enum vi_key)k) == VI_P_KEEP) {
			km->missing = vi_name((enum vi_key)k);
			return 0;
		}
	km->ok = 1;
	return 0;
}

void kmem_fini(struct kmem *km)
{
	free(km->tlb);
	km->tlb = NULL;
	physmem_fini(&km->pm);
	km->ok = 0;
}

int kmem_tlb(struct kmem *km)
{
	if (!km->tlb)
		km->tlb = calloc(TLB_N, sizeof *km->tlb);
	return km->tlb ? 0 : -ENOMEM;
}

/* ac->ops->vtop, through km's cache when there is one. Only
 * translations that succeed are kept: a hole is asked again. */
static int vtop(struct kmem *km, struct arch_ctx *ac, uint64_t va, uint64_t *pa, uint64_t *span)
{
	if (!km || !km->tlb)
		return ac->ops->vtop(ac, va, pa, span);
	uint64_t vp = va >> 12, off = va & 0xfff;
	struct kmem_tlb *t = &km->tlb[vp % TLB_N];
	if (t->tag == vp + 1) {
		*pa = t->ppage + off;
		*span = t->bytes - off;
		return 0;
	}
	int r = ac->ops->vtop(ac, va, pa, span);
	/* A span that ends inside this page (an arch's odd answer) is not
	 * kept: the entry describes the page from its start. */
	if (r == 0 && *span && *pa >= off && *span <= UINT64_MAX - off)
		*t = (struct kmem_tlb){ .tag = vp + 1, .ppage = *pa - off, .bytes = *span + off };
	return r;
}

static int vread(struct kmem *km, struct arch_ctx *ac, struct physmem *pm, uint64_t va,
		 void *buf, size_t len)
{
	uint8_t *out = buf;

	if (va + len < va)
		return -EFAULT;	/* past the top of the address space: not one object */
	while (len) {
		uint64_t pa, span;
		if (vtop(km, ac, va, &pa, &span) < 0)
			return -EFAULT;
		size_t n = len < span ? len : span;
		int r = physmem_read(pm, pa, out, n);
		if (r < 0)
			return r;
		va += n;
		out += n;
		len -= n;
	}
	return 0;
}

int kmem_vread(struct arch_ctx *ac, struct physmem *pm, uint64_t va, void *buf, size_t len)
{
	return vread(NULL, ac, pm, va, buf, len);
}

int kmem_read(struct kmem *km, uint64_t va, void *buf, size_t len)
{
	if (!km->ok)
		return -EFAULT;
	int r = spend(km, 1 + (len >> 12));
	if (r)
		return r;
	r = vread(km, &km->ac, &km->pm, va, buf, len);
	/* A table read refused for the budget is the budget's, not a hole. */
	return r < 0 && kmem_over(km) ? -ETIME : r;
}

int kmem_vtop(struct kmem *km, uint64_t va, uint64_t *pa, uint64_t *span)
{
	int r = spend(km, 1);
	if (r)
		return r;
	r = vtop(km, &km->ac, va, pa, span);
	return r < 0 && kmem_over(km) ? -ETIME : r;
}

int kmem_spend(struct kmem *km, uint64_t units)
{
	return spend(km, units);
}

void kmem_budget(struct kmem *km, uint64_t units)
{
	km->work = 0;
	km->work_limit = units;
}

int kmem_over(const struct kmem *km)
{
	return km->work_limit && km->work > km->work_limit;
}
