/* When a progress line is due: the capture's and save's one rule, so that
 * the two cannot drift. A line per 5 % step, never more than one a
 * second, and one at least every 10 s so that a slow run visibly lives.
 * Plain lines, no carriage returns: serial consoles and journals stay
 * readable (the callers print them). */
#ifndef KDI_PROGRESS_RULE_H
#define KDI_PROGRESS_RULE_H

struct progress_rule {
	double t0, last_t;
	int last_pct;
};

void progress_rule_start(struct progress_rule *r);
/* 1 when a line is due now for pct (always when final), which is then
 * recorded as printed; *elapsed is the seconds since the start. */
int progress_due(struct progress_rule *r, int pct, int final, double *elapsed);

#endif
