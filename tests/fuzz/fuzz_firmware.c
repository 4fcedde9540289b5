/* fuzz_firmware: config/firmware.c's parsers on arbitrary bytes.
 *
 * Input layout:
 *   byte 0    bits 0-2: the source rank the credentials come in as
 *             (CFG_SRC_FILE + b % 5); bit 3: start from a config that
 *             another source already set (rank tests)
 *   byte 1    output size for fw_base64_decode: (b * 257) % 300
 *   then the rest, used four ways:
 *     an SMBIOS Type 11 structure (smbios11_parse, each string through
 *     fw_smbios_string: credentials, base64, names, kdumpinit.conf)
 *     a base64 text (fw_base64_decode)
 *     a credential name and a value (fw_cred_name_ok, fw_cred_text_ok)
 *     the value of a kdumpinit.conf credential (fw_credential:
 *     config_load_text) and a device-tree property's text
 *
 * Checks beyond "no crash": every string smbios11_parse hands out lies
 * inside the input, is NUL-terminated there and holds no NUL; a decode
 * that succeeds re-encodes to exactly its input (strict: one text per
 * value); fw_cred_text_ok agrees with a second, plain UTF-8 reader; the
 * config stays within its limits, every key's source is a valid rank and
 * a firmware source never outranks the command line; the plan line from
 * config_format_sources is NUL-terminated and as long as it says. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include "../../config/config.h"
#include "../../config/firmware.h"

static void check_config(const struct config *c)
{
	assert(c->nwarn >= 0 && c->nwarn <= CONFIG_MAX_WARN);
	for (int i = 0; i < c->nwarn; i++)
		assert(memchr(c->warn[i], 0, sizeof c->warn[i]));
	assert(memchr(c->dev, 0, sizeof c->dev));
	assert(c->level <= 31 && c->threads <= 256 && c->wait_s <= 86400);
	assert(c->stall_s >= 1 && c->stall_s <= 86400 && c->verbose <= 9);
	assert(c->final == FINAL_REBOOT || c->final == FINAL_POWEROFF || c->final == FINAL_HALT);
	for (int k = 0; k < CFG_NKEYS; k++)
		assert(c->src[k] >= CFG_SRC_DEFAULT && c->src[k] < CFG_SRC_N);
	char line[64];
	int n = config_format_sources(c, line, sizeof line);
	assert(n >= 0 && memchr(line, 0, sizeof line));
	if ((size_t)n < sizeof line)
		assert(strlen(line) == (size_t)n);
}

static const uint8_t *raw_lo, *raw_hi;
static struct fw_pass *pass;

static void on_string(void *ctx, const char *s, size_t n)
{
	const uint8_t *u = (const uint8_t *)s;
	assert(u >= raw_lo && u + n < raw_hi);
	assert(n > 0 && s[n] == 0 && !memchr(s, 0, n));
	fw_smbios_string(pass, s, n);
}

static void b64_encode(const uint8_t *in, size_t n, char *out)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			w |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			w |= in[i + 2];
		out[o++] = a[w >> 18 & 63];
		out[o++] = a[w >> 12 & 63];
		out[o++] = i + 1 < n ? a[w >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? a[w & 63] : '=';
	}
	out[o] = 0;
}

/* A second reader: decode each code point, then apply the rules. */
static int text_ref(const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len;
		uint8_t b = v[i];
		if (b < 0x80) {
			cp = b;
			len = 1;
		} else if ((b & 0xe0) == 0xc0) {
			cp = b & 0x1f;
			len = 2;
		} else if ((b & 0xf0) == 0xe0) {
			cp = b & 0x0f;
			len = 3;
		} else if ((b & 0xf8) == 0xf0) {
			cp = b & 0x07;
			len = 4;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((v[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (v[i + k] & 0x3f);
		}
		static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
		if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    (cp >= 0x7f && cp <= 0x9f))
			return 0;
		i += len;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct fz_in in = { data, size };
	unsigned ctl = fz_take(&in, 1);
	size_t outsize = (fz_take(&in, 1) * 257) % 300;
	enum config_src src = CFG_SRC_FILE + ctl % 5;

	/* An exact-size heap copy, so that ASan sees reads past its end. */
	uint8_t *raw = malloc(in.n ? in.n : 1);
	if (!raw)
		abort();
	memcpy(raw, in.p, in.n);

	static struct config c;
	config_defaults(&c);
	if (ctl & 8) {
		config_set_src(&c, "level", "5", "fuzz", CFG_SRC_CMDLINE, NULL);
		config_set_src(&c, "dev", "LABEL=fuzz", "fuzz", CFG_SRC_DT, NULL);
	}
	size_t total = 0;
	struct fw_pass p;
	fw_pass_init(&p, &c, src, "fuzz", &total);

	/* SMBIOS. */
	unsigned problems = 99;
	raw_lo = raw;
	raw_hi = raw + in.n;
	pass = &p;
	int r = smbios11_parse(raw, in.n, on_string, NULL, &problems);
	assert(r == -EBADMSG || (r >= 0 && !(problems & ~(FW_SMB_TRUNCATED | FW_SMB_COUNT))));
	assert(total <= FW_TOTAL_MAX);
	check_config(&c);

	/* base64, strict: what decodes re-encodes to the same text. */
	uint8_t *out = malloc(outsize ? outsize : 1);
	if (!out)
		abort();
	ssize_t d = fw_base64_decode((const char *)raw, in.n, out, outsize);
	assert(d == -EINVAL || d == -E2BIG || (d >= 0 && (size_t)d <= outsize));
	if (d >= 0) {
		char *again = malloc((size_t)d / 3 * 4 + 8);
		if (!again)
			abort();
		b64_encode(out, (size_t)d, again);
		assert(strlen(again) == in.n && !memcmp(again, raw, in.n));
		free(again);
	}
	free(out);

	/* Names and text. */
	if (fw_cred_name_ok((const char *)raw, in.n)) {
		assert(in.n >= 1 && in.n <= FW_NAME_MAX);
		assert(!memchr(raw, ':', in.n) && !memchr(raw, '/', in.n) && !memchr(raw, 0, in.n));
	}
	int t = fw_cred_text_ok(raw, in.n);
	assert(t == text_ref(raw, in.n));

	/* The same bytes as a kdumpinit.conf credential, and as the DT text. */
	fw_credential(&p, "kdumpinit.conf", 14, raw, in.n);
	check_config(&c);
	unsigned seen = 0;
	config_load_text(&c, (const char *)raw, in.n, "dt", CFG_SRC_DT, &seen);
	check_config(&c);
	if (ctl & 8)
		assert(c.level == 5 && c.src[CFG_LEVEL] == CFG_SRC_CMDLINE);
	for (int k = 0; k < CFG_NKEYS; k++)
		assert(c.src[k] == CFG_SRC_DEFAULT || c.src[k] == src || c.src[k] == CFG_SRC_DT ||
		       c.src[k] == CFG_SRC_CMDLINE);

	free(raw);
	return 0;
}
