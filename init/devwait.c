#include "devwait.h"

void devwait_start(struct devwait *w, double now, unsigned wait_s)
{
	w->start = now;
	w->deadline = now + wait_s;
	w->next_say = now + DEVWAIT_SAY_S;
}

enum devwait_step devwait_next(struct devwait *w, double now)
{
	if (now >= w->deadline)
		return DEVWAIT_GIVE_UP;
	if (now < w->next_say)
		return DEVWAIT_LOOK;
	while (w->next_say <= now)
		w->next_say += DEVWAIT_SAY_S;
	return DEVWAIT_SAY;
}

unsigned devwait_sleep_ms(const struct devwait *w, double now)
{
	double left = (w->deadline - now) * 1000;

	if (left <= 0)
		return 0;
	return left < DEVWAIT_POLL_MS ? (unsigned)left + 1 : DEVWAIT_POLL_MS;
}
