/* The dump source service: what `info`, `save`, `dmesg` and savecore
 * read a dump through. */
#ifndef KDI_SOURCE_H
#define KDI_SOURCE_H

#include <stdio.h>

struct target;
struct dumpfile;

/* Opens SOURCE (a path or a selector such as LABEL=) read-only and loads
 * its dump. Prints what failed, once: callers do not print it again.
 * Returns dumpfile_load's result (-ENOENT: empty, said by no one) with
 * *code set to the exit code for a failure. */
int open_dump(const char *src, struct target *t, struct dumpfile *d, int *code);
/* The `info` text for what open_dump returned (r); info's exit code. */
int dump_report(FILE *f, const char *src, const struct target *t, const struct dumpfile *d, int r);
/* The device's claim records this very dump as saved. */
int dump_saved(const struct target *t, const struct dumpfile *d);

#endif
