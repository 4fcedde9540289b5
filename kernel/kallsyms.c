#include "kallsyms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"

/* Bounds: a kernel has 100-300 thousand symbols and names of a few
 * hundred bytes; anything past these is not a symbol table. */
#define MAX_SYMS (4u << 20)
#define MAX_NAME 1024u
/* kallsyms_names of a kernel with every option is under 8 MiB; a walk
 * past this reads a table that is not one (each name's length byte is
 * trusted, and 4 Mi names of 32 Ki tokens would read 128 GiB). */
#define MAX_NAMES_BYTES (64u << 20)
#define TOKEN_BYTES 8192u
#define NAMES_CHUNK (64u << 10)
#define HEADS 1024u		/* chains of the names asked, by length and first letter */
#define NONE UINT32_MAX

static int sym(struct kmem *km, const char *key, uint64_t *v)
{
	return vmcoreinfo_number(&km->vi, km->vi_text, key, v);
}

/* A window over kallsyms_names read 64 KiB at a time. */
struct names {
	struct kmem *km;
	uint64_t va, pos;	/* table start, next byte's offset */
	uint8_t *buf;
	uint64_t base;		/* offset of buf[0] */
	size_t len;
};

/* The next need bytes of the table, at nm->pos, or NULL when they are
 * not mapped. Read ahead a chunk at a time; the table's end may leave
 * less than a chunk mapped. */
static const uint8_t *nspan(struct names *nm, size_t need)
{
	if (nm->pos >= nm->base && nm->pos + need <= nm->base + nm->len)
		return nm->buf + (nm->pos - nm->base);
	nm->base = nm->pos;
	nm->len = 0;
	for (size_t l = NAMES_CHUNK; l >= need && l >= 64; l /= 2)
		if (kmem_read(nm->km, nm->va + nm->base, nm->buf, l) == 0) {
			nm->len = l;
			return nm->buf;
		}
	return NULL;
}

/* Does the name of these tokens, past its type letter, read want? Its
 * length is known to be want's: told apart at the first difference,
 * mostly the first character, without expanding the name. */
static int tokens_are(const char *tt, const uint16_t *ti, const uint8_t *tok, uint32_t len,
		      const char *want)
{
	int first = 1;

	for (uint32_t k = 0; k < len; k++)
		for (const char *p = tt + ti[tok[k]]; *p; p++) {
			if (first) {
				first = 0;
				continue;
			}
			if (*p != *want++)
				return 0;
		}
	return 1;
}

/* The address of symbol i, whose offset is off: kallsyms_offsets hold
 * it relative to kallsyms_relative_base (ENC_BASE), or with
 * KALLSYMS_ABSOLUTE_PERCPU (x86_64 before 6.15) absolute when not
 * negative (ENC_PERCPU), or, in kernels without kallsyms_relative_base,
 * relative to the entry's own place (ENC_PLACE: 7.x). */
enum enc { ENC_BASE, ENC_PERCPU, ENC_PLACE, ENC_N };

static uint64_t address(enum enc e, uint64_t base, uint64_t va_off, uint32_t i, int32_t off)
{
	switch (e) {
	case ENC_BASE:
		return base + (uint32_t)off;
	case ENC_PERCPU:
		return off >= 0 ? (uint64_t)off : base - 1 - (uint64_t)(int64_t)off;
	default:
		return va_off + 4ull * i + (uint64_t)(int64_t)off;
	}
}

/* The first two characters of a name past its type letter (0 past its
 * end), from its first tokens, without expanding the rest. */
static unsigned first_pair(const char *tt, const uint16_t *ti, const uint8_t *tok, uint32_t len)
{
	unsigned got = 0, pair = 0;
	int type = 1;

	for (uint32_t k = 0; k < len && got < 2; k++)
		for (const char *p = tt + ti[tok[k]]; *p && got < 2; p++) {
			if (type) {
				type = 0;
				continue;
			}
			pair |= (unsigned)(uint8_t)*p << (8 * got++);
		}
	return pair;
}

static unsigned head_of(size_t len, uint8_t c1)
{
	return (unsigned)((len * 131u + c1) % HEADS);
}

int ksyms_lookup(struct kmem *km, const char *const *names, uint64_t *addr, unsigned n)
{
	uint64_t va_names, va_num, va_off, va_base, va_tt, va_ti, stext = 0;
	uint32_t num;
	uint64_t base = 0;
	uint16_t ti[256];
	char *tt = NULL;
	struct names nm = { .km = km };
	int found = 0, r = 0;
	/* the names asked for and _stext, to tell the address encoding */
	uint32_t *idx = calloc(n + 1, sizeof *idx);
	uint8_t *have = calloc(n + 1, 1);
	/* Each name's length, and the names asked for chained by it and by
	 * their first letter: a symbol is compared only with those of its
	 * length and letter, mostly none (150,000 symbols times 60 names
	 * was most of the cost; by length alone, a third of it still). */
	size_t *wl = calloc(n + 1, sizeof *wl);
	uint32_t *chain = calloc(n + 1, sizeof *chain), head[HEADS];
	/* The names' first two letters, a bit per pair: most symbols are
	 * told apart by them before their length is summed (that sum over
	 * every token of 150,000 names was half the scan). */
	uint64_t *pairs = calloc(65536 / 64, sizeof *pairs);

	for (unsigned i = 0; i < n; i++)
		addr[i] = 0;
	if (!idx || !have || !wl || !chain || !pairs) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned h = 0; h < HEADS; h++)
		head[h] = NONE;
	for (unsigned q = 0; q <= n; q++) {
		const char *w = q < n ? names[q] : "_stext";
		wl[q] = strlen(w);
		unsigned h = head_of(wl[q], (uint8_t)w[0]);
		chain[q] = head[h];
		head[h] = q;
		unsigned pr = (uint8_t)w[0] | (w[0] ? (unsigned)(uint8_t)w[1] << 8 : 0);
		pairs[pr / 64] |= 1ull << (pr % 64);
	}
	if (sym(km, "SYMBOL(kallsyms_names)", &va_names) < 0 ||
	    sym(km, "SYMBOL(kallsyms_num_syms)", &va_num) < 0 ||
	    sym(km, "SYMBOL(kallsyms_offsets)", &va_off) < 0 ||
	    sym(km, "SYMBOL(kallsyms_token_table)", &va_tt) < 0 ||
	    sym(km, "SYMBOL(kallsyms_token_index)", &va_ti) < 0 || !km->ok) {
		r = -ENOENT;
		goto out;
	}
	int have_stext = sym(km, "SYMBOL(_stext)", &stext) == 0;
	int have_base = sym(km, "SYMBOL(kallsyms_relative_base)", &va_base) == 0;
	if ((!have_base && !have_stext) || kmem_read(km, va_num, &num, 4) < 0 ||
	    (have_base && kmem_read(km, va_base, &base, 8) < 0) ||
	    kmem_read(km, va_ti, ti, sizeof ti) < 0) {
		r = -EFAULT;
		goto out;
	}
	if (num == 0 || num > MAX_SYMS) {
		r = -ENOENT;
		goto out;
	}
	tt = malloc(TOKEN_BYTES + 1);
	nm.buf = malloc(NAMES_CHUNK);
	nm.va = va_names;
	if (!tt || !nm.buf) {
		r = -ENOMEM;
		goto out;
	}
	/* The token table is a few KiB: read what the page tables map of it. */
	size_t ttl = TOKEN_BYTES;
	while (ttl >= 256 && kmem_read(km, va_tt, tt, ttl) < 0)
		ttl /= 2;
	if (ttl < 256) {
		r = -EFAULT;
		goto out;
	}
	tt[ttl] = 0;
	for (int t = 0; t < 256; t++)
		if (ti[t] >= ttl) {
			r = -ENOENT;
			goto out;
		}

	/* Each token's length, and for a token that starts a name and holds
	 * its type letter and two more, the name's first pair: most names
	 * are then told apart by one lookup (the per-character walk of
	 * first_pair was a third of the scan). */
	uint32_t tlen[256], tpair[256];
	for (int t = 0; t < 256; t++) {
		const char *tk = tt + ti[t];
		tlen[t] = (uint32_t)strlen(tk);
		tpair[t] = tlen[t] >= 3 ? (uint8_t)tk[1] | (unsigned)(uint8_t)tk[2] << 8 : UINT32_MAX;
	}
	unsigned left = n + (have_stext ? 1 : 0);
	for (uint32_t i = 0; i < num && left; i++) {
		const uint8_t *b = nspan(&nm, 2);
		uint32_t len, lb;
		/* The last name may end a byte before the mapping does. */
		if (!b && !(b = nspan(&nm, 1))) {
			r = -EFAULT;
			goto out;
		}
		len = b[0];
		lb = 1;
		if (b[0] & 0x80) {	/* 6.1+: a second length byte */
			if (nm.pos + 2 > nm.base + nm.len) {
				r = -EFAULT;
				goto out;
			}
			len = (b[0] & 0x7f) | ((uint32_t)b[1] << 7);
			lb = 2;
		}
		nm.pos += lb;
		/* A token is a character or more: a longer name is no name. */
		if (len > MAX_NAME || nm.pos + len > MAX_NAMES_BYTES) {
			r = -ENOENT;
			goto out;
		}
		const uint8_t *tok = len ? nspan(&nm, len) : b;
		if (!tok) {
			r = -EFAULT;
			goto out;
		}
		nm.pos += len;
		if (!len)
			continue;
		unsigned pr = tpair[tok[0]] != UINT32_MAX ? tpair[tok[0]] : first_pair(tt, ti, tok, len);
		if (!(pairs[pr / 64] >> (pr % 64) & 1))
			continue;
		/* The name's length from its tokens' lengths: a name is
		 * compared only with the names asked for of its length. */
		size_t nl = 0;
		for (uint32_t k = 0; k < len; k++)
			nl += tlen[tok[k]];
		if (nl < 2 || nl - 1 > MAX_NAME)
			continue;
		/* The letter after the type: in the first token, or the
		 * second's first when the first is the type alone. */
		const char *t0 = tt + ti[tok[0]];
		uint8_t c1 = t0[0] && t0[1] ? (uint8_t)t0[1] : len > 1 ? (uint8_t)tt[ti[tok[1]]] : 0;
		for (uint32_t q = head[head_of(nl - 1, c1)]; q != NONE; q = chain[q]) {
			const char *want = q < n ? names[q] : "_stext";
			if (have[q] || (q == n && !have_stext) || wl[q] != nl - 1 ||
			    !tokens_are(tt, ti, tok, len, want))
				continue;
			have[q] = 1;
			idx[q] = i;
			left--;
		}
	}
	/* Which encoding: the one that puts _stext where VMCOREINFO says;
	 * without SYMBOL(_stext), the one that puts the first name found in
	 * the kernel half. */
	int enc = -1;
	for (int m = have_base ? ENC_BASE : ENC_PLACE; m < ENC_N && enc < 0; m++) {
		for (unsigned q = 0; q <= n; q++) {
			int32_t off;
			if (!have[q] || (q == n) != have_stext)
				continue;
			if (kmem_read(km, va_off + 4ull * idx[q], &off, 4) < 0)
				continue;
			uint64_t a = address((enum enc)m, base, va_off, idx[q], off);
			if (q == n ? a == stext : a >= km->ac.ops->kva_min)
				enc = m;
			break;
		}
	}
	if (enc < 0) {
		r = -ENOENT;
		goto out;
	}
	for (unsigned q = 0; q < n; q++) {
		int32_t off;
		if (have[q] && kmem_read(km, va_off + 4ull * idx[q], &off, 4) == 0) {
			addr[q] = address((enum enc)enc, base, va_off, idx[q], off);
			found++;
		}
	}
	r = found;
out:
	free(idx);
	free(have);
	free(wl);
	free(chain);
	free(pairs);
	free(tt);
	free(nm.buf);
	return r;
}
