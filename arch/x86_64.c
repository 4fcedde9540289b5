/* x86_64: 4- or 5-level page tables, 4 KiB pages, 2 MiB and 1 GiB leaves. */
#include "arch.h"

#include <elf.h>
#include <errno.h>
#include <string.h>


#define START_KERNEL_MAP	0xffffffff80000000ull
#define PTE_PRESENT		0x1ull
#define PTE_LARGE		0x80ull		/* PSE: leaf at PUD or PMD level */
#define PTE_ADDR_MASK		0x000ffffffffff000ull

#define INIT_TOP_PGT		"SYMBOL(init_top_pgt)"
#define PHYS_BASE		"NUMBER(phys_base)"

/* A VMCOREINFO value, or dflt when the note does not have it. */
static uint64_t number_or(const struct arch_env *env, const char *key, uint64_t dflt)
{
	uint64_t v;
	return env->number(env, key, &v) == 0 ? v : dflt;
}

static int x86_64_init(struct arch_ctx *c, const struct arch_env *env, const char **missing)
{
	uint64_t top, phys_base;

	/* init_top_pgt is a kernel-image symbol (already KASLR-relocated in
	 * VMCOREINFO); its physical address is the offset from
	 * __START_KERNEL_map plus phys_base. */
	if (env->number(env, INIT_TOP_PGT, &top) < 0) {
		*missing = INIT_TOP_PGT;
		return -ENOENT;
	}
	if (env->number(env, PHYS_BASE, &phys_base) < 0) {
		*missing = PHYS_BASE;
		return -ENOENT;
	}
	if (top < START_KERNEL_MAP)
		return -EINVAL;
	c->pgd = top - START_KERNEL_MAP + phys_base;
	c->levels = number_or(env, "NUMBER(pgtable_l5_enabled)", 0) ? 5 : 4;
	/* With AMD SME the encryption bit sits inside the address field of
	 * every entry: clear it or every table address is wrong. */
	c->pte_pfn_mask = PTE_ADDR_MASK & ~number_or(env, "NUMBER(sme_mask)", 0);
	return 0;
}

static int x86_64_vtop(struct arch_ctx *c, uint64_t va, uint64_t *pa, uint64_t *span)
{
	/* One-entry cache: struct page windows translate runs of addresses
	 * inside the same leaf. */
	if (c->cache_len && va >= c->cache_va && va - c->cache_va < c->cache_len) {
		c->cache_hits++;
		*pa = c->cache_pa + (va - c->cache_va);
		*span = c->cache_len - (va - c->cache_va);
		return 0;
	}
	c->walks++;
	uint64_t table = c->pgd;
	for (int level = c->levels; level >= 1; level--) {
		unsigned shift = 12 + 9 * (level - 1);
		uint64_t idx = (va >> shift) & 511, e;
		if (c->env->read(c->env, table + idx * 8, &e, 8) < 0)
			return -EFAULT;
		if (!(e & PTE_PRESENT))
			return -EFAULT;
		uint64_t addr = e & c->pte_pfn_mask;
		if (level == 1 || ((level == 2 || level == 3) && (e & PTE_LARGE))) {
			uint64_t size = 1ull << shift;
			addr &= ~(size - 1);
			c->cache_va = va & ~(size - 1);
			c->cache_pa = addr;
			c->cache_len = size;
			*pa = addr + (va & (size - 1));
			*span = size - (va & (size - 1));
			return 0;
		}
		if (level > 3 && (e & PTE_LARGE))
			return -EFAULT;	/* no leaves above 1 GiB: corrupt entry */
		table = addr;
	}
	return -EFAULT;
}

static int x86_64_kimg_to_phys(const struct arch_env *env, uint64_t va, uint64_t *pa)
{
	uint64_t phys_base;

	if (va < START_KERNEL_MAP || env->number(env, PHYS_BASE, &phys_base) < 0)
		return -ENOENT;
	*pa = va - START_KERNEL_MAP + phys_base;
	return 0;
}

/* The fixed parts of the kernel half, the same with 4 and 5 levels
 * (Documentation/arch/x86/x86_64/mm.rst): the image mapping (1 GiB with
 * KASLR), the modules after it, and the cpu_entry_area. */
#define MODULES_VADDR		0xffffffffc0000000ull
#define MODULES_END		0xffffffffff000000ull
#define CPU_ENTRY_AREA		0xfffffe0000000000ull
#define CPU_ENTRY_AREA_END	0xfffffe8000000000ull
#define PTE_RW			0x2ull
#define PTE_NX			(1ull << 63)

/* The per-CPU allocator maps each chunk after the first (which lies in
 * the direct map) at the top of the vmalloc space, top down, while every
 * other vmalloc is placed bottom up (pcpu_get_vm_areas): what is mapped
 * in this much below the top is per-CPU data. The space is 32 TiB with 4
 * levels and 12,800 TiB with 5 (Documentation/arch/x86/x86_64/mm.rst),
 * from NUMBER(VMALLOC_START), which KASLR moves. */
#define VMALLOC_START_KEY	"NUMBER(VMALLOC_START)"
#define PCPU_TOP		(1ull << 30)

struct x86_walk {
	uint64_t pcpu_lo, pcpu_hi;	/* empty without VMALLOC_START */
};

static enum arch_va_kind x86_64_kind(const struct x86_walk *xw, uint64_t va)
{
	if (va >= xw->pcpu_lo && va < xw->pcpu_hi)
		return ARCH_VA_PCPU_CHUNKS;
	if (va >= START_KERNEL_MAP && va < MODULES_VADDR)
		return ARCH_VA_IMAGE;
	if (va >= MODULES_VADDR && va < MODULES_END)
		return ARCH_VA_MODULES;
	if (va >= CPU_ENTRY_AREA && va < CPU_ENTRY_AREA_END)
		return ARCH_VA_CPU_AREA;
	return ARCH_VA_OTHER;
}

static int walk_level(struct arch_ctx *c, const struct arch_walk *w, const struct x86_walk *xw,
		      uint64_t table, int level, uint64_t va_base, uint64_t *left)
{
	uint64_t e[512];

	if (!*left)
		return -E2BIG;
	(*left)--;
	int r = w->table ? w->table(w->arg, table) : 0;
	if (r)
		return r;
	/* A table outside the dump holds nothing we can follow. */
	if (c->env->read(c->env, table, e, sizeof e) < 0)
		return 0;
	unsigned shift = 12 + 9 * (level - 1);
	/* The top level: the kernel half only. */
	for (unsigned i = level == c->levels ? 256 : 0; i < 512; i++) {
		if (!(e[i] & PTE_PRESENT))
			continue;
		uint64_t va = va_base + ((uint64_t)i << shift);
		if (level == c->levels)	/* sign-extend past the top index */
			va |= ~0ull << (12 + 9 * c->levels);
		uint64_t addr = e[i] & c->pte_pfn_mask;
		if (level == 1 || ((level == 2 || level == 3) && (e[i] & PTE_LARGE))) {
			uint64_t size = 1ull << shift;
			unsigned prot = (e[i] & PTE_RW ? ARCH_PROT_W : 0) |
					(e[i] & PTE_NX ? 0 : ARCH_PROT_X);
			r = w->leaf ? w->leaf(w->arg, va, addr & ~(size - 1), size, prot,
					      x86_64_kind(xw, va)) : 0;
		} else if (level > 3 && (e[i] & PTE_LARGE)) {
			continue;	/* no leaves above 1 GiB: corrupt entry */
		} else {
			r = walk_level(c, w, xw, addr, level - 1, va, left);
		}
		if (r)
			return r;
	}
	return 0;
}

static int x86_64_walk(struct arch_ctx *c, const struct arch_walk *w)
{
	uint64_t left = w->max_tables, vs;
	struct x86_walk xw = { 0, 0 };

	if (c->env->number(c->env, VMALLOC_START_KEY, &vs) == 0) {
		uint64_t end = vs + (c->levels == 5 ? 12800ull << 40 : 32ull << 40);
		if (end > vs && end - vs > PCPU_TOP) {
			xw.pcpu_lo = end - PCPU_TOP;
			xw.pcpu_hi = end;
		}
	}
	return walk_level(c, w, &xw, c->pgd, c->levels, 0, &left);
}

/* struct elf_prstatus: pr_reg at 112, user_regs_struct's sp is its 20th
 * word (r15 ... orig_ax, ip, cs, flags, sp). */
static int x86_64_prstatus_sp(const uint8_t *desc, size_t len, uint64_t *sp)
{
	const size_t off = 112 + 19 * 8;

	if (len < off + 8)
		return -ENOENT;
	memcpy(sp, desc + off, 8);
	return 0;
}

const struct arch_ops arch_x86_64 = {
	.name = "x86_64",
	.e_machine = EM_X86_64,
	.page_size = 4096,
	/* The upper half. Tighter bounds depend on the paging depth (4 or 5
	 * levels); the top bit is what both share. */
	.kva_min = 1ull << 63,
	.init = x86_64_init,
	.vtop = x86_64_vtop,
	.kimg_to_phys = x86_64_kimg_to_phys,
	.walk = x86_64_walk,
	.prstatus_sp = x86_64_prstatus_sp,
	.thread_size = 16384,
};
