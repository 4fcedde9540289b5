/* The device wait's clock, apart from the looking: when to look again,
 * when to say on the console that PID 1 is still waiting, and when to give
 * up. No I/O and no clock of its own: the caller passes the time
 * (now_mono()), so a test can drive it through a 300 s wait at once. */
#ifndef KDI_DEVWAIT_H
#define KDI_DEVWAIT_H

#define DEVWAIT_SAY_S 10	/* a "still waiting" line this often */
#define DEVWAIT_POLL_MS 250	/* between looks: a device is taken this soon */

struct devwait {
	double start;		/* when the wait began */
	double deadline;	/* start + the configured wait */
	double next_say;	/* when the next "still waiting" line is due */
};

enum devwait_step {
	DEVWAIT_LOOK,		/* sleep devwait_sleep_ms(), then look again */
	DEVWAIT_SAY,		/* the same, after a line on the console */
	DEVWAIT_GIVE_UP,	/* the wait is over: the final action */
};

void devwait_start(struct devwait *w, double now, unsigned wait_s);
/* After a look that found nothing, at now. A look that overran (a stuck
 * probe) is said once, never a line per 10 s it missed. @return the step. */
enum devwait_step devwait_next(struct devwait *w, double now);
/* How long to sleep before the next look: DEVWAIT_POLL_MS, less when the
 * deadline is nearer, so the last look falls on it. */
unsigned devwait_sleep_ms(const struct devwait *w, double now);

#endif
