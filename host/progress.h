/* save's progress lines (host/progress.c), as the capture prints its own:
 * by the same rule (lib/progress.h), on stderr. */
#ifndef KDI_PROGRESS_H
#define KDI_PROGRESS_H

#include <stdint.h>

#include "../lib/progress.h"

struct save_progress {
	unsigned page_size;
	struct progress_rule rule;
};

void save_progress_start(struct save_progress *p, unsigned page_size);
/* struct save_opts' progress callback: arg is the struct save_progress. */
void save_progress_tick(void *arg, uint64_t pages, uint64_t total, uint64_t bytes);

#endif
