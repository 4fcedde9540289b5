/* Reading the crashed kernel's virtual memory: VMCOREINFO for where things
 * are, the arch's page-table walk for translation, the vmcore's PT_LOADs
 * for the bytes. Shared by page filtering and the log reader. */
#ifndef KDI_KMEM_H
#define KDI_KMEM_H

#include <stddef.h>
#include <stdint.h>

#include "../arch/arch.h"
#include "physmem.h"
#include "vmcoreinfo.h"

struct kmem {
	struct vmcoreinfo vi;
	const char *vi_text;	/* the note, for keys the table lacks */
	struct physmem pm;
	struct arch_env env;	/* what the arch reads: vi and pm */
	struct arch_ctx ac;
	int ok;			/* translation available */
	const char *missing;	/* the VMCOREINFO key that stopped it */
	/* Keys the arch asked for that the note lacks (kmem_init's walk
	 * setup): each is said, and one whose policy is KEEP stops
	 * translation (vmcoreinfo.h). */
	uint8_t asked_missing[VI_NKEYS];
};

/* 0 (km->ok says whether translation works), or -ENOMEM. */
int kmem_init(struct kmem *km, const struct vmcore *vc, const struct arch_ops *arch);
void kmem_fini(struct kmem *km);
/* 0, -EFAULT (unmapped, outside the dump), -EIO. */
int kmem_read(struct kmem *km, uint64_t va, void *buf, size_t len);
/* The same through any translation and reader (a filter cursor's own
 * copies, whose caches are its own): -EFAULT for an address not mapped. */
int kmem_vread(struct arch_ctx *ac, struct physmem *pm, uint64_t va, void *buf, size_t len);

#endif
