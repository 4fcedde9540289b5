/* The capture both doors run, PID 1 and `kdumpinit capture`. */
#ifndef KDI_RUN_CAPTURE_H
#define KDI_RUN_CAPTURE_H

#include "../capture/pipeline.h"

/* Opens the vmcore, checks the target (only a claimed one is written; with
 * may_create a new file is), runs the pipeline, prints one summary.
 * Returns an exit code. */
int run_capture(const char *vmcore, const char *output, int may_create,
		struct capture_opts *o);

#endif
