#include "vmcoreinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *text, *alias;
	int base;
	enum vi_policy policy;
	const char *miss;
} keys[VI_NKEYS] = {
#define VI_ROW(id, t, b, a, p, m) [VI_##id] = { t, a, b, VI_P_##p, m },
	VI_KEYS(VI_ROW)
#undef VI_ROW
};

const char *vi_name(enum vi_key k)
{
	return (unsigned)k < VI_NKEYS ? keys[k].text : "?";
}

const char *vi_alias(enum vi_key k)
{
	return (unsigned)k < VI_NKEYS ? keys[k].alias : NULL;
}

enum vi_policy vi_policy(enum vi_key k)
{
	return (unsigned)k < VI_NKEYS ? keys[k].policy : VI_P_NONE;
}

const char *vi_miss(enum vi_key k)
{
	return (unsigned)k < VI_NKEYS ? keys[k].miss : NULL;
}

static int key_is(int k, const char *p, size_t len)
{
	const char *a = keys[k].alias;
	return (strlen(keys[k].text) == len && !memcmp(keys[k].text, p, len)) ||
	       (a && strlen(a) == len && !memcmp(a, p, len));
}

enum vi_key vi_lookup(const char *text)
{
	for (int k = 0; k < VI_NKEYS; k++)
		if (key_is(k, text, strlen(text)))
			return (enum vi_key)k;
	return VI_NKEYS;
}

/* Whole-value parse. Base 16 fields are printed without 0x; NUMBER()s
 * (base 0) are decimal on x86 but hex on some arches, and may be negative.
 * Nothing else is ever negative: there a sign is malformed, as parse_u64
 * has it (CRASHTIME names a dump directory). */
static int parse_value(const char *s, size_t len, int base, uint64_t *out)
{
	char buf[40];
	char *end;

	if (len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	if (buf[0] == '-' && base == 0) {
		long long v = strtoll(buf, &end, base);
		if (errno || *end)
			return -EINVAL;
		*out = (uint64_t)v;
	} else {
		unsigned long long v = strtoull(buf, &end, base);
		if (errno || *end || buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
			return -EINVAL;
		*out = v;
	}
	return 0;
}

void vmcoreinfo_parse(struct vmcoreinfo *vi, const char *text)
{
	/* A key given twice keeps its first value, as vmcoreinfo_get and
	 * makedumpfile read it: both views of one note must agree. A key
	 * under its old name and its new one counts as given twice. */
	unsigned char seen[VI_NKEYS] = { 0 };
	int seen_rel = 0;

	memset(vi, 0, sizeof *vi);
	for (const char *p = text; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		const char *eq = memchr(p, '=', ll);
		if (eq) {
			size_t kl = eq - p, vl = ll - kl - 1;
			if (kl == 9 && !memcmp(p, "OSRELEASE", 9) && !seen_rel) {
				seen_rel = vi->have_osrelease = 1;
				size_t n = vl < sizeof vi->osrelease ? vl : sizeof vi->osrelease - 1;
				memcpy(vi->osrelease, eq + 1, n);
				vi->osrelease[n] = 0;
			}
			for (int k = 0; k < VI_NKEYS; k++) {
				if (!key_is(k, p, kl))
					continue;
				if (seen[k])
					break;
				seen[k] = 1;
				if (parse_value(eq + 1, vl, keys[k].base, &vi->v[k]) == 0)
					vi->have[k] = 1;
				else
					vi->bad_lines++;
				break;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
}

int vmcoreinfo_number(const struct vmcoreinfo *vi, const char *text, const char *key, uint64_t *v)
{
	enum vi_key k = vi_lookup(key);
	if (k != VI_NKEYS) {
		if (!vi->have[k])
			return -ENOENT;
		*v = vi->v[k];
		return 0;
	}
	/* Not in the table: read the line itself, as the table would. */
	char buf[40];
	if (!text || vmcoreinfo_get(text, key, buf, sizeof buf) < 0)
		return -ENOENT;
	return parse_value(buf, strlen(buf), strncmp(key, "SYMBOL(", 7) ? 0 : 16, v) < 0 ? -ENOENT : 0;
}

int vmcoreinfo_release(const struct vmcoreinfo *vi, unsigned *major, unsigned *minor)
{
	return vi->have_osrelease && sscanf(vi->osrelease, "%u.%u", major, minor) == 2 ? 0 : -ENOENT;
}

int vmcoreinfo_get(const char *text, const char *key, char *out, size_t outsz)
{
	size_t kl = strlen(key);

	if (outsz == 0)
		return -EINVAL;
	for (const char *p = text; p && *p; ) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		if (ll > kl && !memcmp(p, key, kl) && p[kl] == '=') {
			size_t vl = ll - kl - 1;
			if (vl >= outsz)
				vl = outsz - 1;
			memcpy(out, p + kl + 1, vl);
			out[vl] = 0;
			return 0;
		}
		p = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}
