/* The dumps on one device: found and placed by one walk over chunk
 * headers (chain.h). */
#include "chain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "../lib/io.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* The CHAIN record of the dump whose START reader r has just opened, or
 * 0 when its second chunk is none (a dump written before several dumps
 * per device were possible: it can only be the first). 1 found. */
static int read_rec(struct kdi_reader *r, struct kdi_chain_rec *rec)
{
	struct kdi_chunk h;
	uint8_t *buf = NULL;
	size_t cap = 0;
	int n = reader_next(r, &h, &buf, &cap);
	int found = n == 1 && h.type == KDI_CH_CHAIN && h.len == sizeof *rec;

	if (found)
		memcpy(rec, buf, sizeof *rec);
	free(buf);
	return found;
}

/* Does the END the skim just passed say complete? Its payload (status
 * first, in the clear in a sealed dump too) read and checked here. */
static int end_complete(const struct kdi_reader *r, const struct kdi_chunk *h)
{
	uint8_t b[sizeof(struct kdi_end) + KDI_TAG_BYTES];
	uint32_t status;	/* struct kdi_end's first field */

	if (h->len < KDI_END_V3_SIZE || h->len > sizeof b ||
	    read_full_at(r->fd, b, h->len, reader_payload_offset(r, h)) != (ssize_t)h->len ||
	    XXH64(b, h->len, 0) != h->payload_hash)
		return 0;
	memcpy(&status, b, sizeof status);
	return !(status & KDI_ST_INCOMPLETE);
}

/* Walks the rest of the dump r has open, headers only, across any GAP or
 * unreadable stretch the reader can go around; fills in where it ends. */
static void skim_to_end(struct kdi_reader *r, const struct kdi_start *st, struct chain_dump *d)
{
	struct kdi_chunk h;
	uint8_t *buf = NULL;
	size_t cap = 0;
	int skipped = 0;

	r->skim = 1;
	for (;;) {
		int n = reader_next(r, &h, &buf, &cap);
		if (n == 1) {
			if (h.type == KDI_CH_END) {
				d->complete = 1;
				d->whole = !skipped && end_complete(r, &h);
			}
			continue;
		}
		if (n < 0 && n != -ENOMEM && reader_resync(r, st->format_version) == 1) {
			skipped = 1;
			continue;
		}
		break;
	}
	free(buf);
	d->end = r->pos;
}

/* The dump at `at`, if it is the one that follows prev (prev_id 0: the
 * first, at data_offset, where a dump without a CHAIN record is taken as
 * it always was). 1 and *d filled, or 0. */
static int dump_at(int fd, uint64_t at, uint64_t limit, uint64_t prev_id, uint64_t prev_at,
		   struct chain_dump *d)
{
	struct kdi_reader r;
	struct kdi_start st;
	struct kdi_chain_rec rec;

	if (reader_open(&r, fd, at, limit, &st) < 0) {
		/* The first dump with its START damaged is still a dump: the
		 * next capture goes after it, and save finds it (dumpfile). */
		if (prev_id || reader_recover(&r, fd, at, limit) < 0)
			return 0;
		memset(d, 0, sizeof *d);
		memset(&st, 0, sizeof st);
		st.format_version = r.version;
		d->at = at;
		d->dump_id = r.dump_id;
		skim_to_end(&r, &st, d);
		return 1;
	}
	memset(d, 0, sizeof *d);
	d->at = at;
	d->dump_id = r.dump_id;
	d->start_time = st.start_time;
	if (read_rec(&r, &rec)) {
		if (rec.self_at != at || rec.prev_dump_id != prev_id ||
		    (prev_id && rec.prev_at != prev_at))
			return 0;
	} else {
		if (prev_id)
			return 0;
		/* No record: back to just after START, as a reader expects. */
		reader_open(&r, fd, at, limit, &st);
	}
	skim_to_end(&r, &st, d);
	return 1;
}

int chain_walk(int fd, uint64_t data_offset, uint64_t limit, struct chain *c)
{
	memset(c, 0, sizeof *c);
	if (!dump_at(fd, data_offset, limit, 0, 0, &c->d[0]))
		return 0;
	c->d[0].index = 1;
	c->n = 1;
	while (c->n < KDI_CHAIN_MAX) {
		const struct chain_dump *p = &c->d[c->n - 1];
		uint64_t next = p->at + align_up(p->end - p->at, KDI_GAP_ALIGN);
		int found = 0;

		/* The capture chose `next` by this same walk; further
		 * boundaries only where the two walks saw the previous dump's
		 * end differently (a sector unreadable now that was not). */
		for (uint64_t at = next; !found && at <= next + KDI_GAP_SCAN && at < limit;
		     at += KDI_GAP_ALIGN)
			found = dump_at(fd, at, limit, p->dump_id, p->at, &c->d[c->n]);
		if (!found)
			break;
		c->d[c->n].index = c->n + 1;
		c->n++;
	}
	return 0;
}

int chain_saved(const struct chain *c, unsigned i, uint64_t saved_dump_id)
{
	if (!saved_dump_id)
		return 0;
	for (unsigned j = i; j < c->n; j++)
		if (c->d[j].dump_id == saved_dump_id)
			return 1;
	return 0;
}

void chain_place(const struct chain *c, uint64_t data_offset, uint64_t limit,
		 uint64_t saved_dump_id, enum chain_full full, struct chain_place *p)
{
	memset(p, 0, sizeof *p);
	for (unsigned i = 0; i < c->n; i++)
		p->unsaved += !chain_saved(c, i, saved_dump_id);
	p->at = data_offset;
	p->rec.self_at = data_offset;
	p->rec.index = 1;
	if (!p->unsaved)
		return;

	const struct chain_dump *last = &c->d[c->n - 1];
	uint64_t at = last->at + align_up(last->end - last->at, KDI_GAP_ALIGN);
	if (c->n < KDI_CHAIN_MAX && at < limit && limit - at >= KDI_CHAIN_MIN_ROOM) {
		p->at = at;
		p->rec = (struct kdi_chain_rec){ .prev_dump_id = last->dump_id, .prev_at = last->at,
						 .self_at = at, .index = c->n + 1 };
		return;
	}
	if (full == CHAIN_FULL_KEEP) {
		p->refused = 1;
		return;
	}
	uint64_t largest = 0;
	for (unsigned i = 0; i < c->n; i++)
		if (!chain_saved(c, i, saved_dump_id) && c->d[i].whole &&
		    c->d[i].end - c->d[i].at > largest)
			largest = c->d[i].end - c->d[i].at;
	if (largest > (limit - data_offset) / 5 * 4) {
		p->refused = 1;
		p->kept_whole = largest;
		return;
	}
	p->overwritten = p->unsaved;
	p->rec.flags = KDI_CHAIN_OVERWROTE;
}
