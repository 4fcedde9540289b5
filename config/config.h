/* Configuration: kdumpinit.* from the kernel command line, firmware
 * (config/firmware.h), and an optional embedded /etc/kdumpinit.conf. This
 * is the only module that knows where settings come from; everything
 * downstream takes an immutable struct config.
 *
 * Every key remembers the source that set it (c->src[]). A source ranks
 * by enum config_src: a value from a lower-ranked source than the one
 * that set the key is ignored, so the loaders may run in any order and
 * the command line still wins. Within one rank, the file and the command
 * line let the later value win (as before); a firmware source lets the
 * first win (config/firmware.c passes a "seen" mask). */
#ifndef KDI_CONFIG_H
#define KDI_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum final_action { FINAL_REBOOT, FINAL_POWEROFF, FINAL_HALT };

#define CONFIG_MAX_WARN 16

/* Where a value came from, lowest rank first (the order is the precedence). */
enum config_src {
	CFG_SRC_DEFAULT,
	CFG_SRC_FILE,		/* the embedded /etc/kdumpinit.conf */
	CFG_SRC_EFI,		/* not read yet (config/firmware.c) */
	CFG_SRC_DT,		/* /proc/device-tree/chosen/kdumpinit,conf */
	CFG_SRC_SMBIOS,		/* SMBIOS Type 11 credentials */
	CFG_SRC_FWCFG,		/* QEMU fw_cfg credentials */
	CFG_SRC_CMDLINE,	/* the kernel command line */
	CFG_SRC_N
};

/* The settings, in the order config_format_sources lists them. */
enum config_key { CFG_DEV, CFG_LEVEL, CFG_THREADS, CFG_WAIT, CFG_STALL, CFG_WATCHDOG,
	CFG_FINAL, CFG_VERBOSE, CFG_FULL, CFG_MEMMAP, CFG_PUBKEY, CFG_DM, CFG_IP, CFG_NKEYS };

/* kdumpinit.watchdog: the hardware's own timeout, or never open it. */
#define WATCHDOG_KEEP 0u
#define WATCHDOG_OFF UINT32_MAX

struct config {
	char dev[512];			/* selector list, as given */
	/* kdumpinit.dm: the table of a stacked dump device the crash kernel
	 * rebuilds before it looks for dev (config/dmtable.h), as given and
	 * parsed whole; "" for none. */
	char dm[1025];
	/* kdumpinit.ip=ADDR/PREFIX[,GATEWAY[,MAC]] for a network dump
	 * device, as given (net/link.h parses it), or "" */
	char ip[128];
	uint32_t level;
	unsigned threads;		/* 0 = online CPUs */
	unsigned wait_s;		/* how long to wait for the device */
	unsigned stall_s;		/* watchdog: no progress for this long */
	uint32_t watchdog_s;		/* hardware watchdog timeout, WATCHDOG_KEEP or _OFF */
	enum final_action final;
	int verbose;
	/* kdumpinit.full: the device holds dumps not yet saved and has no
	 * room after them. 0 keep them (this crash goes uncaptured), 1
	 * overwrite them. */
	int full_overwrite;
	/* kdumpinit.memmap: the pages of struct pages that describe only
	 * pages left out. 0 auto (left out from 1 GiB of them), 1 exclude,
	 * 2 keep: capture/pipeline.h's enum memmap_mode. */
	int memmap;
	/* Sealing (kdumpinit.pubkey: an X25519 public key, dump/seal.h).
	 * seal_asked: some source asked for a sealed dump, or may have: one
	 * that holds a key, or a whole config, and could not be read whole
	 * (a config file over CONFIG_FILE_MAX, a credential cut short, not
	 * text, a key that does not parse). have_pubkey: the key of the
	 * source that decides (the highest-ranked, as for any key) was read
	 * whole and valid, in pubkey. Asked and not loaded is config_seal's
	 * -ENOKEY: no dump at all, never one in the clear; seal_why then
	 * says what could not be read. */
	int seal_asked, have_pubkey;
	uint8_t pubkey[32];
	char seal_why[200];
	enum config_src src[CFG_NKEYS];	/* who set each key (config_defaults: DEFAULT) */
	/* Problems found while parsing; the front door prints them. */
	char warn[CONFIG_MAX_WARN][240];
	int nwarn;
};

void config_defaults(struct config *c);
/* Applies one "key=value" as the command line would (the highest rank).
 * The key may carry the "kdumpinit." prefix (the command line must; the
 * file may). Unknown keys and bad values add a warning and keep the
 * previous value: a typo must not cost the dump. */
void config_set(struct config *c, const char *key, const char *value, const char *origin);
/* config_set from source src. A value is validated (and warned about)
 * always, but applied only if src ranks at least as high as the source
 * that set the key. seen: NULL (a later value of the same rank wins), or
 * a mask of the keys this source already set, kept by the caller across
 * one source's settings: a repeated key then warns and the first one
 * stays. Returns 1 if applied, 0 if outranked or a repeat, -EINVAL if
 * unknown or bad (warned). */
int config_set_src(struct config *c, const char *key, const char *value, const char *origin,
		   enum config_src src, unsigned *seen);
/* The text of a config file: "key = value" lines, '#' comments outside
 * double quotes, a value's surrounding double quotes dropped. A NUL ends
 * a line, like a newline (a device-tree string list). Warnings name
 * "origin:LINE". Lines of CONFIG_LINE_MAX bytes or more warn and are
 * skipped, but one of kdumpinit.pubkey is a key not read whole
 * (config_seal_unreadable). */
#define CONFIG_LINE_MAX 8192u
void config_load_text(struct config *c, const char *text, size_t len, const char *origin,
		      enum config_src src, unsigned *seen);
/* A file of such lines (CFG_SRC_FILE), read whole or not at all: one
 * over CONFIG_FILE_MAX bytes is -EFBIG, and, like one that cannot be read
 * (-errno), counts as a source that may have asked for sealing
 * (config_seal_unreadable; a warning says why). -ENOENT: no file, not an
 * error. */
#define CONFIG_FILE_MAX (64u * 1024)
int config_load_file(struct config *c, const char *path);
/* A source at rank src that may hold a kdumpinit.pubkey could not be read
 * whole (why: "ORIGIN: what went wrong"): it counts as a key of that
 * source that does not parse, by the same rank and first-wins rules as
 * any value (seen as in config_set_src). Warns. */
void config_seal_unreadable(struct config *c, enum config_src src, unsigned *seen,
			    const char *why);
/* What the settings say of sealing, once every source is read: 0 not
 * asked (a dump in the clear), 1 seal to c->pubkey, -ENOKEY asked (or
 * maybe asked) and no key read whole: nothing may be written, and
 * c->seal_why says why. */
int config_seal(const struct config *c);
/* The kernel command line text: kdumpinit.* words, quotes honoured. */
void config_load_cmdline(struct config *c, const char *cmdline);
/* Adds a warning to c->warn (dropped past CONFIG_MAX_WARN). */
void config_warn(struct config *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *final_action_name(enum final_action a);
/* "cmdline", "fw_cfg", "smbios", "dt", "efi", "file", "default". */
const char *config_src_name(enum config_src s);
/* For the plan line: every key not at its default, with its source, as
 * "level=3 (fw_cfg), dev=SERIAL=x (smbios)"; "" when all are defaults.
 * Returns the length the whole text needs (as snprintf); buf always ends
 * in a NUL when size > 0. */
int config_format_sources(const struct config *c, char *buf, size_t size);

#endif
