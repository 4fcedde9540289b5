/* Reading the crashed kernel's physical memory by address, through the
 * vmcore's PT_LOADs. Used for page tables and struct pages, never for the
 * bulk page copy (that goes through the pipeline's windows). */
#ifndef KDI_PHYSMEM_H
#define KDI_PHYSMEM_H

#include <stddef.h>
#include <stdint.h>

#include "vmcore.h"

struct physmem {
	const struct vmcore *vc;
	uint32_t *order;	/* segments with data, by paddr */
	uint32_t n;
	uint64_t reads;		/* statistics: pread calls */
};

int physmem_init(struct physmem *pm, const struct vmcore *vc);
void physmem_fini(struct physmem *pm);
/* Reads [paddr, paddr+len) if one segment holds all of it: 0, -EFAULT when
 * the range is not in the dump (or crosses a hole), -EIO on read errors. */
int physmem_read(struct physmem *pm, uint64_t paddr, void *buf, size_t len);
/* 1 when physmem_read of the range would find it in the dump. */
int physmem_holds(const struct physmem *pm, uint64_t paddr, size_t len);

#endif
