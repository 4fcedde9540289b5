/* Dump targets: device selectors, waiting for a device, and the one gate
 * every write goes through (only a claimed target is ever opened for
 * writing). */
#ifndef KDI_TARGET_H
#define KDI_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"

enum sel_type { SEL_PATH, SEL_SERIAL, SEL_LABEL, SEL_UUID, SEL_PARTUUID, SEL_PARTLABEL, SEL_WWN };

#define SEL_MAX 8

struct selector {
	enum sel_type type;
	char value[128];
};

/* The one rule for what a selector's text may hold, so that it reaches
 * every reader whole: one word of the crash kernel's command line
 * (kdumpinit.dev=SEL, where the kernel splits at white space and takes
 * quotes), one argument of the units and scripts. Printable ASCII other
 * than space, '"', '\'' and '\\'. `format --label` refuses a label
 * against it, `status` a configured selector, dist/kdumpinit-arm the same
 * characters in sh. 1 if s[0..n) keeps it, else 0. */
int selector_text_ok(const char *s, size_t n);

/* "SERIAL=x,/dev/vdb,LABEL=y" -> up to SEL_MAX selectors; -EINVAL with the
 * bad word copied into bad. */
int selectors_parse(const char *list, struct selector *out, int max, char *bad, size_t badsz);
const char *selector_name(enum sel_type t);

/* One scan of /sys/class/block (or a path): the device matching s, as
 * /dev/NAME in path. 0 or -ENOENT. sysfs/dev roots are parameters so tests
 * can run against a fake tree. */
struct sysroot {
	const char *sys;	/* "/sys" */
	const char *dev;	/* "/dev" */
};
int selector_find(const struct sysroot *root, const struct selector *s, char *path, size_t sz);
/* Whether block device NAME (in /sys/class/block) is what s selects; a
 * SEL_PATH selector matches no name. 1 or 0. */
int selector_matches(const struct sysroot *root, const struct selector *s, const char *name);
/* Block device NAME's serial number, as SERIAL= compares it (leading
 * spaces dropped): 0, or -ENOENT when sysfs shows none. */
int block_serial(const struct sysroot *root, const char *name, char *v, size_t sz);
/* Its WWN, as WWN= compares it ("3HEX" for sysfs's "naa.HEX"): 0, or
 * -ENOENT when sysfs shows none. */
int block_wwid(const struct sysroot *root, const char *name, char *v, size_t sz);

/* An open, checked target. */
struct target {
	int fd;
	int is_blockdev;
	int created;		/* capture made this file */
	/* A file a capture made (its claim records no size: format's always
	 * does): it grows as a dump needs, its filesystem saying when it is
	 * full; limit is then far past its size when opened for capture. */
	int grows;
	uint64_t size;		/* device/file size */
	uint64_t base, limit;	/* where the dump stream may go */
	struct kdi_super sb;
	char path[256];
};
/* The limit of a file that grows: no end of its own. */
#define TARGET_NO_END (UINT64_MAX / 2)

enum target_refusal {
	TGT_OK,
	TGT_UNCLAIMED,		/* blank or unrecognised: not ours */
	TGT_FOREIGN,		/* another signature */
	TGT_OVERWRITTEN,	/* our claim, but other data was written on it */
	TGT_DAMAGED,		/* our magic, but bad checksum/version */
	TGT_TOO_SMALL,
	TGT_NOT_TARGET,		/* not a block device or regular file */
};

/* Opens path for writing a dump iff it carries a valid claim and nothing
 * else; with may_create, a path that does not exist becomes a new claimed
 * file. Returns 0; -EPERM with *why set when refused (msg says why); other
 * -errno for system errors. */
int target_open(struct target *t, const char *path, int may_create,
		enum target_refusal *why, char *msg, size_t msgsz);
void target_close(struct target *t);

/* Opens a source read-only and finds its stream bounds. 0, or -errno;
 * -ENOENT with *why = TGT_UNCLAIMED for something that is not a dump. */
int source_open(struct target *t, const char *path, enum target_refusal *why,
		char *msg, size_t msgsz);

#endif
