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
	/* Work done through km: a unit per read, per page it spans and per
	 * translation, the arch's table reads included. A step that reads
	 * the crashed kernel before its pages are written sets a limit
	 * (kmem_budget): corrupt memory can make any walk of it long, and a
	 * step must end whatever the dump holds. Past the limit every read
	 * fails with -ETIME, and kmem_over says so. */
	uint64_t work, work_limit;
	/* kmem_tlb's translations: tlb[i] for the 4 KiB virtual page tag
	 * - 1 (0: empty), ppage its physical page, bytes from it that stay
	 * contiguous. The vmcore's page tables never change, so a
	 * translation once made holds for the whole run. */
	struct kmem_tlb { uint64_t tag, ppage, bytes; } *tlb;
};

/* 0 (km->ok says whether translation works), or -ENOMEM. */
int kmem_init(struct kmem *km, const struct vmcore *vc, const struct arch_ops *arch);
void kmem_fini(struct kmem *km);
/* 0, -EFAULT (unmapped, outside the dump), -EIO, -ETIME (past the
 * budget). */
int kmem_read(struct kmem *km, uint64_t va, void *buf, size_t len);
/* Kernel virtual -> physical, counted as work: ops->vtop's contract, or
 * -ETIME past the budget. */
int kmem_vtop(struct kmem *km, uint64_t va, uint64_t *pa, uint64_t *span);
/* Counts work done outside kmem's reads (a leaf of a table walk): 0, or
 * -ETIME past the budget. */
int kmem_spend(struct kmem *km, uint64_t units);
/* Sets the work a step may do from now on (0: no limit). */
void kmem_budget(struct kmem *km, uint64_t units);
/* Keeps the last translations of kmem_read and kmem_vtop (a reader that
 * reads word by word around the same objects: a page-table walk per word
 * was a third of the debugger-page finder). 0 or -ENOMEM (then none, as
 * before). Not for a kmem more than one thread reads; kmem_fini frees. */
int kmem_tlb(struct kmem *km);
/* 1 when the step went past its budget. */
int kmem_over(const struct kmem *km);
/* The same through any translation and reader (a filter cursor's own
 * copies, whose caches are its own): -EFAULT for an address not mapped. */
int kmem_vread(struct arch_ctx *ac, struct physmem *pm, uint64_t va, void *buf, size_t len);

#endif
