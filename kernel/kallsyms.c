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

static int nbyte(struct names *nm, uint8_t *b)
{
	if (nm->pos < nm->base || nm->pos >= nm->base + nm->len) {
		nm->base = nm->pos;
		nm->len = 0;
		if (kmem_read(nm->km, nm->va + nm->base, nm->buf, NAMES_CHUNK) == 0) {
			nm->len = NAMES_CHUNK;
		} else {
			/* the table's end may leave less than a chunk mapped */
			for (size_t l = NAMES_CHUNK / 2; l >= 64; l /= 2)
				if (kmem_read(nm->km, nm->va + nm->base, nm->buf, l) == 0) {
					nm->len = l;
					break;
				}
			if (!nm->len)
				return -EFAULT;
		}
	}
	*b = nm->buf[nm->pos++ - nm->base];
	return 0;
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
	/* Each name's length: most symbols are told apart by it, without a
	 * strcmp against every name asked (150,000 symbols). */
	size_t *wl = calloc(n + 1, sizeof *wl);

	for (unsigned i = 0; i < n; i++)
		addr[i] = 0;
	if (!idx || !have || !wl) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned q = 0; q <= n; q++)
		wl[q] = strlen(q < n ? names[q] : "_stext");
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

	unsigned left = n + (have_stext ? 1 : 0);
	char name[MAX_NAME + 1];
	for (uint32_t i = 0; i < num && left; i++) {
		uint8_t b0, b1;
		uint32_t len;
		if (nbyte(&nm, &b0) < 0) {
			r = -EFAULT;
			goto out;
		}
		len = b0;
		if (b0 & 0x80) {	/* 6.1+: a second length byte */
			if (nbyte(&nm, &b1) < 0) {
				r = -EFAULT;
				goto out;
			}
			len = (b0 & 0x7f) | ((uint32_t)b1 << 7);
		}
		/* A token is a character or more: a longer name is no name. */
		if (len > MAX_NAME || nm.pos + len > MAX_NAMES_BYTES) {
			r = -ENOENT;
			goto out;
		}
		size_t nl = 0;
		for (uint32_t k = 0; k < len; k++) {
			uint8_t t;
			if (nbyte(&nm, &t) < 0) {
				r = -EFAULT;
				goto out;
			}
			for (const char *p = tt + ti[t]; *p && nl < MAX_NAME; p++)
				name[nl++] = *p;
		}
		name[nl] = 0;
		if (nl < 2)
			continue;
		const char *s = name + 1;	/* past the type letter */
		for (unsigned q = 0; q <= n; q++) {
			const char *want = q < n ? names[q] : "_stext";
			if (have[q] || (q == n && !have_stext) || wl[q] != nl - 1 || strcmp(s, want))
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
	free(tt);
	free(nm.buf);
	return r;
}
