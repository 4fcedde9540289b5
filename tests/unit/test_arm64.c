/* Unit tests for arch/arm64.c: a synthetic arm64 kernel's physical memory
 * (a few MiB, PHYS_OFFSET 0x40000000 as on QEMU's virt machine) holding
 * swapper_pg_dir and its tables, and a VMCOREINFO with the numbers the
 * 6.1 kernel exports. The cases: arch_lookup picks arm64 by EM_AARCH64;
 * 4 KiB pages, 2 MiB and 1 GiB blocks translate to what the tables say,
 * with their spans; invalid and reserved entries fail; the linear map
 * translates without reading memory, only when TCR_EL1_T1SZ says the
 * layout is the 5.4+ one; 39-bit VA walks 3 levels; 52-bit (LPA2) takes
 * the high address bits from bits 9:8; a 52-bit kernel on a 48-bit CPU
 * keeps RAM at -2^48; missing keys are named. */
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
	RUN(t_missing);
	return check_done();
}
