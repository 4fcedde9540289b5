#include "dmesg.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"

/* Descriptor states, from the top two bits of state_var (kernel
 * printk_ringbuffer.h). Only committed and finalized records are text. */
#define DESC_STATE(sv)	(((sv) >> 62) & 3)
#define DESC_ID_MASK	(~(3ull << 62))
#define DESC_COMMITTED	1
#define DESC_FINALIZED	2

/* Sanity bounds: a corrupt ring must not make us allocate the world. */
#define MAX_COUNT_BITS	24
#define MAX_SIZE_BITS	26	/* CONFIG_LOG_BUF_SHIFT tops out at 25 */
#define MAX_TABLE	(128u << 20)	/* descs or infos: LOG_BUF_SHIFT=25 needs 92 MB */

struct out {
	char *buf;
	size_t len, cap, max;	/* max: what the caller's budget leaves */
};

static int put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 65536;
		while (nc < o->len + n + 1)
			nc *= 2;
		if (nc > o->max)
			nc = o->len + n + 1;
		if (nc > o->max)
			return -EFBIG;
		char *nb = realloc(o->buf, nc);
		if (!nb)
			return -ENOMEM;
		o->buf = nb;
		o->cap = nc;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
	return 0;
}

/* One record as makedumpfile prints it: "[ts] text", continuation lines
 * indented under the text, unprintable bytes as \xNN. */
static int emit(struct out *o, uint64_t ts, const uint8_t *t, uint64_t text_len)
{
	char pre[48];
	int pl = snprintf(pre, sizeof pre, "[%5llu.%06llu] ", (unsigned long long)(ts / 1000000000),
			  (unsigned long long)(ts % 1000000000 / 1000));
	int r = put(o, pre, pl);
	for (uint64_t k = 0; !r && k < text_len; k++) {
		char esc[8];
		if (t[k] == '\n') {
			/* Continuation lines line up under the text. */
			r = put(o, "\n", 1);
			for (int s = 0; !r && s < pl; s++)
				r = put(o, " ", 1);
		} else if (t[k] < 0x80 && (isprint(t[k]) || isspace(t[k]))) {
			r = put(o, (const char *)&t[k], 1);
		} else {
			snprintf(esc, sizeof esc, "\\x%02x", t[k]);
			r = put(o, esc, 4);
		}
	}
	return r ? r : put(o, "\n", 1);
}

/* The ring as copied out of the crashed kernel, and the VMCOREINFO
 * offsets into it (checked against the struct sizes by dmesg_read). */
struct ring {
	const struct vmcoreinfo *vi;
	const uint8_t *descs, *infos, *data;
	uint64_t count, size, dsz, isz, ctr;
	unsigned sbits;
};

static uint64_t desc_sv(const struct ring *g, uint64_t slot)
{
	return load_le64(g->descs + slot * g->dsz + (vi_u(g->vi, VI_OFF_DESC_STATE) + g->ctr));
}

static void desc_lpos(const struct ring *g, uint64_t slot, uint64_t *begin, uint64_t *next)
{
	const uint8_t *d = g->descs + slot * g->dsz + vi_u(g->vi, VI_OFF_DESC_TEXT_LPOS);
	*begin = load_le64(d + vi_u(g->vi, VI_OFF_LPOS_BEGIN));
	*next = load_le64(d + vi_u(g->vi, VI_OFF_LPOS_NEXT));
}

static const uint8_t *info_of(const struct ring *g, uint64_t slot)
{
	return g->infos + slot * g->isz;
}

/* The record with descriptor id `id`, found from tail_id..head_id. */
static int record(struct out *o, const struct ring *g, uint64_t id)
{
	const struct vmcoreinfo *vi = g->vi;
	uint64_t i = id % g->count, size = g->size;
	uint64_t sv = desc_sv(g, i);

	if ((sv & DESC_ID_MASK) != id ||
	    (DESC_STATE(sv) != DESC_COMMITTED && DESC_STATE(sv) != DESC_FINALIZED))
		return 0;
	uint64_t begin, next;
	desc_lpos(g, i, &begin, &next);
	begin %= size;
	next %= size;
	if (begin == next)
		return 0;	/* a record without text */
	const uint8_t *inf = info_of(g, i);
	uint64_t text_len = load_le16(inf + vi_u(vi, VI_OFF_INFO_TEXT_LEN));
	if (begin > next)
		begin = 0;	/* the block wrapped: its text starts the ring */
	begin += 8;		/* skip the block's id word */
	if (begin > next)
		return 0;
	if (next - begin < text_len)
		text_len = next - begin;
	return emit(o, load_le64(inf + vi_u(vi, VI_OFF_INFO_TS)), g->data + begin, text_len);
}

/* ---- salvage: a ring whose head_id/tail_id cannot be trusted ---- */

struct found {
	uint64_t seq, slot, off, len;	/* text at data + off, len bytes */
};

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct found *)a)->seq, y = ((const struct found *)b)->seq;
	return x < y ? -1 : x > y;
}

/* Does slot hold a record whose every field agrees with where it sits?
 * The kernel keeps descriptor id, info seq and the data block's leading
 * id word consistent with the slot (a descriptor is found from its id or
 * seq modulo the ring's count; a data block names its descriptor), so
 * garbage must pass all of them by chance to be printed. 1 with *f set,
 * 0 for an empty or reusable slot, -1 for one that fails a check. */
static int salvage_slot(const struct ring *g, uint64_t slot, struct found *f)
{
	const struct vmcoreinfo *vi = g->vi;
	uint64_t sv = desc_sv(g, slot), id = sv & DESC_ID_MASK;

	if (DESC_STATE(sv) != DESC_COMMITTED && DESC_STATE(sv) != DESC_FINALIZED)
		return 0;
	if (id % g->count != slot)
		return -1;
	const uint8_t *inf = info_of(g, slot);
	f->seq = load_le64(inf + vi_u(vi, VI_OFF_INFO_SEQ));
	if (f->seq % g->count != slot)
		return -1;
	uint64_t begin, next;
	desc_lpos(g, slot, &begin, &next);
	if (begin & 1)
		return 0;	/* a record without text (the kernel's dataless lpos) */
	/* Logical positions: the high bits count wraps of the data ring. A
	 * block lies within one wrap, or, when it would not fit before the
	 * end, was stored at the start of the next wrap. */
	if (begin >> g->sbits == next >> g->sbits && begin < next) {
		f->off = begin & (g->size - 1);
		f->len = next - begin;
	} else if ((begin + g->size) >> g->sbits == next >> g->sbits) {
		f->off = 0;
		f->len = next & (g->size - 1);
	} else {
		return -1;
	}
	if (f->len < 8 || f->len > g->size - f->off || load_le64(g->data + f->off) != id)
		return -1;
	uint64_t text_len = load_le16(inf + vi_u(vi, VI_OFF_INFO_TEXT_LEN));
	f->off += 8;
	f->len -= 8;
	if (text_len < f->len)
		f->len = text_len;
	f->slot = slot;
	return 1;
}

/* Every record the descriptor ring still holds, by sequence number, with
 * a first line that says the log was salvaged. */
static int salvage(struct out *o, const struct ring *g, struct dmesg_stat *st)
{
	uint64_t n = 0;
	int r = 0;

	/* The scan's table comes out of what the budget leaves for text. */
	if (g->count * sizeof(struct found) >= o->max)
		return -EFBIG;
	o->max -= g->count * sizeof(struct found);
	struct found *f = malloc(g->count * sizeof *f);
	if (!f)
		return -ENOMEM;
	for (uint64_t slot = 0; slot < g->count; slot++) {
		int k = salvage_slot(g, slot, &f[n]);
		if (k > 0)
			n++;
		else if (k < 0)
			st->rejected++;
	}
	st->salvaged = 1;
	st->scanned = g->count;
	if (n == 0) {
		free(f);
		return -ENODATA;
	}
	qsort(f, n, sizeof *f, by_seq);
	char head[200];
	int hl = snprintf(head, sizeof head,
			  "kdumpinit: salvaged log: the ring's head/tail ids were not usable; %llu "
			  "records found by scanning %llu descriptors (%u rejected), in sequence "
			  "order; records may be missing\n",
			  (unsigned long long)n, (unsigned long long)g->count, st->rejected);
	r = put(o, head, hl);
	for (uint64_t k = 0; k < n && !r; k++) {
		const uint8_t *inf = info_of(g, f[k].slot);
		r = emit(o, load_le64(inf + vi_u(g->vi, VI_OFF_INFO_TS)), g->data + f[k].off, f[k].len);
		if (!r)
			st->records++;
	}
	free(f);
	return r;
}

/* Do head_id and tail_id name descriptors that carry them? A descriptor
 * being reserved when the kernel stopped may still hold the id one lap
 * before its new head. */
static int ends_valid(const struct ring *g, uint64_t head, uint64_t tail)
{
	uint64_t hs = desc_sv(g, head % g->count) & DESC_ID_MASK;
	uint64_t ts = desc_sv(g, tail % g->count) & DESC_ID_MASK;
	return (hs == head || hs == ((head - g->count) & DESC_ID_MASK)) && ts == tail;
}

/* The ring as VMCOREINFO places it, checked: every key there, every
 * offset inside its struct (VMCOREINFO comes from the crashed kernel and is
 * as corruptible as the rest of its memory; compared as "off <= size - n"
 * so that no sum can wrap), the ring struct read into prb (SIZE(prb)
 * bytes, at most 4 KiB) from where SYMBOL(prb), the pointer variable,
 * points (*prb_va), and its two sizes in bits within bounds. */
static int ring_open(struct kmem *km, uint8_t prb[4096], uint64_t *prb_va, uint32_t *cbits,
		     uint32_t *sbits)
{
	const struct vmcoreinfo *vi = &km->vi;
	static const enum vi_key need[] = {
		VI_SYM_PRB, VI_SIZE_PRB, VI_OFF_PRB_DESC_RING, VI_OFF_PRB_TEXT_RING,
		VI_OFF_DR_COUNT_BITS, VI_OFF_DR_DESCS, VI_OFF_DR_INFOS, VI_OFF_DR_HEAD_ID,
		VI_OFF_DR_TAIL_ID, VI_SIZE_PRB_DESC, VI_OFF_DESC_STATE, VI_OFF_DESC_TEXT_LPOS,
		VI_OFF_LPOS_BEGIN, VI_OFF_LPOS_NEXT, VI_SIZE_PRINTK_INFO, VI_OFF_INFO_TS,
		VI_OFF_INFO_TEXT_LEN, VI_OFF_TR_SIZE_BITS, VI_OFF_TR_DATA,
	};

	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!vi_has(vi, need[i]))
			return -ENOENT;
	if (!km->ok)
		return -EFAULT;
	uint64_t prb_sz = vi_u(vi, VI_SIZE_PRB), dsz = vi_u(vi, VI_SIZE_PRB_DESC),
		 isz = vi_u(vi, VI_SIZE_PRINTK_INFO);
	uint64_t ctr0 = vi_has(vi, VI_OFF_ATOMIC_COUNTER) ? vi_u(vi, VI_OFF_ATOMIC_COUNTER) : 0;
	uint64_t dro = vi_u(vi, VI_OFF_PRB_DESC_RING), trg = vi_u(vi, VI_OFF_PRB_TEXT_RING);
	uint64_t lpos = vi_u(vi, VI_OFF_DESC_TEXT_LPOS);
	if (prb_sz > 4096 || prb_sz < 16 || dsz > 256 || dsz < 16 || isz > 1024 || isz < 16 ||
	    ctr0 > 8 || dro > prb_sz - 16 || trg > prb_sz - 16 ||
	    vi_u(vi, VI_OFF_DR_COUNT_BITS) > prb_sz - 4 - dro ||
	    vi_u(vi, VI_OFF_DR_DESCS) > prb_sz - 8 - dro ||
	    vi_u(vi, VI_OFF_DR_INFOS) > prb_sz - 8 - dro ||
	    vi_u(vi, VI_OFF_DR_HEAD_ID) > prb_sz - 16 - dro ||
	    vi_u(vi, VI_OFF_DR_TAIL_ID) > prb_sz - 16 - dro ||
	    vi_u(vi, VI_OFF_TR_SIZE_BITS) > prb_sz - 4 - trg ||
	    vi_u(vi, VI_OFF_TR_DATA) > prb_sz - 8 - trg ||
	    vi_u(vi, VI_OFF_DESC_STATE) > dsz - 16 ||
	    lpos > dsz - 16 || vi_u(vi, VI_OFF_LPOS_BEGIN) > dsz - 8 - lpos ||
	    vi_u(vi, VI_OFF_LPOS_NEXT) > dsz - 8 - lpos ||
	    vi_u(vi, VI_OFF_INFO_TS) > isz - 8 || vi_u(vi, VI_OFF_INFO_TEXT_LEN) > isz - 2)
		return -EBADMSG;
	int r = kmem_read(km, vi_u(vi, VI_SYM_PRB), prb_va, 8);
	if (!r)
		r = kmem_read(km, *prb_va, prb, prb_sz);
	if (r < 0)
		return r;
	*cbits = load_le32(prb + dro + vi_u(vi, VI_OFF_DR_COUNT_BITS));
	*sbits = load_le32(prb + trg + vi_u(vi, VI_OFF_TR_SIZE_BITS));
	if (*cbits > MAX_COUNT_BITS || *sbits > MAX_SIZE_BITS || *sbits < 4)
		return -EBADMSG;
	uint64_t count = 1ull << *cbits;
	if (count * dsz > MAX_TABLE || count * isz > MAX_TABLE)
		return -EBADMSG;
	return 0;
}

int dmesg_read(struct kmem *km, uint64_t budget, char **text, size_t *len, struct dmesg_stat *st)
{
	const struct vmcoreinfo *vi = &km->vi;
	uint8_t prb[4096];
	uint8_t *descs = NULL, *infos = NULL, *data = NULL;
	struct out o = { 0 };
	uint64_t prb_va;
	uint32_t cbits, sbits;

	*text = NULL;
	*len = 0;
	memset(st, 0, sizeof *st);
	int r = ring_open(km, prb, &prb_va, &cbits, &sbits);
	if (r < 0)
		return r;
	uint64_t prb_sz = vi_u(vi, VI_SIZE_PRB), dsz = vi_u(vi, VI_SIZE_PRB_DESC),
		 isz = vi_u(vi, VI_SIZE_PRINTK_INFO);
	const uint8_t *dr = prb + vi_u(vi, VI_OFF_PRB_DESC_RING);
	const uint8_t *tr = prb + vi_u(vi, VI_OFF_PRB_TEXT_RING);
	uint64_t count = 1ull << cbits, size = 1ull << sbits;
	/* In a small reservation an allocation the kernel cannot back ends
	 * in the OOM killer, and PID 1 killed is a panic: the log is worth
	 * less than the pages, so it gets only what the caller can spare. */
	uint64_t bytes = count * (dsz + isz) + size + 8 + prb_sz;
	if (bytes > budget) {
		r = -EFBIG;
		goto out;
	}
	o.max = budget - bytes;
	uint64_t ctr = vi_has(vi, VI_OFF_ATOMIC_COUNTER) ? vi_u(vi, VI_OFF_ATOMIC_COUNTER) : 0;
	descs = malloc(count * dsz);
	infos = malloc(count * isz);
	data = malloc(size + 8);
	if (!descs || !infos || !data) {
		r = -ENOMEM;
		goto out;
	}
	memset(data + size, 0, 8);
	r = kmem_read(km, load_le64(dr + vi_u(vi, VI_OFF_DR_DESCS)), descs, count * dsz);
	if (!r)
		r = kmem_read(km, load_le64(dr + vi_u(vi, VI_OFF_DR_INFOS)), infos, count * isz);
	if (!r)
		r = kmem_read(km, load_le64(tr + vi_u(vi, VI_OFF_TR_DATA)), data, size);
	if (r < 0)
		goto out;
	struct ring g = { .vi = vi, .descs = descs, .infos = infos, .data = data, .count = count,
			  .size = size, .dsz = dsz, .isz = isz, .ctr = ctr, .sbits = sbits };
	uint64_t tail = load_le64(dr + (vi_u(vi, VI_OFF_DR_TAIL_ID) + ctr)) & DESC_ID_MASK;
	uint64_t head = load_le64(dr + (vi_u(vi, VI_OFF_DR_HEAD_ID) + ctr)) & DESC_ID_MASK;
	if (ends_valid(&g, head, tail)) {
		/* From tail to head inclusive; ids wrap within DESC_ID_MASK. */
		uint64_t n = ((head - tail) & DESC_ID_MASK) + 1;
		if (n > count)
			n = count;
		for (uint64_t k = 0; k < n && !r; k++) {
			size_t before = o.len;
			r = record(&o, &g, (tail + k) & DESC_ID_MASK);
			if (o.len > before)
				st->records++;
		}
	}
	/* Wild ends, or ends that frame nothing: the log is what a person
	 * reads first, so look at every descriptor instead. Needs the seq
	 * field to put the records in order. */
	if (!r && st->records == 0) {
		free(o.buf);
		o.buf = NULL;
		o.len = o.cap = 0;
		r = vi_has(vi, VI_OFF_INFO_SEQ) && vi_u(vi, VI_OFF_INFO_SEQ) <= isz - 8 ?
			salvage(&o, &g, st) : -ENODATA;
	}
	if (r < 0)
		goto out;
	if (!o.buf)
		r = put(&o, "", 0);
	*text = o.buf;
	*len = o.len;
	o.buf = NULL;
out:
	free(o.buf);
	free(descs);
	free(infos);
	free(data);
	return r;
}

int dmesg_areas(struct kmem *km, struct kva_area a[5], unsigned *n)
{
	const struct vmcoreinfo *vi = &km->vi;
	uint8_t prb[4096];
	uint64_t prb_va;
	uint32_t cbits, sbits;

	*n = 0;
	int r = ring_open(km, prb, &prb_va, &cbits, &sbits);
	if (r < 0)
		return r;
	const uint8_t *dr = prb + vi_u(vi, VI_OFF_PRB_DESC_RING);
	const uint8_t *tr = prb + vi_u(vi, VI_OFF_PRB_TEXT_RING);
	uint64_t count = 1ull << cbits;
	a[0] = (struct kva_area){ vi_u(vi, VI_SYM_PRB), 8 };
	a[1] = (struct kva_area){ prb_va, vi_u(vi, VI_SIZE_PRB) };
	a[2] = (struct kva_area){ load_le64(dr + vi_u(vi, VI_OFF_DR_DESCS)),
				  count * vi_u(vi, VI_SIZE_PRB_DESC) };
	a[3] = (struct kva_area){ load_le64(dr + vi_u(vi, VI_OFF_DR_INFOS)),
				  count * vi_u(vi, VI_SIZE_PRINTK_INFO) };
	a[4] = (struct kva_area){ load_le64(tr + vi_u(vi, VI_OFF_TR_DATA)), 1ull << sbits };
	*n = 5;
	return 0;
}
