/* fuzz_memmap: the struct-page walk (dump/memmap.c, dump/physmem.c,
 * arch/x86_64.c) on a fake vmcore built in memory.
 *
 * Input layout (little-endian):
 *   off  size
 *   0    1    flags: bit 0 = a second segment; bit 1 = use byte 1 as the
 *             dump level (else 31)
 *   1    1    level (low 5 bits)
 *   2    2    reserved
 *   4    8    seg0 paddr
 *   12   4    seg0 filesz
 *   16   4    seg0 memsz - filesz
 *   20   8    seg1 paddr
 *   28   4    seg1 filesz
 *   32   4    seg1 memsz - filesz
 *   36   4    seg1 file offset
 *   40   ...  VMCOREINFO text, up to the first NUL
 *   then      "physical memory": the vmcore file's data, written to a
 *             memfd. seg0 is at file offset 0, seg1 where the header says.
 *
 * struct vmcore is filled by hand with the invariants vmcore_open
 * guarantees (filesz <= memsz, no wrapping ranges, filesz clipped to the
 * file) and the page size vmcore_open would pick from PAGESIZE. Then, as
 * run_capture and the pipeline do: memmap_init, and if it found struct
 * pages, memmap_classify over every pfn with file data in increasing pfn
 * order, in blocks of 256, at most FZ_MAX_PFNS pfns per input. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include "../../arch/arch.h"
#include "../../dump/memmap.h"
#include "../../dump/vmcore.h"
#include "../../lib/util.h"

#define FZ_HDR 40
#define FZ_MAX_PFNS (1u << 16)
#define FZ_BLOCK 256u

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < FZ_HDR)
		return 0;
	struct fz_in in = { data, FZ_HDR };
	unsigned flags = fz_take(&in, 1);
	unsigned lvbyte = fz_take(&in, 1);
	fz_take(&in, 2);
	struct kdi_segment seg[2] = { 0 };
	uint64_t seg_off[2] = { 0 };
	seg[0].paddr = fz_take(&in, 8);
	seg[0].filesz = fz_take(&in, 4);
	seg[0].memsz = seg[0].filesz + fz_take(&in, 4);
	seg[1].paddr = fz_take(&in, 8);
	seg[1].filesz = fz_take(&in, 4);
	seg[1].memsz = seg[1].filesz + fz_take(&in, 4);
	seg_off[1] = fz_take(&in, 4);
	uint32_t nseg = (flags & 1) ? 2 : 1;
	uint32_t level = (flags & 2) ? (lvbyte & 31) : 31;

	const uint8_t *rest = data + FZ_HDR;
	size_t rlen = size - FZ_HDR;
	const uint8_t *nul = memchr(rest, 0, rlen);
	size_t tlen = nul ? (size_t)(nul - rest) : rlen;
	const uint8_t *mem = nul ? nul + 1 : rest + rlen;
	size_t mlen = (size_t)(rest + rlen - mem);

	struct vmcore vc;
	memset(&vc, 0, sizeof vc);
	vc.fd = fz_memfd(&memfd, "fuzz_memmap");
	if (mlen)
		fz_pwrite(vc.fd, mem, mlen, 0);
	vc.file_size = mlen;
	vc.e_machine = arch_x86_64.e_machine;
	vc.vmcoreinfo = fz_strndup(rest, tlen);
	vc.vmcoreinfo_len = tlen;
	vc.seg = seg;
	vc.seg_offset = seg_off;
	vc.nr_seg = nseg;
	for (uint32_t i = 0; i < nseg; i++) {
		struct kdi_segment *s = &seg[i];
		/* What vmcore_open rejects never reaches memmap. */
		if (s->paddr + s->memsz < s->paddr) {
			free(vc.vmcoreinfo);
			return 0;
		}
		s->vaddr = 0xffff888000000000ull + s->paddr;
		if (seg_off[i] >= vc.file_size) {
			if (s->filesz)
				vc.truncated = 1;
			s->filesz = 0;
		} else if (s->filesz > vc.file_size - seg_off[i]) {
			s->filesz = vc.file_size - seg_off[i];
			vc.truncated = 1;
		}
	}
	/* vmcore_open's page size rule, verbatim in effect. */
	char v[32];
	uint64_t ps = 4096;
	if (vmcoreinfo_get(vc.vmcoreinfo, "PAGESIZE", v, sizeof v) == 0 &&
	    (parse_u64(v, 0, &ps) < 0 || ps < 4096 || ps > 65536 || (ps & (ps - 1))))
		ps = 4096;
	vc.page_size = ps;

	static struct memmap mm;
	uint32_t applied = 0;
	char why[400];
	int r = memmap_init(&mm, &vc, arch_lookup(vc.e_machine), level, &applied, why, sizeof why);
	assert(r == 0 || r == -ENOMEM);
	assert(memchr(why, 0, sizeof why));
	assert((applied & ~level) == 0);

	if (r == 0 && mm.active) {
		/* The pipeline's iteration: segments with data by paddr, pfn
		 * ranges merged, increasing pfns in blocks. */
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
		uint8_t cls[FZ_BLOCK];
		uint64_t budget = FZ_MAX_PFNS;
		for (uint32_t k = 0; k < nr && budget; k++) {
			for (uint64_t pfn = lo[k]; pfn < hi[k] && budget;) {
				uint64_t end = (pfn / FZ_BLOCK + 1) * FZ_BLOCK;
				if (end > hi[k])
					end = hi[k];
				uint32_t cnt = (uint32_t)(end - pfn);
				if (cnt > budget)
					cnt = (uint32_t)budget;
				memset(cls, 0xaa, sizeof cls);
				memmap_classify(&mm, pfn, cnt, cls);
				for (uint32_t i = 0; i < cnt; i++)
					assert(cls[i] == MM_KEEP || cls[i] < KDI_EX_NCLASSES);
				budget -= cnt;
				pfn += cnt;
			}
		}
	}
	memmap_fini(&mm);
	free(vc.vmcoreinfo);
	return 0;
}
