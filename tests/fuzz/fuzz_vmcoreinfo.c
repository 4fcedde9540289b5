/* fuzz_vmcoreinfo: VMCOREINFO text parsing.
 *
 * Input: byte 0 picks the output buffer size for vmcoreinfo_get (1..256),
 * the rest is the note text as the crashed kernel left it (may hold NULs:
 * the text ends at the first one, as vmcore_open's copy does).
 *
 * Exercises vmcoreinfo_parse (kernel/vmcoreinfo.c) and vmcoreinfo_get
 * (kernel/vmcore.c) with every key the tool looks up, and checks what the
 * callers rely on: the results are NUL-terminated and within bounds. */
#include "fuzz_common.h"

#include <assert.h>

#include "../../kernel/vmcore.h"
#include "../../kernel/vmcoreinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t outsz = (size_t)data[0] + 1;
	char *text = fz_strndup(data + 1, size - 1);
	struct vmcoreinfo vi;

	vmcoreinfo_parse(&vi, text);
	assert(memchr(vi.osrelease, 0, sizeof vi.osrelease));
	for (int k = 0; k < VI_NKEYS; k++)
		assert(vi.have[k] == 0 || vi.have[k] == 1);
	(void)vi_name(VI_NKEYS);
	(void)vi_name((enum vi_key)-1);

	/* Every lookup the tool does, plus every table key. The output buffer
	 * is exactly outsz bytes on the heap so ASan sees any overrun. */
	static const char *const extra[] = { "OSRELEASE", "CRASHTIME", "PAGESIZE", "", "=", "SYMBOL(" };
	char *out = malloc(outsz);
	if (!out)
		abort();
	for (int k = 0; k < VI_NKEYS + (int)(sizeof extra / sizeof extra[0]); k++) {
		const char *key = k < VI_NKEYS ? vi_name((enum vi_key)k) : extra[k - VI_NKEYS];
		if (vmcoreinfo_get(text, key, out, outsz) == 0)
			assert(memchr(out, 0, outsz));
	}
	/* The text's own first line as a key (whatever precedes its '='). */
	const char *eq = strchr(text, '=');
	const char *nl = strchr(text, '\n');
	if (eq && (!nl || eq < nl)) {
		char *key = fz_strndup((const uint8_t *)text, (size_t)(eq - text));
		if (vmcoreinfo_get(text, key, out, outsz) == 0)
			assert(memchr(out, 0, outsz));
		free(key);
	}
	free(out);
	free(text);
	return 0;
}
