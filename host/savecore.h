/* save --dir / --check: savecore at boot. */
#ifndef KDI_SAVECORE_H
#define KDI_SAVECORE_H

#include <stdint.h>

#include "../dump/save.h"
#include "testmark.h"

struct savecore_opts {
	const char *dir;
	uint64_t min_free;
	unsigned max;			/* keep this many dumps, 0 = all */
	int keep_device, check, force, elf;
	int quiet;			/* no progress lines */
	int mark_incomplete;		/* mark an incomplete dump saved too */
	/* The secret key for sealed dumps (32 bytes), or NULL: a sealed dump
	 * is then saved as it is on the device, still sealed (sealed.kdi). */
	const uint8_t *key;
	struct save_opts so;
	/* Out, may be NULL: the newest dump --dir saved (path[0] 0: none),
	 * for kdumpinit test's report. */
	struct test_saved *newest;
};
/* Saves SOURCE's dump into o->dir (or with o->check says whether there is
 * one to save: 0 yes, a damaged one included; 1 none, or saved;
 * SAVE_CHECK_UNREADABLE the source cannot be read). Returns the exit code. */
#define SAVE_CHECK_UNREADABLE 4
int savecore(const char *src, const struct savecore_opts *o);

#endif
