/* fuzz_initrd: what status reads of the armed image, lib/initrd.c's
 * walk of an initramfs for one file (/etc/kdumpinit.conf), on the input as
 * it is and on an archive the harness makes of it.
 *
 * Input: byte 0: bits 0-1 the packing of the harness's archive (none,
 * gzip, lz4's legacy frame, none); bit 2 names its entry "./etc/..."
 * rather than "etc/..."; bit 3 puts a NUL-padded archive in front of it.
 * The rest: the image as it is; and, for the round trip, the contents of
 * etc/kdumpinit.conf, the second of two entries so named, in a newc
 * archive with a trailer.
 *
 * Checks beyond "no crash, no read outside the input or the buffer": the
 * walk ends with 0 or one of its documented errors; the round trip finds
 * the entry, a regular file, with the input's size and bytes (the decoy
 * before it not taken). */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>
#include <lz4.h>
#include <zlib.h>

/* host/ is not in the fuzz archive (it is a program, not a library). */
#include "../../lib/initrd.c"

#define NAME "etc/kdumpinit.conf"

static char conf[1 << 16];

/* One newc entry at o: header, name, data, each padded to 4. */
static size_t newc(uint8_t *o, const char *name, uint32_t mode, const uint8_t *d, size_t n)
{
	size_t nl = strlen(name) + 1;
	size_t at = (size_t)sprintf((char *)o, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
				    1u, mode, 0u, 0u, 1u, 0u, (unsigned)n, 0u, 0u, 0u, 0u, (unsigned)nl, 0u);
	memcpy(o + at, name, nl);
	at += nl;
	while (at & 3)
		o[at++] = 0;
	memcpy(o + at, d, n);
	at += n;
	while (at & 3)
		o[at++] = 0;
	return at;
}

static int find(const uint8_t *p, size_t n, struct find *f)
{
	memset(f, 0, sizeof *f);
	f->name = NAME;
	f->buf = conf;
	f->cap = sizeof conf;
	return walk(p, n, f, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct find f;

	if (size < 1 || size - 1 > sizeof conf)
		return 0;
	uint8_t ctl = data[0];
	const uint8_t *d = data + 1;
	size_t n = size - 1;

	/* As it is: whatever it holds, an answer and no more. */
	int r = find(d, n, &f);
	assert(r == 0 || r == -EBADMSG || r == -EFBIG || r == -ENOMEM);

	/* The round trip. */
	size_t cap = 2 * n + 4096;
	uint8_t *a = malloc(cap), *p = malloc(cap + 64), *img = malloc(2 * cap + 1024);
	assert(a && p && img);
	size_t an = newc(a, NAME, 0100644, (const uint8_t *)"decoy\n", 6);
	an += newc(a + an, ctl & 4 ? "./" NAME : NAME, 0100644, d, n);
	an += newc(a + an, "TRAILER!!!", 0, (const uint8_t *)"", 0);
	size_t pn = an;
	switch (ctl & 3) {
	case 1: {
		z_stream z;
		memset(&z, 0, sizeof z);
		assert(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
		z.next_in = a;
		z.avail_in = (uInt)an;
		z.next_out = p;
		z.avail_out = (uInt)(cap + 64);
		assert(deflate(&z, Z_FINISH) == Z_STREAM_END);
		pn = z.total_out;
		deflateEnd(&z);
		break;
	}
	case 2: {
		int k = LZ4_compress_default((const char *)a, (char *)p + 8, (int)an, (int)cap + 56);
		assert(k > 0);
		memcpy(p, "\x02\x21\x4c\x18", 4);
		p[4] = (uint8_t)k, p[5] = (uint8_t)(k >> 8), p[6] = (uint8_t)(k >> 16), p[7] = (uint8_t)(k >> 24);
		pn = (size_t)k + 8;
		break;
	}
	default:
		memcpy(p, a, an);
	}
	size_t in = 0;
	if (ctl & 8) {
		in = newc(img, NAME, 0100644, (const uint8_t *)"first\n", 6);
		in += newc(img + in, "TRAILER!!!", 0, (const uint8_t *)"", 0);
		memset(img + in, 0, 512 - in % 512);
		in += 512 - in % 512;
	}
	memcpy(img + in, p, pn);
	r = find(img, in + pn, &f);
	assert(r == 0 && f.found && f.reg && f.len == n && !memcmp(conf, d, n));
	free(a);
	free(p);
	free(img);
	return 0;
}
