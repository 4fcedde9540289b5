#include "kmem.h"

#include <errno.h>
#include <string.h>

static int env_number(const struct arch_env *env, const char *key, uint64_t *v)
{
	struct kmem *km = env->ctx;
	int r = vmcoreinfo_number(&km->vi, km->vi_text, key, v);
	enum vi_key k = vi_lookup(key);
	if (r < 0 && k != VI_NKEYS)
		km->asked_missing[k] = 1;
	return r;
}

static int env_read(const struct arch_env *env, uint64_t pa, void *buf, size_t len)
{
	struct kmem *km = env->ctx;
	return physmem_read(&km->pm, pa, buf, len);
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
	physmem_fini(&km->pm);
	km->ok = 0;
}

int kmem_vread(struct arch_ctx *ac, struct physmem *pm, uint64_t va, void *buf, size_t len)
{
	uint8_t *out = buf;

	while (len) {
		uint64_t pa, span;
		if (ac->ops->vtop(ac, va, &pa, &span) < 0)
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

int kmem_read(struct kmem *km, uint64_t va, void *buf, size_t len)
{
	if (!km->ok)
		return -EFAULT;
	return kmem_vread(&km->ac, &km->pm, va, buf, len);
}
