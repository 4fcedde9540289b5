#include "diskdump.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "../lib/io.h"
#include "vmcoreinfo.h"

#ifndef EM_AARCH64
#define EM_AARCH64		183
#endif

/* Compressions other writers use, which this reader does not read. */
#define DUMP_PAGE_LZO		0x2
#define DUMP_PAGE_SNAPPY	0x4
#define DUMP_PAGE_ZSTD		0x20

/* Set bits counted per block of the bitmap: a page's descriptor is the
 * count of pages in the dump before it. */
#define RANK_BITS		4096u
/* The bitmap is read whole: 1 GiB of it maps 2^33 pfns (32 TiB of 4 KiB
 * pages). A header claiming more is not a dump this reads. */
#define BITMAP_MAX		(1ull << 30)
#define VMCOREINFO_MAX		(1u << 20)
/* Pages kept decoded: a page-table walk reads four, and the log's reader
 * goes on reading where it was. */
#define CACHE_PAGES		16u

struct diskdump {
	int fd;
	uint64_t file_size;
	uint32_t ps;
	unsigned shift;
	uint64_t mapnr;			/* pfns the bitmap covers */
	uint8_t *bm;			/* the second bitmap: pfns in the dump */
	uint64_t *rank;			/* set bits before each RANK_BITS of it */
	uint64_t desc_off;		/* the first page_desc */
	uint8_t *zbuf;			/* one stored page, compressed */
	uint8_t *cache;			/* CACHE_PAGES decoded pages */
	uint64_t cache_pfn[CACHE_PAGES];
};

static int in_dump(const struct diskdump *dd, uint64_t pfn)
{
	return pfn < dd->mapnr && (dd->bm[pfn >> 3] >> (pfn & 7) & 1);
}

/* The index of pfn's descriptor (pfn is in the dump). */
static uint64_t desc_index(const struct diskdump *dd, uint64_t pfn)
{
	uint64_t n = dd->rank[pfn / RANK_BITS];

	for (uint64_t b = pfn / RANK_BITS * (RANK_BITS / 8); b < pfn >> 3; b++)
		n += (unsigned)__builtin_popcount(dd->bm[b]);
	return n + (unsigned)__builtin_popcount(dd->bm[pfn >> 3] & ((1u << (pfn & 7)) - 1));
}

/* Decodes pfn's page into out. 0, -EFAULT (not in the dump: left out, or
 * past where a dump cut short ends), -EIO (does not decode). */
static int load_page(struct diskdump *dd, uint64_t pfn, uint8_t *out)
{
	struct page_desc pd;

	if (!in_dump(dd, pfn))
		return -EFAULT;
	uint64_t at = dd->desc_off + desc_index(dd, pfn) * sizeof pd;
	if (at > dd->file_size || dd->file_size - at < sizeof pd)
		return -EFAULT;
	ssize_t n = read_full_at(dd->fd, &pd, sizeof pd, at);
	if (n < 0)
		return (int)n;
	if (n != (ssize_t)sizeof pd)
		return -EFAULT;
	/* makedumpfile leaves the descriptors of pages it did not reach in
	 * an incomplete dump zero. */
	if (pd.offset <= 0 || pd.size == 0 || (uint64_t)pd.offset >= dd->file_size ||
	    pd.size > dd->file_size - (uint64_t)pd.offset)
		return -EFAULT;
	if (pd.size > dd->ps || (pd.flags & (DUMP_PAGE_LZO | DUMP_PAGE_SNAPPY | DUMP_PAGE_ZSTD)))
		return -EIO;
	if (!(pd.flags & DUMP_PAGE_ZLIB)) {
		if (pd.size != dd->ps)
			return -EIO;
		n = read_full_at(dd->fd, out, dd->ps, (uint64_t)pd.offset);
		return n < 0 ? (int)n : n == (ssize_t)dd->ps ? 0 : -EIO;
	}
	n = read_full_at(dd->fd, dd->zbuf, pd.size, (uint64_t)pd.offset);
	if (n < 0)
		return (int)n;
	uLongf got = dd->ps;
	if (n != (ssize_t)pd.size || uncompress(out, &got, dd->zbuf, pd.size) != Z_OK || got != dd->ps)
		return -EIO;
	return 0;
}

int diskdump_read(struct diskdump *dd, uint64_t paddr, void *buf, size_t len)
{
	uint8_t *o = buf;

	if (paddr + len < paddr)
		return -EFAULT;
	while (len) {
		uint64_t pfn = paddr >> dd->shift, in = paddr & (dd->ps - 1);
		size_t n = dd->ps - in < len ? dd->ps - in : len;
		unsigned slot = pfn % CACHE_PAGES;
		uint8_t *page = dd->cache + (size_t)slot * dd->ps;
		if (dd->cache_pfn[slot] != pfn) {
			dd->cache_pfn[slot] = UINT64_MAX;
			int r = load_page(dd, pfn, page);
			if (r < 0)
				return r;
			dd->cache_pfn[slot] = pfn;
		}
		memcpy(o, page + in, n);
		o += n;
		paddr += n;
		len -= n;
	}
	return 0;
}

int diskdump_holds(const struct diskdump *dd, uint64_t paddr, size_t len)
{
	if (!len || paddr + len < paddr)
		return len == 0;
	for (uint64_t p = paddr >> dd->shift; p <= (paddr + len - 1) >> dd->shift; p++)
		if (!in_dump(dd, p))
			return 0;
	return 1;
}

void diskdump_close(struct diskdump *dd)
{
	if (!dd)
		return;
	free(dd->bm);
	free(dd->rank);
	free(dd->zbuf);
	free(dd->cache);
	free(dd);
}

/* ---- opening ---- */

/* A malloc'ed copy of the file's [off, off+len), NUL-terminated; NULL
 * with *r -EINVAL (not inside the file), -ENOMEM or the read's -errno. */
static uint8_t *read_part(int fd, uint64_t file_size, uint64_t off, uint64_t len, int *r)
{
	if (off > file_size || len > file_size - off) {
		*r = -EINVAL;
		return NULL;
	}
	uint8_t *p = malloc(len + 1);
	if (!p) {
		*r = -ENOMEM;
		return NULL;
	}
	ssize_t n = read_full_at(fd, p, len, off);
	if (n != (ssize_t)len) {
		*r = n < 0 ? (int)n : -EINVAL;
		free(p);
		return NULL;
	}
	p[len] = 0;
	return p;
}

/* The machine the header names (uname's, or kdumpinit's arch name), else
 * what VMCOREINFO shows: each arch exports its own top page table. */
static uint16_t machine_of(const struct disk_dump_header *h, const char *vi)
{
	char m[66], v[32];

	memcpy(m, h->utsname[4], 65);
	m[65] = 0;
	if (!strcmp(m, "x86_64"))
		return EM_X86_64;
	if (!strcmp(m, "aarch64") || !strcmp(m, "arm64"))
		return EM_AARCH64;
	if (vmcoreinfo_get(vi, "SYMBOL(init_top_pgt)", v, sizeof v) == 0)
		return EM_X86_64;
	if (vmcoreinfo_get(vi, "NUMBER(kimage_voffset)", v, sizeof v) == 0)
		return EM_AARCH64;
	return EM_NONE;
}

/* VMCOREINFO from the sub header, else the note of that name. */
static int load_vmcoreinfo(struct vmcore *vc, const struct kdump_sub_header *sh, int version)
{
	int r = 0;

	if (version >= 3 && sh->size_vmcoreinfo && sh->size_vmcoreinfo <= VMCOREINFO_MAX) {
		vc->vmcoreinfo = (char *)read_part(vc->fd, vc->file_size, sh->offset_vmcoreinfo,
						   sh->size_vmcoreinfo, &r);
		if (!vc->vmcoreinfo)
			return r;
	}
	struct note n;
	for (size_t off = 0; !vc->vmcoreinfo && note_next(vc->notes, vc->notes_len, &off, &n);) {
		if (n.namesz != 11 || memcmp(n.name, "VMCOREINFO", 11))
			continue;
		vc->vmcoreinfo = malloc(n.descsz + 1);
		if (!vc->vmcoreinfo)
			return -ENOMEM;
		memcpy(vc->vmcoreinfo, n.desc, n.descsz);
		vc->vmcoreinfo[n.descsz] = 0;
	}
	if (vc->vmcoreinfo)
		vc->vmcoreinfo_len = strlen(vc->vmcoreinfo);	/* NUL-padded, like the note */
	return 0;
}

/* The bitmap of pfns in the dump, its ranks, and the caches. */
static int load_bitmap(struct diskdump *dd, uint64_t off)
{
	uint64_t bytes = (dd->mapnr + 7) / 8, nrank = dd->mapnr / RANK_BITS + 1;

	dd->bm = calloc(1, bytes ? bytes : 1);
	dd->rank = calloc(nrank, sizeof *dd->rank);
	dd->zbuf = malloc(dd->ps);
	dd->cache = malloc((size_t)CACHE_PAGES * dd->ps);
	if (!dd->bm || !dd->rank || !dd->zbuf || !dd->cache)
		return -ENOMEM;
	ssize_t n = read_full_at(dd->fd, dd->bm, bytes, off);
	if (n != (ssize_t)bytes)
		return n < 0 ? (int)n : -EINVAL;
	if (dd->mapnr & 7)
		dd->bm[bytes - 1] &= (uint8_t)((1u << (dd->mapnr & 7)) - 1);
	uint64_t sum = 0;
	for (uint64_t b = 0; b < nrank; b++) {
		dd->rank[b] = sum;
		for (uint64_t k = b * (RANK_BITS / 8); k < (b + 1) * (RANK_BITS / 8) && k < bytes; k++)
			sum += (unsigned)__builtin_popcount(dd->bm[k]);
	}
	for (unsigned i = 0; i < CACHE_PAGES; i++)
		dd->cache_pfn[i] = UINT64_MAX;
	return 0;
}

/* Everything the header says, checked against the file: 0, -EINVAL (with
 * *why), -ENOMEM or -errno. */
static int parse(struct vmcore *vc, struct diskdump *dd, enum vmcore_err *why)
{
	struct disk_dump_header h;
	struct kdump_sub_header sh;
	int r;

	*why = VMC_BAD_KDUMP;
	if (read_full_at(vc->fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
	    memcmp(h.signature, DISKDUMP_SIGNATURE, sizeof h.signature))
		return -EINVAL;
	if (h.status & (DUMP_DH_COMPRESSED_LZO | DUMP_DH_COMPRESSED_SNAPPY | DUMP_DH_COMPRESSED_ZSTD)) {
		*why = VMC_KDUMP_CODEC;
		return -EINVAL;
	}
	uint32_t ps = (uint32_t)h.block_size;
	if (h.block_size < 4096 || h.block_size > 65536 || (ps & (ps - 1)) || h.sub_hdr_size < 1 ||
	    h.header_version < 1)
		return -EINVAL;
	dd->ps = ps;
	dd->shift = (unsigned)__builtin_ctz(ps);
	uint64_t bm_off = (1 + (uint64_t)h.sub_hdr_size) * ps;
	uint64_t half = (uint64_t)(h.bitmap_blocks / 2) * ps;
	dd->desc_off = bm_off + (uint64_t)h.bitmap_blocks * ps;
	if (dd->desc_off > vc->file_size || half > BITMAP_MAX)
		return -EINVAL;
	memset(&sh, 0, sizeof sh);
	if (read_full_at(vc->fd, &sh, sizeof sh, ps) != (ssize_t)sizeof sh)
		return -EINVAL;
	/* Fields of a later version than the file's are not there. */
	dd->mapnr = h.header_version >= 6 ? sh.max_mapnr_64 : h.max_mapnr;
	if (dd->mapnr > half * 8)
		dd->mapnr = half * 8;
	if (h.header_version >= 4 && sh.size_note) {
		if (sh.size_note > KDI_NOTES_MAX)
			return -EINVAL;
		vc->notes = read_part(vc->fd, vc->file_size, sh.offset_note, sh.size_note, &r);
		if (!vc->notes)
			return r;
		vc->notes_len = sh.size_note;
	}
	r = load_vmcoreinfo(vc, &sh, h.header_version);
	if (r < 0)
		return r;
	if (!vc->vmcoreinfo) {
		*why = VMC_NO_VMCOREINFO;
		return -EINVAL;
	}
	vc->e_machine = machine_of(&h, vc->vmcoreinfo);
	vc->page_size = ps;
	r = load_bitmap(dd, bm_off + half);
	if (r == 0)
		*why = VMC_OK;
	return r;
}

int diskdump_open(struct vmcore *vc, const char *path, enum vmcore_err *why)
{
	memset(vc, 0, sizeof *vc);
	*why = VMC_OK;
	vc->fd = open_file_or_blockdev(path, O_RDONLY | O_CLOEXEC, 0, NULL);
	if (vc->fd < 0) {
		int r = vc->fd;
		if (r == -ENOTBLK || r == -EISDIR) {
			*why = VMC_NOT_FILE;
			r = -EINVAL;
		}
		vc->fd = -1;
		return r;
	}
	int64_t sz = fd_size(vc->fd, NULL);
	struct diskdump *dd = calloc(1, sizeof *dd);
	int r = sz < 0 ? (int)sz : dd ? 0 : -ENOMEM;
	if (!r) {
		vc->file_size = (uint64_t)sz;
		vc->dd = dd;
		dd->fd = vc->fd;
		dd->file_size = vc->file_size;
		r = parse(vc, dd, why);
	} else {
		free(dd);
	}
	if (r < 0) {
		if (r != -EINVAL)
			*why = VMC_OK;
		vmcore_close(vc);
	}
	return r;
}
