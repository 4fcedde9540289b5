/* Configuration: kdumpinit.* from the kernel command line, and an optional
 * embedded /etc/kdumpinit.conf. The command line wins. This is the only
 * module that knows where settings come from; everything downstream takes
 * an immutable struct config. */
#ifndef KDI_CONFIG_H
#define KDI_CONFIG_H

#include <stdint.h>

enum final_action { FINAL_REBOOT, FINAL_POWEROFF, FINAL_HALT };

#define CONFIG_MAX_WARN 16

struct config {
	char dev[512];			/* selector list, as given */
	uint32_t level;
	unsigned threads;		/* 0 = online CPUs */
	unsigned wait_s;		/* how long to wait for the device */
	unsigned stall_s;		/* watchdog: no progress for this long */
	enum final_action final;
	int verbose;
	/* Problems found while parsing; the front door prints them. */
	char warn[CONFIG_MAX_WARN][160];
	int nwarn;
};

void config_defaults(struct config *c);
/* Applies one "key=value". The key may carry the "kdumpinit." prefix (the
 * command line must; the file may). Unknown keys and bad values add a
 * warning and keep the previous value: a typo must not cost the dump. */
void config_set(struct config *c, const char *key, const char *value, const char *origin);
/* A file of "key = value" lines, '#' comments. -errno if unreadable;
 * -ENOENT is not an error for the caller. */
int config_load_file(struct config *c, const char *path);
/* The kernel command line text: kdumpinit.* words, quotes honoured. */
void config_load_cmdline(struct config *c, const char *cmdline);
const char *final_action_name(enum final_action a);

#endif
