/* save's progress lines (host/progress.c), as the capture prints its own:
 * one per 5 % step, at most one a second and at least one every 10 s,
 * plain lines on stderr (a journal and a serial console stay readable). */
#ifndef KDI_PROGRESS_H
#define KDI_PROGRESS_H

#include <stdint.h>

struct save_progress {
	unsigned page_size;
	double t0, last_t;
	int last_pct;
};

void save_progress_start(struct save_progress *p, unsigned page_size);
/* struct save_opts' progress callback: arg is the struct save_progress. */
void save_progress_tick(void *arg, uint64_t pages, uint64_t total, uint64_t bytes);

#endif
