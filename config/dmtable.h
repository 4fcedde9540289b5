/* A device-mapper table the crash kernel rebuilds: the dump device is an
 * LVM logical volume (linear or striped) or one mirror of an md RAID1,
 * which no crash kernel assembles by itself. `arm` records the table as
 * one word of the crash kernel's command line, kdumpinit.dm=WORD, and PID
 * 1 turns it back into a mapping (config/stack.h). Pure text <-> struct:
 * no I/O, so the parser can be fuzzed (tests/fuzz/fuzz_dmtable.c).
 *
 * The word (lengths and offsets in 512-byte sectors, decimal):
 *
 *   WORD   = TARGET *("," TARGET)
 *   TARGET = LEN ":linear:" DEV
 *          | LEN ":striped:" CHUNK 1*(":" DEV)
 *   DEV    = ("PARTUUID=" | "SERIAL=" | "WWN=") VALUE "+" OFFSET
 *
 * e.g. 2097152:linear:PARTUUID=6c1e...-01+2048. A VALUE is printable
 * ASCII without space, quote, backslash, ',', ':' or '+' (a device whose
 * name holds one of those cannot be recorded). Devices are named only in
 * ways that survive a reboot into another kernel: major:minor and
 * /dev/sdX follow the probe order, which differs there. */
#ifndef KDI_DMTABLE_H
#define KDI_DMTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "target.h"

#define DMT_MAX_TARGETS 8	/* segments of the volume */
#define DMT_MAX_DEVS 16		/* devices over all segments (stripes count each) */
/* The word must leave room on the command line (2048 bytes on x86). */
#define DMT_WORD_MAX 1024
/* Sectors: a volume, a chunk or an offset past this is refused, so that
 * a sum of lengths or an offset in bytes never wraps. */
#define DMT_SECTORS_MAX (1ull << 52)

enum dmt_type { DMT_LINEAR, DMT_STRIPED };

struct dmt_dev {
	struct selector sel;	/* SEL_PARTUUID, SEL_SERIAL or SEL_WWN */
	uint64_t offset;	/* sectors into that device */
};

struct dmt_target {
	enum dmt_type type;
	uint64_t len;		/* sectors */
	uint64_t chunk;		/* striped: sectors per chunk */
	unsigned first, ndev;	/* its devices: dev[first .. first + ndev) */
};

struct dm_table {
	unsigned ntargets, ndevs;
	struct dmt_target t[DMT_MAX_TARGETS];
	struct dmt_dev dev[DMT_MAX_DEVS];
};

/* The word -> *t. 0, or -EINVAL with what is wrong in why (bad input is
 * normal input: it came from a command line). */
int dmtable_parse(const char *word, struct dm_table *t, char *why, size_t whysz);
/* The rules a table must keep to be recorded or loaded: 1..MAX targets
 * and devices, lengths > 0, a striped length that divides into whole
 * chunks on every stripe (the kernel's dm-stripe refuses others), values
 * under DMT_SECTORS_MAX, selectors of the two kinds with printable text.
 * 0 or -EINVAL (why says which). */
int dmtable_check(const struct dm_table *t, char *why, size_t whysz);
/* *t -> the word (checked first). 0, -EINVAL (why), -ENAMETOOLONG when
 * it does not fit sz or DMT_WORD_MAX. */
int dmtable_format(const struct dm_table *t, char *out, size_t sz, char *why, size_t whysz);
/* The volume's size in sectors (the sum of the lengths). */
uint64_t dmtable_sectors(const struct dm_table *t);

#endif
