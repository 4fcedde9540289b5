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
	/* How the walk tells the image and module memory apart where their
	 * addresses move with KASLR (arm64; x86_64's map is fixed): a leaf
	 * whose va - pa is image_offset maps the kernel image, one in
	 * [modules_start, modules_end) module memory. Both 0 when unused. */
	uint64_t image_offset;
	uint64_t modules_start, modules_end;
	uint64_t walks, cache_hits;	/* statistics */
	uint64_t cache_va, cache_pa, cache_len;	/* last leaf translated */
};

/* What a leaf of the kernel's page tables maps, by its virtual address. */
enum arch_va_kind {
	ARCH_VA_OTHER,		/* direct map, vmalloc, vmemmap, ... */
	ARCH_VA_IMAGE,		/* the kernel image's own mapping */
	ARCH_VA_MODULES,	/* module memory */
	ARCH_VA_CPU_AREA,	/* per-CPU entry areas (pages of each CPU's per-CPU data) */
	ARCH_VA_PCPU_CHUNKS,	/* the top of vmalloc: the per-CPU allocator's later chunks */
};
#define ARCH_PROT_W 1u		/* writable */
#define ARCH_PROT_X 2u		/* executable */

/* The walker's callbacks: every table page it reads, the top one
 * included, and every present leaf. A non-zero return stops the walk. */
struct arch_walk {
	int (*table)(void *arg, uint64_t pa);
	int (*leaf)(void *arg, uint64_t va, uint64_t pa, uint64_t size, unsigned prot,
		    enum arch_va_kind kind);
	void *arg;
	uint64_t max_tables;	/* bound on the table pages read (a corrupt tree) */
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
	/* Walks the kernel half of the page tables (see struct arch_walk).
	 * 0; -E2BIG past max_tables; the callbacks' non-zero return. NULL
	 * for an architecture without one: the debugger's first pass then
	 * holds only what needs no walk. */
	int (*walk)(struct arch_ctx *ctx, const struct arch_walk *w);
	/* The stack pointer in an NT_PRSTATUS note's payload: 0, or -ENOENT
	 * for a note too short. And the size of a kernel stack. */
	int (*prstatus_sp)(const uint8_t *desc, size_t len, uint64_t *sp);
	uint64_t thread_size;
};

extern const struct arch_ops arch_x86_64;
extern const struct arch_ops arch_arm64;

/* NULL for a machine we have no table for; capture then falls back to
 * what needs no arch knowledge (zero-page exclusion). */
const struct arch_ops *arch_lookup(uint16_t e_machine);

#endif
