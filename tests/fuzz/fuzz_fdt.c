/* fuzz_fdt: the arm64 loader's device-tree edit, fdt_set_chosen()
 * (arm/kexec_arm64.c), on the running tree it reads from
 * /sys/firmware/fdt.
 *
 * Input: byte 0 picks the edit (bit 0: an initrd or none; bit 1: 64-bit
 * or 32-bit addresses; bits 2-7: the bootargs length, 0..63), the rest is
 * the flattened tree, copied to a buffer of exactly its size.
 *
 * Checks beyond "no crash, no read outside the input": a refusal is
 * EINVAL; an output is a well-formed tree of *outlen bytes (header, block
 * bounds, one balanced root, FDT_END, property names NUL-terminated inside
 * the strings block) with exactly one /chosen holding exactly one bootargs
 * equal to the one given; and editing the output again gives the same
 * bytes (the edit is idempotent). */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

/* arm/ is not in the fuzz archive (it is a program, not a library). */
#include "../../arm/kexec_arm64.c"
#include "../../arm/machine.c"
#include "../../arm/root.c"

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Asserts the output is well formed; returns how many bootargs of /chosen
 * equal ARGS (and sets *nchosen). */
static int check_tree(const uint8_t *b, size_t len, const char *args, int *nchosen)
{
	assert(len >= 40 && rd32(b) == 0xd00dfeed && rd32(b + 4) == len);
	uint32_t o_st = rd32(b + 8), o_str = rd32(b + 12), o_rsv = rd32(b + 16);
	uint32_t sz_str = rd32(b + 32), sz_st = rd32(b + 36);
	assert(o_st % 4 == 0 && o_rsv % 8 == 0);
	assert((uint64_t)o_st + sz_st <= len && (uint64_t)o_str + sz_str <= len && o_rsv < len);
	for (uint32_t o = o_rsv;; o += 16) {
		assert((uint64_t)o + 16 <= len);
		static const uint8_t z[16];
		if (!memcmp(b + o, z, 16))
			break;
	}
	const uint8_t *p = b + o_st, *end = p + sz_st;
	int depth = 0, roots = 0, in_chosen = 0, good = 0;
	*nchosen = 0;
	for (;;) {
		assert(p + 4 <= end);
		uint32_t tok = rd32(p);
		p += 4;
		if (tok == 1) {
			size_t nl = strnlen((const char *)p, (size_t)(end - p));
			assert(p + nl < end);
			if (depth == 0)
				assert(!roots++ && nl == 0);
			in_chosen = depth == 1 && !strcmp((const char *)p, "chosen");
			*nchosen += in_chosen;
			p += (nl + 4) & ~(size_t)3;
			depth++;
		} else if (tok == 2) {
			assert(depth > 0);
			if (depth == 2)
				in_chosen = 0;
			depth--;
		} else if (tok == 3) {
			assert(depth > 0 && p + 8 <= end);
			uint32_t n = rd32(p), no = rd32(p + 4);
			assert(n <= (size_t)(end - p - 8));
			assert(no < sz_str && memchr(b + o_str + no, 0, sz_str - no));
			if (in_chosen && depth == 2 && !strcmp((const char *)b + o_str + no, "bootargs"))
				good += n == strlen(args) + 1 && !memcmp(p + 8, args, n);
			p += 8 + ((n + 3) & ~3u);
		} else if (tok == 4) {
			continue;
		} else {
			assert(tok == 9);
			break;
		}
	}
	assert(depth == 0 && roots == 1);
	return good;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char args[64];
	size_t al = data[0] >> 2;
	memset(args, 'a', al);
	args[al] = 0;
	struct fdt_chosen ch = {
		.bootargs = args,
		.elfcorehdr = data[0] & 2 ? 0x47f00000 : 0x1047f00000ull,
		.elfcorehdr_size = 0x10000,
		.usable = data[0] & 2 ? 0x44000000 : 0x1044000000ull,
		.usable_size = 0x3800000,
	};
	if (data[0] & 1) {
		ch.initrd_start = 0x48000000;
		ch.initrd_end = 0x48123000;
	}
	size_t n = size - 1, olen = 0, olen2 = 0;
	uint8_t *in = malloc(n ? n : 1);
	memcpy(in, data + 1, n);
	errno = 0;
	uint8_t *out = fdt_set_chosen(in, n, &ch, &olen);
	if (!out) {
		assert(errno == EINVAL || errno == ENOMEM);
	} else {
		int nchosen;
		assert(check_tree(out, olen, args, &nchosen) == 1);
		assert(nchosen == 1);
		uint8_t *again = fdt_set_chosen(out, olen, &ch, &olen2);
		assert(again && olen2 == olen && !memcmp(again, out, olen));
		free(again);
	}
	free(out);
	free(in);
	return 0;
}
