/* makedumpfile's kdump-compressed format ("diskdump"): its layout, which
 * dump/save_kdump.c writes (header version 6), and a reader of such a
 * file as the crashed kernel's memory, for what reads it through kmem
 * (the log): the notes, VMCOREINFO and pages by pfn. Field layout as in
 * makedumpfile's diskdump_mod.h; little-endian, as both our machines. */
#ifndef KDI_DISKDUMP_H
#define KDI_DISKDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "vmcore.h"

#define DISKDUMP_SIGNATURE		"KDUMP   "	/* 8 bytes, no NUL */

/* disk_dump_header.status */
#define DUMP_DH_COMPRESSED_ZLIB		0x1
#define DUMP_DH_COMPRESSED_LZO		0x2
#define DUMP_DH_COMPRESSED_SNAPPY	0x4
#define DUMP_DH_COMPRESSED_INCOMPLETE	0x8
/* Some struct pages are not in the dump: those of pages left out
 * (makedumpfile -e; kdumpinit's memory-map exclusion). */
#define DUMP_DH_EXCLUDED_VMEMMAP	0x10
#define DUMP_DH_COMPRESSED_ZSTD		0x20
/* page_desc.flags: how a page is stored; 0 is raw */
#define DUMP_PAGE_ZLIB			0x1

struct disk_dump_header {
	char signature[8];		/* DISKDUMP_SIGNATURE */
	int32_t header_version;
	char utsname[6][65];		/* sysname nodename release version machine domain */
	char pad[6];
	uint64_t tv_sec, tv_usec;
	uint32_t status;
	int32_t block_size;		/* the page size */
	int32_t sub_hdr_size;		/* blocks */
	uint32_t bitmap_blocks;		/* both bitmaps */
	uint32_t max_mapnr;		/* 32-bit copy; the 64-bit one is in the sub header */
	uint32_t total_ram_blocks;
	uint32_t device_blocks;
	uint32_t written_blocks;
	uint32_t current_cpu;
	int32_t nr_cpus;
};
_Static_assert(sizeof(struct disk_dump_header) == 464, "disk_dump_header");

/* In the block after the header. Which fields a version has: 3 adds
 * VMCOREINFO, 4 the notes, 5 eraseinfo, 6 the 64-bit pfns. */
struct kdump_sub_header {
	uint64_t phys_base;
	int32_t dump_level;
	int32_t split;
	uint64_t start_pfn, end_pfn;
	uint64_t offset_vmcoreinfo, size_vmcoreinfo;
	uint64_t offset_note, size_note;
	uint64_t offset_eraseinfo, size_eraseinfo;
	uint64_t start_pfn_64, end_pfn_64, max_mapnr_64;
};
_Static_assert(sizeof(struct kdump_sub_header) == 104, "kdump_sub_header");

/* After the header, the sub header's blocks and the two bitmaps (the
 * first: pfns the vmcore held; the second: pfns in the dump, zero pages
 * included), one descriptor per pfn set in the second bitmap, in pfn
 * order; a zero page's points at one shared page of zeros. */
struct page_desc {
	int64_t offset;			/* of the page's bytes in the file */
	uint32_t size;
	uint32_t flags;			/* DUMP_PAGE_* */
	uint64_t page_flags;
};
_Static_assert(sizeof(struct page_desc) == 24, "page_desc");

struct diskdump;

/* Opens path as a kdump-compressed vmcore into vc: e_machine (from the
 * header's machine name, else VMCOREINFO), page_size, notes and
 * VMCOREINFO; no segments (nr_seg 0): pages come through vc->dd
 * (physmem reads them). Everything in the file is checked against its
 * size before it is used; a header that does not read is -EINVAL with
 * *why VMC_BAD_KDUMP (no VMCOREINFO: VMC_NO_VMCOREINFO; pages in a
 * compression it does not read: VMC_KDUMP_CODEC), I/O -errno. */
int diskdump_open(struct vmcore *vc, const char *path, enum vmcore_err *why);
void diskdump_close(struct diskdump *dd);
/* Physical [paddr, paddr+len) from the dump, any number of pages: 0,
 * -EFAULT for a page it does not hold (left out, or past the dump's
 * end), -EIO for one that does not decode (a damaged or foreign
 * descriptor, a compression it does not read: LZO, snappy, zstd), or
 * -ENOMEM. One reader at a time: a small cache of pages is shared. */
int diskdump_read(struct diskdump *dd, uint64_t paddr, void *buf, size_t len);
/* 1 when every page of the range is in the dump. */
int diskdump_holds(const struct diskdump *dd, uint64_t paddr, size_t len);

#endif
