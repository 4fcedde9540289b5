/* The front doors: PID-1 mode and the host commands. Everything they share
 * lives here; the work itself is in config/, dump/ and arch/. */
#ifndef KDI_INIT_H
#define KDI_INIT_H

#include <stdio.h>

#include "../config/config.h"
#include "../capture/pipeline.h"

/* Exit codes, documented in docs/CLI.md. */
enum {
	EXIT_OK = 0,
	EXIT_SYSTEM = 1,
	EXIT_USAGE = 2,
	EXIT_INPUT = 3,
	EXIT_TARGET = 4,
	EXIT_INCOMPLETE = 5,
};

/* The capture both doors run: opens the vmcore, checks the target (only a
 * claimed one is written; with may_create a new file is), runs the
 * pipeline, prints one summary. Returns an exit code. */
int run_capture(const char *vmcore, const char *output, int may_create,
		struct capture_opts *o);
unsigned online_cpus(void);

struct target;
struct dumpfile;
/* Opens SOURCE read-only and loads its dump; prints what failed. Returns
 * dumpfile_load's result (-ENOENT: empty) with *code set for failures. */
int open_dump(const char *src, struct target *t, struct dumpfile *d, int *code);
/* The `info` text; returns info's exit code. */
int dump_report(FILE *f, const char *src, const struct target *t, const struct dumpfile *d, int r);
int dump_saved(const struct target *t, const struct dumpfile *d);

#include "../dump/save.h"

struct savecore_opts {
	const char *dir;
	uint64_t min_free;
	unsigned max;			/* keep this many dumps, 0 = all */
	int keep_device, check, force, elf;
	struct save_opts so;
};
/* save --dir / --check. Returns the exit code. */
int savecore(const char *src, const struct savecore_opts *o);

int cmd_capture(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_arm(int argc, char **argv);
int cmd_dmesg(int argc, char **argv);

/* Never returns. */
void pid1_main(void) __attribute__((noreturn));

#endif
