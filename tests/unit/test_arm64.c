/* Unit tests for arch/arm64.c: a synthetic arm64 kernel's physical memory
 * (a few MiB, PHYS_OFFSET 0x40000000 as on QEMU's virt machine) holding
 * swapper_pg_dir and its tables, and a VMCOREINFO with the numbers the
 * 6.1 kernel exports. The cases: arch_lookup picks arm64 by EM_AARCH64;
 * 4 KiB pages, 2 MiB and 1 GiB blocks translate to what the tables say,
 * with their spans; invalid and reserved entries fail; the linear map
 * translates without reading memory, only when TCR_EL1_T1SZ says the
 * layout is the 5.4+ one; 39-bit VA walks 3 levels; 52-bit (LPA2) takes
 * the high address bits from bits 9:8; a 52-bit kernel on a 48-bit CPU
 * keeps RAM at -2^48; missing keys are named. The walk: every table
 * read and every leaf, told apart (image by kimage_voffset, modules by
 * their window around the image, with KASLR or not) with the leaf's and
 * its tables' permissions; the linear map last; max_tables, a table
 * outside the dump, callbacks that stop it, tables pointing at
 * themselves; 39- and 52-bit. */
#define CHECK_PREFIX "arm64"
#include "check.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>

#include "../../arch/arch.h"

#define PHYS		0x40000000ull
#define MEM		(8ull << 20)
#define KIMAGE_VOFF	0xffff7fffc0000000ull	/* va - voff = pa */
#define PGD_PA		(PHYS + 0x100000)

struct fake {
	uint8_t *mem;
	uint64_t reads;
	const char *keys[8];
	uint64_t vals[8];
};

static int f_number(const struct arch_env *env, const char *key, uint64_t *v)
{
	const struct fake *f = env->ctx;
	for (int i = 0; i < 8 && f->keys[i]; i++)
		if (!strcmp(f->keys[i], key)) {
			*v = f->vals[i];
			return 0;
		}
	return -ENOENT;
}

static int f_read(const struct arch_env *env, uint64_t pa, void *buf, size_t len)
{
	struct fake *f = env->ctx;
	f->reads++;
	if (pa < PHYS || pa - PHYS + len > MEM)
		return -EFAULT;
	memcpy(buf, f->mem + (pa - PHYS), len);
	return 0;
}

static void put(struct fake *f, uint64_t pa, uint64_t e)
{
	memcpy(f->mem + (pa - PHYS), &e, 8);
}

static uint64_t idx(uint64_t va, int level)
{
	return (va >> (12 + 9 * (level - 1))) & 511;
}

#define TABLE(pa)	((pa) | 3ull)
#define BLOCK(pa)	((pa) | 1ull | (1ull << 10))	/* AF set, as the kernel has it */
#define PAGE(pa)	((pa) | 3ull | (1ull << 10))

/* Addresses in the kernel's vmalloc/vmemmap range (not the linear map). */
#define VA_PAGE		0xffff800008123000ull
#define VA_2M		0xffff800008400000ull
#define VA_1G		0xfffffc0040000000ull	/* vmemmap-like */

static void setup(struct fake *f, struct arch_env *env, int with_t1sz)
{
	memset(f, 0, sizeof *f);
	f->mem = calloc(1, MEM);
	int k = 0;
	f->keys[k] = "SYMBOL(swapper_pg_dir)"; f->vals[k++] = PGD_PA + KIMAGE_VOFF;
	f->keys[k] = "NUMBER(kimage_voffset)"; f->vals[k++] = KIMAGE_VOFF;
	f->keys[k] = "NUMBER(PHYS_OFFSET)"; f->vals[k++] = PHYS;
	f->keys[k] = "NUMBER(VA_BITS)"; f->vals[k++] = 48;
	if (with_t1sz) {
		f->keys[k] = "NUMBER(TCR_EL1_T1SZ)"; f->vals[k++] = 16;
	}
	*env = (struct arch_env){ .number = f_number, .read = f_read, .ctx = f };

	/* pgd -> pud table at +0x1000 for VA_PAGE/VA_2M, +0x5000 for VA_1G. */
	uint64_t pud = PGD_PA + 0x1000, pmd = PGD_PA + 0x2000, pte = PGD_PA + 0x3000;
	put(f, PGD_PA + idx(VA_PAGE, 4) * 8, TABLE(pud));
	put(f, pud + idx(VA_PAGE, 3) * 8, TABLE(pmd));
	put(f, pmd + idx(VA_PAGE, 2) * 8, TABLE(pte));
	put(f, pte + idx(VA_PAGE, 1) * 8, PAGE(PHYS + 0x345000));
	/* the next page: invalid; the one after: reserved (bit 1 clear at level 3) */
	put(f, pte + idx(VA_PAGE + 0x2000, 1) * 8, (PHYS + 0x346000) | 1ull);
	put(f, pmd + idx(VA_2M, 2) * 8, BLOCK(PHYS + 0x600000));
	uint64_t pud2 = PGD_PA + 0x5000;
	put(f, PGD_PA + idx(VA_1G, 4) * 8, TABLE(pud2));
	put(f, pud2 + idx(VA_1G, 3) * 8, BLOCK(0x80000000ull));
}

static void t_lookup(void)
{
	const struct arch_ops *a = arch_lookup(EM_AARCH64);
	CHECK(a && !strcmp(a->name, "arm64"), "EM_AARCH64 picks %s", a ? a->name : "nothing");
	CHECK_INT(a ? a->page_size : 0, 4096);
	CHECK(arch_lookup(EM_X86_64) != a, "x86_64 and arm64 are different tables");
}

static int init(struct arch_ctx *c, struct arch_env *env, const char **missing)
{
	memset(c, 0, sizeof *c);
	c->ops = &arch_arm64;
	c->env = env;
	*missing = NULL;
	return arch_arm64.init(c, env, missing);
}

static void t_walk(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	uint64_t pa = 0, span = 0;

	setup(&f, &env, 1);
	CHECK_INT(init(&c, &env, &missing), 0);
	CHECK_INT(c.levels, 4);
	CHECK_INT(c.pgd, PGD_PA);

	CHECK_INT(arch_arm64.vtop(&c, VA_PAGE + 0x10, &pa, &span), 0);
	CHECK_INT(pa, PHYS + 0x345010);
	CHECK_INT(span, 0x1000 - 0x10);

	CHECK_INT(arch_arm64.vtop(&c, VA_2M + 0x12345, &pa, &span), 0);
	CHECK_INT(pa, PHYS + 0x612345);
	CHECK_INT(span, 0x200000 - 0x12345);

	CHECK_INT(arch_arm64.vtop(&c, VA_1G + 0x1234567, &pa, &span), 0);
	CHECK_INT(pa, 0x81234567ull);
	CHECK_INT(span, 0x40000000ull - 0x1234567);

	CHECK_INT(arch_arm64.vtop(&c, VA_PAGE + 0x1000, &pa, &span), -EFAULT);
	CHECK_INT(arch_arm64.vtop(&c, VA_PAGE + 0x2000, &pa, &span), -EFAULT);
	/* nothing mapped at the pgd index of this one */
	CHECK_INT(arch_arm64.vtop(&c, 0xffff900000000000ull, &pa, &span), -EFAULT);
	free(f.mem);
}

static void t_cache(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	uint64_t pa, span;

	setup(&f, &env, 1);
	init(&c, &env, &missing);
	CHECK_INT(arch_arm64.vtop(&c, VA_2M, &pa, &span), 0);
	uint64_t reads = f.reads;
	CHECK_INT(arch_arm64.vtop(&c, VA_2M + 0x1fffff, &pa, &span), 0);
	CHECK_INT(pa, PHYS + 0x7fffff);
	CHECK_INT(f.reads, reads);
	CHECK_INT(c.cache_hits, 1);
	free(f.mem);
}

static void t_linear(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	uint64_t pa = 0, span = 0;

	setup(&f, &env, 1);
	init(&c, &env, &missing);
	uint64_t reads = f.reads;
	CHECK_INT(arch_arm64.vtop(&c, 0xffff000000123456ull, &pa, &span), 0);
	CHECK_INT(pa, PHYS + 0x123456);
	CHECK_INT(f.reads, reads);
	CHECK_INT(span, 0xffff800000000000ull - 0xffff000000123456ull);
	CHECK_INT(arch_arm64.kimg_to_phys(&env, 0xffff000000001000ull, &pa), 0);
	CHECK_INT(pa, PHYS + 0x1000);
	CHECK_INT(arch_arm64.kimg_to_phys(&env, VA_PAGE, &pa), 0);
	CHECK_INT(pa, VA_PAGE - KIMAGE_VOFF);
	free(f.mem);

	/* Without TCR_EL1_T1SZ (kernels older than the flipped layout may
	 * be it): no shortcut, the address is walked (and unmapped here). */
	setup(&f, &env, 0);
	CHECK_INT(init(&c, &env, &missing), 0);
	reads = f.reads;
	CHECK_INT(arch_arm64.vtop(&c, 0xffff000000123456ull, &pa, &span), -EFAULT);
	CHECK(f.reads > reads, "the walk read the tables");
	free(f.mem);
}

static void t_va39(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	uint64_t pa = 0, span = 0;

	setup(&f, &env, 0);
	memset(f.mem, 0, MEM);
	f.vals[3] = 39;			/* NUMBER(VA_BITS) */
	CHECK_INT(init(&c, &env, &missing), 0);
	CHECK_INT(c.levels, 3);
	uint64_t va = 0xffffffc008123000ull, pmd = PGD_PA + 0x1000, pte = PGD_PA + 0x2000;
	put(&f, PGD_PA + idx(va, 3) * 8, TABLE(pmd));
	put(&f, pmd + idx(va, 2) * 8, TABLE(pte));
	put(&f, pte + idx(va, 1) * 8, PAGE(PHYS + 0x777000));
	CHECK_INT(arch_arm64.vtop(&c, va + 8, &pa, &span), 0);
	CHECK_INT(pa, PHYS + 0x777008);
	free(f.mem);
}

static void t_va52(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	uint64_t pa = 0, span = 0;

	setup(&f, &env, 1);
	memset(f.mem, 0, MEM);
	f.vals[3] = 52;
	f.vals[4] = 12;			/* TCR_EL1_T1SZ: 64 - 52 */
	CHECK_INT(init(&c, &env, &missing), 0);
	CHECK_INT(c.levels, 5);
	CHECK_INT(c.top_bits, 4);
	/* A kernel-image address (above the linear map's half). */
	uint64_t va = 0xfff8000008123000ull, t[4];
	for (int i = 0; i < 4; i++)
		t[i] = PGD_PA + 0x1000 * (i + 1);
	put(&f, PGD_PA + ((va >> 48) & 15) * 8, TABLE(t[0]));
	put(&f, t[0] + idx(va, 4) * 8, TABLE(t[1]));
	put(&f, t[1] + idx(va, 3) * 8, TABLE(t[2]));
	put(&f, t[2] + idx(va, 2) * 8, TABLE(t[3]));
	/* output address 0x000c_0000_0012_3000: bits 51:50 = 3 in bits 9:8 */
	put(&f, t[3] + idx(va, 1) * 8, 0x123000ull | (3ull << 8) | 3ull | (1ull << 10));
	CHECK_INT(arch_arm64.vtop(&c, va + 4, &pa, &span), 0);
	CHECK_INT(pa, 0x000c000000123004ull);
	free(f.mem);
}

/* A 52-bit kernel on a CPU without LPA2 runs 48 bits: TCR_EL1_T1SZ 16,
 * VA_BITS still 52, and PHYS_OFFSET lowered by -2^48 - -2^52 so that RAM
 * (here at 0x40000000) sits at -2^48. Its linear map must translate
 * there, as the 4-level walk of the same address would. */
static void t_va52_on_48(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	uint64_t pa = 0, span = 0;

	setup(&f, &env, 1);
	f.vals[2] = PHYS - ((~0ull << 48) - (~0ull << 52));	/* NUMBER(PHYS_OFFSET) */
	f.vals[3] = 52;
	CHECK_INT(init(&c, &env, &missing), 0);
	CHECK_INT(c.levels, 4);
	uint64_t reads = f.reads;
	CHECK_INT(arch_arm64.vtop(&c, 0xffff000000123456ull, &pa, &span), 0);
	CHECK_INT(pa, PHYS + 0x123456);
	CHECK_INT(f.reads, reads);
	CHECK_INT(arch_arm64.kimg_to_phys(&env, 0xffff000000001000ull, &pa), 0);
	CHECK_INT(pa, PHYS + 0x1000);
	/* image addresses still go by kimage_voffset */
	CHECK_INT(arch_arm64.kimg_to_phys(&env, VA_PAGE, &pa), 0);
	CHECK_INT(pa, VA_PAGE - KIMAGE_VOFF);
	free(f.mem);
}

/* ---- the walk ---- */

#define RDONLY		(1ull << 7)	/* AP[2] */
#define PXN		(1ull << 53)
#define TBL_PXN		(1ull << 59)	/* PXNTable */
#define TBL_RDONLY	(1ull << 62)	/* APTable[1] */

struct seen {
	uint64_t tables[64], ntables;
	struct { uint64_t va, pa, size; unsigned prot; enum arch_va_kind kind; } leaf[64];
	uint64_t nleaves;
	uint64_t stop_leaf, stop_table;	/* stop at the Nth (1-based), 0: never */
};

static int s_table(void *arg, uint64_t pa)
{
	struct seen *s = arg;
	if (s->ntables < 64)
		s->tables[s->ntables] = pa;
	return ++s->ntables == s->stop_table ? 7 : 0;
}

static int s_leaf(void *arg, uint64_t va, uint64_t pa, uint64_t size, unsigned prot,
		  enum arch_va_kind kind)
{
	struct seen *s = arg;
	if (s->nleaves < 64) {
		s->leaf[s->nleaves].va = va;
		s->leaf[s->nleaves].pa = pa;
		s->leaf[s->nleaves].size = size;
		s->leaf[s->nleaves].prot = prot;
		s->leaf[s->nleaves].kind = kind;
	}
	return ++s->nleaves == s->stop_leaf ? 5 : 0;
}

static int walk(struct arch_ctx *c, struct seen *s, uint64_t max_tables)
{
	struct arch_walk w = { .table = s_table, .leaf = s_leaf, .arg = s, .max_tables = max_tables };
	return arch_arm64.walk(c, &w);
}

/* The leaf at VA, or -1. */
static int leaf_at(const struct seen *s, uint64_t va)
{
	for (uint64_t i = 0; i < s->nleaves && i < 64; i++)
		if (s->leaf[i].va == va)
			return (int)i;
	return -1;
}

/* What the walk adds to setup()'s tables (48-bit, KASLR: no KERNELOFFSET):
 * two 2 MiB blocks of the image (va - pa = kimage_voffset; text read-only
 * and executable, data writable and PXN), and the linear map's first GiB
 * as a block under top entry 0. VA_PAGE's page descriptor has bits 59
 * and 62 set, which only mean PXNTable and APTable in a table. VA_PAGE and VA_2M lie within 2 GiB of
 * swapper_pg_dir's address: module memory. VA_1G, in vmemmap, is not;
 * its top entry is marked PXNTable and APTable read-only. */
#define VA_TEXT		(KIMAGE_VOFF + PHYS + 0x400000)
#define VA_DATA		(KIMAGE_VOFF + PHYS + 0x600000)
#define VA_LINEAR	0xffff000000000000ull
#define PUD_LINEAR	(PGD_PA + 0x6000)

static void setup_walk(struct fake *f, struct arch_env *env)
{
	setup(f, env, 1);
	uint64_t pmd = PGD_PA + 0x2000;
	put(f, pmd + idx(VA_TEXT, 2) * 8, BLOCK(PHYS + 0x400000) | RDONLY);
	put(f, pmd + idx(VA_DATA, 2) * 8, BLOCK(PHYS + 0x600000) | PXN);
	put(f, PGD_PA + idx(VA_LINEAR, 4) * 8, TABLE(PUD_LINEAR));
	put(f, PUD_LINEAR + idx(VA_LINEAR, 3) * 8, BLOCK(PHYS));
	put(f, PGD_PA + idx(VA_1G, 4) * 8, TABLE(PGD_PA + 0x5000) | TBL_PXN | TBL_RDONLY);
	/* in a page descriptor those bits are PBHA: no permission */
	put(f, PGD_PA + 0x3000 + idx(VA_PAGE, 1) * 8, PAGE(PHYS + 0x345000) | TBL_PXN | TBL_RDONLY);
}

static void t_walk_tree(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	struct seen s = { 0 };

	setup_walk(&f, &env);
	CHECK_INT(init(&c, &env, &missing), 0);
	CHECK(arch_arm64.walk != NULL, "arm64 has a walk");
	CHECK_INT(walk(&c, &s, 100), 0);
	/* pgd, the pud/pmd/pte under VA_PAGE, VA_1G's pud, the linear pud */
	CHECK_INT(s.ntables, 6);
	CHECK_INT(s.tables[0], PGD_PA);
	CHECK_INT(s.tables[1], PGD_PA + 0x1000);
	CHECK_INT(s.tables[2], PGD_PA + 0x2000);
	CHECK_INT(s.tables[3], PGD_PA + 0x3000);
	CHECK_INT(s.tables[4], PGD_PA + 0x5000);
	CHECK_INT(s.tables[5], PUD_LINEAR);	/* the linear map last */
	/* VA_PAGE + 0x1000 is invalid, + 0x2000 reserved: neither is a leaf */
	CHECK_INT(s.nleaves, 6);

	int i = leaf_at(&s, VA_TEXT);
	CHECK(i >= 0, "the image's text is a leaf");
	if (i >= 0) {
		CHECK_INT(s.leaf[i].pa, PHYS + 0x400000);
		CHECK_INT(s.leaf[i].size, 0x200000);
		CHECK_INT(s.leaf[i].kind, ARCH_VA_IMAGE);
		CHECK_INT(s.leaf[i].prot, ARCH_PROT_X);
	}
	i = leaf_at(&s, VA_DATA);
	CHECK(i >= 0, "the image's data is a leaf");
	if (i >= 0) {
		CHECK_INT(s.leaf[i].kind, ARCH_VA_IMAGE);
		CHECK_INT(s.leaf[i].prot, ARCH_PROT_W);
	}
	i = leaf_at(&s, VA_PAGE);
	CHECK(i >= 0, "VA_PAGE is a leaf");
	if (i >= 0) {
		CHECK_INT(s.leaf[i].pa, PHYS + 0x345000);
		CHECK_INT(s.leaf[i].size, 0x1000);
		CHECK_INT(s.leaf[i].kind, ARCH_VA_MODULES);
		CHECK_INT(s.leaf[i].prot, ARCH_PROT_W | ARCH_PROT_X);
	}
	i = leaf_at(&s, VA_2M);
	CHECK(i >= 0, "VA_2M is a leaf");
	if (i >= 0) {
		/* the same pages as VA_DATA, at another offset: not the image */
		CHECK_INT(s.leaf[i].pa, PHYS + 0x600000);
		CHECK_INT(s.leaf[i].kind, ARCH_VA_MODULES);
	}
	i = leaf_at(&s, VA_1G);
	CHECK(i >= 0, "VA_1G is a leaf");
	if (i >= 0) {
		CHECK_INT(s.leaf[i].pa, 0x80000000ull);
		CHECK_INT(s.leaf[i].size, 0x40000000ull);
		CHECK_INT(s.leaf[i].kind, ARCH_VA_OTHER);
		CHECK_INT(s.leaf[i].prot, 0);	/* from its table's attributes */
	}
	CHECK_INT(leaf_at(&s, VA_LINEAR), 5);
	CHECK_INT(s.leaf[5].pa, PHYS);
	CHECK_INT(s.leaf[5].kind, ARCH_VA_OTHER);
	CHECK_INT(s.leaf[5].prot, ARCH_PROT_W | ARCH_PROT_X);
	/* each leaf is where vtop's table walk puts it (not the linear map:
	 * vtop does that one by arithmetic) */
	for (int k = 0; k < 5; k++) {
		uint64_t pa, span;
		CHECK_INT(arch_arm64.vtop(&c, s.leaf[k].va, &pa, &span), 0);
		CHECK_INT(pa, s.leaf[k].pa);
		CHECK_INT(span, s.leaf[k].size);
	}
	free(f.mem);
}

/* Without KASLR (KERNELOFFSET 0) modules sit below the image: VA_PAGE,
 * above swapper_pg_dir, is no longer module memory. */
static void t_walk_nokaslr(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	struct seen s = { 0 };

	setup_walk(&f, &env);
	f.keys[5] = "KERNELOFFSET";
	f.vals[5] = 0;
	CHECK_INT(init(&c, &env, &missing), 0);
	CHECK_INT(walk(&c, &s, 100), 0);
	int i = leaf_at(&s, VA_PAGE);
	CHECK(i >= 0, "VA_PAGE is a leaf");
	if (i >= 0)
		CHECK_INT(s.leaf[i].kind, ARCH_VA_OTHER);
	i = leaf_at(&s, VA_TEXT);
	CHECK(i >= 0 && s.leaf[i].kind == ARCH_VA_IMAGE, "the image is still the image");
	/* a module page below the image, above the linear map */
	CHECK(c.modules_start == 0xffff800000000000ull && c.modules_end == PGD_PA + KIMAGE_VOFF,
	      "modules [%llx, %llx)", (unsigned long long)c.modules_start,
	      (unsigned long long)c.modules_end);
	free(f.mem);
}

static void t_walk_bounds(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	struct seen s = { 0 };

	setup_walk(&f, &env);
	init(&c, &env, &missing);
	/* exactly enough tables, then one short */
	CHECK_INT(walk(&c, &s, 6), 0);
	memset(&s, 0, sizeof s);
	CHECK_INT(walk(&c, &s, 5), -E2BIG);
	CHECK_INT(s.ntables, 5);
	memset(&s, 0, sizeof s);
	CHECK_INT(walk(&c, &s, 0), -E2BIG);
	CHECK_INT(s.ntables, 0);

	/* a callback's non-zero return stops the walk and is returned */
	memset(&s, 0, sizeof s);
	s.stop_leaf = 2;
	CHECK_INT(walk(&c, &s, 100), 5);
	CHECK_INT(s.nleaves, 2);
	memset(&s, 0, sizeof s);
	s.stop_table = 3;
	CHECK_INT(walk(&c, &s, 100), 7);
	CHECK_INT(s.ntables, 3);
	CHECK_INT(s.nleaves, 0);

	/* a table outside the dump: named, not read, the walk goes on */
	put(&f, PGD_PA + 300 * 8, TABLE(0x10000000ull));
	memset(&s, 0, sizeof s);
	CHECK_INT(walk(&c, &s, 100), 0);
	CHECK_INT(s.ntables, 7);
	CHECK_INT(s.tables[4], 0x10000000ull);	/* top entry 300, before VA_1G's 504 */
	CHECK_INT(s.nleaves, 6);
	free(f.mem);
}

/* Tables that point at themselves: the depth is the levels', the count
 * max_tables'. */
static void t_walk_loop(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	struct seen s = { 0 };

	setup_walk(&f, &env);
	init(&c, &env, &missing);
	put(&f, PGD_PA + 300 * 8, TABLE(PGD_PA));
	CHECK_INT(walk(&c, &s, 1000), 0);
	CHECK(s.ntables > 7 && s.ntables < 1000, "%llu tables", (unsigned long long)s.ntables);

	/* every entry of a page its own table: 512^3 tables, cut at the bound */
	uint64_t self = PGD_PA + 0x7000;
	for (int i = 0; i < 512; i++)
		put(&f, self + i * 8, TABLE(self));
	put(&f, PGD_PA + 300 * 8, TABLE(self));
	memset(&s, 0, sizeof s);
	CHECK_INT(walk(&c, &s, 1000), -E2BIG);
	CHECK_INT(s.ntables, 1000);
	/* its pages (at level 3 a table entry is a page) are leaves */
	CHECK(s.nleaves > 512, "%llu leaves", (unsigned long long)s.nleaves);
	free(f.mem);
}

static void t_walk_va39(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	struct seen s = { 0 };

	setup(&f, &env, 0);
	memset(f.mem, 0, MEM);
	f.vals[3] = 39;
	CHECK_INT(init(&c, &env, &missing), 0);
	uint64_t va = 0xffffffc008123000ull, pmd = PGD_PA + 0x1000, pte = PGD_PA + 0x2000;
	put(&f, PGD_PA + idx(va, 3) * 8, TABLE(pmd));
	put(&f, pmd + idx(va, 2) * 8, TABLE(pte));
	put(&f, pte + idx(va, 1) * 8, PAGE(PHYS + 0x777000));
	/* top entry 0: the lowest kernel address, a 1 GiB block */
	put(&f, PGD_PA, BLOCK(0x80000000ull));
	/* top entry 511: a 2 MiB block at the top of the space */
	put(&f, PGD_PA + 511 * 8, TABLE(PGD_PA + 0x3000));
	put(&f, PGD_PA + 0x3000 + 511 * 8, BLOCK(PHYS + 0x200000));
	CHECK_INT(walk(&c, &s, 100), 0);
	CHECK_INT(s.ntables, 4);
	CHECK_INT(s.nleaves, 3);
	CHECK(leaf_at(&s, va) >= 0, "the page at %llx", (unsigned long long)va);
	int i = leaf_at(&s, 0xffffff8000000000ull);
	CHECK(i >= 0 && s.leaf[i].size == 0x40000000ull, "the 1 GiB block at -2^39");
	i = leaf_at(&s, 0xffffffffffe00000ull);
	CHECK(i >= 0 && s.leaf[i].size == 0x200000, "the 2 MiB block at the top");
	free(f.mem);
}

static void t_walk_va52(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;
	struct seen s = { 0 };

	setup(&f, &env, 1);
	memset(f.mem, 0, MEM);
	f.vals[3] = 52;
	f.vals[4] = 12;
	CHECK_INT(init(&c, &env, &missing), 0);
	uint64_t va = 0xfff8000008123000ull, t[4];
	for (int i = 0; i < 4; i++)
		t[i] = PGD_PA + 0x1000 * (i + 1);
	put(&f, PGD_PA + ((va >> 48) & 15) * 8, TABLE(t[0]));
	put(&f, t[0] + idx(va, 4) * 8, TABLE(t[1]));
	put(&f, t[1] + idx(va, 3) * 8, TABLE(t[2]));
	put(&f, t[2] + idx(va, 2) * 8, TABLE(t[3]));
	put(&f, t[3] + idx(va, 1) * 8, 0x123000ull | (3ull << 8) | 3ull | (1ull << 10));
	/* past the 16 entries of the top table: not the kernel's */
	put(&f, PGD_PA + 16 * 8, BLOCK(PHYS));
	CHECK_INT(walk(&c, &s, 100), 0);
	CHECK_INT(s.ntables, 5);
	CHECK_INT(s.nleaves, 1);
	CHECK_INT(s.leaf[0].va, va);
	CHECK_INT(s.leaf[0].pa, 0x000c000000123000ull);
	free(f.mem);
}

static void t_missing(void)
{
	struct fake f;
	struct arch_env env;
	struct arch_ctx c;
	const char *missing;

	setup(&f, &env, 1);
	f.keys[0] = "SYMBOL(nothing)";
	CHECK_INT(init(&c, &env, &missing), -ENOENT);
	CHECK_STR(missing, "SYMBOL(swapper_pg_dir)");
	f.keys[0] = "SYMBOL(swapper_pg_dir)";
	f.keys[1] = "NUMBER(nothing)";
	CHECK_INT(init(&c, &env, &missing), -ENOENT);
	CHECK_STR(missing, "NUMBER(kimage_voffset)");
	free(f.mem);
}

int main(void)
{
	RUN(t_lookup);
	RUN(t_walk);
	RUN(t_cache);
	RUN(t_linear);
	RUN(t_va39);
	RUN(t_va52);
	RUN(t_va52_on_48);
	RUN(t_walk_tree);
	RUN(t_walk_nokaslr);
	RUN(t_walk_bounds);
	RUN(t_walk_loop);
	RUN(t_walk_va39);
	RUN(t_walk_va52);
	RUN(t_missing);
	return check_done();
}
