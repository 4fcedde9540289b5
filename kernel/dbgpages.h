/* The pages a debugger reads to open the crashed kernel, found at capture
 * time from what kdumpinit already has (VMCOREINFO, the notes, the
 * PT_LOADs and the old kernel's page tables; no vmlinux). The capture
 * writes them first, so that a dump cut short anywhere after them still
 * opens in crash and drgn (tests/debugger/README.md measures the set). */
#ifndef KDI_DBGPAGES_H
#define KDI_DBGPAGES_H

#include <stdint.h>

#include "kmem.h"
#include "vmcore.h"

/* The parts. Bit p of `parts` is part p; the dump's DEBUGGER record uses
 * the same bits (dump/format.h). Each belongs to a tier (dbg_part_tier);
 * parts are added tier by tier, in the order of need within each. */
enum dbg_part {
	DBG_PGTABLES,		/* the kernel half's page-table pages */
	DBG_MEMSECTION,		/* mem_section's root and arrays, node_data */
	DBG_LOG,		/* the printk ring */
	DBG_STACKS,		/* each CPU's stack, from its PRSTATUS note */
	DBG_PERCPU,		/* the per-CPU areas, and later chunks (x86_64) */
	DBG_MODULES,		/* module code (from 6.4: before, DBG_MODDATA) */
	DBG_IMAGE,		/* the rest of the kernel image: text, rodata */
	DBG_UTS,		/* init_uts_ns */
	DBG_TASKS,		/* the tasks, from init_task's lists (kallsyms) */
	DBG_DATA,		/* the image's data, bss, brk and ro_after_init */
	DBG_MODDATA,		/* module memory that is not code (before 6.4: all) */
	DBG_TSTACKS,		/* every task's stack */
	DBG_NPARTS
};
extern const char *const dbg_part_name[DBG_NPARTS];

/* Tier 0, the startup set: what crash and drgn read to open the dump and
 * show the panic (the log, the crashing task's backtrace, the task
 * list). Tier 1: the rest of what they read for their other commands
 * (text, every task's stack, module code). The capture writes tier 0,
 * then tier 1, then everything else: a dump cut past tier 0 opens. */
#define DBG_TIERS 2
extern const uint8_t dbg_part_tier[DBG_NPARTS];

struct dbg_tier {
	struct pfn_run *r;	/* sorted, disjoint, not touching */
	uint32_t n;
	uint64_t pfns;
};

struct dbg_pages {
	struct pfn_run *r;	/* both tiers: sorted, disjoint, not touching */
	uint32_t n;
	uint64_t pfns;		/* sum of the runs */
	/* Each tier's runs, disjoint (a pfn of both is tier 0's): together
	 * they are r. */
	struct dbg_tier tier[DBG_TIERS];
	uint32_t parts;		/* KDI_DBG_* found (dump/format.h) */
	uint32_t dropped;	/* KDI_DBG_* left out for the budget */
	uint64_t part_pfns[DBG_NPARTS];	/* pfns each part added (a pfn once) */
	uint64_t work;		/* units of work the search took (kmem.h) */
};

/* Finds the set for the memory vc describes (mm, when active, for where
 * mem_section is);
 * budget caps its pfns (parts are added in order of need, and a part that
 * would pass the budget is left out whole, and said in dropped); work caps
 * the search itself, in kmem's units (0: no cap), so that no memory, however
 * corrupt, makes it long. An empty set (n 0) when translation is not
 * available. 0; -ETIME past work (dp->work says how far it went), -E2BIG
 * for more runs than a real kernel has, -ENOMEM: no set then. */
struct memmap;
int dbg_pages_find(struct dbg_pages *dp, const struct vmcore *vc, const struct arch_ops *arch,
		   const struct memmap *mm, uint64_t budget, uint64_t work);
void dbg_pages_free(struct dbg_pages *dp);
/* Index of the run holding pfn, or the first run after it (n: none). */
uint32_t dbg_pages_seek(const struct dbg_pages *dp, uint64_t pfn);
/* The same in one tier's runs. */
uint32_t dbg_tier_seek(const struct dbg_tier *t, uint64_t pfn);

#endif
