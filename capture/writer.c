/* The chunk writer of the capture: appends checksummed chunks
 * (dump/format.h) to a staging buffer and hands full buffers to the
 * device, directly or through the sink's I/O threads. */
#define _GNU_SOURCE	/* fallocate */
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../lib/io.h"
#include "sink.h"

size_t writer_end_reserve(void)
{
	return chunk_span(sizeof(struct kdi_end));
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

#define GROW_STEP (64u << 20)

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
	uint64_t step = GROW_STEP;

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
		r = write_full_at(w->fd, w->buf, w->buf_used, w->base + w->flushed);
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

int writer_flush(struct kdi_writer *w)
{
	static const uint8_t zeros[2 * 4096];
	int r = 0;

	/* Direct I/O needs whole aligned blocks. Mid-stream, a PAD chunk
	 * fills up to the boundary (readers skip it); after END, plain zeros
	 * do (readers stop at END). If neither fits, the sink writes the
	 * tail through the page cache instead. */
	size_t need = (w->align - (w->pos % w->align)) % w->align;
	if (need && !w->ended) {
		if (need < sizeof(struct kdi_chunk))
			need += w->align;
		if (need - sizeof(struct kdi_chunk) <= sizeof zeros)
			r = put_chunk(w, KDI_CH_PAD, w->limit - writer_end_reserve(), NULL, zeros,
				      need - sizeof(struct kdi_chunk), NULL, 0, NULL, 0);
		if (r == -ENOSPC)
			r = 0;
	} else if (need && w->base + w->pos + need <= w->limit) {
		r = buf_append(w, zeros, need);
	}
	if (!r)
		r = submit(w);
	if (!r && w->sink)
		r = sink_drain(w->sink);
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
	size_t span = chunk_span(len);
	static const uint8_t zeros[KDI_CHUNK_ALIGN];

	if (len > KDI_CHUNK_MAX)
		return -EFBIG;
	if (w->base + w->pos + span > room)
		return -ENOSPC;
	/* END itself lives in the reserve allocated with what came before. */
	if (w->grow && type != KDI_CH_END &&
	    grow_to(w, w->base + w->pos + span + writer_end_reserve()) < 0) {
		w->fs_full = 1;
		return -ENOSPC;
	}

	struct kdi_chunk h = { .type = type, .hdr_size = sizeof h, .len = len,
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

int writer_put_end(struct kdi_writer *w, const struct kdi_end *end)
{
	struct kdi_end e = *end;

	e.nr_chunks = w->seq + 1;
	e.bytes_out = w->pos + chunk_span(sizeof e);
	int r = put_chunk(w, KDI_CH_END, w->limit, NULL, &e, sizeof e, NULL, 0, NULL, 0);
	if (!r)
		w->ended = 1;
	return r;
}
