/* Per-architecture operations, picked at run time from the vmcore's ELF
 * machine. Adding an architecture is one new file and one table entry in
 * arch.c; nothing else changes. */
#ifndef KDI_ARCH_H
#define KDI_ARCH_H

#include <stddef.h>
#include <stdint.h>

/* What an architecture reads of the crashed kernel. Its callers (the
 * kernel layer, the kdump writer) supply both functions, so arch/ includes
 * nothing above lib/, and a new architecture needs no change outside its
 * own file and the table in arch.c. */
struct arch_env {
	/* The VMCOREINFO value of KEY as the note spells it
	 * ("SYMBOL(init_top_pgt)", "NUMBER(phys_base)"): 0 with its raw bits
	 * in *v, or -ENOENT. */
	int (*number)(const struct arch_env *env, const char *key, uint64_t *v);
	/* The crashed kernel's physical memory: 0, -EFAULT outside the dump,
	 * -EIO. NULL where only VMCOREINFO is known (kimg_to_phys). */
	int (*read)(const struct arch_env *env, uint64_t pa, void *buf, size_t len);
	void *ctx;		/* the caller's own state */
};

/* Address-translation state, built by ops->init from VMCOREINFO. */
struct arch_ctx {
	const struct arch_ops *ops;
	const struct arch_env *env;
	uint64_t pgd;			/* physical address of the top table */
	int levels;
	uint64_t pte_pfn_mask;		/* address bits of an entry */
	int top_bits;			/* index bits of the top table (0: 9) */
	/* A range mapped at a fixed offset, translated without a walk
	 * (arm64's linear map): [direct_start, direct_end) -> direct_phys.
	 * Empty when init leaves it 0. */
	uint64_t direct_start, direct_end, direct_phys;
	uint64_t walks, cache_hits;	/* statistics */
	uint64_t cache_va, cache_pa, cache_len;	/* last leaf translated */
};

struct arch_ops {
	const char *name;
	uint16_t e_machine;
	uint32_t page_size;		/* vmcore_open's, when VMCOREINFO has no PAGESIZE */
	/* The lowest kernel virtual address. A pointer the crashed kernel
	 * keeps to its own data (a mem_section root, a mem_map) below it is
	 * corruption, not an address to follow. */
	uint64_t kva_min;
	/* -ENOENT (with *missing naming the key) when VMCOREINFO lacks what
	 * translation needs. */
	int (*init)(struct arch_ctx *ctx, const struct arch_env *env, const char **missing);
	/* Kernel virtual -> physical. *span: bytes from paddr that stay
	 * physically contiguous (to the end of the leaf). -EFAULT for an
	 * unmapped or corrupt entry. */
	int (*vtop)(struct arch_ctx *ctx, uint64_t vaddr, uint64_t *paddr, uint64_t *span);
	/* Physical address of a kernel-image symbol without page tables
	 * (for readers that only have the dump's pages). -ENOENT. */
	int (*kimg_to_phys)(const struct arch_env *env, uint64_t vaddr, uint64_t *paddr);
};

extern const struct arch_ops arch_x86_64;
extern const struct arch_ops arch_arm64;

/* NULL for a machine we have no table for; capture then falls back to
 * what needs no arch knowledge (zero-page exclusion). */
const struct arch_ops *arch_lookup(uint16_t e_machine);

#endif
