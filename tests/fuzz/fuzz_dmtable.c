/* fuzz_dmtable: the kdumpinit.dm= word (config/dmtable.c), which PID 1
 * reads from a command line anyone with the boot loader can write.
 *
 * Input: the word, as bytes (cut at the first NUL).
 *
 * Beyond "no crash": a word the parser takes passes dmtable_check, and
 * dmtable_format gives back exactly the same text (one spelling per
 * table: status compares armed tables as text); every device is one of
 * the two kinds, with printable text free of the separators; the lengths
 * sum below DMT_SECTORS_MAX. A word refused leaves a reason. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include "../../config/dmtable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *word = fz_strndup(data, size);
	struct dm_table t;
	char why[200], out[DMT_WORD_MAX + 1], why2[200];

	memset(why, 0x55, sizeof why);
	int r = dmtable_parse(word, &t, why, sizeof why);
	if (r < 0) {
		assert(r == -EINVAL);
		assert(memchr(why, 0, sizeof why) && why[0]);
	} else {
		assert(r == 0);
		assert(dmtable_check(&t, why2, sizeof why2) == 0);
		assert(t.ntargets >= 1 && t.ntargets <= DMT_MAX_TARGETS);
		assert(t.ndevs >= 1 && t.ndevs <= DMT_MAX_DEVS);
		assert(dmtable_sectors(&t) < DMT_SECTORS_MAX);
		for (unsigned i = 0; i < t.ndevs; i++) {
			const char *v = t.dev[i].sel.value;
			assert(t.dev[i].sel.type == SEL_PARTUUID || t.dev[i].sel.type == SEL_SERIAL ||
			       t.dev[i].sel.type == SEL_WWN);
			assert(v[0] && !strpbrk(v, ",:+ \"'\\"));
		}
		assert(dmtable_format(&t, out, sizeof out, why2, sizeof why2) == 0);
		assert(!strcmp(out, word));
	}
	free(word);
	return 0;
}
