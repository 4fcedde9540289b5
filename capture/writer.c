/* The chunk writer of the capture: appends checksummed chunks
 * (dump/format.h) to a staging buffer and hands full buffers to the
 * device, directly or through the sink's I/O threads. */
#define _GNU_SOURCE	/* fallocate */
#include "writer.h"

#include "../dump/seal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "sink.h"

size_t writer_end_reserve(void)
{
	/* Room for a sealed dump's tag too: the reserve is the same whether
	 * or not a key is set. */
	return chunk_span(sizeof(struct kdi_end) + KDI_TAG_BYTES);
}

void writer_seal(struct kdi_writer *w, const struct seal_dump *sd)
{
	w->seal = sd;
}

void writer_fini(struct kdi_writer *w)
{
	if (w->sbuf) {
		memset(w->sbuf, 0, w->scap);
		free(w->sbuf);
	}
	w->sbuf = NULL;
	w->scap = 0;
}

/* Seals (or tags) the chunk's pieces into sbuf for seq w->seq: the
 * payload is then sbuf[0, len + its tags). 0, -ENOMEM, -EINVAL (a PAGES
 * payload its head does not describe). */
static int seal_pieces(struct kdi_writer *w, uint16_t type, uint32_t mode, const void *p1,
		       size_t l1, const void *p2, size_t l2, const void *p3, size_t l3)
{
	size_t len = l1 + l2 + l3, need = len + chunk_tags_len(type, KDI_FORMAT_AEGIS);

	if (need > w->scap) {
		uint8_t *nb = malloc(need);
		if (!nb)
			return -ENOMEM;
		writer_fini(w);
		w->sbuf = nb;
		w->scap = need;
	}
	if (l1) memcpy(w->sbuf, p1, l1);
	if (l2) memcpy(w->sbuf + l1, p2, l2);
	if (l3) memcpy(w->sbuf + l1 + l2, p3, l3);
	struct seal_where wh = { .dump_id = w->dump_id, .seq = w->seq, .type = type,
				 .len = (uint32_t)len };
	if (mode == KDI_CHUNK_SEALED)
		return chunk_seal(w->seal, &wh, KDI_FORMAT_AEGIS, w->sbuf);
	if (type == KDI_CH_SEAL)
		seal_auth(w->seal, &wh, w->authpre, w->authpre_len, w->sbuf, len, w->sbuf + len);
	else if (type == KDI_CH_PAD)
		/* Zeros, which a reader checks: the tag binds its place and
		 * length, and a PAD of any length stays one tag's work. */
		seal_auth(w->seal, &wh, NULL, 0, NULL, 0, w->sbuf + len);
	else
		seal_auth(w->seal, &wh, w->sbuf, len, NULL, 0, w->sbuf + len);
	return 0;
}

void writer_init(struct kdi_writer *w, int fd, uint64_t base, uint64_t limit,
		 void *buf, size_t buf_size, uint64_t dump_id)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->base = base;
	w->limit = limit;
	w->buf = buf;
	w->buf_size = buf_size;
	w->align = 1;
	w->dump_id = dump_id;
	if (!dump_id)
		random_bytes(&w->dump_id, sizeof w->dump_id);
	if (!w->dump_id)
		w->dump_id = 1;
}

/* One write buffer's worth at a time: on tmpfs fallocate allocates the
 * pages there and then, and a 64 MiB step held the emitting worker for
 * 5-7 ms, longer than the ring of compressed blocks behind it lasts, so
 * both workers stalled (a level-1 capture of 1.4 GB into /dev/shm with 2
 * threads, perf stat -r 8, three pairs: 0.250-0.254 s with 64 MiB steps,
 * 0.235-0.240 s with 4 MiB). 4 MiB steps cost the same in all and
 * each is over before the ring fills; on ext4 each is one extent call. */
#define GROW_STEP (4u << 20)
/* The first step, doubling up to GROW_STEP: the header and the log are
 * written before the workers start, while nothing else runs, and a first
 * 4 MiB step there took 1.2 ms of a 90 ms level-31 capture into /dev/shm
 * (2 threads). Small steps cost the same per page, and the later ones
 * fall in the parallel part. */
#define GROW_FIRST (64u << 10)

void writer_grow_file(struct kdi_writer *w, int trim)
{
	w->grow = 1;
	w->trim = trim;
	w->alloc_end = w->base;
}

/* Allocates the file up to at least `need`; -ENOSPC when even that does
 * not fit. Whatever was allocated before stays. */
static int grow_to(struct kdi_writer *w, uint64_t need)
{
	uint64_t have = w->alloc_end - w->base;
	uint64_t step = have >= GROW_STEP ? GROW_STEP : have > GROW_FIRST ? have : GROW_FIRST;

	while (w->alloc_end < need) {
		if (step < need - w->alloc_end)
			step = need - w->alloc_end;
		if (step > w->limit - w->alloc_end)
			step = w->limit - w->alloc_end;	/* a claimed file keeps its size */
		if (fallocate(w->fd, 0, w->alloc_end, step) == 0) {
			w->alloc_end += step;
			return 0;
		}
		if (errno != ENOSPC) {
			w->grow = 0;	/* not supported here: find out by writing */
			return 0;
		}
		if (step == need - w->alloc_end)
			return -ENOSPC;
		step /= 2;
	}
	return 0;
}

int writer_trim(struct kdi_writer *w)
{
	if (!w->grow || !w->trim || w->alloc_end <= w->base + w->pos)
		return 0;
	return ftruncate(w->fd, w->base + w->pos) < 0 ? -errno : 0;
}

void writer_use_sink(struct kdi_writer *w, struct sink *s)
{
	w->sink = s;
	w->buf = sink_buf(s);
	w->buf_size = s->cap;
	w->align = s->direct ? SINK_ALIGN : 1;
}

/* Hands the buffer to the device: synchronously, or to the sink's I/O
 * thread (then the next buffer is already free to fill). */
static int submit(struct kdi_writer *w)
{
	if (!w->buf_used)
		return 0;
	/* Bounds are enforced at append time; this re-check is the last line
	 * before the device, so a bug above can never write past the end. */
	if (w->base + w->flushed + w->buf_used > w->limit)
		return -ENOSPC;
	int r;
	if (w->sink) {
		r = sink_submit(w->sink, w->buf_used, w->base + w->flushed);
		w->buf = sink_buf(w->sink);
	} else {
		/* A failed write is gone around at the next chunk, as the
		 * sink's are. */
		uint64_t off = w->base + w->flushed;
		r = write_full_at(w->fd, w->buf, w->buf_used, off);
		if (r < 0) {
			if (!w->bad_n || off < w->bad_lo)
				w->bad_lo = off;
			if (!w->bad_n || off + w->buf_used > w->bad_hi)
				w->bad_hi = off + w->buf_used;
			if (!w->bad_n)
				w->bad_err = r;
			w->bad_n++;
			r = 0;
		}
	}
	if (r < 0)
		return r;
	w->flushed += w->buf_used;
	w->buf_used = 0;
	return 0;
}

static int buf_append(struct kdi_writer *w, const void *p, size_t len);
static int put_chunk(struct kdi_writer *w, uint16_t type, uint64_t room, const uint64_t *hash,
		     const void *p1, size_t l1, const void *p2, size_t l2,
		     const void *p3, size_t l3);

/* Failed writes so far, merged into [*lo, *hi); how many. */
static unsigned take_bad(struct kdi_writer *w, uint64_t *lo, uint64_t *hi, int *err)
{
	unsigned n = w->bad_n;

	*lo = w->bad_lo;
	*hi = w->bad_hi;
	*err = w->bad_err;
	w->bad_n = 0;
	if (w->sink) {
		uint64_t l, h;
		int e;
		unsigned m = sink_take_bad(w->sink, &l, &h, &e);
		if (m) {
			if (!n || l < *lo)
				*lo = l;
			if (!n || h > *hi)
				*hi = h;
			if (!n)
				*err = e;
			n += m;
		}
	}
	return n;
}

/* A write failed: the stream is lost from where it began. Wait for every
 * write in flight, drop what is staged, and resume at the next
 * KDI_GAP_ALIGN boundary past all that was submitted, with a GAP chunk
 * saying so, which a reader finds by probing those boundaries past the
 * break (FORMAT.md). 0 with nothing to do or gone around; -EIO when the
 * loss is too long for a reader to find the GAP, or too many gaps;
 * -ENOSPC when the resume point leaves no room. */
static int go_around(struct kdi_writer *w)
{
	uint64_t lo, hi, l2, h2;
	int werr, e2;

	if (w->in_gap || !take_bad(w, &lo, &hi, &werr))
		return 0;
	if (w->sink) {
		int r = sink_drain(w->sink);
		if (r < 0)
			return r;
		if (take_bad(w, &l2, &h2, &e2)) {
			lo = l2 < lo ? l2 : lo;
			hi = h2 > hi ? h2 : hi;
		}
	}
	uint64_t from = lo - w->base, end = hi - w->base;
	if (end < w->flushed)
		end = w->flushed;	/* written after it, but past the break */
	uint64_t at = (end + KDI_GAP_ALIGN - 1) / KDI_GAP_ALIGN * KDI_GAP_ALIGN;
	struct kdi_gap g = { .lost_from = from, .lost_to = at, .error = werr };
	if (w->gaps >= WRITER_MAX_GAPS || at - from > KDI_GAP_SCAN / 2) {
		err("dump: write error (%s) at device offset %llu: too many or too long to go "
			"around; the dump ends here", strerror(-werr), (unsigned long long)lo);
		return -EIO;
	}
	if (w->base + at + chunk_span(sizeof g) + writer_end_reserve() > w->limit)
		return -ENOSPC;
	warn("dump: write error (%s) at device offset %llu (%llu bytes lost); the dump goes "
		"on at offset %llu", strerror(-werr), (unsigned long long)lo,
		(unsigned long long)(at - from), (unsigned long long)(w->base + at));
	if (!w->gaps)
		w->gap_err = werr;
	w->gaps++;
	w->gap_bytes += at - from;
	w->buf_used = 0;	/* staged after the break: lost with it */
	w->flushed = w->pos = at;
	w->in_gap = 1;
	/* The GAP is the writer's own chunk, tagged as its type says, even
	 * in the middle of putting a chunk the caller sealed: that one is
	 * sealed again under its new seq once the GAP is in. */
	int presealed = w->presealed;
	w->presealed = 0;
	int r = put_chunk(w, KDI_CH_GAP, w->limit - writer_end_reserve(), NULL, &g, sizeof g,
			  NULL, 0, NULL, 0);
	w->presealed = presealed;
	w->in_gap = 0;
	return r;
}
static int put_chunk(struct kdi_writer *w, uint16_t type, uint64_t room, const uint64_t *hash,
		     const void *p1, size_t l1, const void *p2, size_t l2,
		     const void *p3, size_t l3);

int writer_flush(struct kdi_writer *w)
{
	/* Not const: in .bss, where 8 KB of zeros cost the binary nothing
	 * (the size limit); never written. */
	static uint8_t zeros[2 * 4096];
	int r = 0;

	/* Direct I/O needs whole aligned blocks. Mid-stream, a PAD chunk
	 * fills up to the boundary (readers skip it); after END, plain zeros
	 * do (readers stop at END). If neither fits, the sink writes the
	 * tail through the page cache instead. */
	size_t need = (w->align - (w->pos % w->align)) % w->align;
	/* A sealed dump's PAD carries a tag after its zeros. */
	size_t over = sizeof(struct kdi_chunk) + (w->seal ? KDI_TAG_BYTES : 0);
	if (need && !w->ended) {
		if (need < over)
			need += w->align;
		if (need - over <= sizeof zeros)
			r = put_chunk(w, KDI_CH_PAD, w->limit - writer_end_reserve(), NULL, zeros,
				      need - over, NULL, 0, NULL, 0);
		if (r == -ENOSPC)
			r = 0;
	} else if (need && w->base + w->pos + need <= w->limit) {
		r = buf_append(w, zeros, need);
	}
	if (!r)
		r = submit(w);
	if (!r && w->sink)
		r = sink_drain(w->sink);
	/* Go around a write that failed, and flush again: an END lost with
	 * it is put again after the GAP. */
	if (!r && !w->in_gap && (w->bad_n || (w->sink && w->sink->bad_n))) {
		int ended = w->ended;
		w->ended = 0;
		r = go_around(w);
		if (!r && ended)
			r = writer_put_end(w, &w->end);
		if (!r)
			r = writer_flush(w);
	}
	return r;
}

static int buf_append(struct kdi_writer *w, const void *p, size_t len)
{
	while (len) {
		if (w->buf_used == w->buf_size) {
			int r = submit(w);
			if (r < 0)
				return r;
		}
		size_t n = w->buf_size - w->buf_used;
		if (n > len)
			n = len;
		memcpy(w->buf + w->buf_used, p, n);
		w->buf_used += n;
		p = (const char *)p + n;
		len -= n;
	}
	return 0;
}

static int put_chunk(struct kdi_writer *w, uint16_t type, uint64_t room, const uint64_t *hash,
		     const void *p1, size_t l1, const void *p2, size_t l2,
		     const void *p3, size_t l3)
{
	size_t len = l1 + l2 + l3;
	/* A payload the caller sealed (writer_put_sealed) counts its tag. */
	uint32_t mode = w->seal && !w->presealed ? chunk_seal_mode(type, KDI_FORMAT_AEGIS) : 0;
	uint32_t tags = mode ? chunk_tags_len(type, KDI_FORMAT_AEGIS) : 0;
	size_t span = chunk_span(len + tags);
	static const uint8_t zeros[KDI_CHUNK_ALIGN];

	if (len + tags > KDI_CHUNK_MAX)
		return -EFBIG;
	int g = go_around(w);
	if (g < 0)
		return g;
	if (w->base + w->pos + span > room)
		return -ENOSPC;
	/* END itself lives in the reserve allocated with what came before. */
	if (w->grow && type != KDI_CH_END &&
	    grow_to(w, w->base + w->pos + span + writer_end_reserve()) < 0) {
		w->fs_full = 1;
		return -ENOSPC;
	}

	/* START and CHAIN are in the clear; SEAL's tag vouches for them. */
	if (w->seal && (type == KDI_CH_START || type == KDI_CH_CHAIN) &&
	    w->authpre_len + len <= sizeof w->authpre) {
		if (l1) memcpy(w->authpre + w->authpre_len, p1, l1);
		w->authpre_len += l1;
	}
	if (w->presealed && w->seq != w->presealed_seq) {
		/* A GAP took the seq it was sealed under: sealed again under
		 * this one, in the caller's buffer. */
		uint8_t *b = w->presealed_buf;
		uint32_t tl = chunk_tags_len(type, KDI_FORMAT_AEGIS);
		struct seal_where was = { .dump_id = w->dump_id, .seq = w->presealed_seq, .type = type,
					  .len = (uint32_t)(l1 - tl) };
		struct seal_where now = was;
		now.seq = w->seq;
		if (chunk_open(w->seal, &was, KDI_FORMAT_AEGIS, b) < 0 ||
		    chunk_seal(w->seal, &now, KDI_FORMAT_AEGIS, b) < 0)
			return -EIO;	/* our own chunk: cannot happen */
		w->presealed_seq = w->seq;
		hash = NULL;
	}
	if (mode) {
		/* After go_around: w->seq is the chunk's for good. */
		int e = seal_pieces(w, type, mode, p1, l1, p2, l2, p3, l3);
		if (e < 0)
			return e;
		len += tags;
		p1 = w->sbuf;
		l1 = len;
		l2 = l3 = 0;
		hash = NULL;
	}
	struct kdi_chunk h = { .type = type, .hdr_size = sizeof h, .len = len,
			       .flags = w->presealed ? KDI_CHUNK_SEALED : mode,
			       .dump_id = w->dump_id, .seq = w->seq };
	memcpy(h.magic, KDI_CHUNK_MAGIC, 4);
	h.payload_hash = hash ? *hash : payload_hash(p1, l1, p2, l2, p3, l3);
	h.hdr_hash = XXH64(&h, sizeof h, 0);

	int r = buf_append(w, &h, sizeof h);
	if (!r && l1) r = buf_append(w, p1, l1);
	if (!r && l2) r = buf_append(w, p2, l2);
	if (!r && l3) r = buf_append(w, p3, l3);
	if (!r) r = buf_append(w, zeros, span - sizeof h - len);
	if (r < 0)
		return r;
	w->pos += span;
	w->seq++;
	return 0;
}

int writer_put_hashed(struct kdi_writer *w, uint16_t type, const uint64_t *hash,
		      const void *p1, size_t l1, const void *p2, size_t l2,
		      const void *p3, size_t l3)
{
	uint64_t room = w->limit - writer_end_reserve();

	if (w->limit < w->base + writer_end_reserve())
		return -ENOSPC;
	return put_chunk(w, type, room, hash, p1, l1, p2, l2, p3, l3);
}

int writer_put(struct kdi_writer *w, uint16_t type,
	       const void *p1, size_t l1, const void *p2, size_t l2,
	       const void *p3, size_t l3)
{
	return writer_put_hashed(w, type, NULL, p1, l1, p2, l2, p3, l3);
}

int writer_put_sealed(struct kdi_writer *w, uint16_t type, uint8_t *payload, size_t len,
		      uint64_t hash, uint64_t seq)
{
	if (!w->seal || len < chunk_tags_len(type, KDI_FORMAT_AEGIS) ||
	    chunk_seal_mode(type, KDI_FORMAT_AEGIS) != KDI_CHUNK_SEALED)
		return -EINVAL;
	w->presealed = 1;
	w->presealed_seq = seq;
	w->presealed_buf = payload;
	int r = writer_put_hashed(w, type, &hash, payload, len, NULL, 0, NULL, 0);
	w->presealed = 0;
	w->presealed_buf = NULL;
	return r;
}

int writer_put_end(struct kdi_writer *w, const struct kdi_end *end)
{
	struct kdi_end e = *end;

	int g = go_around(w);
	if (g < 0)
		return g;
	if (w->gaps)
		e.status |= KDI_ST_WRITE_ERRORS | KDI_ST_INCOMPLETE;
	w->end = e;
	e.nr_chunks = w->seq + 1;
	e.bytes_out = w->pos + chunk_span(sizeof e + (w->seal ? KDI_TAG_BYTES : 0));
	int r = put_chunk(w, KDI_CH_END, w->limit, NULL, &e, sizeof e, NULL, 0, NULL, 0);
	if (!r)
		w->ended = 1;
	return r;
}
