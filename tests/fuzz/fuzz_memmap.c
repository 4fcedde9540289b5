/* fuzz_memmap: the struct-page walk (kernel/memmap.c, kernel/kmem.c,
 * kernel/physmem.c, arch/x86_64.c) on a fake vmcore built in memory; the
 * input layout is in fuzz_vmcore_mem.h.
 *
 * As run_capture does: memmap_init, and if it found struct pages,
 * memmap_classify over every pfn with file data in increasing pfn order
 * (segments by paddr, ranges merged), in blocks of 256, at most
 * FZ_MAX_PFNS pfns per input. Then as the pipeline does: the same pfns in
 * spans, each classified from no carry by another cursor, in reverse
 * order, and joined in pfn order (memmap_join); the decisions and the
 * unreadable marks must be the in-order pass's, whatever the memory.
 * And as run_capture does before the pages: the debugger's pages
 * (kernel/dbgpages.c: a page-table walk, kallsyms, init_task's lists, the
 * pid IDR), which must come back sorted, disjoint, inside the memory and
 * within the budget. And the memory map's own pages (kernel/vmemmap.c):
 * its runs sorted by backing pfn, each inside the virtual pages it
 * claims, and the marks of every pfn 0, 1 or 2. */
#include "fuzz_vmcore_mem.h"

#include <assert.h>
#include <errno.h>

#include "../../kernel/vmemmap.h"

#include "../../kernel/dbgpages.h"
#include "../../kernel/memmap.h"

#define FZ_MAX_PFNS (1u << 16)
#define FZ_BLOCK 256u

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_vmcore f;
	if (fz_vmcore_build(&f, &memfd, data, size) < 0)
		return 0;
	struct vmcore *vc = &f.vc;
	uint32_t level = f.level, nseg = vc->nr_seg;
	uint64_t ps = vc->page_size;

	static struct memmap mm;
	static struct mm_cursor cur, cur2;
	static uint8_t seq_cls[FZ_MAX_PFNS], seq_fl[FZ_MAX_PFNS];
	static uint8_t sp_cls[FZ_MAX_PFNS], sp_fl[FZ_MAX_PFNS];
	static uint64_t sp_pfn[FZ_MAX_PFNS];
	uint32_t applied = 0;
	char why[400];
	int r = memmap_init(&mm, vc, arch_lookup(vc->e_machine), level, &applied, why, sizeof why);
	assert(r == 0 || r == -ENOMEM);
	assert(memchr(why, 0, sizeof why));
	assert((applied & ~level) == 0);

	if (r == 0 && mm.active && memmap_cursor_init(&cur, &mm) == 0 &&
	    memmap_cursor_init(&cur2, &mm) == 0) {
		const struct kdi_segment *seg = f.seg;
		uint32_t order[2] = { 0, 1 }, n = 0;
		for (uint32_t i = 0; i < nseg; i++)
			if (seg[i].filesz)
				order[n++] = i;
		if (n == 2 && seg[order[0]].paddr > seg[order[1]].paddr) {
			uint32_t t = order[0];
			order[0] = order[1];
			order[1] = t;
		}
		unsigned shift = 0;
		while ((1ull << shift) < ps)
			shift++;
		uint64_t lo[2], hi[2];
		uint32_t nr = 0;
		for (uint32_t k = 0; k < n; k++) {
			const struct kdi_segment *s = &seg[order[k]];
			uint64_t l = s->paddr >> shift;
			uint64_t h = (s->paddr + s->filesz + ps - 1) >> shift;
			if (nr && l <= hi[nr - 1]) {
				if (h > hi[nr - 1])
					hi[nr - 1] = h;
			} else {
				lo[nr] = l;
				hi[nr] = h;
				nr++;
			}
		}
		uint8_t cls[FZ_BLOCK], fl[FZ_BLOCK];
		uint64_t budget = FZ_MAX_PFNS, np = 0;
		for (uint32_t k = 0; k < nr && budget; k++) {
			for (uint64_t pfn = lo[k]; pfn < hi[k] && budget;) {
				uint64_t end = (pfn / FZ_BLOCK + 1) * FZ_BLOCK;
				if (end > hi[k])
					end = hi[k];
				uint32_t cnt = (uint32_t)(end - pfn);
				if (cnt > budget)
					cnt = (uint32_t)budget;
				memset(cls, 0xaa, sizeof cls);
				memmap_classify(&cur, pfn, cnt, cls, fl);
				for (uint32_t i = 0; i < cnt; i++) {
					assert(cls[i] == MM_KEEP || cls[i] < KDI_EX_NCLASSES);
					assert(!(fl[i] & MM_FL_UNREAD) || cls[i] == MM_KEEP);
					seq_cls[np + i] = cls[i];
					seq_fl[np + i] = fl[i] & MM_FL_UNREAD;
					sp_pfn[np + i] = pfn + i;
				}
				np += cnt;
				budget -= cnt;
				pfn += cnt;
			}
		}
		/* Spans of 2^s pfns (aligned, cut at range ends), s from the
		 * input so that boundaries fall everywhere runs do. */
		unsigned sh = 4 + (unsigned)(size ? data[size - 1] % 9 : 0);
		uint64_t nsp = 0;
		static uint64_t sp_at[FZ_MAX_PFNS + 1];
		for (uint64_t i = 0; i < np; i++)
			if (!i || sp_pfn[i] != sp_pfn[i - 1] + 1 || !(sp_pfn[i] >> sh << sh == sp_pfn[i]))
				sp_at[nsp++] = i;
		sp_at[nsp] = np;
		static struct mm_carry outs[FZ_MAX_PFNS];
		for (uint64_t j = nsp; j-- > 0;) {
			uint64_t a = sp_at[j];
			cur2.carry = (struct mm_carry){ 0 };
			memmap_classify(&cur2, sp_pfn[a], (uint32_t)(sp_at[j + 1] - a), sp_cls + a, sp_fl + a);
			outs[j] = cur2.carry;
		}
		struct mm_carry carry = { 0 };
		for (uint64_t j = 0; j < nsp; j++) {
			uint64_t a = sp_at[j];
			uint32_t touched;
			memmap_join(&cur2, carry, sp_pfn[a], (uint32_t)(sp_at[j + 1] - a), sp_cls + a,
				    sp_fl + a, &outs[j], &touched);
			carry = outs[j];
		}
		for (uint64_t i = 0; i < np; i++) {
			assert(sp_cls[i] == seq_cls[i]);
			assert((sp_fl[i] & MM_FL_UNREAD) == seq_fl[i]);
		}
	}
	if (r == 0) {
		struct dbg_pages dp;
		const uint64_t budget = 1u << 14;
		/* The work cap as the capture sets it for a small machine. */
		int dr = dbg_pages_find(&dp, vc, arch_lookup(vc->e_machine), &mm, budget, 1u << 22);
		assert(dr == 0 || dr == -ENOMEM || dr == -ETIME || dr == -E2BIG);
		uint64_t sum = 0;
		for (uint32_t i = 0; dr == 0 && i < dp.n; i++) {
			assert(dp.r[i].lo < dp.r[i].hi);
			assert(!i || dp.r[i].lo > dp.r[i - 1].hi);
			sum += dp.r[i].hi - dp.r[i].lo;
			int inside = 0;
			for (uint32_t k = 0; k < nseg; k++)
				if (f.seg[k].filesz && dp.r[i].lo >= f.seg[k].paddr / ps &&
				    dp.r[i].lo < (f.seg[k].paddr + f.seg[k].filesz + ps - 1) / ps)
					inside = 1;
			assert(inside);
			assert(dbg_pages_seek(&dp, dp.r[i].lo) == i);
		}
		assert(dr != 0 || (sum == dp.pfns && dp.pfns <= budget));
		dbg_pages_free(&dp);

		struct vmemmap vm;
		char vwhy[200];
		int vr = vmemmap_find(&vm, &mm, vc, MM_WINDOW, 320, vwhy, sizeof vwhy);
		assert(vr == 0 || vr == -ENOTSUP || vr == -ENOMEM);
		assert(vr != -ENOTSUP || vwhy[0]);
		if (vr == 0) {
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
	}
	memmap_cursor_fini(&cur);
	memmap_cursor_fini(&cur2);
	memmap_fini(&mm);
	fz_vmcore_free(&f);
	return 0;
}
