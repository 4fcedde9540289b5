#include "progress.h"

#include "util.h"

void progress_rule_start(struct progress_rule *r)
{
	r->t0 = r->last_t = now_mono();
	r->last_pct = -100;
}

int progress_due(struct progress_rule *r, int pct, int final, double *elapsed)
{
	double t = now_mono(), since = t - r->last_t;

	if (!final && (since < 1.0 || (pct / 5 == r->last_pct / 5 && since < 10.0)))
		return 0;
	r->last_t = t;
	r->last_pct = pct;
	*elapsed = t - r->t0;
	return 1;
}
