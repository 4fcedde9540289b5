/* Unit tests for PID 1's device wait clock (init/devwait.c), on a fake
 * clock: the loop of init/pid1.c's wait_for_target, each look taking
 * `look` seconds, the device present from `appears` on. */
#define CHECK_PREFIX "devwait"
#include "check.h"

#include "../../init/devwait.c"

struct run {
	int found;		/* the device was taken */
	double end;		/* when the wait ended */
	int says;		/* "still waiting" lines */
	double said[64];	/* when */
	unsigned max_sleep;	/* the longest sleep between looks */
};

static struct run simulate(double t0, unsigned wait_s, double appears, double look)
{
	struct run r = { 0 };
	struct devwait w;
	double now = t0;

	devwait_start(&w, now, wait_s);
	for (int guard = 0; guard < 1000000; guard++) {
		now += look;
		if (now - t0 >= appears) {
			r.found = 1;
			break;
		}
		enum devwait_step s = devwait_next(&w, now);
		if (s == DEVWAIT_GIVE_UP)
			break;
		if (s == DEVWAIT_SAY && r.says < 64)
			r.said[r.says++] = now - t0;
		unsigned ms = devwait_sleep_ms(&w, now);
		if (ms > r.max_sleep)
			r.max_sleep = ms;
		now += ms / 1000.0;
	}
	r.end = now - t0;
	return r;
}

/* The default: 300 s, a line every 10 s (29 of them), the end on time. */
static void t_never_appears(void)
{
	struct run r = simulate(1000.5, 300, 1e9, 0.01);
	CHECK(!r.found, "found a device that never came");
	CHECK(r.end >= 300 && r.end < 300.3, "gave up at %.2f s, want 300", r.end);
	CHECK_INT(r.says, 29);
	CHECK(r.said[0] >= 10 && r.said[0] < 10.3, "first line at %.2f s", r.said[0]);
	CHECK(r.said[28] >= 290 && r.said[28] < 290.3, "last line at %.2f s", r.said[28]);
	CHECK_INT(r.max_sleep, DEVWAIT_POLL_MS);
}

/* A disk that shows up after 47 s is taken within one poll, with four
 * lines said before it; the 300 s are not waited out. */
static void t_late_device(void)
{
	struct run r = simulate(0, 300, 47, 0.01);
	CHECK(r.found, "the device was not taken");
	CHECK(r.end >= 47 && r.end < 47 + DEVWAIT_POLL_MS / 1000.0 + 0.02,
	      "taken at %.2f s, appeared at 47", r.end);
	CHECK_INT(r.says, 4);
}

/* Looks that take 35 s each (stuck probes): one line per look that went
 * past a 10 s mark, not one for each mark it missed, and the end still
 * comes (at the first look past the deadline). */
static void t_slow_looks(void)
{
	struct run r = simulate(5, 100, 1e9, 35);
	CHECK(!r.found, "found");
	CHECK(r.end >= 100 && r.end < 140, "gave up at %.2f s", r.end);
	CHECK_INT(r.says, 2);
	CHECK(r.said[0] >= 35 && r.said[0] < 35.5 && r.said[1] >= 70 && r.said[1] < 71,
	      "lines at %.2f, %.2f", r.said[0], r.said[1]);
}

/* kdumpinit.wait=0: one look, then the final action, nothing said. */
static void t_no_wait(void)
{
	struct run r = simulate(7, 0, 1e9, 0.01);
	CHECK(!r.found, "found");
	CHECK(r.end < 0.02, "gave up at %.2f s", r.end);
	CHECK_INT(r.says, 0);
	struct devwait w;
	devwait_start(&w, 7, 0);
	CHECK_INT(devwait_sleep_ms(&w, 7), 0);
}

/* The last sleep is cut to the deadline, so the last look falls on it. */
static void t_last_sleep(void)
{
	struct devwait w;
	devwait_start(&w, 0, 5);
	unsigned ms = devwait_sleep_ms(&w, 4.9);
	CHECK(ms >= 100 && ms <= 101, "slept %u ms from 4.9 s to a 5 s deadline", ms);
	CHECK_INT(devwait_sleep_ms(&w, 1), DEVWAIT_POLL_MS);
	CHECK_INT(devwait_next(&w, 4.9), DEVWAIT_LOOK);
	CHECK_INT(devwait_next(&w, 5), DEVWAIT_GIVE_UP);
}

int main(void)
{
	RUN(t_never_appears);
	RUN(t_late_device);
	RUN(t_slow_looks);
	RUN(t_no_wait);
	RUN(t_last_sleep);
	return check_done();
}
