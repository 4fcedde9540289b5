#include "dmtable.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One reason, terse: PID 1 only warns that the word is not a table, and
 * arm records only tables it made. seg 0: the word as a whole. */
static int bad(char *why, size_t sz, unsigned seg, const char *text)
{
	if (seg)
		snprintf(why, sz, "segment %u: %s", seg, text);
	else
		snprintf(why, sz, "%s", text);
	return -EINVAL;
}

/* A selector value may hold none of the word's own separators. */
static int value_ok(const char *s, size_t n)
{
	if (!n || !selector_text_ok(s, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == ':' || s[i] == '+')
			return 0;
	return 1;
}

static const struct {
	const char *prefix;
	enum sel_type type;
} dev_kinds[] = { { "PARTUUID=", SEL_PARTUUID }, { "SERIAL=", SEL_SERIAL }, { "WWN=", SEL_WWN } };

static const char *const type_names[] = { [DMT_LINEAR] = "linear", [DMT_STRIPED] = "striped" };

/* Decimal digits, no sign, no leading zero but "0", below DMT_SECTORS_MAX:
 * one spelling per number, so a recorded word compares as text. */
static int number(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 16 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >= DMT_SECTORS_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

uint64_t dmtable_sectors(const struct dm_table *t)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < t->ntargets; i++)
		s += t->t[i].len;
	return s;
}

int dmtable_check(const struct dm_table *t, char *why, size_t sz)
{
	unsigned next = 0;

	if (t->ntargets < 1 || t->ntargets > DMT_MAX_TARGETS)
		return bad(why, sz, 0, "1 to 8 segments");
	if (t->ndevs < 1 || t->ndevs > DMT_MAX_DEVS)
		return bad(why, sz, 0, "1 to 16 devices");
	for (unsigned i = 0; i < t->ntargets; i++) {
		const struct dmt_target *g = &t->t[i];
		/* devices in order, each used once: what the parser makes */
		if (g->first != next || g->ndev < 1 || g->ndev > t->ndevs - next)
			return bad(why, sz, i + 1, "bad device list");
		next += g->ndev;
		if (!g->len || g->len >= DMT_SECTORS_MAX)
			return bad(why, sz, i + 1, "bad length");
		if (g->type == DMT_LINEAR && g->ndev != 1)
			return bad(why, sz, i + 1, "linear takes one device");
		if (g->type == DMT_STRIPED) {
			/* dm-stripe: the length splits evenly over the
			 * stripes, and each stripe's share into chunks */
			if (!g->chunk || g->chunk >= DMT_SECTORS_MAX)
				return bad(why, sz, i + 1, "bad chunk");
			if (g->len % g->ndev || (g->len / g->ndev) % g->chunk)
				return bad(why, sz, i + 1, "length not whole chunks on each stripe");
		} else if (g->type != DMT_LINEAR) {
			return bad(why, sz, i + 1, "unknown type");
		}
	}
	if (next != t->ndevs)
		return bad(why, sz, 0, "devices not all used");
	if (dmtable_sectors(t) >= DMT_SECTORS_MAX)
		return bad(why, sz, 0, "too large");
	for (unsigned i = 0; i < t->ndevs; i++) {
		const struct dmt_dev *d = &t->dev[i];
		size_t n = strnlen(d->sel.value, sizeof d->sel.value);
		if (d->sel.type != SEL_PARTUUID && d->sel.type != SEL_SERIAL && d->sel.type != SEL_WWN)
			return bad(why, sz, 0, "a device not PARTUUID=, SERIAL= or WWN=");
		if (n == sizeof d->sel.value || !value_ok(d->sel.value, n))
			return bad(why, sz, 0, "a device name not printable, or with space, quote, backslash, ',', ':' or '+'");
		if (d->offset >= DMT_SECTORS_MAX)
			return bad(why, sz, 0, "bad offset");
	}
	return 0;
}

/* One DEV ("PARTUUID=x+2048") from s[0..n). */
static int parse_dev(const char *s, size_t n, unsigned seg, struct dmt_dev *d, char *why, size_t sz)
{
	const char *plus = memchr(s, '+', n);

	if (!plus)
		return bad(why, sz, seg, "a device with no +OFFSET");
	size_t sl = (size_t)(plus - s);
	if (number(plus + 1, n - sl - 1, &d->offset) < 0)
		return bad(why, sz, seg, "bad offset");
	for (size_t i = 0; i < sizeof dev_kinds / sizeof dev_kinds[0]; i++) {
		size_t pl = strlen(dev_kinds[i].prefix);
		if (sl <= pl || memcmp(s, dev_kinds[i].prefix, pl))
			continue;
		if (sl - pl >= sizeof d->sel.value || !value_ok(s + pl, sl - pl))
			return bad(why, sz, seg, "bad device name");
		d->sel.type = dev_kinds[i].type;
		memcpy(d->sel.value, s + pl, sl - pl);
		d->sel.value[sl - pl] = 0;
		return 0;
	}
	return bad(why, sz, seg, "a device not PARTUUID=, SERIAL= or WWN=");
}

/* One TARGET from s[0..n): its fields split at ':'. */
static int parse_target(const char *s, size_t n, struct dm_table *t, char *why, size_t sz)
{
	const char *f[2 + 1 + DMT_MAX_DEVS];
	size_t fl[2 + 1 + DMT_MAX_DEVS];
	unsigned nf = 0;
	const char *p = s, *end = s + n;

	for (;;) {
		const char *c = memchr(p, ':', (size_t)(end - p));
		if (nf == sizeof f / sizeof f[0])
			return bad(why, sz, t->ntargets + 1, "too many fields");
		f[nf] = p;
		fl[nf++] = c ? (size_t)(c - p) : (size_t)(end - p);
		if (!c)
			break;
		p = c + 1;
	}
	if (t->ntargets == DMT_MAX_TARGETS)
		return bad(why, sz, 0, "more than 8 segments");
	struct dmt_target *g = &t->t[t->ntargets];
	memset(g, 0, sizeof *g);
	if (nf < 3 || number(f[0], fl[0], &g->len) < 0)
		return bad(why, sz, t->ntargets + 1, "not LEN:TYPE:...");
	unsigned devs_at;
	if (fl[1] == 6 && !memcmp(f[1], "linear", 6)) {
		g->type = DMT_LINEAR;
		devs_at = 2;
		if (nf != 3)
			return bad(why, sz, t->ntargets + 1, "linear takes one device");
	} else if (fl[1] == 7 && !memcmp(f[1], "striped", 7)) {
		g->type = DMT_STRIPED;
		devs_at = 3;
		if (nf < 4 || number(f[2], fl[2], &g->chunk) < 0)
			return bad(why, sz, t->ntargets + 1, "striped takes CHUNK:DEV[:DEV...]");
	} else {
		return bad(why, sz, t->ntargets + 1, "type not linear or striped");
	}
	g->first = t->ndevs;
	for (unsigned i = devs_at; i < nf; i++) {
		if (t->ndevs == DMT_MAX_DEVS)
			return bad(why, sz, 0, "more than 16 devices");
		int r = parse_dev(f[i], fl[i], t->ntargets + 1, &t->dev[t->ndevs], why, sz);
		if (r < 0)
			return r;
		t->ndevs++;
		g->ndev++;
	}
	t->ntargets++;
	return 0;
}

int dmtable_parse(const char *word, struct dm_table *t, char *why, size_t sz)
{
	size_t len = strlen(word);

	memset(t, 0, sizeof *t);
	if (!len)
		return bad(why, sz, 0, "empty");
	if (len > DMT_WORD_MAX)
		return bad(why, sz, 0, "longer than 1024 bytes");
	const char *p = word, *end = word + len;
	for (;;) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		int r = parse_target(p, c ? (size_t)(c - p) : (size_t)(end - p), t, why, sz);
		if (r < 0)
			return r;
		if (!c)
			break;
		p = c + 1;
	}
	return dmtable_check(t, why, sz);
}

int dmtable_format(const struct dm_table *t, char *out, size_t sz, char *why, size_t whysz)
{
	size_t len = 0;
	int r = dmtable_check(t, why, whysz);

	if (r < 0)
		return r;
	if (sz > DMT_WORD_MAX + 1)
		sz = DMT_WORD_MAX + 1;
	for (unsigned i = 0; i < t->ntargets; i++) {
		const struct dmt_target *g = &t->t[i];
		int w = snprintf(out + len, sz - len, "%s%llu:%s", i ? "," : "",
				 (unsigned long long)g->len, type_names[g->type]);
		if (w >= 0 && (size_t)w < sz - len && g->type == DMT_STRIPED) {
			len += (size_t)w;
			w = snprintf(out + len, sz - len, ":%llu", (unsigned long long)g->chunk);
		}
		for (unsigned k = 0; w >= 0 && (size_t)w < sz - len && k < g->ndev; k++) {
			const struct dmt_dev *d = &t->dev[g->first + k];
			len += (size_t)w;
			w = snprintf(out + len, sz - len, ":%s%s+%llu", selector_name(d->sel.type),
				     d->sel.value, (unsigned long long)d->offset);
		}
		if (w < 0 || (size_t)w >= sz - len) {
			if (sz)
				out[0] = 0;
			snprintf(why, whysz, "the table does not fit in %zu bytes", sz - 1);
			return -ENAMETOOLONG;
		}
		len += (size_t)w;
	}
	return 0;
}
