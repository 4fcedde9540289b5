/* Per-architecture operations, picked at run time from the vmcore's ELF
 * machine. Adding an architecture is one new file and one table entry in
 * arch.c. Page-table walking (vtop) joins this table with page filtering. */
#ifndef KDI_ARCH_H
#define KDI_ARCH_H

#include <stdint.h>

struct arch_ops {
	const char *name;
	uint16_t e_machine;
	uint32_t page_size;		/* used when VMCOREINFO has no PAGESIZE */
};

extern const struct arch_ops arch_x86_64;

/* NULL for a machine we have no table for; capture then falls back to
 * what needs no arch knowledge (zero-page exclusion). */
const struct arch_ops *arch_lookup(uint16_t e_machine);

#endif
