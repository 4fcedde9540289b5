/* Reading the crashed kernel's physical memory by address, through the
 * vmcore's PT_LOADs. Used for page tables and struct pages, never for the
 * bulk page copy (that goes through the pipeline's windows). Page tables
 * are read with pread; struct pages may also be looked at in place,
 * through a view (a small mmap window of the vmcore file, one per
 * reader), which saves copying them. */
#ifndef KDI_PHYSMEM_H
#define KDI_PHYSMEM_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "vmcore.h"

struct physmem {
	const struct vmcore *vc;
	uint32_t *order;	/* segments with data, by paddr */
	uint32_t n;
	uint64_t reads;		/* statistics: pread calls */
	/* With vc->zero_fill: every segment by paddr, and how far the
	 * segments up to each one reach (the largest end so far). */
	uint32_t *all;
	uint64_t *reach;
	/* physmem_cache's lines: PM_LINE bytes each, tag[i] the line's
	 * address / PM_LINE + 1 (0: empty), in sets of PM_WAYS, the least
	 * recently used of a set replaced (used[i]: when line i was last
	 * read, by clock). */
	uint64_t *tag;
	uint32_t *used;
	uint32_t clock;
	uint8_t *line;
	uint32_t nline;
	uint64_t hits;		/* statistics */
};

int physmem_init(struct physmem *pm, const struct vmcore *vc);
/* A cache of nline lines for physmem_read of a reader that reads the same
 * pages again and again in small pieces (a walk of lists and tables: one
 * pread each otherwise). Not for a physmem more than one thread reads:
 * the lines are not locked. 0, or -ENOMEM (then no cache). */
#define PM_LINE 4096u
#define PM_WAYS 4u
int physmem_cache(struct physmem *pm, uint32_t nline);
void physmem_fini(struct physmem *pm);
/* Reads [paddr, paddr+len) if one segment holds all of it: 0, -EFAULT when
 * the range is not in the dump (or crosses a hole), -EIO on read errors.
 * A saved dump (vmcore_open_saved) is read as a debugger reads it: its
 * zero fill as zeros, a range across segments piece by piece, a
 * kdump-compressed file page by page (kernel/diskdump.h). */
int physmem_read(struct physmem *pm, uint64_t paddr, void *buf, size_t len);
/* 1 when the dump holds the range's bytes: one segment's file data (not
 * its zero fill), or a kdump-compressed file's pages. */
int physmem_holds(const struct physmem *pm, uint64_t paddr, size_t len);

/* One reader's mapping of the vmcore file. Its memory is bounded: one
 * mapping of at most size + a page, replaced (never added to) as the
 * reader moves on; on /proc/vmcore a PFN map, which costs page tables
 * only (about 2 KB per MiB), in a file the page cache's pages. */
struct pm_view {
	uint8_t *base;		/* the mapping, or NULL */
	uint64_t off, len;	/* file range it holds */
	uint64_t size;		/* how much to map at a time */
	uint64_t mask;		/* the running kernel's page size - 1 */
	int off_errno;		/* views given up (mmap failed, or a fault): why */
	uint64_t maps, faults;	/* statistics: mmap calls, faults taken */
};

/* size 0, or disabled: no mapping, every call of physmem_view says NULL. */
void physmem_view_init(struct pm_view *v, uint64_t size, int disabled);
void physmem_view_fini(struct pm_view *v);
/* The dump's bytes [paddr, paddr+len), if one segment holds them all,
 * in place: a pointer into v's mapping (moved there if need be), or NULL
 * (not in the dump, too long, or views given up: physmem_read it).
 * Touching the bytes may raise SIGBUS (a bad page of /proc/vmcore, a file
 * cut short under us): only under physmem_guard. */
const uint8_t *physmem_view(const struct physmem *pm, struct pm_view *v, uint64_t paddr, size_t len);
/* After a fault: unmap, and say NULL from now on. */
void physmem_view_off(struct pm_view *v, int err);

/* The SIGBUS guard of views. physmem_guard_install makes SIGBUS reach
 * physmem's handler (again, should someone have replaced it since): it
 * passes every fault it does not guard to the handler it found, so it
 * can share the signal with others (capture/pipeline.c has its own).
 * Then, in the function that touches a view:
 *	sigjmp_buf jb;
 *	if (sigsetjmp(jb, 0)) { physmem_guard(NULL); ...fall back to pread... }
 *	physmem_guard(&jb);  ...touch...  physmem_guard(NULL);
 * The guard is per thread; it must be disarmed before that function
 * returns. 0, or -errno when the handler cannot be set. */
int physmem_guard_install(void);
void physmem_guard(sigjmp_buf *jb);

#endif
