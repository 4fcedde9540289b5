/* The capture both doors run, PID 1 and `kdumpinit capture`. */
#ifndef KDI_RUN_CAPTURE_H
#define KDI_RUN_CAPTURE_H

#include "../capture/pipeline.h"

/* Opens the vmcore, checks the target (only a claimed one is written; with
 * may_create a new file is), plans and runs the pipeline, prints one
 * summary. hk may be NULL. Returns an exit code. */
int run_capture(const char *vmcore, const char *output, int may_create,
		const struct capture_req *rq, const struct capture_hooks *hk);

#endif
