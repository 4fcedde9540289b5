/* arm64 (AArch64): 4 KiB pages, 3, 4 or 5 translation levels for 39-, 48-
 * and 52-bit kernel virtual addresses, 2 MiB and 1 GiB block entries. */
#include "arch.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#ifndef EM_AARCH64
#define EM_AARCH64		183
#endif

#define PAGE_SHIFT		12
#define DESC_VALID		0x1ull
#define DESC_TABLE		0x2ull		/* levels 0-2: table, else block; level 3: page */
#define DESC_OA_48		0x0000fffffffff000ull
/* 52-bit output addresses with 4 KiB pages (FEAT_LPA2): bits 49:12 in place,
 * bits 51:50 of the address stored in descriptor bits 9:8. */
#define DESC_OA_LPA2		0x0003fffffffff000ull

#define SWAPPER_PG_DIR		"SYMBOL(swapper_pg_dir)"
#define KIMAGE_VOFFSET		"NUMBER(kimage_voffset)"
#define PHYS_OFFSET		"NUMBER(PHYS_OFFSET)"
#define VA_BITS			"NUMBER(VA_BITS)"
#define TCR_EL1_T1SZ		"NUMBER(TCR_EL1_T1SZ)"
#define KERNELOFFSET		"KERNELOFFSET"

static int number_or(const struct arch_env *env, const char *key, uint64_t dflt, uint64_t *v)
{
	if (env->number(env, key, v) == 0)
		return 1;
	*v = dflt;
	return 0;
}

/* The width of the kernel's half of the address space: 64 - T1SZ when the
 * kernel says (it is what the MMU walks), else VA_BITS. */
static int va_bits_of(const struct arch_env *env, uint64_t *bits)
{
	uint64_t t1sz;

	if (env->number(env, TCR_EL1_T1SZ, &t1sz) == 0 && t1sz >= 12 && t1sz <= 25) {
		*bits = 64 - t1sz;
		return 0;
	}
	if (env->number(env, VA_BITS, bits) == 0 && *bits >= 39 && *bits <= 52)
		return 0;
	return -ENOENT;
}

/* The linear map's bounds, for kernels with the 5.4+ layout (linear map
 * in the bottom half of the kernel range, PAGE_OFFSET = -2^VA_BITS). Only
 * trusted when TCR_EL1_T1SZ is exported (5.12+, all of them flipped);
 * older kernels are translated by the table walk alone. PHYS_OFFSET is
 * the physical address of the configured PAGE_OFFSET: a 52-bit kernel on
 * a CPU without LPA2 runs 48 bits and lowers PHYS_OFFSET by the
 * difference (arm64_memblock_init), so RAM starts at -2^48 all the same
 * and *phys, the address at *start, is PHYS_OFFSET plus that difference. */
static int linear_map(const struct arch_env *env, uint64_t *start, uint64_t *end, uint64_t *phys)
{
	uint64_t t1sz, bits, cfg;

	if (env->number(env, TCR_EL1_T1SZ, &t1sz) < 0 || va_bits_of(env, &bits) < 0 ||
	    env->number(env, PHYS_OFFSET, phys) < 0)
		return -ENOENT;
	*start = ~0ull << bits;
	*end = *start + (1ull << (bits - 1));
	if (env->number(env, VA_BITS, &cfg) == 0 && cfg > bits && cfg <= 52)
		*phys += *start - (~0ull << cfg);
	return 0;
}

/* Where module memory can be, from an address inside the image (the
 * virtual address of swapper_pg_dir). From 6.1 to 7.3 (6.1's
 * module_alloc_base, 6.5's rework, execmem's ranges from 6.10) the
 * kernel keeps modules within PLT reach of the image: a 2 GiB window
 * that covers it. With KASLR its base is random in [_end - 2 GiB, _text]
 * (6.1 without RANDOMIZE_MODULE_REGION_FULL: a 128 MiB one inside it),
 * so modules lie in [_end - 2 GiB, _text + 2 GiB); without KASLR they
 * lie below the image (6.1: the 128 MiB under it, unless full; 6.12 on:
 * [_end - 2 GiB, _text)), and ordinary vmalloc starts right above it.
 * The anchor stands in for _text and _end (the image is far smaller
 * than 2 GiB): [anchor - 2 GiB, anchor + 2 GiB) with KASLR, [anchor -
 * 2 GiB, anchor) without. NUMBER(MODULES_VADDR) and MODULES_END, where
 * exported, are the static region below KIMAGE_VADDR that KASLR moves
 * modules out of: not used. The image's own leaves inside the window are
 * told apart first, by their offset (arm64_kind). */
#define MODULES_REACH		(2ull << 30)

static void modules_window(struct arch_ctx *c, const struct arch_env *env, uint64_t anchor)
{
	uint64_t koff;
	int kaslr = !(env->number(env, KERNELOFFSET, &koff) == 0 && koff == 0);

	c->modules_start = anchor - MODULES_REACH;
	c->modules_end = kaslr ? anchor + MODULES_REACH : anchor;
	if (c->modules_start > anchor)
		c->modules_start = 0;	/* a corrupt anchor: no wrap */
	if (c->modules_end < anchor)
		c->modules_end = ~0ull;
	/* Never the linear map (a kernel without KASLR has its image 128
	 * MiB above the linear map's end on 6.1). */
	if (c->direct_end && c->modules_start < c->direct_end)
		c->modules_start = c->direct_end;
}

static int arm64_init(struct arch_ctx *c, const struct arch_env *env, const char **missing)
{
	uint64_t pgd, voff, bits, ps;

	if (number_or(env, "PAGESIZE", 4096, &ps) && ps != 4096)
		return -EOPNOTSUPP;	/* 16 and 64 KiB granules: not walked */
	if (env->number(env, SWAPPER_PG_DIR, &pgd) < 0) {
		*missing = SWAPPER_PG_DIR;
		return -ENOENT;
	}
	/* swapper_pg_dir lives in the kernel image, which is mapped at
	 * kimage_voffset (KASLR included) from its physical address. */
	if (env->number(env, KIMAGE_VOFFSET, &voff) < 0) {
		*missing = KIMAGE_VOFFSET;
		return -ENOENT;
	}
	if (va_bits_of(env, &bits) < 0) {
		*missing = VA_BITS;
		return -ENOENT;
	}
	c->pgd = pgd - voff;
	/* Each level resolves 9 bits above the 12-bit page offset; the top
	 * level takes what remains (52 bits: a 16-entry level -1). */
	c->levels = (int)((bits - PAGE_SHIFT + 8) / 9);
	c->top_bits = (int)(bits - PAGE_SHIFT - 9 * (c->levels - 1));
	c->pte_pfn_mask = bits > 48 ? DESC_OA_LPA2 : DESC_OA_48;
	uint64_t start, end, phys;
	if (linear_map(env, &start, &end, &phys) == 0) {
		c->direct_start = start;
		c->direct_end = end;
		c->direct_phys = phys;
	}
	c->image_offset = voff;
	modules_window(c, env, pgd);
	return 0;
}

static uint64_t desc_addr(const struct arch_ctx *c, uint64_t e)
{
	uint64_t a = e & c->pte_pfn_mask;
	if (c->pte_pfn_mask == DESC_OA_LPA2)
		a |= ((e >> 8) & 3) << 50;
	return a;
}

static int arm64_vtop(struct arch_ctx *c, uint64_t va, uint64_t *pa, uint64_t *span)
{
	if (c->cache_len && va >= c->cache_va && va - c->cache_va < c->cache_len) {
		c->cache_hits++;
		*pa = c->cache_pa + (va - c->cache_va);
		*span = c->cache_len - (va - c->cache_va);
		return 0;
	}
	/* The linear map is arithmetic; walking it would cost one walk per
	 * page, as rodata=full maps it with 4 KiB pages. */
	if (va >= c->direct_start && va < c->direct_end) {
		*pa = va - c->direct_start + c->direct_phys;
		*span = c->direct_end - va;
		return 0;
	}
	c->walks++;
	uint64_t table = c->pgd;
	for (int level = c->levels; level >= 1; level--) {
		unsigned shift = PAGE_SHIFT + 9 * (level - 1);
		/* The top table may be narrower (52-bit VA: bits 51:48, 16 entries). */
		unsigned bits = level == c->levels && c->top_bits ? (unsigned)c->top_bits : 9;
		uint64_t idx = (va >> shift) & ((1ull << bits) - 1), e;
		if (c->env->read(c->env, table + idx * 8, &e, 8) < 0)
			return -EFAULT;
		if (!(e & DESC_VALID))
			return -EFAULT;
		uint64_t addr = desc_addr(c, e);
		int leaf = level == 1 ? (e & DESC_TABLE) != 0 : !(e & DESC_TABLE);
		if (level == 1 && !leaf)
			return -EFAULT;	/* reserved encoding at the last level */
		if (leaf) {
			/* Blocks exist at 2 MiB and 1 GiB only (4 KiB granule). */
			if (level > 3)
				return -EFAULT;
			uint64_t size = 1ull << shift;
			addr &= ~(size - 1);
			c->cache_va = va & ~(size - 1);
			c->cache_pa = addr;
			c->cache_len = size;
			*pa = addr + (va & (size - 1));
			*span = size - (va & (size - 1));
			return 0;
		}
		table = addr;
	}
	return -EFAULT;
}

static int arm64_kimg_to_phys(const struct arch_env *env, uint64_t va, uint64_t *pa)
{
	uint64_t lstart, lend, phys, voff;

	if (linear_map(env, &lstart, &lend, &phys) == 0 && va >= lstart && va < lend) {
		*pa = va - lstart + phys;
		return 0;
	}
	if (env->number(env, KIMAGE_VOFFSET, &voff) < 0 || va < voff)
		return -ENOENT;
	*pa = va - voff;
	return 0;
}

/* ---- the walk ---- */

/* Permission bits of a block or page descriptor, and the hierarchical
 * ones a table descriptor sets for everything below it. */
#define DESC_RDONLY		(1ull << 7)	/* AP[2] */
#define DESC_PXN		(1ull << 53)
#define TABLE_PXN		(1ull << 59)	/* PXNTable */
#define TABLE_RDONLY		(1ull << 62)	/* APTable[1] */

static enum arch_va_kind arm64_kind(const struct arch_ctx *c, uint64_t va, uint64_t pa)
{
	if (va - pa == c->image_offset)
		return ARCH_VA_IMAGE;
	if (va >= c->modules_start && va < c->modules_end)
		return ARCH_VA_MODULES;
	return ARCH_VA_OTHER;	/* the linear map, vmalloc, vmemmap, fixmap */
}

static unsigned index_bits(const struct arch_ctx *c, int level)
{
	return level == c->levels && c->top_bits ? (unsigned)c->top_bits : 9;
}

/* One table at LEVEL (vtop's numbering: 1 holds pages) mapping from
 * VA_BASE; HIER the table attributes of the entries above it. The
 * recursion is as deep as the levels, whatever the tables hold. */
static int walk_table(struct arch_ctx *c, const struct arch_walk *w, uint64_t table, int level,
		      uint64_t va_base, uint64_t hier, uint64_t *left)
{
	uint64_t e[512];
	unsigned bits = index_bits(c, level), shift = PAGE_SHIFT + 9 * (level - 1);
	unsigned n = 1u << bits, first = 0;

	if (!*left)
		return -E2BIG;
	(*left)--;
	int r = w->table ? w->table(w->arg, table) : 0;
	if (r)
		return r;
	/* A table outside the dump holds nothing we can follow. */
	if (c->env->read(c->env, table, e, n * sizeof e[0]) < 0)
		return 0;
	/* Every top entry is the kernel's (TTBR1 maps only the kernel half).
	 * The linear map, its lower half, goes last: rodata=full maps it
	 * page by page, a table per 2 MiB of RAM, and on a large machine
	 * the bound on tables should cut those, not the image's. */
	if (level == c->levels && c->direct_end > va_base)
		first = (unsigned)((c->direct_end - va_base) >> shift) & (n - 1);
	for (unsigned k = 0; k < n; k++) {
		unsigned i = (first + k) & (n - 1);
		if (!(e[i] & DESC_VALID))
			continue;
		uint64_t va = va_base + ((uint64_t)i << shift), addr = desc_addr(c, e[i]);
		int table_bit = (e[i] & DESC_TABLE) != 0;
		if (level == 1 ? table_bit : !table_bit) {
			/* A page, or a 2 MiB or 1 GiB block; what vtop would
			 * refuse (a block above 1 GiB) is skipped the same. */
			if (level > 3)
				continue;
			/* (a leaf's own bits 59-62 are PBHA, not these) */
			uint64_t size = 1ull << shift;
			int ro = (e[i] & DESC_RDONLY) || (hier & TABLE_RDONLY);
			int xn = (e[i] & DESC_PXN) || (hier & TABLE_PXN);
			unsigned prot = (ro ? 0 : ARCH_PROT_W) | (xn ? 0 : ARCH_PROT_X);
			addr &= ~(size - 1);
			r = w->leaf ? w->leaf(w->arg, va, addr, size, prot,
					      arm64_kind(c, va, addr)) : 0;
		} else if (level == 1) {
			continue;	/* reserved encoding at the last level */
		} else {
			r = walk_table(c, w, addr, level - 1, va,
				       hier | (e[i] & (TABLE_PXN | TABLE_RDONLY)), left);
		}
		if (r)
			return r;
	}
	return 0;
}

static int arm64_walk(struct arch_ctx *c, const struct arch_walk *w)
{
	uint64_t left = w->max_tables;
	unsigned va_bits = PAGE_SHIFT + 9 * (c->levels - 1) + index_bits(c, c->levels);

	return walk_table(c, w, c->pgd, c->levels, ~0ull << va_bits, 0, &left);
}

/* struct elf_prstatus: pr_reg at 112, user_pt_regs' sp after x0-x30. */
static int arm64_prstatus_sp(const uint8_t *desc, size_t len, uint64_t *sp)
{
	const size_t off = 112 + 31 * 8;

	if (len < off + 8)
		return -ENOENT;
	memcpy(sp, desc + off, 8);
	return 0;
}

const struct arch_ops arch_arm64 = {
	.name = "arm64",
	.e_machine = EM_AARCH64,
	.page_size = 4096,
	/* The start of the widest kernel range (52-bit VA); narrower
	 * configurations start higher, and this is only a sanity floor. */
	.kva_min = 0xfff0000000000000ull,
	.init = arm64_init,
	.vtop = arm64_vtop,
	.kimg_to_phys = arm64_kimg_to_phys,
	.walk = arm64_walk,
	.prstatus_sp = arm64_prstatus_sp,
	.thread_size = 16384,
};
