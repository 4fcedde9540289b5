/* fuzz_dbgpages: the debugger's pages (kernel/dbgpages.c: the kernel
 * half's page-table walk, mem_section, the printk ring, stacks from
 * PRSTATUS notes, node_data, init_task's lists, the pid xarray), the
 * kernel's own symbol table (kernel/kallsyms.c), the memory map's pages
 * (kernel/vmemmap.c) and the arch translations and walks under them
 * (arch/x86_64.c, arch/arm64.c), on a fake vmcore built in memory.
 *
 * Input layout (little-endian):
 *   off  size
 *   0    1    control: bit 0 = arm64 (EM_AARCH64; else x86_64); bit 1 =
 *             no memory map (dbg_pages_find without mm, no vmemmap);
 *             bits 2-3 = the finder's budget in pfns (2^20, 2^14, 64, 0);
 *             bits 4-5 = NT_PRSTATUS notes (0-3); bits 6-7 = the
 *             finder's work cap (2^22 units, as fuzz_memmap passes it:
 *             the capture's for a small machine; 2^18, 2^14, 2^10)
 *   1    24   three kernel virtual addresses: note i's stack pointer,
 *             and what the translation checks probe
 *   25   ...  the fuzz_vmcore_mem.h input (its level byte is memmap's)
 *
 * As run_capture does: memmap_init (unless bit 1), dbg_pages_find and
 * vmemmap_find. Segments vmcore_open would not keep (segment_valid: past
 * 2^56) are not given. What must hold beyond "no crash, no hang" (the
 * time limit run.sh gives libFuzzer is the hang check: work the finder
 * does not count, or counts wrongly, shows there):
 *   - the finder: 0, or -ETIME with more work done than the cap (and 0
 *     never past it), -E2BIG, -ENOMEM; its runs sorted, disjoint and not
 *     touching, each wholly inside the pfns of the segments' file data;
 *     pfns their sum, within the budget; the parts' pfns adding up to
 *     it; a part never both found and dropped; dbg_pages_seek agreeing
 *     with the runs;
 *   - the arch walk (where the arch has one) stopping at its table
 *     bound, and every leaf it reports aligned to its size, in the
 *     kernel half, and translated by vtop to the same place (the first
 *     FZ_LEAF_CHECKS leaves: vtop and walk read the same tables by the
 *     same indices, so a leaf one sees and the other does not is a bug
 *     in one of them; unless two segments give one physical address
 *     different bytes, where either answer is the dump's; and except
 *     arm64's linear map, which vtop translates without the tables);
 *   - vtop of each probe: a span of at least one byte whose last byte
 *     translates to the last byte of the span;
 *   - ksyms_lookup: at most as many found as asked, nothing found on an
 *     error;
 *   - vmemmap_find: fuzz_memmap's checks.
 *
 * FZ_VERBOSE=1 prints what the finder found; FZ_NOCAP=1 runs it with
 * no work cap (hunting by hand for loops that only the cap ends: an
 * address that wraps, a bound that is not one); with FZ_REACH set the
 * harness prints at exit "FZ_REACH inputs=N walked=N ksyms=N tasks=N
 * stacks=N arm64=N" (inputs whose finder walked page tables, whose
 * kallsyms lookup found a name, whose finder found tasks or stacks, and
 * arm64 inputs with translation), which run.sh's smoke step checks
 * against minimums so that the seeds keep reaching the task walk.
 * tests/fuzz/mkcorpus.py writes the seeds (a synthetic kernel with a
 * symbol table, init_task, tasks on its lists, a pid xarray, stacks). */
#include "fuzz_vmcore_mem.h"

#include <assert.h>
#include <elf.h>
#include <errno.h>

#include "../../kernel/dbgpages.h"
#include "../../kernel/kallsyms.h"
#include "../../kernel/kmem.h"
#include "../../kernel/memmap.h"
#include "../../kernel/memory.h"
#include "../../kernel/vmemmap.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

#define FZ_DBG_PFX 25
#define FZ_PROBES 3
#define FZ_WALK_TABLES 4096u	/* the harness's own walk: its bound is checked */
#define FZ_LEAF_CHECKS 256u

static struct {
	unsigned long inputs, walked, ksyms, tasks, stacks, arm64;
} reach;

static void reach_print(void)
{
	fprintf(stderr, "FZ_REACH inputs=%lu walked=%lu ksyms=%lu tasks=%lu stacks=%lu arm64=%lu\n",
		reach.inputs, reach.walked, reach.ksyms, reach.tasks, reach.stacks, reach.arm64);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (getenv("FZ_REACH"))
		atexit(reach_print);
	return 0;
}

/* NT_PRSTATUS notes whose stack pointer is at the arch's place (struct
 * elf_prstatus: pr_reg at 112; x86_64's sp is its 20th word, arm64's
 * after x0-x30). 392 bytes: arm64's size, more than x86_64's 336. */
#define FZ_PRSTATUS 392u
#define FZ_NOTE (12 + 8 + FZ_PRSTATUS)

static size_t make_notes(uint8_t *out, unsigned n, const uint64_t *sp, int arm64)
{
	size_t at = 0, sp_off = 112 + (arm64 ? 31 : 19) * 8;

	for (unsigned i = 0; i < n; i++, at += FZ_NOTE) {
		uint8_t *p = out + at;
		uint32_t hdr[3] = { 5, FZ_PRSTATUS, NT_PRSTATUS };
		memset(p, 0, FZ_NOTE);
		memcpy(p, hdr, sizeof hdr);
		memcpy(p + 12, "CORE", 5);
		memcpy(p + 20 + sp_off, &sp[i], 8);
	}
	return at;
}

/* The harness's walk: what every leaf must be. */
struct walk_check {
	struct arch_ctx *ac;
	uint64_t tables, leaves, page;
	int agree;		/* the segments do not give an address two values */
};

static int wc_table(void *arg, uint64_t pa)
{
	struct walk_check *w = arg;

	/* Below the top, a table's address comes from an entry's address
	 * bits: page aligned. (The top is VMCOREINFO's arithmetic.) */
	assert(!w->tables || pa % w->page == 0);
	w->tables++;
	return 0;
}

static int wc_leaf(void *arg, uint64_t va, uint64_t pa, uint64_t size, unsigned prot,
		   enum arch_va_kind kind)
{
	struct walk_check *w = arg;
	uint64_t tpa, span;

	assert(size >= w->page && !(size & (size - 1)));
	assert(va % size == 0 && pa % size == 0);
	assert(va >= w->ac->ops->kva_min);
	assert(kind <= ARCH_VA_PCPU_CHUNKS);
	assert((prot & ~(ARCH_PROT_W | ARCH_PROT_X)) == 0);
	/* vtop translates arm64's linear map by arithmetic, not by the
	 * tables the walk reads there. */
	int arith = va >= w->ac->direct_start && va < w->ac->direct_end;
	if (w->leaves++ < FZ_LEAF_CHECKS && w->agree && !arith) {
		int r = w->ac->ops->vtop(w->ac, va, &tpa, &span);
		assert(r == 0 && tpa == pa && span == size);
		r = w->ac->ops->vtop(w->ac, va + size - 1, &tpa, &span);
		assert(r == 0 && tpa == pa + size - 1 && span == 1);
	}
	return 0;
}

/* Two segments that give one physical address different file bytes: a
 * read is served by whichever holds all of it (physmem.c), so a 4 KiB
 * table read and an 8-byte entry read may see different tables, and walk
 * and vtop may rightly disagree. Real aliases (the kernel-text PT_LOAD)
 * hold the same bytes. */
static int segs_disagree(const struct vmcore *vc)
{
	if (vc->nr_seg < 2 || !vc->seg[0].filesz || !vc->seg[1].filesz)
		return 0;
	const struct kdi_segment *a = &vc->seg[0], *b = &vc->seg[1];
	if (a->paddr >= b->paddr + b->filesz || b->paddr >= a->paddr + a->filesz)
		return 0;
	return b->paddr - a->paddr != vc->seg_offset[1] - vc->seg_offset[0];
}

/* Translation, and what reads through it, on its own: the walk against
 * vtop, the probes, kallsyms. */
static void check_translation(const struct vmcore *vc, const struct arch_ops *arch,
			      const uint64_t *probe)
{
	static struct kmem km;
	int r = kmem_init(&km, vc, arch);
	int agree = !segs_disagree(vc);

	assert(r == 0 || r == -ENOMEM);
	if (r < 0 || !km.ok) {
		kmem_fini(&km);
		return;
	}
	if (arch == &arch_arm64)
		reach.arm64++;
	if (arch->walk) {
		/* The tables' granule, whatever PAGESIZE the note gives. */
		struct walk_check wc = { .ac = &km.ac, .page = arch->page_size, .agree = agree };
		struct arch_walk w = { .table = wc_table, .leaf = wc_leaf, .arg = &wc,
				       .max_tables = FZ_WALK_TABLES };
		r = arch->walk(&km.ac, &w);
		assert(r == 0 || r == -E2BIG);
		assert(wc.tables <= FZ_WALK_TABLES);
		assert(r == 0 || wc.tables == FZ_WALK_TABLES);
	}
	for (int i = 0; i < FZ_PROBES; i++) {
		uint64_t pa, span, pa2, span2;
		if (arch->vtop(&km.ac, probe[i], &pa, &span) < 0)
			continue;
		assert(span >= 1);
		uint64_t last = probe[i] + (span - 1);
		if (last < probe[i])
			continue;	/* a span to the top of the space and past */
		r = arch->vtop(&km.ac, last, &pa2, &span2);
		assert(!agree || (r == 0 && pa2 == pa + (span - 1) && span2 == 1));
	}
	static const char *const names[] = { "init_task", "init_pid_ns", "node_data", "_text" };
	uint64_t addr[4];
	r = ksyms_lookup(&km, names, addr, 4);
	assert((r >= 0 && r <= 4) || r == -ENOENT || r == -EFAULT || r == -ENOMEM);
	unsigned nz = 0;
	for (int i = 0; i < 4; i++)
		nz += addr[i] != 0;
	assert(r < 0 ? nz == 0 : nz <= (unsigned)r);
	if (r > 0)
		reach.ksyms++;
	kmem_fini(&km);
}

static void check_dbg(const struct fz_vmcore *f, const struct arch_ops *arch,
		      const struct memmap *mm, uint64_t budget, uint64_t work)
{
	const struct vmcore *vc = &f->vc;
	uint64_t ps = vc->page_size;
	struct dbg_pages dp;
	int r = dbg_pages_find(&dp, vc, arch, mm, budget, work);

	assert(r == 0 || r == -ETIME || r == -E2BIG || r == -ENOMEM);
	/* 0 is never past the cap; -ETIME only past it (the unit that
	 * crossed it may be a large read: a little over). */
	assert(!work || r != 0 || dp.work <= work);
	assert(r != -ETIME || (work && dp.work > work));
	if (getenv("FZ_VERBOSE"))
		fprintf(stderr, "%s: dbg_pages_find %d, work %llu of %llu\n", arch->name, r,
			(unsigned long long)dp.work, (unsigned long long)work);
	if (r < 0) {
		assert(dp.n == 0 && dp.r == NULL && dp.pfns == 0);
		return;
	}
	uint64_t sum = 0, parts = 0;
	for (uint32_t i = 0; i < dp.n; i++) {
		const struct pfn_run *x = &dp.r[i];
		assert(x->lo < x->hi);
		assert(!i || x->lo > dp.r[i - 1].hi);
		sum += x->hi - x->lo;
		int inside = 0;
		for (uint32_t k = 0; k < vc->nr_seg && !inside; k++) {
			const struct kdi_segment *s = &vc->seg[k];
			if (!s->filesz)
				continue;
			uint64_t lo = s->paddr / ps, hi = (s->paddr + s->filesz + ps - 1) / ps;
			inside = x->lo >= lo && x->hi <= hi;
		}
		/* Two segments that touch or overlap make one run across both. */
		if (!inside && vc->nr_seg == 2 && vc->seg[0].filesz && vc->seg[1].filesz) {
			uint64_t lo0 = vc->seg[0].paddr / ps, hi0 = (vc->seg[0].paddr + vc->seg[0].filesz + ps - 1) / ps;
			uint64_t lo1 = vc->seg[1].paddr / ps, hi1 = (vc->seg[1].paddr + vc->seg[1].filesz + ps - 1) / ps;
			if (lo0 <= hi1 && lo1 <= hi0) {
				uint64_t lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;
				inside = x->lo >= lo && x->hi <= hi;
			}
		}
		assert(inside);
		assert(dbg_pages_seek(&dp, x->lo) == i);
		assert(dbg_pages_seek(&dp, x->hi - 1) == i);
		assert(dbg_pages_seek(&dp, x->hi) == i + 1);
	}
	assert(sum == dp.pfns && dp.pfns <= budget);
	assert((dp.parts & dp.dropped) == 0);
	assert(((dp.parts | dp.dropped) >> DBG_NPARTS) == 0);
	for (int p = 0; p < DBG_NPARTS; p++) {
		assert((dp.parts >> p & 1) || dp.part_pfns[p] == 0);
		parts += dp.part_pfns[p];
	}
	assert(parts == dp.pfns);
	assert(dp.n || dp.pfns == 0);
	/* The tiers: each sorted, disjoint and not touching, disjoint from
	 * each other, together the whole set; each part's pfns in its tier
	 * (every tier-0 part comes first, so a part's new pfns are its
	 * tier's). */
	uint64_t tsum[DBG_TIERS] = { 0 }, tparts[DBG_TIERS] = { 0 };
	for (int t = 0; t < DBG_TIERS; t++) {
		const struct dbg_tier *dt = &dp.tier[t];
		assert(dt->n || dt->pfns == 0);
		for (uint32_t i = 0; i < dt->n; i++) {
			const struct pfn_run *x = &dt->r[i];
			assert(x->lo < x->hi);
			assert(i == 0 || dt->r[i - 1].hi < x->lo);
			tsum[t] += x->hi - x->lo;
			/* inside the union, and only in this tier */
			uint32_t k = dbg_pages_seek(&dp, x->lo);
			assert(k < dp.n && dp.r[k].lo <= x->lo && x->hi <= dp.r[k].hi);
			if (t == 1)
				for (uint32_t j = 0; j < dp.tier[0].n; j++)
					assert(dp.tier[0].r[j].hi <= x->lo || dp.tier[0].r[j].lo >= x->hi);
		}
		assert(tsum[t] == dt->pfns);
	}
	for (int p = 0; p < DBG_NPARTS; p++)
		tparts[dbg_part_tier[p]] += dp.part_pfns[p];
	assert(tsum[0] + tsum[1] == dp.pfns);
	assert(tparts[0] == tsum[0] && tparts[1] == tsum[1]);
	if (dp.parts & (1u << DBG_PGTABLES))
		reach.walked++;
	if (dp.parts & (1u << DBG_TASKS))
		reach.tasks++;
	if (dp.parts & (1u << DBG_STACKS))
		reach.stacks++;
	if (getenv("FZ_VERBOSE")) {
		fprintf(stderr, "%s: %llu pfns in %u runs, budget %llu, dropped 0x%x:", arch->name,
			(unsigned long long)dp.pfns, dp.n, (unsigned long long)budget, dp.dropped);
		for (int p = 0; p < DBG_NPARTS; p++)
			if (dp.parts >> p & 1)
				fprintf(stderr, " %s %llu", dbg_part_name[p],
					(unsigned long long)dp.part_pfns[p]);
		fprintf(stderr, "\n");
	}
	dbg_pages_free(&dp);
}

static void check_vmemmap(const struct memmap *mm, const struct vmcore *vc)
{
	struct vmemmap vm;
	char why[200];
	int r = vmemmap_find(&vm, mm, vc, MM_WINDOW, 320, why, sizeof why);

	assert(r == 0 || r == -ENOTSUP || r == -ENOMEM);
	assert(r != -ENOTSUP || why[0]);
	if (r < 0)
		return;
	uint64_t pages = 0;
	for (uint32_t i = 0; i < vm.nrun; i++) {
		assert(vm.run[i].n > 0);
		assert(!i || vm.run[i].b >= vm.run[i - 1].b);
		assert(vm.run[i].vp >= vm.vp0 && vm.run[i].vp + vm.run[i].n <= vm.vp0 + vm.nvp);
		pages += vm.run[i].n;
	}
	assert(pages == vm.pages);
	uint8_t f8[256];
	vmemmap_marks(&vm, vm.run[0].b, 256, f8, 1);
	for (int i = 0; i < 256; i++)
		assert(f8[i] <= 2);
	assert(f8[0] >= 1);
	vmemmap_free(&vm);
}

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t budgets[4] = { 1u << 20, 1u << 14, 64, 0 };
	static const uint64_t works[4] = { 1u << 22, 1u << 18, 1u << 14, 1u << 10 };
	static struct fz_vmcore f;
	static struct memmap mm;
	static uint8_t notes[3 * FZ_NOTE];

	if (size < FZ_DBG_PFX)
		return 0;
	unsigned ctl = data[0];
	uint64_t probe[FZ_PROBES];
	memcpy(probe, data + 1, sizeof probe);
	if (fz_vmcore_build(&f, &memfd, data + FZ_DBG_PFX, size - FZ_DBG_PFX) < 0)
		return 0;
	for (uint32_t i = 0; i < f.vc.nr_seg; i++)
		if (!segment_valid(&f.seg[i])) {
			fz_vmcore_free(&f);
			return 0;	/* vmcore_open drops or repairs it */
		}
	reach.inputs++;
	struct vmcore *vc = &f.vc;
	int arm64 = ctl & 1;
	if (arm64)
		vc->e_machine = EM_AARCH64;
	vc->notes = notes;
	vc->notes_len = make_notes(notes, (ctl >> 4) & 3, probe, arm64);
	const struct arch_ops *arch = arch_lookup(vc->e_machine);
	assert(arch);

	check_translation(vc, arch, probe);

	uint32_t applied = 0;
	char why[400];
	int r = 0;
	if (!(ctl & 2)) {
		r = memmap_init(&mm, vc, arch, f.level, &applied, why, sizeof why);
		assert(r == 0 || r == -ENOMEM);
	}
	if (r == 0)
		check_dbg(&f, arch, ctl & 2 ? NULL : &mm, budgets[(ctl >> 2) & 3],
			  getenv("FZ_NOCAP") ? 0 : works[ctl >> 6]);
	if (r == 0 && !(ctl & 2) && mm.active)
		check_vmemmap(&mm, vc);
	if (!(ctl & 2))
		memmap_fini(&mm);
	fz_vmcore_free(&f);
	return 0;
}
