#include "dumpfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../lib/io.h"
#include "seal.h"

_Static_assert(KDI_SEAL_XCHACHA == SEAL_XCHACHA && KDI_SEAL_AEGIS256 == SEAL_AEGIS256,
	       "format.h and seal.h name the schemes alike");

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

/* A dump whose START was lost: the page size and the machine, from
 * VMCOREINFO (PAGESIZE; the arch's own keys). */
static void start_from_vmcoreinfo(struct dumpfile *d)
{
	const char *vi = d->vmcoreinfo, *p = strstr(vi, "PAGESIZE=");
	unsigned long ps = p ? strtoul(p + 9, NULL, 10) : 0;

	if (ps >= 512 && ps <= 65536 && !(ps & (ps - 1)))
		d->start.page_size = (uint32_t)ps;
	if (strstr(vi, "NUMBER(kimage_voffset)="))
		d->start.e_machine = 183;	/* EM_AARCH64 */
	else if (strstr(vi, "SYMBOL(init_top_pgt)="))
		d->start.e_machine = 62;	/* EM_X86_64 */
}

/* A part of the stream lost and gone around: chunks [seq, next) from
 * device offset at, bytes long; kind says how the reader went on. */
static void note_hole(struct dumpfile *d, const char *why, uint64_t seq, uint64_t next,
		      uint64_t at, uint64_t bytes, int kind)
{
	if (!d->gaps)
		snprintf(d->gap_why, sizeof d->gap_why, "%s", why);
	d->gaps++;
	d->read_gaps += kind == KDI_RESUME_UNREADABLE;
	d->damaged += kind == KDI_RESUME_DAMAGE;
	d->gap_bytes += bytes;
	d->gap_chunks += next - seq;
	if (d->nholes < sizeof d->holes / sizeof d->holes[0])
		d->holes[d->nholes++] = (struct dump_hole){ seq, next, at, bytes, d->nblocks, kind };
}

static const struct page_block *block_in(const struct page_block *b, size_t n, uint64_t pfn);

static int bit(const uint8_t *bm, uint32_t i)
{
	return bm && ((bm[i / 8] >> (i % 8)) & 1);
}

/* Does the chunk store (or record as zero) a pfn that one of b[0, n),
 * an earlier pass, did? The passes are disjoint. */
static int overlaps(const struct page_block *b, size_t n, const struct kdi_pages_view *v)
{
	for (uint32_t i = 0; n && i < v->count; i++) {
		if (!bit(v->bitmap, i) && !bit(v->zbitmap, i))
			continue;
		const struct page_block *o = block_in(b, n, v->pfn + i);
		uint32_t j = o ? v->pfn + i - o->pfn : 0;
		if (o && (bit(o->bitmap, j) || bit(o->zbitmap, j)))
			return 1;
	}
	return 0;
}

/* overlaps() over blocks[lo, hi): none when the range is empty (blocks
 * may then be NULL, and no pointer is made from it). */
static int overlaps_in(const struct dumpfile *d, size_t lo, size_t hi, const struct kdi_pages_view *v)
{
	return hi > lo && overlaps(d->blocks + lo, hi - lo, v);
}

static int add_block(struct dumpfile *d, const struct kdi_pages_view *v,
		     uint64_t off, const struct kdi_chunk *h, size_t *cap)
{
	int later = (v->flags & KDI_PAGES_LATER) != 0;
	int early = (v->flags & KDI_PAGES_EARLY) != 0;
	int startup = (v->flags & KDI_PAGES_STARTUP) != 0;
	/* where this chunk's pass (or tier) starts in blocks[] */
	size_t lo = startup ? 0 : early ? d->nstartup : later ? d->nfirst : d->nearly;

	if (later && d->start.format_version < 2)
		return -EBADMSG;	/* version 1 has one pass */
	if (early && d->start.format_version < 3)
		return -EBADMSG;	/* ... version 2 no EARLY one */
	if (early && d->nearly != d->nblocks)
		return -EBADMSG;	/* the EARLY pass ended with the first other chunk */
	/* ... versions 8 and 9 its startup tier (a guessed version, START
	 * lost, may be any) */
	if (startup && !kdi_version_tiers(d->start.format_version) && !d->start_lost)
		return -EBADMSG;
	if (startup && d->nstartup != d->nblocks)
		return -EBADMSG;	/* the startup tier ended with the first other chunk */
	if (!later && d->nfirst != d->nblocks)
		return -EBADMSG;	/* the first pass ended with the first LATER chunk */
	if (d->nblocks > lo) {
		const struct page_block *prev = &d->blocks[d->nblocks - 1];
		if (v->pfn < prev->pfn + prev->count)
			return -EBADMSG;	/* pfns must strictly increase, per pass */
	}
	/* (each tier of the EARLY pass is in pfn order, the two together
	 * not) */
	if (!early && (overlaps_in(d, 0, d->nstartup, v) || overlaps_in(d, d->nstartup, d->nearly, v)))
		return -EBADMSG;
	if (early && !startup && overlaps_in(d, 0, d->nstartup, v))
		return -EBADMSG;
	if (later && overlaps_in(d, d->nearly, d->nfirst, v))
		return -EBADMSG;
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
	b->payload_len = h->len;
	b->payload_hash = h->payload_hash;
	b->seq = h->seq;
	b->sealed = (h->flags & KDI_CHUNK_SEALED) != 0;
	d->nblocks++;
	if (startup)
		d->nstartup = d->nblocks;
	if (early)
		d->nearly = d->nblocks;
	if (!later)
		d->nfirst = d->nblocks;
	d->pages_stored += v->nstored;
	d->pages_zero += v->nzero;
	d->bytes_stored += h->len;
	return 0;
}

enum { UNSEAL_USE, UNSEAL_SKIP };

/* A chunk of a sealed dump (version 5 on), before it is used: checks
 * that it is sealed as its type must be (chunk_seal_mode), reads SEAL, and
 * with the key opens a sealed chunk in place or checks a tagged one,
 * leaving h->len the clear length. UNSEAL_USE: go on with buf;
 * UNSEAL_SKIP: locked, the chunk's content stays unknown; or -EBADMSG
 * with why, -ENOMEM. */
static int unseal(struct dumpfile *d, struct kdi_chunk *h, uint8_t *buf, const uint8_t *sk,
		  unsigned how, char *why, size_t wsz)
{
	uint32_t mode = chunk_seal_mode(h->type, d->start.format_version);

	if (h->flags != mode) {
		snprintf(why, wsz, "chunk %llu (type %u) is %s, where a sealed dump's must be %s",
			 (unsigned long long)h->seq, h->type,
			 h->flags == KDI_CHUNK_SEALED ? "sealed" : h->flags ? "tagged" : "in the clear",
			 mode == KDI_CHUNK_SEALED ? "sealed" : mode ? "tagged" : "in the clear");
		return -EBADMSG;
	}
	if (!mode)
		return UNSEAL_USE;
	/* SEAL says the scheme, and so the tag's length; with START lost
	 * (the version a guess) it sets the version too. */
	if (h->type == KDI_CH_SEAL && !d->sealed && h->len >= sizeof d->seal) {
		uint32_t scheme;
		memcpy(&scheme, buf, sizeof scheme);
		if (d->start_lost && scheme == KDI_SEAL_AEGIS256)
			d->start.format_version = KDI_FORMAT_AEGIS;
		if (scheme != seal_scheme_of(d->start.format_version)) {
			snprintf(why, wsz, "the dump is sealed with scheme %u, which is not format "
				 "version %u's", scheme, d->start.format_version);
			return -EBADMSG;
		}
	}
	uint32_t tb = chunk_tags_len(h->type, d->start.format_version);
	if (h->len < tb) {
		snprintf(why, wsz, "chunk %llu (type %u) is too short for its tag",
			 (unsigned long long)h->seq, h->type);
		return -EBADMSG;
	}
	uint32_t len = h->len - tb;
	struct seal_where w = { .dump_id = h->dump_id, .seq = h->seq, .type = h->type, .len = len };

	if (h->type == KDI_CH_SEAL) {
		if (d->sealed || len != sizeof d->seal) {
			snprintf(why, wsz, "chunk %llu: a second SEAL, or one of the wrong size",
				 (unsigned long long)h->seq);
			return -EBADMSG;
		}
		memcpy(&d->seal, buf, sizeof d->seal);
		d->seal.release[sizeof d->seal.release - 1] = 0;
		if (d->seal.flags) {
			snprintf(why, wsz, "the SEAL record has flags %#x, none of which is defined",
				 d->seal.flags);
			return -EBADMSG;
		}
		d->sealed = 1;
		d->locked = 1;
		if (!sk)
			return UNSEAL_USE;
		d->key = calloc(1, sizeof *d->key);
		if (!d->key)
			return -ENOMEM;
		int r = seal_open_begin(d->key, d->seal.scheme, sk, d->seal.eph_pk, d->seal.key_id);
		if (r < 0) {
			seal_end(d->key);
			free(d->key);
			d->key = NULL;
			d->wrong_key = 1;
			return UNSEAL_USE;
		}
		/* Its tag vouches for START and CHAIN, read before it. */
		uint8_t pre[sizeof d->start + sizeof d->chain];
		size_t pl = 0;
		memcpy(pre, &d->start, sizeof d->start);
		pl += sizeof d->start;
		if (d->have_chain) {
			memcpy(pre + pl, &d->chain, sizeof d->chain);
			pl += sizeof d->chain;
		}
		if (seal_check_auth(d->key, &w, pre, pl, buf, len, buf + len) < 0) {
			/* Its tag covers START and CHAIN: with either lost it
			 * cannot be checked, and nothing is opened (closed, not
			 * open, on doubt). */
			if (d->start_lost || !d->have_chain)
				snprintf(why, wsz, "chunk %u (%s) was lost, and the SEAL record's tag covers "
					 "it: the sealed dump cannot be opened", d->start_lost ? 0 : 1,
					 d->start_lost ? "START" : "CHAIN");
			else
				snprintf(why, wsz, "the dump's START, CHAIN or SEAL record fails its "
					 "authentication tag: it was changed");
			return -EBADMSG;
		}
		d->locked = 0;
		h->len = len;
		return UNSEAL_USE;
	}
	if (!d->sealed) {
		snprintf(why, wsz, d->gaps ? "chunk %llu (type %u) is sealed, but no SEAL record came "
			 "before it (lost: %.80s)" : "chunk %llu (type %u) is sealed, but no SEAL "
			 "record came before it%.0s",
			 (unsigned long long)h->seq, h->type, d->gap_why);
		return -EBADMSG;
	}
	if (mode == KDI_CHUNK_AUTH) {
		/* A PAD holds zeros, and its tag binds its place and length
		 * (capture/writer.c): bytes other than zeros are not its own. */
		int pad = h->type == KDI_CH_PAD;
		for (uint32_t i = 0; pad && i < len; i++)
			if (buf[i]) {
				snprintf(why, wsz, "chunk %llu (PAD) holds bytes other than zeros: changed",
					 (unsigned long long)h->seq);
				return -EBADMSG;
			}
		if (d->locked) {
			if (h->type == KDI_CH_END)
				d->end_unverified = 1;
		} else if (seal_check_auth(d->key, &w, pad ? NULL : buf, pad ? 0 : len, NULL, 0,
					   buf + len) < 0) {
			snprintf(why, wsz, "chunk %llu (type %u) fails its authentication tag: "
				 "changed, or torn", (unsigned long long)h->seq, h->type);
			return -EBADMSG;
		}
		h->len = len;
		return UNSEAL_USE;
	}
	if (d->locked) {
		d->sealed_chunks++;
		if (h->type == KDI_CH_PAGES)
			d->sealed_pages_bytes += h->len;
		return UNSEAL_SKIP;
	}
	/* libsodium checks the tag before it writes a byte of plaintext,
	 * and wipes the buffer when it fails. A PAGES chunk of version 7
	 * opens its index here, and its pages here too unless they are to
	 * be opened when read (DUMPFILE_DEFER_PAGES: save opens each once). */
	int bad;
	if ((how & DUMPFILE_DEFER_PAGES) && chunk_in_parts(h->type, d->start.format_version)) {
		/* (Pages that are all zeros, none stored, are not read: their
		 * empty part is checked now.) */
		long hl = pages_open_index(d->key, &w, buf);
		bad = hl < 0 || ((size_t)hl == len && pages_open_data(d->key, &w, buf, len) < 0);
	} else {
		bad = chunk_open(d->key, &w, d->start.format_version, buf) < 0;
	}
	if (bad) {
		snprintf(why, wsz, "chunk %llu (type %u) fails its authentication tag: changed, torn, "
			 "or moved from another place", (unsigned long long)h->seq, h->type);
		return -EBADMSG;
	}
	h->len = len;
	return UNSEAL_USE;
}

/* What END can be checked against when the dump is locked: the chunks
 * and stream bytes, which are in the clear. */
static void check_end_locked(struct dumpfile *d, uint64_t nr_chunks, uint64_t bytes)
{
	char w[200];

	w[0] = 0;
	if (!d->have_end || d->why[0])
		return;
	if (d->end.nr_chunks != nr_chunks)
		snprintf(w, sizeof w, "END counts %llu chunks, the stream has %llu",
			 (unsigned long long)d->end.nr_chunks, (unsigned long long)nr_chunks);
	else if (d->end.bytes_out != bytes)
		snprintf(w, sizeof w, "END counts %llu stream bytes, the stream has %llu",
			 (unsigned long long)d->end.bytes_out, (unsigned long long)bytes);
	if (w[0]) {
		stopped(d, w);
		d->have_end = 0;
		d->end_disagrees = 1;
	}
}

struct pfn_range { uint64_t lo, hi; };

static int range_cmp(const void *a, const void *b)
{
	const struct pfn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The pfns the capture scans: every segment's [paddr, paddr + filesz)
 * rounded out to whole pages, overlaps once (the kernel-text PT_LOAD
 * aliases RAM), in pfn order, as the pipeline walks them. *total is how
 * many there are, *reach the pfn the walk is at after `upto` of them. */
static int scan_pfns(const struct dumpfile *d, uint64_t upto, uint64_t *total, uint64_t *reach)
{
	uint32_t ps = d->start.page_size, n = 0;
	struct pfn_range *r = malloc((d->nr_seg ? d->nr_seg : 1) * sizeof *r);

	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nr_seg; i++) {
		const struct kdi_segment *s = &d->seg[i];
		if (s->filesz)
			r[n++] = (struct pfn_range){ s->paddr / ps, (s->paddr + s->filesz - 1) / ps + 1 };
	}
	qsort(r, n, sizeof *r, range_cmp);
	uint64_t seen = 0, end = 0;
	*reach = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t lo = r[k].lo > end ? r[k].lo : end;
		if (r[k].hi <= lo)
			continue;
		if (seen <= upto)
			*reach = upto - seen < r[k].hi - lo ? lo + (upto - seen) : r[k].hi;
		seen += r[k].hi - lo;
		end = r[k].hi;
	}
	*total = seen;
	free(r);
	return 0;
}

/* Every pfn scanned is stored or excluded for one reason (FORMAT.md END). */
static int classes_add_up(const struct kdi_end *e)
{
	uint64_t sum = e->pages_stored;

	for (int c = 0; c < KDI_EX_NCLASSES; c++) {
		if (e->excluded[c] > UINT64_MAX - sum)
			return 0;
		sum += e->excluded[c];
	}
	return sum == e->pages_total;
}

/* END states what the writer put into the stream. With the checksums
 * forged again, chunks can be deleted or retyped, or an END moved up,
 * and every chunk still checks out: only these counts tell. A stream
 * that disagrees with its END is incomplete, and END is not used. Also
 * sets pfn_limit, which save_kdump's bitmaps keep to. */
static int check_end(struct dumpfile *d, uint64_t nr_chunks, uint64_t bytes)
{
	const struct kdi_end *e = &d->end;
	uint64_t total, reach;
	char w[200];

	int r = scan_pfns(d, d->have_end ? e->pages_total : 0, &total, &reach);
	if (r < 0)
		return r;
	w[0] = 0;
	if (!d->have_end || d->why[0])
		;
	else if (e->nr_chunks != nr_chunks)
		snprintf(w, sizeof w, "END counts %llu chunks, the stream has %llu",
			 (unsigned long long)e->nr_chunks, (unsigned long long)nr_chunks);
	else if (e->bytes_out != bytes)
		snprintf(w, sizeof w, "END counts %llu stream bytes, the stream has %llu",
			 (unsigned long long)e->bytes_out, (unsigned long long)bytes);
	else if (d->gaps > d->read_gaps + d->damaged && !(e->status & KDI_ST_INCOMPLETE))
		snprintf(w, sizeof w, "the stream has %u gaps from write errors, but END says complete",
			 d->gaps - d->read_gaps - d->damaged);
	else if (d->gaps ? e->pages_stored < d->pages_stored : e->pages_stored != d->pages_stored)
		snprintf(w, sizeof w, "END counts %llu pages stored, the PAGES chunks hold %llu",
			 (unsigned long long)e->pages_stored, (unsigned long long)d->pages_stored);
	else if (d->gaps ? e->bytes_in < d->pages_stored * d->start.page_size :
		 e->bytes_in != d->pages_stored * d->start.page_size)
		snprintf(w, sizeof w, "END counts %llu bytes stored uncompressed, the PAGES chunks "
			 "hold %llu pages of %u", (unsigned long long)e->bytes_in,
			 (unsigned long long)d->pages_stored, d->start.page_size);
	else if (!classes_add_up(e))
		snprintf(w, sizeof w, "END counts %llu pages scanned, not the %llu stored plus "
			 "those excluded", (unsigned long long)e->pages_total,
			 (unsigned long long)e->pages_stored);
	else if (e->pages_total > total ||
		 (e->pages_total != total && !(e->status & KDI_ST_INCOMPLETE)))
		snprintf(w, sizeof w, "END counts %llu pages scanned, the segments describe %llu",
			 (unsigned long long)e->pages_total, (unsigned long long)total);
	if (w[0]) {
		stopped(d, w);
		d->have_end = 0;
		d->end_disagrees = 1;
		reach = 0;
	}
	/* The capture scans every pfn the segments describe and counts it;
	 * segments beyond what END counts are not shown to be memory. */
	if (d->have_end && !d->why[0] && e->pages_total == total) {
		d->pfn_limit = UINT64_MAX;
		return 0;
	}
	/* The first pass got as far as its last chunk; the EARLY pass's
	 * pages lie anywhere, and what it stored is vouched for too. */
	if (d->nfirst) {
		const struct page_block *b = &d->blocks[d->nfirst - 1];
		if (b->pfn + b->count > reach)
			reach = b->pfn + b->count;
	}
	if (d->nearly) {
		const struct page_block *b = &d->blocks[d->nearly - 1];
		if (b->pfn + b->count > reach)
			reach = b->pfn + b->count;
	}
	if (d->nstartup) {
		const struct page_block *b = &d->blocks[d->nstartup - 1];
		if (b->pfn + b->count > reach)
			reach = b->pfn + b->count;
	}
	/* A LATER chunk is only written once the first pass has scanned
	 * every pfn. */
	if (d->nblocks > d->nfirst) {
		r = scan_pfns(d, total, &total, &reach);
		if (r < 0)
			return r;
	}
	d->pfn_limit = reach;
	return 0;
}

int dumpfile_load(struct dumpfile *d, int fd, uint64_t base, uint64_t limit)
{
	return dumpfile_load_key(d, fd, base, limit, NULL);
}

int dumpfile_load_key(struct dumpfile *d, int fd, uint64_t base, uint64_t limit,
		      const uint8_t *sk)
{
	return dumpfile_load_how(d, fd, base, limit, sk, 0);
}

int dumpfile_load_how(struct dumpfile *d, int fd, uint64_t base, uint64_t limit,
		      const uint8_t *sk, unsigned how)
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
	if (ret < 0 && ret != -EPROTONOSUPPORT && ret != -ENOMEM) {
		/* START is damaged, not necessarily the dump: a dump is never
		 * taken for "none" while chunks of it are there. */
		char why[sizeof d->start_why];
		if (r.why[0])
			snprintf(why, sizeof why, "START: %s", r.why);
		else
			snprintf(why, sizeof why, "START (chunk 0) at offset %llu: its header does "
				 "not check out", (unsigned long long)base);
		char said[sizeof r.why];
		snprintf(said, sizeof said, "%s", r.why);
		int k = reader_recover(&r, fd, base, limit);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			snprintf(r.why, sizeof r.why, "%s", said);	/* as reader_open left it */
		if (k == 0) {
			d->start_lost = 1;
			snprintf(d->start_why, sizeof d->start_why, "%s", why);
			d->start = (struct kdi_start){ .format_version = KDI_FORMAT_PLAIN, .page_size = 4096,
						       .ei_class = 2, .ei_data = 1 };
			ret = 0;
		}
	}
	if (ret < 0) {
		snprintf(d->why, sizeof d->why, "%s", r.why);
		return ret;
	}
	d->dump_id = r.dump_id;
	d->nr_chunks = 1;	/* START */
	if (d->start_lost) {
		/* What START said is gone: what follows is a hole from base. */
		note_hole(d, d->start_why, 0, r.next_seq, base, r.pos - base, KDI_RESUME_DAMAGE);
		d->nr_chunks = r.next_seq;
	}

	for (;;) {
		int n = reader_next(&r, &h, &buf, &cap);
		if (n == -ENOMEM) {
			ret = n;
			goto out;
		}
		if (n < 0) {
			/* A write error the capture went around (GAP), bytes
			 * that cannot be read now, or a chunk that does not
			 * check out: the stream goes on past them. */
			uint64_t broke = r.pos, seq = r.next_seq;
			char why[sizeof r.why];
			snprintf(why, sizeof why, "%s", r.why);
			int rs = reader_resync(&r, d->start.format_version);
			if (rs == -ENOMEM) {
				ret = rs;
				goto out;
			}
			if (rs == 1) {
				note_hole(d, why, seq, r.next_seq, broke, r.pos - broke, r.resumed);
				continue;
			}
			stopped(d, why);
			break;
		}
		if (n == 0)
			break;
		int e = 0;
		/* START lost: a chunk with sealing's flags says the dump is sealed. */
		if (d->start_lost && h.flags) {
			/* A tagged PAD or GAP says version 6 (format.h). */
			uint32_t v = h.type == KDI_CH_PAD || h.type == KDI_CH_GAP ?
					     KDI_FORMAT_SEALED_ALL : KDI_FORMAT_SEALED;
			if (d->start.format_version < v)
				d->start.format_version = v;
		}
		/* The header as on the device: a PAGES chunk is found again by it. */
		struct kdi_chunk dev = h;
		if (kdi_version_sealed(d->start.format_version)) {
			char w[200];
			int u = unseal(d, &h, buf, sk, how, w, sizeof w);
			if (u == -ENOMEM) {
				ret = u;
				goto out;
			}
			/* SEAL itself, or a chunk before it, decides what any of
			 * the dump can be trusted for: there the stream stops.
			 * Past it, a chunk that fails its tag or comes in the
			 * wrong mode is damage like any other: left out, said,
			 * and the stream goes on (each chunk's tag binds it to
			 * its seq, dump and type, so none can stand in for it). */
			if (u < 0 && (h.type == KDI_CH_SEAL || !d->sealed)) {
				stopped(d, w);
				d->have_end = 0;
				break;
			}
			if (u < 0) {
				note_hole(d, w, h.seq, h.seq + 1, r.pos - chunk_span(dev.len),
					  chunk_span(dev.len), KDI_RESUME_DAMAGE);
				continue;
			}
			if (u == UNSEAL_SKIP) {
				d->stream_end = r.pos;
				d->nr_chunks = h.seq + 1;
				continue;
			}
		} else if (h.type == KDI_CH_SEAL) {
			stopped(d, "a SEAL record in a dump of a version before sealing");
			break;
		}
		switch (h.type) {
		case KDI_CH_NOTES:
			e = keep_copy(&d->notes, &d->notes_len, buf, h.len);
			break;
		case KDI_CH_VMCOREINFO: {
			size_t l;
			e = keep_copy((uint8_t **)&d->vmcoreinfo, &l, buf, h.len);
			if (!e && d->start_lost)
				start_from_vmcoreinfo(d);
			break;
		}
		case KDI_CH_SEGMENTS: {
			if (d->start_lost && !d->seg && !d->start.nr_segments &&
			    h.len / sizeof(struct kdi_segment) <= KDI_MAX_SEGMENTS)
				d->start.nr_segments = h.len / sizeof(struct kdi_segment);
			if (h.len % sizeof(struct kdi_segment) ||
			    h.len / sizeof(struct kdi_segment) != d->start.nr_segments || d->seg) {
				e = -EBADMSG;
				break;
			}
			/* Check every entry before keeping any. */
			for (uint32_t i = 0; i < h.len / sizeof(struct kdi_segment); i++) {
				struct kdi_segment s;
				memcpy(&s, buf + i * sizeof s, sizeof s);
				if (!segment_valid(&s))
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
		case KDI_CH_DEBUGGER:
			/* Only what info says of a cut dump: a record that does
			 * not fit is left unsaid, never a reason to stop. */
			if ((h.len == sizeof d->dbg || h.len == KDI_DEBUGGER_V3_SIZE) && !d->have_dbg &&
			    !d->nblocks) {
				struct kdi_debugger g = { 0 };
				memcpy(&g, buf, h.len);
				if (g.startup_ranges > g.startup_pfns || g.startup_pfns > g.pfns)
					g.startup_pfns = g.startup_ranges = 0;
				if (g.pfns && g.ranges && g.ranges <= g.pfns) {
					d->dbg = g;
					d->have_dbg = 1;
				}
			}
			break;
		case KDI_CH_PAGES: {
			struct kdi_pages_view v;
			e = pages_parse(buf, h.len, d->start.page_size, &v);
			if (!e && !d->seg)
				e = -EBADMSG;	/* pages before the layout */
			if (!e)
				e = add_block(d, &v, reader_payload_offset(&r, &dev), &dev, &bcap);
			break;
		}
		case KDI_CH_STEPS:
			/* Said by info; never a reason to stop. The memory map's
			 * flag is START's from before this record. */
			if (h.len >= sizeof d->steps && h.len - sizeof d->steps <= KDI_STEPS_TEXT_MAX &&
			    !d->have_steps && !d->nblocks) {
				size_t tl = h.len - sizeof d->steps;
				memcpy(&d->steps, buf, sizeof d->steps);
				d->have_steps = 1;
				if (d->steps.flags & KDI_STEPS_MEMMAP_EXCLUDED)
					d->start.flags |= KDI_START_MEMMAP_EXCLUDED;
				if (tl && (d->steps_text = malloc(tl + 1))) {
					memcpy(d->steps_text, buf + sizeof d->steps, tl);
					d->steps_text[tl] = 0;
				}
			}
			break;
		case KDI_CH_SETTINGS:
			if (!d->settings && h.len < 4096 && (d->settings = malloc(h.len + 1))) {
				memcpy(d->settings, buf, h.len);
				d->settings[h.len] = 0;
			}
			break;
		case KDI_CH_DMESG:
			e = keep_copy((uint8_t **)&d->dmesg, &d->dmesg_len, buf, h.len);
			break;
		case KDI_CH_GAP:
			/* reader_resync vouched for it; one found in sequence
			 * (no break before it) lost nothing the reader saw. */
			break;
		case KDI_CH_CHAIN:
			/* Where the dump sits among those on the device: the
			 * second chunk, or it is not this dump's. */
			if (h.len != sizeof d->chain || h.seq != 1 || d->have_chain) {
				e = -EBADMSG;
				break;
			}
			memcpy(&d->chain, buf, sizeof d->chain);
			d->have_chain = 1;
			break;
		case KDI_CH_END:
			/* Its size is its version's (format.h). */
			if (h.len != (d->start.format_version >= 4 ? sizeof d->end : KDI_END_V3_SIZE)) {
				e = -EBADMSG;
				break;
			}
			memset(&d->end, 0, sizeof d->end);
			memcpy(&d->end, buf, h.len);
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
			/* Intact on the device but not what its type must be:
			 * left out like damage, and the stream goes on. */
			char w[200];
			snprintf(w, sizeof w, "chunk %llu (type %u) at offset %llu is malformed",
				 (unsigned long long)h.seq, h.type,
				 (unsigned long long)(r.pos - chunk_span(dev.len)));
			if (h.type == KDI_CH_END)
				d->have_end = 0;
			note_hole(d, w, h.seq, h.seq + 1, r.pos - chunk_span(dev.len),
				  chunk_span(dev.len), KDI_RESUME_DAMAGE);
			continue;
		}
		d->stream_end = r.pos;
		d->nr_chunks = h.seq + 1;
	}
	ret = 0;
	if (kdi_version_sealed(d->start.format_version) && !d->sealed && !d->why[0])
		stopped(d, "a sealed dump's version without its SEAL record");
	if (d->locked) {
		/* Without the key only the clear parts are known: the caller
		 * says so (info) or refuses (save, dmesg). */
		check_end_locked(d, d->nr_chunks, d->stream_end - base);
		goto out;
	}
	if (!d->vmcoreinfo || !d->seg) {
		char w[sizeof d->why];
		if (d->gaps)	/* what took it */
			snprintf(w, sizeof w, "the dump's metadata (VMCOREINFO, segments) is missing; "
				 "lost: %.120s", d->gap_why);
		else
			snprintf(w, sizeof w, "the dump's metadata (VMCOREINFO, segments) is missing");
		stopped(d, w);
		ret = -EBADMSG;
		goto out;
	}
	/* The level START said, as far as END's exclusions show it: a
	 * class left out names its bit (a lower bound, for save's header). */
	if (d->start_lost && d->have_end) {
		static const uint32_t bitof[] = { [KDI_EX_ZERO] = 1, [KDI_EX_CACHE] = 2,
						  [KDI_EX_CACHE_PRIVATE] = 4, [KDI_EX_USER] = 8,
						  [KDI_EX_FREE] = 16 };
		for (int c = 0; c <= KDI_EX_FREE; c++)
			if (d->end.excluded[c])
				d->start.dump_level |= bitof[c];
	}
	ret = check_end(d, d->nr_chunks, d->stream_end - base);
out:
	free(buf);
	return ret;
}

int dumpfile_complete(const struct dumpfile *d)
{
	return d->have_end && !d->why[0] && !d->gaps && !(d->end.status & KDI_ST_INCOMPLETE);
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
	free(d->settings);
	free(d->steps_text);
	free(d->seg);
	if (d->key) {
		seal_end(d->key);
		free(d->key);
	}
	memset(d, 0, sizeof *d);
}

/* The block of b[0, n) (one pass, increasing pfns) that covers pfn. */
static const struct page_block *block_in(const struct page_block *b, size_t n, uint64_t pfn)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pfn < b[mid].pfn)
			hi = mid;
		else if (pfn >= b[mid].pfn + b[mid].count)
			lo = mid + 1;
		else
			return &b[mid];
	}
	return NULL;
}

/* The block holding pfn's decision (stored or zero), EARLY pass first;
 * else a block that covers it, or NULL. */
static const struct page_block *block_of(const struct dumpfile *d, uint64_t pfn)
{
	const size_t cut[DUMP_PASSES + 1] = { 0, d->nstartup, d->nearly, d->nfirst, d->nblocks };
	const struct page_block *any = NULL;

	for (int k = 0; k < DUMP_PASSES; k++) {
		if (cut[k + 1] == cut[k])
			continue;
		const struct page_block *b = block_in(d->blocks + cut[k], cut[k + 1] - cut[k], pfn);
		uint32_t i = b ? pfn - b->pfn : 0;
		if (b && (bit(b->bitmap, i) || bit(b->zbitmap, i)))
			return b;
		if (!any)
			any = b;
	}
	return any;
}

/* Which pass b is in: 0 the startup tier, 1 the rest of EARLY, 2 first,
 * 3 LATER. */
static int pass_of(const struct dumpfile *d, const struct page_block *b)
{
	size_t k = (size_t)(b - d->blocks);

	return k < d->nstartup ? 0 : k < d->nearly ? 1 : k < d->nfirst ? 2 : 3;
}

int dumpfile_is_zero(const struct dumpfile *d, uint64_t pfn)
{
	const struct page_block *b = block_of(d, pfn);

	return b && bit(b->zbitmap, pfn - b->pfn);
}

/* The first pfn >= pfn stored in b[0, n), or UINT64_MAX. */
static uint64_t next_in(const struct page_block *b, size_t n, uint64_t pfn)
{
	size_t lo = 0, hi = n;

	/* first block that ends after pfn */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid].pfn + b[mid].count <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < n; k++)
		for (uint32_t i = pfn > b[k].pfn ? pfn - b[k].pfn : 0; i < b[k].count; i++)
			if (bit(b[k].bitmap, i))
				return b[k].pfn + i;
	return UINT64_MAX;
}

uint64_t dumpfile_next_stored(const struct dumpfile *d, uint64_t pfn)
{
	const size_t cut[DUMP_PASSES + 1] = { 0, d->nstartup, d->nearly, d->nfirst, d->nblocks };
	uint64_t best = UINT64_MAX;

	for (int k = 0; k < DUMP_PASSES; k++) {
		uint64_t a = cut[k + 1] > cut[k] ?
			     next_in(d->blocks + cut[k], cut[k + 1] - cut[k], pfn) : UINT64_MAX;
		if (a < best)
			best = a;
	}
	return best;
}

const struct page_block *dumpfile_find(const struct dumpfile *d, uint64_t pfn, uint32_t *idx)
{
	const struct page_block *b = block_of(d, pfn);
	uint32_t i = b ? pfn - b->pfn : 0;

	if (!b || !bit(b->bitmap, i))
		return NULL;
	*idx = i;
	return b;
}

void cursor_init(struct dump_cursor *c, const struct dumpfile *d)
{
	c->d = d;
	for (int k = 0; k < DUMP_PASSES; k++) {
		struct dump_slot *s = &c->s[k];
		s->cur = NULL;
		s->stale = NULL;
		s->payload = NULL;
		s->payload_cap = 0;
		s->cur_data = NULL;
		s->decoded = NULL;
		s->decoded_cap = 0;
	}
}

void cursor_fini(struct dump_cursor *c)
{
	for (int k = 0; k < DUMP_PASSES; k++) {
		struct dump_slot *s = &c->s[k];
		free(s->payload);
		free(s->decoded);
		s->payload = NULL;
		s->decoded = NULL;
		s->cur = NULL;
	}
}

/* Size word of a page in a decoded linked chunk that did not decode. */
#define PAGE_UNDECODABLE 0x40000000u

/* A linked chunk's pages can only be decoded in order, each with the
 * pages before it as its dictionary: decode them all into one buffer, and
 * point the per-page table at it as raw pages. A page that fails spoils
 * the pages after it (they may copy from it), never those before. */
static int decode_linked(struct dump_slot *c, uint32_t ps, const struct kdi_pages_view *v)
{
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

/* Is the payload just read the one the index was built from? */
static int same_block(const struct page_block *b, const uint8_t *p, uint32_t len, int hashed,
		      const struct kdi_pages_view *v)
{
	static const char none;
	size_t bl = (b->count + 7) / 8;

	return (hashed || XXH64(len ? (const void *)p : &none, len, 0) == b->payload_hash) &&
	       v->pfn == b->pfn && v->count == b->count && v->nstored == b->nstored &&
	       !memcmp(v->bitmap, b->bitmap, bl) && !v->zbitmap == !b->zbitmap &&
	       (!v->zbitmap || !memcmp(v->zbitmap, b->zbitmap, bl));
}

/* Reads a block's payload again for its pages. The device can have
 * changed since it was loaded (another capture, a write by someone
 * else): a payload that is not the one indexed is refused whole, as
 * its offsets and counts would not be the index's. */
static int load_block(struct dump_cursor *dc, const struct page_block *b, struct dump_slot **slot)
{
	const struct dumpfile *d = dc->d;
	struct dump_slot *c = &dc->s[pass_of(d, b)];
	struct kdi_pages_view v;

	*slot = c;

	if (c->cur == b)
		return 0;
	if (c->stale == b)
		return c->stale_err;
	c->cur = NULL;
	if (b->payload_len > c->payload_cap) {
		uint8_t *nb = realloc(c->payload, b->payload_len);
		if (!nb)
			return -ENOMEM;
		c->payload = nb;
		c->payload_cap = b->payload_len;
	}
	ssize_t n = read_full_at(d->fd, c->payload, b->payload_len, b->payload_off);
	if (n < 0)
		return -EIO;
	/* A sealed block: the bytes must be the ones loaded before they are
	 * opened again, and the tag must hold again. */
	uint32_t plen = b->payload_len, tb = chunk_tags_len(KDI_CH_PAGES, d->start.format_version);
	int opened = 0, same = 0;
	if (b->sealed && n == (ssize_t)b->payload_len && plen >= tb && d->key &&
	    XXH64(c->payload, plen, 0) == b->payload_hash) {
		same = 1;
		plen -= tb;
		struct seal_where w = { .dump_id = d->dump_id, .seq = b->seq, .type = KDI_CH_PAGES,
					.len = plen };
		opened = chunk_open(d->key, &w, d->start.format_version, c->payload) == 0;
	}
	if (n != (ssize_t)b->payload_len || (b->sealed && !opened) ||
	    pages_parse(c->payload, plen, d->start.page_size, &v) < 0 ||
	    !same_block(b, c->payload, plen, opened, &v)) {
		/* Shorter now, or other bytes; or the bytes loaded, whose
		 * pages fail their tag (opened only now: DUMPFILE_DEFER_PAGES). */
		c->stale = b;
		c->stale_err = same && !opened ? -EKEYREJECTED : -ESTALE;
		return c->stale_err;
	}
	/* Per bit index: where its data starts and its size word, so that a
	 * page lookup is O(1) after the block is loaded. Nothing of the
	 * block before may survive. */
	memset(c->page_word, 0, sizeof c->page_word);
	memset(c->page_off, 0, sizeof c->page_off);
	uint32_t off = 0, k = 0;
	for (uint32_t i = 0; i < v.count; i++) {
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
		int r = decode_linked(c, d->start.page_size, &v);
		if (r < 0)
			return r;
	}
	c->cur = b;
	return 0;
}

int dumpfile_page(struct dump_cursor *dc, uint64_t pfn, uint8_t *out)
{
	uint32_t idx, ps = dc->d->start.page_size;
	const struct page_block *b = dumpfile_find(dc->d, pfn, &idx);
	struct dump_slot *c;

	if (!b)
		return -ENOENT;
	int r = load_block(dc, b, &c);
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

/* Pfns the segments describe below pfn (each once). */
static uint64_t pfns_below(const struct dumpfile *d, uint64_t pfn, uint64_t *total)
{
	uint64_t t, below = 0, reach;

	/* scan_pfns answers the other way round: search the count. */
	if (scan_pfns(d, 0, &t, &reach) < 0)
		return 0;
	*total = t;
	uint64_t lo = 0, hi = t;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (scan_pfns(d, mid, &t, &reach) < 0)
			break;
		if (reach <= pfn)
			lo = mid;
		else
			hi = mid - 1;
	}
	below = lo;
	return below;
}

static int pct(uint64_t part, uint64_t total)
{
	return total ? (int)(part * 100 / total) : 100;
}

void dumpfile_progress(const struct dumpfile *d, struct dump_progress *p)
{
	uint64_t total = 0, below;

	/* A pass or tier is whole once a chunk after it was read, or an END
	 * that says the dump is complete: an END of a dump that ran out of
	 * room (DEVICE_FULL) says nothing of where it stopped. */
	int ended = d->have_end && !(d->end.status & KDI_ST_INCOMPLETE);
	p->early = d->nearly || d->have_dbg ? 1 : -1;
	p->startup = d->nstartup || (d->have_dbg && d->dbg.startup_pfns) ? 1 : -1;
	if (p->startup == 1 && d->nblocks == d->nstartup && !ended)
		p->startup = 0;
	p->early_last = d->nearly ? d->blocks[d->nearly - 1].pfn + d->blocks[d->nearly - 1].count : 0;
	p->first_pct = p->later_pct = -1;
	/* The EARLY pass is whole once anything after it was read (ended: above). */
	if (p->early == 1 && d->nfirst == d->nearly && d->nblocks == d->nfirst && !ended)
		p->early = 0;
	if (d->nfirst > d->nearly) {
		const struct page_block *b = &d->blocks[d->nfirst - 1];
		below = pfns_below(d, b->pfn + b->count, &total);
		p->first_pct = pct(below, total);
	}
	if (d->nblocks > d->nfirst) {
		const struct page_block *b = &d->blocks[d->nblocks - 1];
		below = pfns_below(d, b->pfn + b->count, &total);
		p->first_pct = 100;
		p->later_pct = pct(below, total);
	}
}
