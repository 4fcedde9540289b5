/* dmtool: config/stack.c and config/dmctl.c against a real kernel, for
 * tests/e2e/dm.sh (a guest with dm_mod; the build host has none).
 *
 *   dmtool create WORD   rebuild kdumpinit.dm=WORD as PID 1 does; prints
 *                        the block device's name (dm-N)
 *   dmtool table NAME    the live table of mapping NAME, a target a line:
 *                        START LEN TYPE PARAMS
 *   dmtool remove NAME
 * Exit 0, or 1 with the reason on stderr. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../config/dmctl.h"
#include "../../config/stack.h"

int main(int argc, char **argv)
{
	static struct dmctl_target k[DMCTL_MAX_TARGETS];
	static struct dm_table t;
	const struct sysroot r = { "/sys", "/dev" };
	char why[400], dev[64];
	int e;

	if (argc == 3 && !strcmp(argv[1], "create")) {
		if (dmtable_parse(argv[2], &t, why, sizeof why) < 0) {
			fprintf(stderr, "dmtool: not a table: %s\n", why);
			return 1;
		}
		e = stack_assemble(&r, DMCTL_CONTROL, &t, STACK_DM_NAME, dev, sizeof dev, why, sizeof why);
		if (e < 0) {
			fprintf(stderr, "dmtool: %s: %s\n", why, strerror(-e));
			return 1;
		}
		puts(dev);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "table")) {
		int n = dmctl_table(DMCTL_CONTROL, argv[2], k, DMCTL_MAX_TARGETS);
		if (n < 0) {
			fprintf(stderr, "dmtool: table of %s: %s\n", argv[2], strerror(-n));
			return 1;
		}
		for (int i = 0; i < n; i++)
			printf("%llu %llu %s %s\n", (unsigned long long)k[i].start,
			       (unsigned long long)k[i].len, k[i].type, k[i].params);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "remove")) {
		if ((e = dmctl_remove(DMCTL_CONTROL, argv[2])) < 0) {
			fprintf(stderr, "dmtool: remove %s: %s\n", argv[2], strerror(-e));
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "usage: dmtool create WORD | table NAME | remove NAME\n");
	return 2;
}
