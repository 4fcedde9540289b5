#include "progress.h"

#include "../lib/log.h"

void save_progress_start(struct save_progress *p, unsigned page_size)
{
	p->page_size = page_size;
	progress_rule_start(&p->rule);
}

void save_progress_tick(void *arg, uint64_t pages, uint64_t total, uint64_t bytes)
{
	struct save_progress *p = arg;
	int pct = total ? (int)(pages * 100 / total) : 100;
	double el;

	if (pct > 100)
		pct = 100;
	if (!progress_due(&p->rule, pct, 0, &el))
		return;
	double mib = (double)pages * p->page_size / 1048576.0;
	double all = (double)total * p->page_size / 1048576.0;
	double rate = el > 0 ? mib / el : 0;
	msg("save: %3d%%  %.0f/%.0f MiB of pages, %.1f MiB/s, %.0f MiB written, ETA %.0fs", pct, mib,
	    all, rate, bytes / 1048576.0, rate > 0 && all > mib ? (all - mib) / rate : 0);
}
