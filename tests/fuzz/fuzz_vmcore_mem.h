/* A fake vmcore built in memory from a fuzz input, for the targets that
 * read the crashed kernel's memory (fuzz_memmap, fuzz_dmesg).
 *
 * Input layout (little-endian):
 *   off  size
 *   0    1    flags: bit 0 = a second segment; bit 1 = use byte 1 as the
 *             dump level (else 31)
 *   1    1    level (low 5 bits)
 *   2    2    file size in pages: the data below is zero-extended to it
 *             (seeds hold only the non-zero head of their memory)
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
 * file) and the page size vmcore_open would pick from PAGESIZE.
 * tests/fuzz/mkcorpus.py writes seeds in this layout (page tables,
 * mem_section, struct pages, a printk ring). */
#ifndef KDI_FUZZ_VMCORE_MEM_H
#define KDI_FUZZ_VMCORE_MEM_H

#include "fuzz_common.h"

#include <errno.h>
#include <sys/syscall.h>

#include "../../arch/arch.h"
#include "../../kernel/vmcore.h"
#include "../../lib/util.h"

#define FZ_HDR 40

/* The walkers read the vmcore with pread, often 8 bytes at a time (up to
 * 65536 mem_section probes per input): as syscalls that is most of the
 * time per input. This pread serves the fake vmcore's fd from the input
 * itself, with the same results (short at the end of the file); every
 * other fd goes to the kernel. The copy still goes through ASan's memcpy
 * checks on the destination. */
static const uint8_t *fz_mem_buf;
static size_t fz_mem_len;		/* bytes of fz_mem_buf */
static uint64_t fz_mem_size;		/* file size: zeros past fz_mem_len */
static int fz_mem_fd = -1;

ssize_t pread(int fd, void *buf, size_t n, off_t off);
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	if (fd >= 0 && fd == fz_mem_fd) {
		if (off < 0) {
			errno = EINVAL;
			return -1;
		}
		if ((uint64_t)off >= fz_mem_size)
			return 0;
		size_t k = n < fz_mem_size - (uint64_t)off ? n : fz_mem_size - (uint64_t)off;
		size_t c = (uint64_t)off >= fz_mem_len ? 0 : fz_mem_len - (uint64_t)off;
		if (c > k)
			c = k;
		memcpy(buf, fz_mem_buf + off, c);
		memset((uint8_t *)buf + c, 0, k - c);
		return (ssize_t)k;
	}
	return syscall(SYS_pread64, fd, buf, n, off);
}
ssize_t pread64(int fd, void *buf, size_t n, off_t off);
ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

struct fz_vmcore {
	struct vmcore vc;
	struct kdi_segment seg[2];
	uint64_t seg_off[2];
	uint32_t level;
};

/* 0 and *f filled, or -1 for an input vmcore_open would not produce. */
static inline int fz_vmcore_build(struct fz_vmcore *f, int *memfd, const uint8_t *data, size_t size)
{
	memset(f, 0, sizeof *f);
	if (size < FZ_HDR)
		return -1;
	struct fz_in in = { data, FZ_HDR };
	unsigned flags = fz_take(&in, 1);
	unsigned lvbyte = fz_take(&in, 1);
	uint64_t fpages = fz_take(&in, 2);
	f->seg[0].paddr = fz_take(&in, 8);
	f->seg[0].filesz = fz_take(&in, 4);
	f->seg[0].memsz = f->seg[0].filesz + fz_take(&in, 4);
	f->seg[1].paddr = fz_take(&in, 8);
	f->seg[1].filesz = fz_take(&in, 4);
	f->seg[1].memsz = f->seg[1].filesz + fz_take(&in, 4);
	f->seg_off[1] = fz_take(&in, 4);
	uint32_t nseg = (flags & 1) ? 2 : 1;
	f->level = (flags & 2) ? (lvbyte & 31) : 31;

	const uint8_t *rest = data + FZ_HDR;
	size_t rlen = size - FZ_HDR;
	const uint8_t *nul = memchr(rest, 0, rlen);
	size_t tlen = nul ? (size_t)(nul - rest) : rlen;
	const uint8_t *mem = nul ? nul + 1 : rest + rlen;
	size_t mlen = (size_t)(rest + rlen - mem);

	struct vmcore *vc = &f->vc;
	for (uint32_t i = 0; i < nseg; i++)
		if (f->seg[i].paddr + f->seg[i].memsz < f->seg[i].paddr)
			return -1;	/* vmcore_open drops it (segment_repair) */
	vc->fd = fz_memfd(memfd, "fuzz_vmcore_mem");
	if (mlen)
		fz_pwrite(vc->fd, mem, mlen, 0);
	fz_mem_fd = vc->fd;
	fz_mem_buf = mem;
	fz_mem_len = mlen;
	fz_mem_size = fpages * 4096 > mlen ? fpages * 4096 : mlen;
	if (fz_mem_size > mlen && ftruncate(vc->fd, (off_t)fz_mem_size) < 0)
		abort();
	vc->file_size = fz_mem_size;
	vc->e_machine = arch_x86_64.e_machine;
	vc->vmcoreinfo = fz_strndup(rest, tlen);
	vc->vmcoreinfo_len = tlen;
	vc->seg = f->seg;
	vc->seg_offset = f->seg_off;
	vc->nr_seg = nseg;
	for (uint32_t i = 0; i < nseg; i++) {
		struct kdi_segment *s = &f->seg[i];
		s->vaddr = 0xffff888000000000ull + s->paddr;
		if (f->seg_off[i] >= vc->file_size) {
			if (s->filesz)
				vc->truncated = 1;
			s->filesz = 0;
		} else if (s->filesz > vc->file_size - f->seg_off[i]) {
			s->filesz = vc->file_size - f->seg_off[i];
			vc->truncated = 1;
		}
	}
	/* vmcore_open's page size rule. */
	char v[32];
	uint64_t ps = 4096;
	if (vmcoreinfo_get(vc->vmcoreinfo, "PAGESIZE", v, sizeof v) == 0 &&
	    (parse_u64(v, 0, &ps) < 0 || ps < 4096 || ps > 65536 || (ps & (ps - 1))))
		ps = 4096;
	vc->page_size = ps;
	return 0;
}

static inline void fz_vmcore_free(struct fz_vmcore *f)
{
	free(f->vc.vmcoreinfo);
	f->vc.vmcoreinfo = NULL;
}

#endif
