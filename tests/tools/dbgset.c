/* dbgset: the debugger's pages kdumpinit finds in a vmcore, as the capture
 * finds them (kernel/dbgpages.c, with the memory map for mem_section),
 * one pfn a line with its tier, for tests/debugger/coverage.sh to hold
 * against the pfns crash and drgn read.
 *
 *   dbgset VMCORE      prints "TIER PFN" lines (0 the startup set, 1 the
 *                      rest), then on stderr the sizes
 *   dbgset --syms VMCORE NAME...
 *                      prints "NAME ADDRESS" (hex, 0 when not found) as
 *                      the finder's kallsyms lookup gives them
 *                      (kernel/kallsyms.c), for tests/debugger/cuts.sh to
 *                      hold against the vmlinux
 *
 * No budget on the set (the capture's is 1/64 of the memory, at least
 * 128 MiB: never reached by a real kernel here) nor on the search. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../arch/arch.h"
#include "../../kernel/dbgpages.h"
#include "../../kernel/kallsyms.h"
#include "../../kernel/kmem.h"
#include "../../kernel/memmap.h"
#include "../../kernel/vmcore.h"

static int syms(const char *path, char **names, unsigned n)
{
	struct vmcore vc;
	enum vmcore_err why;
	static struct kmem km;
	uint64_t *addr = calloc(n + 1, sizeof *addr);

	if (vmcore_open(&vc, path, &why) < 0) {
		fprintf(stderr, "dbgset: cannot open %s as a vmcore\n", path);
		return 1;
	}
	const struct arch_ops *arch = arch_lookup(vc.e_machine);
	if (!addr || !arch || kmem_init(&km, &vc, arch) < 0 || !km.ok) {
		fprintf(stderr, "dbgset: no translation in %s\n", path);
		return 1;
	}
	int r = ksyms_lookup(&km, (const char *const *)names, addr, n);
	if (r < 0) {
		fprintf(stderr, "dbgset: kallsyms: %s\n", strerror(-r));
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		printf("%s %llx\n", names[i], (unsigned long long)addr[i]);
	kmem_fini(&km);
	free(addr);
	return 0;
}

int main(int argc, char **argv)
{
	struct vmcore vc;
	enum vmcore_err why;
	struct dbg_pages dp;
	char mwhy[400];
	uint32_t applied;

	if (argc >= 3 && !strcmp(argv[1], "--syms"))
		return syms(argv[2], argv + 3, (unsigned)(argc - 3));
	if (argc != 2) {
		fprintf(stderr, "usage: dbgset VMCORE | dbgset --syms VMCORE NAME...\n");
		return 2;
	}
	if (vmcore_open(&vc, argv[1], &why) < 0) {
		fprintf(stderr, "dbgset: cannot open %s as a vmcore\n", argv[1]);
		return 1;
	}
	const struct arch_ops *arch = arch_lookup(vc.e_machine);
	struct memmap *mm = calloc(1, sizeof *mm);
	if (!mm || memmap_init(mm, &vc, arch, 31, &applied, mwhy, sizeof mwhy) < 0)
		fprintf(stderr, "dbgset: no memory map (%s): mem_section left out\n", mwhy);
	int r = dbg_pages_find(&dp, &vc, arch, mm && mm->active ? mm : NULL, UINT64_MAX, 0);
	if (r < 0) {
		fprintf(stderr, "dbgset: the finder failed: %s\n", strerror(-r));
		return 1;
	}
	for (int t = 0; t < DBG_TIERS; t++)
		for (uint32_t k = 0; k < dp.tier[t].n; k++)
			for (uint64_t p = dp.tier[t].r[k].lo; p < dp.tier[t].r[k].hi; p++)
				printf("%d %llu\n", t, (unsigned long long)p);
	fprintf(stderr, "dbgset: %llu pfns: startup %llu in %u runs, then %llu in %u runs\n",
		(unsigned long long)dp.pfns, (unsigned long long)dp.tier[0].pfns, dp.tier[0].n,
		(unsigned long long)dp.tier[1].pfns, dp.tier[1].n);
	for (int p = 0; p < DBG_NPARTS; p++)
		if (dp.parts & (1u << p))
			fprintf(stderr, "  tier %d %-12s %llu\n", dbg_part_tier[p], dbg_part_name[p],
				(unsigned long long)dp.part_pfns[p]);
	dbg_pages_free(&dp);
	return 0;
}
