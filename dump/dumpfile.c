#include "dumpfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "../lib/io.h"

static int keep_copy(uint8_t **dst, size_t *dlen, const uint8_t *src, size_t len)
{
	free(*dst);
	*dst = malloc(len + 1);
	if (!*dst)
		return -ENOMEM;
	if (len)
		memcpy(*dst, src, len);
	(*dst)[len] = 0;
	*dlen = len;
	return 0;
}

static void stopped(struct dumpfile *d, const char *why)
{
	if (!d->why[0])
		snprintf(d->why, sizeof d->why, "%s", why);
}

static int add_block(struct dumpfile *d, const struct kdi_pages_view *v,
		     uint64_t off, uint32_t len, size_t *cap)
{
	if (d->nblocks) {
		const struct page_block *prev = &d->blocks[d->nblocks - 1];
		if (v->pfn < prev->pfn + prev->count)
			return -EBADMSG;	/* pfns must strictly increase */
	}
	if (d->nblocks == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct page_block *nb = realloc(d->blocks, nc * sizeof *nb);
		if (!nb)
			return -ENOMEM;
		d->blocks = nb;
		*cap = nc;
	}
	struct page_block *b = &d->blocks[d->nblocks];
	size_t bl = (v->count + 7) / 8;
	b->bitmap = malloc(bl);
	if (!b->bitmap)
		return -ENOMEM;
	memcpy(b->bitmap, v->bitmap, bl);
	b->zbitmap = NULL;
	if (v->zbitmap) {
		b->zbitmap = malloc(bl);
		if (!b->zbitmap) {
			free(b->bitmap);
			return -ENOMEM;
		}
		memcpy(b->zbitmap, v->zbitmap, bl);
	}
	b->pfn = v->pfn;
	b->count = v->count;
	b->nstored = v->nstored;
	b->payload_off = off;
	b->payload_len = len;
	d->nblocks++;
	d->pages_stored += v->nstored;
	d->bytes_stored += len;
	return 0;
}

int dumpfile_load(struct dumpfile *d, int fd, uint64_t base, uint64_t limit)
{
	struct kdi_reader r;
	struct kdi_chunk h;
	uint8_t *buf = NULL;
	size_t cap = 0, bcap = 0;
	int ret;

	memset(d, 0, sizeof *d);
	d->fd = fd;
	d->base = base;
	d->limit = limit;
	ret = reader_open(&r, fd, base, limit, &d->start);
	if (ret < 0) {
		snprintf(d->why, sizeof d->why, "%s", r.why);
		return ret;
	}
	d->dump_id = r.dump_id;

	for (;;) {
		int n = reader_next(&r, &h, &buf, &cap);
		if (n == -ENOMEM) {
			ret = n;
			goto out;
		}
		if (n < 0) {
			stopped(d, r.why);
			break;
		}
		if (n == 0)
			break;
		d->stream_end = r.pos;
		int e = 0;
		switch (h.type) {
		case KDI_CH_NOTES:
			e = keep_copy(&d->notes, &d->notes_len, buf, h.len);
			break;
		case KDI_CH_VMCOREINFO: {
			size_t l;
			e = keep_copy((uint8_t **)&d->vmcoreinfo, &l, buf, h.len);
			break;
		}
		case KDI_CH_SEGMENTS: {
			if (h.len % sizeof(struct kdi_segment) ||
			    h.len / sizeof(struct kdi_segment) != d->start.nr_segments || d->seg) {
				e = -EBADMSG;
				break;
			}
			/* Check every entry before keeping any. */
			for (uint32_t i = 0; i < h.len / sizeof(struct kdi_segment); i++) {
				struct kdi_segment s;
				memcpy(&s, buf + i * sizeof s, sizeof s);
				/* 2^56: beyond any physical address space there is. */
				if (s.filesz > s.memsz || s.paddr + s.memsz < s.paddr ||
				    s.vaddr + s.memsz < s.vaddr || s.paddr + s.memsz > (1ull << 56))
					e = -EBADMSG;
			}
			if (e)
				break;
			d->seg = malloc(h.len ? h.len : 1);
			if (!d->seg) {
				e = -ENOMEM;
				break;
			}
			memcpy(d->seg, buf, h.len);
			d->nr_seg = h.len / sizeof(struct kdi_segment);
			break;
		}
		case KDI_CH_PAGES: {
			struct kdi_pages_view v;
			e = pages_parse(buf, h.len, d->start.page_size, &v);
			if (!e && !d->seg)
				e = -EBADMSG;	/* pages before the layout */
			if (!e)
				e = add_block(d, &v, reader_payload_offset(&r, &h), h.len, &bcap);
			break;
		}
		case KDI_CH_DMESG:
			e = keep_copy((uint8_t **)&d->dmesg, &d->dmesg_len, buf, h.len);
			break;
		case KDI_CH_END:
			memcpy(&d->end, buf, sizeof d->end);
			d->have_end = 1;
			break;
		default:
			break;	/* PAD and future types: skipped */
		}
		if (e == -ENOMEM) {
			ret = e;
			goto out;
		}
		if (e < 0) {
			char w[200];
			snprintf(w, sizeof w, "chunk %llu (type %u) is malformed",
				 (unsigned long long)h.seq, h.type);
			stopped(d, w);
			d->have_end = 0;
			break;
		}
	}
	ret = 0;
	if (!d->vmcoreinfo || !d->seg) {
		stopped(d, "the dump's metadata (VMCOREINFO, segments) is missing");
		ret = -EBADMSG;
	}
out:
	free(buf);
	return ret;
}

int dumpfile_complete(const struct dumpfile *d)
{
	return d->have_end && !d->why[0] && !(d->end.status & KDI_ST_INCOMPLETE);
}

void dumpfile_free(struct dumpfile *d)
{
	for (size_t i = 0; i < d->nblocks; i++) {
		free(d->blocks[i].bitmap);
		free(d->blocks[i].zbitmap);
	}
	free(d->blocks);
	free(d->notes);
	free(d->vmcoreinfo);
	free(d->dmesg);
	free(d->seg);
	memset(d, 0, sizeof *d);
}

static const struct page_block *block_of(const struct dumpfile *d, uint64_t pfn)
{
	size_t lo = 0, hi = d->nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct page_block *b = &d->blocks[mid];
		if (pfn < b->pfn)
			hi = mid;
		else if (pfn >= b->pfn + b->count)
			lo = mid + 1;
		else
			return b;
	}
	return NULL;
}

int dumpfile_is_zero(const struct dumpfile *d, uint64_t pfn)
{
	const struct page_block *b = block_of(d, pfn);
	uint32_t i = b ? pfn - b->pfn : 0;

	return b && b->zbitmap && ((b->zbitmap[i / 8] >> (i % 8)) & 1);
}

uint64_t dumpfile_next_stored(const struct dumpfile *d, uint64_t pfn)
{
	size_t lo = 0, hi = d->nblocks;

	/* first block that ends after pfn */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->blocks[mid].pfn + d->blocks[mid].count <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < d->nblocks; k++) {
		const struct page_block *b = &d->blocks[k];
		for (uint32_t i = pfn > b->pfn ? pfn - b->pfn : 0; i < b->count; i++)
			if ((b->bitmap[i / 8] >> (i % 8)) & 1)
				return b->pfn + i;
	}
	return UINT64_MAX;
}

const struct page_block *dumpfile_find(const struct dumpfile *d, uint64_t pfn, uint32_t *idx)
{
	const struct page_block *b = block_of(d, pfn);
	uint32_t i = b ? pfn - b->pfn : 0;

	if (!b || !((b->bitmap[i / 8] >> (i % 8)) & 1))
		return NULL;
	*idx = i;
	return b;
}

void cursor_init(struct dump_cursor *c, const struct dumpfile *d)
{
	c->d = d;
	c->cur = NULL;
	c->payload = NULL;
	c->payload_cap = 0;
	c->cur_data = NULL;
	c->decoded = NULL;
	c->decoded_cap = 0;
}

void cursor_fini(struct dump_cursor *c)
{
	free(c->payload);
	free(c->decoded);
	c->payload = NULL;
	c->decoded = NULL;
	c->cur = NULL;
}

/* Size word of a page in a decoded linked chunk that did not decode. */
#define PAGE_UNDECODABLE 0x40000000u

/* A linked chunk's pages can only be decoded in order, each with the
 * pages before it as its dictionary: decode them all into one buffer, and
 * point the per-page table at it as raw pages. A page that fails spoils
 * the pages after it (they may copy from it), never those before. */
static int decode_linked(struct dump_cursor *c, const struct kdi_pages_view *v)
{
	uint32_t ps = c->d->start.page_size;
	size_t need = (size_t)v->nstored * ps;	/* <= KDI_LINKED_MAX (pages_parse) */
	int failed = 0;

	if (need > c->decoded_cap) {
		uint8_t *nb = realloc(c->decoded, need);
		if (!nb)
			return -ENOMEM;
		c->decoded = nb;
		c->decoded_cap = need;
	}
	size_t out = 0;
	for (uint32_t i = 0; i < v->count; i++) {
		uint32_t w = c->page_word[i];
		if (!w)
			continue;
		if (failed) {
			c->page_word[i] = PAGE_UNDECODABLE;
			continue;
		}
		const uint8_t *src = v->data + c->page_off[i];
		uint8_t *dst = c->decoded + out;
		uint32_t sz = w & KDI_PAGE_SIZEMASK;
		if (w & KDI_PAGE_LZ4) {
			size_t dl = out < 65536 ? out : 65536;
			int n = LZ4_decompress_safe_usingDict((const char *)src, (char *)dst, sz, ps,
							      (const char *)dst - dl, dl);
			if (n != (int)ps) {
				failed = 1;
				c->page_word[i] = PAGE_UNDECODABLE;
				continue;
			}
		} else {
			memcpy(dst, src, ps);
		}
		c->page_off[i] = out;
		c->page_word[i] = ps;
		out += ps;
	}
	c->cur_data = c->decoded;
	return 0;
}

static int load_block(struct dump_cursor *c, const struct page_block *b)
{
	const struct dumpfile *d = c->d;
	struct kdi_pages_view v;

	if (c->cur == b)
		return 0;
	c->cur = NULL;
	if (b->payload_len > c->payload_cap) {
		uint8_t *nb = realloc(c->payload, b->payload_len);
		if (!nb)
			return -ENOMEM;
		c->payload = nb;
		c->payload_cap = b->payload_len;
	}
	ssize_t n = read_full_at(d->fd, c->payload, b->payload_len, b->payload_off);
	if (n != (ssize_t)b->payload_len)
		return -EIO;
	/* The payload was hash-checked when loading; parse again anyway, as
	 * the device could have changed underneath since. */
	if (pages_parse(c->payload, b->payload_len, d->start.page_size, &v) < 0)
		return -EBADMSG;
	/* Per bit index: where its data starts and its size word, so that a
	 * page lookup is O(1) after the block is loaded. */
	uint32_t off = 0, k = 0;
	for (uint32_t i = 0; i < v.count; i++) {
		c->page_word[i] = 0;
		if (!((v.bitmap[i / 8] >> (i % 8)) & 1))
			continue;
		uint32_t w;
		memcpy(&w, &v.sizes[k++], 4);
		c->page_off[i] = off;
		c->page_word[i] = w;
		off += w & KDI_PAGE_SIZEMASK;
	}
	c->cur_data = v.data;
	if (v.flags & KDI_PAGES_LINKED) {
		int r = decode_linked(c, &v);
		if (r < 0)
			return r;
	}
	c->cur = b;
	return 0;
}

int dumpfile_page(struct dump_cursor *c, uint64_t pfn, uint8_t *out)
{
	uint32_t idx, ps = c->d->start.page_size;
	const struct page_block *b = dumpfile_find(c->d, pfn, &idx);

	if (!b)
		return -ENOENT;
	int r = load_block(c, b);
	if (r < 0)
		return r;
	uint32_t w = c->page_word[idx];
	uint32_t sz = w & KDI_PAGE_SIZEMASK;
	if (w == PAGE_UNDECODABLE)
		return -EBADMSG;
	const uint8_t *src = c->cur_data + c->page_off[idx];
	if (!(w & KDI_PAGE_LZ4)) {
		memcpy(out, src, ps);
		return 0;
	}
	int n = LZ4_decompress_safe((const char *)src, (char *)out, sz, ps);
	return n == (int)ps ? 0 : -EBADMSG;
}
