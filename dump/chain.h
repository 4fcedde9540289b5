/* The dumps on one device, one after another (docs/FORMAT.md, "Several
 * dumps"). A capture that finds dumps not yet saved writes after them, so
 * that a second crash before the first dump is saved (a crash loop on an
 * unattended machine) does not cost the first dump, which is usually the
 * one that explains the others. The capture places a dump and the host
 * finds it by the same walk (chain_walk), over chunk headers only. */
#ifndef KDI_CHAIN_H
#define KDI_CHAIN_H

#include <stdint.h>

#include "format.h"

/* Dumps followed on one device. A device never holds more: each needs
 * at least KDI_CHAIN_MIN_ROOM, and a loop that crashes this often has
 * long made its point. */
#define KDI_CHAIN_MAX 64
/* The least room a new dump is started in after unsaved ones: enough
 * for the metadata, the kernel log and the start of the kernel's pages.
 * With less, kdumpinit.full= decides. */
#define KDI_CHAIN_MIN_ROOM (16ull << 20)

struct chain_dump {
	uint64_t at;			/* device offset of START */
	uint64_t end;			/* device offset after its last chunk the walk accepted */
	uint64_t dump_id;
	uint64_t start_time;
	uint32_t index;			/* 1 first */
	int complete;			/* the walk reached an END */
	int whole;			/* ... which says complete, nothing skipped before it */
};

struct chain {
	struct chain_dump d[KDI_CHAIN_MAX];
	unsigned n;
};

/* Walks the dumps from data_offset to limit: the first at data_offset,
 * then each at a KDI_GAP_ALIGN boundary past the one before (the exact
 * one the capture chose, or one up to KDI_GAP_SCAN further) whose CHAIN
 * record names the dump before and its own offset. 0 (c->n may be 0:
 * an empty device), -ENOMEM. */
int chain_walk(int fd, uint64_t data_offset, uint64_t limit, struct chain *c);

/* Is the dump at position i (0-based) of c saved, by the claim's record
 * of the newest dump saved? Dumps are saved oldest first, so every dump
 * up to that one is. */
int chain_saved(const struct chain *c, unsigned i, uint64_t saved_dump_id);

/* Where a capture goes, given what is on the device. */
enum chain_full { CHAIN_FULL_KEEP, CHAIN_FULL_OVERWRITE };

struct chain_place {
	uint64_t at;			/* START's device offset */
	struct kdi_chain_rec rec;	/* the CHAIN record to write */
	unsigned unsaved;		/* dumps kept before it, not yet saved */
	unsigned overwritten;		/* unsaved dumps it overwrites (policy OVERWRITE) */
	int refused;			/* no room, and the policy keeps them: do not write */
	/* Refused under OVERWRITE: a whole unsaved dump of this size would
	 * not fit again with a quarter to spare, so it is kept. */
	uint64_t kept_whole;
};

/* Places a new dump: at data_offset when every dump on the device is
 * saved (or there is none), else after the last one; with less than
 * KDI_CHAIN_MIN_ROOM left there (or KDI_CHAIN_MAX dumps), per full. A
 * new dump never goes over a whole (complete) unsaved one unless full is
 * OVERWRITE and the device holds the largest of them again with a
 * quarter to spare: that one is the best guess of the new dump's size
 * (the same machine), and a new dump that would be cut short is worth
 * less than a complete one. */
void chain_place(const struct chain *c, uint64_t data_offset, uint64_t limit,
		 uint64_t saved_dump_id, enum chain_full full, struct chain_place *p);

#endif
