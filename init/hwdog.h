/* The hardware watchdog (/dev/watchdog) in PID-1 mode: opened once, its
 * timeout set, petted by whoever decides the capture still moves, and
 * either left running into reboot(2) or stopped with the magic close.
 * Every call is cheap (one ioctl) and none can fail the dump: errors are
 * returned, and the caller only says them. */
#ifndef KDI_HWDOG_H
#define KDI_HWDOG_H

#include <pthread.h>

struct hwdog {
	pthread_mutex_t lock;	/* the petting thread and the final action */
	int fd;			/* -1: no device (or disarmed) */
	unsigned timeout_s;	/* what the driver took */
	int hw_timeout;		/* timeout_s is the hardware's own */
	char dev[32];		/* "/dev/watchdog" */
	char driver[64];	/* "i6300esb", or the driver's identity string */
	char sysdir[64];	/* "/sys/class/watchdog/watchdog0", or "" */
};

#define HWDOG_INIT { PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, "", "", "" }
#define HWDOG_DEFAULT_TIMEOUT 60	/* when the hardware reports none */

/* Opens the first watchdog device, which starts its timer, and sets the
 * timeout: timeout_s, or 0 for the hardware's own (HWDOG_DEFAULT_TIMEOUT
 * if it reports none). A timeout the driver refuses keeps the hardware's,
 * and *refused says so. @return 0 armed; -ENOENT no device; -errno. */
int hwdog_open(struct hwdog *h, unsigned timeout_s, int *refused);
/* One keepalive; nothing without a device. @return 0 or -errno. */
int hwdog_pet(struct hwdog *h);
/* The magic close: 'V', then close, which stops the timer unless the
 * driver was built or loaded with nowayout. @return 0 stopped (or no
 * device); -EBUSY the timer still runs (sysfs says so); -errno. */
int hwdog_disarm(struct hwdog *h);
/* In a forked child: closes its copy of the device, so that PID 1's is
 * the last and its magic close stops the timer (the driver acts on the
 * last close only; a child stuck on a dead disk would hold it). No lock:
 * another thread may have held it at the fork. */
void hwdog_drop_in_child(struct hwdog *h);
/* The driver refuses to stop (sysfs nowayout): 1 or 0. */
int hwdog_nowayout(const struct hwdog *h);

#endif
