/* The front doors: PID-1 mode and the host commands. Everything they share
 * lives here; the work itself is in config/, dump/ and arch/. */
#ifndef KDI_INIT_H
#define KDI_INIT_H

#include "../config/config.h"
#include "../dump/pipeline.h"

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

int cmd_capture(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_arm(int argc, char **argv);
int cmd_dmesg(int argc, char **argv);

/* Never returns. */
void pid1_main(void) __attribute__((noreturn));

#endif
