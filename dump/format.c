#define _GNU_SOURCE	/* fallocate */
#include "format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The state on the stack needs the struct layout: no allocation. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../lib/io.h"
#include "../lib/util.h"
#include "seal.h"

/* The structs are the device layout. Byte order is fixed little-endian;
 * rather than pretend to swap, refuse to build where it would be wrong. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "format.c stores little-endian structs directly");

void random_bytes(void *p, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read_full_at(fd, p, n, 0) : -1;

	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)n) {
		/* No entropy source (very early boot): time and pid still make
		 * an id that differs from the previous dump, which is all the
		 * dump id needs. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t seed = XXH64(&ts, sizeof ts, (uint64_t)getpid());
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			((uint8_t *)p)[i] = seed >> 56;
		}
	}
}

/* ---------------- superblock ---------------- */

static uint64_t super_hash(const struct kdi_super *sb)
{
	struct kdi_super tmp = *sb;

	tmp.checksum = 0;
	return XXH64(&tmp, sizeof tmp, 0);
}

void super_init(struct kdi_super *sb, uint64_t dev_size, const char *label)
{
	memset(sb, 0, sizeof *sb);
	memcpy(sb->magic, KDI_SB_MAGIC, 8);
	sb->version = KDI_SB_VERSION;
	sb->sb_size = sizeof *sb;
	random_bytes(sb->uuid, 16);
	sb->uuid[6] = (sb->uuid[6] & 0x0f) | 0x40;	/* RFC 4122 v4 */
	sb->uuid[8] = (sb->uuid[8] & 0x3f) | 0x80;
	if (label)
		snprintf(sb->label, sizeof sb->label, "%s", label);
	sb->dev_size = dev_size;
	sb->data_offset = KDI_DATA_OFFSET;
	sb->created = (uint64_t)time(NULL);
}

void super_encode(const struct kdi_super *sb, void *area)
{
	struct kdi_super tmp = *sb;

	memset(area, 0, KDI_SB_AREA);
	tmp.checksum = super_hash(&tmp);
	memcpy(area, &tmp, sizeof tmp);
}

/* The one rule for where a stream may start (FORMAT.md): 4 KiB aligned,
 * past the head the claim gate keeps zero, and inside the device. */
static int data_offset_ok(uint64_t off, uint64_t dev_size)
{
	if (off < KDI_DATA_MIN || off % 4096 || off > (1ull << 40))
		return 0;
	return !dev_size || off <= dev_size;
}

int super_read(const void *buf, size_t len, uint64_t dev_size, struct kdi_super *sb)
{
	if (len < sizeof *sb)
		return -ENOENT;
	memcpy(sb, buf, sizeof *sb);
	if (memcmp(sb->magic, KDI_SB_MAGIC, 8))
		return -ENOENT;
	if (sb->checksum != super_hash(sb))
		return -EBADMSG;
	if (sb->version != KDI_SB_VERSION)
		return -EPROTONOSUPPORT;
	if (sb->sb_size != sizeof *sb || !data_offset_ok(sb->data_offset, dev_size) ||
	    memchr(sb->label, 0, sizeof sb->label) == NULL)
		return -EBADMSG;
	return 0;
}

int super_decode(const void *buf, size_t len, struct kdi_super *sb)
{
	return super_read(buf, len, 0, sb);
}

void uuid_format(const uint8_t u[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

int uuid_parse(const char *s, uint8_t u[16])
{
	int n = 0;

	for (; *s && n < 32; s++) {
		if (*s == '-')
			continue;
		int v = hex_digit((unsigned char)*s);
		if (v < 0)
			return -EINVAL;
		if (n % 2 == 0)
			u[n / 2] = v << 4;
		else
			u[n / 2] |= v;
		n++;
	}
	return (n == 32 && !*s) ? 0 : -EINVAL;
}

/* ---------------- chunks ---------------- */

size_t chunk_span(size_t payload_len)
{
	size_t n = sizeof(struct kdi_chunk) + payload_len;

	return (n + KDI_CHUNK_ALIGN - 1) & ~(size_t)(KDI_CHUNK_ALIGN - 1);
}

uint64_t payload_hash(const void *p1, size_t l1, const void *p2, size_t l2,
		      const void *p3, size_t l3)
{
	XXH64_state_t st;

	XXH64_reset(&st, 0);
	if (l1) XXH64_update(&st, p1, l1);
	if (l2) XXH64_update(&st, p2, l2);
	if (l3) XXH64_update(&st, p3, l3);
	return XXH64_digest(&st);
}

uint32_t chunk_tag_bytes(uint32_t version)
{
	return kdi_version_aegis(version) ? KDI_TAG_BYTES : KDI_TAG_BYTES_V5;
}

int chunk_in_parts(uint16_t type, uint32_t version)
{
	return type == KDI_CH_PAGES && kdi_version_aegis(version);
}

uint32_t chunk_tags_len(uint16_t type, uint32_t version)
{
	return chunk_tag_bytes(version) * (chunk_in_parts(type, version) ? KDI_PAGES_PARTS : 1);
}

uint32_t seal_scheme_of(uint32_t version)
{
	return kdi_version_aegis(version) ? KDI_SEAL_AEGIS256 : KDI_SEAL_XCHACHA;
}

/* A tagged chunk of BODY bytes and its tag: the version's length, or
 * where the version is a guess (a dump found again without its START),
 * either scheme's. */
static int tagged_len_ok(const struct kdi_reader *r, uint32_t len, size_t body)
{
	return len == body + chunk_tag_bytes(r->version) ||
	       (r->recovered && (len == body + KDI_TAG_BYTES || len == body + KDI_TAG_BYTES_V5));
}

uint32_t chunk_seal_mode(uint16_t type, uint32_t version)
{
	switch (type) {
	case KDI_CH_START: case KDI_CH_CHAIN:
		return 0;
	case KDI_CH_GAP: case KDI_CH_PAD:
		return kdi_version_auth_all(version) ? KDI_CHUNK_AUTH : 0;
	case KDI_CH_SEAL: case KDI_CH_END:
		return KDI_CHUNK_AUTH;
	default:
		/* NOTES, VMCOREINFO, SEGMENTS, SETTINGS, DEBUGGER, DMESG,
		 * PAGES, and any type added later: sealed unless said. */
		return KDI_CHUNK_SEALED;
	}
}

/* ---------------- reader ---------------- */

static int stop(struct kdi_reader *r, const char *why)
{
	snprintf(r->why, sizeof r->why, "chunk %llu at offset %llu: %s",
		 (unsigned long long)r->next_seq, (unsigned long long)r->pos, why);
	r->done = 1;
	return -EBADMSG;
}

/* Header checks shared by START and the rest. */
static int read_header(struct kdi_reader *r, struct kdi_chunk *h)
{
	if (r->pos + sizeof *h > r->limit || r->pos + sizeof *h < r->pos)
		return stop(r, "stream runs past the end of the device");
	ssize_t n = read_full_at(r->fd, h, sizeof *h, r->pos);
	if (n < 0) {
		r->read_error = 1;
		return stop(r, "read error");
	}
	if (n != sizeof *h)
		return stop(r, "short read (source truncated)");
	if (memcmp(h->magic, KDI_CHUNK_MAGIC, 4))
		return stop(r, "no chunk magic");
	uint64_t want = h->hdr_hash;
	h->hdr_hash = 0;
	if (XXH64(h, sizeof *h, 0) != want)
		return stop(r, "header checksum mismatch");
	h->hdr_hash = want;
	if (h->hdr_size != sizeof *h)
		return stop(r, "unknown header size");
	/* Sealing's flags exist from version 5 on, one at a time. */
	if (h->flags && (!kdi_version_sealed(r->version) ||
			 (h->flags != KDI_CHUNK_SEALED && h->flags != KDI_CHUNK_AUTH)))
		return stop(r, "unknown header flags");
	if (h->len > KDI_CHUNK_MAX)
		return stop(r, "payload length out of bounds");
	if (r->pos + chunk_span(h->len) > r->limit)
		return stop(r, "payload runs past the end of the device");
	return 0;
}

static int read_payload(struct kdi_reader *r, const struct kdi_chunk *h,
			void *buf, size_t buf_size)
{
	if (h->len > buf_size)
		return stop(r, "payload larger than the reader's buffer");
	ssize_t n = read_full_at(r->fd, buf, h->len, r->pos + sizeof *h);
	if (n < 0) {
		r->read_error = 1;
		return stop(r, "read error in payload");
	}
	if ((size_t)n != h->len)
		return stop(r, "short payload (source truncated)");
	/* xxhash does arithmetic on the pointer even for 0 bytes. */
	static const char none;
	if (XXH64(h->len ? buf : &none, h->len, 0) != h->payload_hash)
		return stop(r, "payload checksum mismatch");
	return 0;
}

int reader_open(struct kdi_reader *r, int fd, uint64_t base, uint64_t limit,
		struct kdi_start *start)
{
	struct kdi_chunk h;

	memset(r, 0, sizeof *r);
	r->fd = fd;
	r->base = r->pos = base;
	r->limit = limit;
	if (read_header(r, &h) < 0) {
		r->why[0] = 0;
		return -ENOENT;		/* nothing recognisable: empty */
	}
	if (h.type != KDI_CH_START || h.seq != 0 || h.len != sizeof *start) {
		stop(r, "first chunk is not a START record");
		return -EBADMSG;
	}
	if (read_payload(r, &h, start, sizeof *start) < 0)
		return -EBADMSG;
	if (start->format_version > KDI_FORMAT_VERSION) {
		stop(r, "dump written by a newer format version");
		return -EPROTONOSUPPORT;
	}
	if (start->format_version < KDI_FORMAT_MIN) {
		stop(r, "START record has an impossible format version");
		return -EBADMSG;
	}
	if (start->page_size < 512 || start->page_size > 65536 ||
	    (start->page_size & (start->page_size - 1)) ||
	    start->nr_segments > KDI_MAX_SEGMENTS) {
		stop(r, "START record has out-of-range fields");
		return -EBADMSG;
	}
	r->dump_id = h.dump_id;
	r->version = start->format_version;
	r->next_seq = 1;
	r->pos += chunk_span(h.len);
	return 0;
}

int reader_next(struct kdi_reader *r, struct kdi_chunk *h, uint8_t **buf, size_t *cap)
{
	if (r->done)
		return r->why[0] ? -EBADMSG : 0;
	int e = read_header(r, h);
	if (e < 0)
		return e;
	if (h->dump_id != r->dump_id)
		return stop(r, "chunk of another (older) dump: the stream ends here");
	if (h->seq != r->next_seq)
		return stop(r, "sequence number out of order");
	if (r->skim && h->type != KDI_CH_CHAIN) {
		r->pos += chunk_span(h->len);
		r->next_seq++;
		r->done = h->type == KDI_CH_END;
		return 1;
	}
	if (h->len > *cap) {
		uint8_t *nb = realloc(*buf, h->len);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = h->len;
	}
	if (read_payload(r, h, *buf, *cap) < 0)
		return -EBADMSG;
	r->pos += chunk_span(h->len);
	r->next_seq++;
	if (h->type == KDI_CH_END) {
		/* A sealed dump's END carries its tag after it. */
		int sealed = r->recovered ? h->flags != 0 : kdi_version_sealed(r->version);
		if (sealed ? !tagged_len_ok(r, h->len, sizeof(struct kdi_end)) ||
				     h->flags != KDI_CHUNK_AUTH :
			     h->len != sizeof(struct kdi_end) && h->len != KDI_END_V3_SIZE) {
			r->pos -= chunk_span(h->len);
			return stop(r, "END record has the wrong size");
		}
		r->done = 1;
	}
	return 1;
}

/* A chunk of this dump after the break starts at `at`: resume there. */
static int resume_at(struct kdi_reader *r, uint64_t at)
{
	struct kdi_reader t = *r;
	struct kdi_chunk h;

	t.pos = at;
	t.done = 0;
	/* The seq the break expected, or a later one: stray bytes at the
	 * break take no seq, a damaged chunk takes its own. */
	if (read_header(&t, &h) < 0 || h.dump_id != r->dump_id || h.seq < r->next_seq)
		return 0;
	r->pos = at;
	r->next_seq = h.seq;
	r->done = 0;
	r->read_error = 0;
	r->why[0] = 0;
	return 1;
}

/* Past unreadable bytes: the next readable chunk header of this dump. */
#define SCAN_PIECE (64u << 10)

/* The next intact chunk of this dump after the break: its header's
 * magic, hash, dump id and a seq past the break's, at any 8-byte offset
 * within KDI_RESYNC_SCAN past it. Pieces that cannot be read are passed
 * over. Damage costs only the chunks it touched: a chunk is only ever
 * found by its own checksummed header, so bytes that merely look like
 * one never pass. */
static int resync_scan(struct kdi_reader *r)
{
	static const size_t piece = SCAN_PIECE;
	uint8_t *buf = malloc(piece + sizeof(struct kdi_chunk));
	uint64_t at = r->pos + KDI_CHUNK_ALIGN, end = r->limit;

	if (!buf)
		return -ENOMEM;
	if (r->limit - r->pos > KDI_RESYNC_SCAN)
		end = r->pos + KDI_RESYNC_SCAN;
	while (at < end) {
		size_t want = piece + sizeof(struct kdi_chunk);
		if (want > r->limit - at)
			want = r->limit - at;
		ssize_t n = read_full_at(r->fd, buf, want, at);
		if (n < 0) {
			/* Still unreadable: on to the next piece. */
			at = (at / SCAN_PIECE + 1) * SCAN_PIECE;
			continue;
		}
		if ((size_t)n < sizeof(struct kdi_chunk))
			break;
		for (size_t o = 0; o + sizeof(struct kdi_chunk) <= (size_t)n && o < piece;
		     o += KDI_CHUNK_ALIGN)
			if (!memcmp(buf + o, KDI_CHUNK_MAGIC, 4) && resume_at(r, at + o)) {
				free(buf);
				return 1;
			}
		at += piece;
	}
	free(buf);
	return 0;
}

/* The GAP chunk the writer put after a failed write, at the
 * KDI_GAP_ALIGN boundaries within KDI_GAP_SCAN past the break, whose
 * own offset and loss cover the break: 1 and resumed there, or 0. */
static int resync_gap(struct kdi_reader *r)
{
	uint64_t broke = r->pos;
	struct kdi_reader t = *r;
	uint64_t first = r->base + ((broke - r->base) / KDI_GAP_ALIGN + 1) * KDI_GAP_ALIGN;

	for (uint64_t at = first; at <= broke + KDI_GAP_SCAN && at < r->limit; at += KDI_GAP_ALIGN) {
		struct kdi_chunk h;
		struct kdi_gap g;
		uint8_t pl[sizeof g + KDI_TAG_BYTES];
		t.pos = at;
		t.done = 0;
		/* A sealed dump's GAP (version 6) carries its tag after it,
		 * which the dump's reader checks with the key. */
		if (read_header(&t, &h) < 0 || h.type != KDI_CH_GAP || h.dump_id != r->dump_id ||
		    h.seq < r->next_seq ||
		    (h.len != sizeof g && (h.flags != KDI_CHUNK_AUTH || !tagged_len_ok(r, h.len, sizeof g))) ||
		    read_payload(&t, &h, pl, sizeof pl) < 0)
			continue;
		memcpy(&g, pl, sizeof g);
		if (g.lost_to != at - r->base || g.lost_from > g.lost_to)
			continue;
		r->pos = at;
		r->next_seq = h.seq;
		r->done = 0;
		r->why[0] = 0;
		return 1;
	}
	return 0;
}

int reader_resync(struct kdi_reader *r, uint32_t format_version)
{
	r->resumed = KDI_RESUME_NONE;
	if (!r->done || r->pos < r->base || r->pos >= r->limit)
		return 0;
	int unreadable = r->read_error;
	if (!unreadable && format_version >= 2 && resync_gap(r)) {
		r->resumed = KDI_RESUME_GAP;
		return 1;
	}
	int k = resync_scan(r);
	if (k == 1)
		r->resumed = unreadable ? KDI_RESUME_UNREADABLE : KDI_RESUME_DAMAGE;
	return k;
}

int reader_recover(struct kdi_reader *r, int fd, uint64_t base, uint64_t limit)
{
	memset(r, 0, sizeof *r);
	r->fd = fd;
	r->base = r->pos = base;
	r->limit = limit;
	r->done = 1;
	r->next_seq = 1;
	/* resume_at takes a chunk of r's dump only: take the first intact
	 * one's, whichever it is, from a reader that knows none. */
	uint64_t save_limit = r->limit;
	if (r->limit - base > KDI_START_SCAN)
		r->limit = base + KDI_START_SCAN;
	static const size_t piece = SCAN_PIECE;
	uint8_t *buf = malloc(piece + sizeof(struct kdi_chunk));
	int found = 0;
	if (!buf)
		return -ENOMEM;
	for (uint64_t at = base + KDI_CHUNK_ALIGN; at < r->limit && !found; at += piece) {
		size_t want = piece + sizeof(struct kdi_chunk);
		if (want > r->limit - at)
			want = r->limit - at;
		ssize_t n = read_full_at(fd, buf, want, at);
		if (n < (ssize_t)sizeof(struct kdi_chunk))
			continue;
		for (size_t o = 0; o + sizeof(struct kdi_chunk) <= (size_t)n && o < piece && !found;
		     o += KDI_CHUNK_ALIGN) {
			struct kdi_reader t = *r;
			struct kdi_chunk h;
			if (memcmp(buf + o, KDI_CHUNK_MAGIC, 4))
				continue;
			t.pos = at + o;
			t.done = 0;
			t.version = KDI_FORMAT_VERSION;	/* flags of any version pass */
			if (read_header(&t, &h) < 0 || h.seq == 0)
				continue;
			r->dump_id = h.dump_id;
			/* Any version's flags are read: a sealed dump's CHAIN is
			 * in the clear, and what follows says which it is. */
			r->version = KDI_FORMAT_VERSION;
			r->recovered = 1;
			r->pos = at + o;
			r->next_seq = h.seq;
			r->done = 0;
			found = 1;
		}
	}
	free(buf);
	r->limit = save_limit;
	return found ? 0 : -ENOENT;
}

uint64_t reader_payload_offset(const struct kdi_reader *r, const struct kdi_chunk *h)
{
	return r->pos - chunk_span(h->len) + sizeof *h;
}

/* ---------------- PAGES payload ---------------- */

size_t pages_bitmap_len(uint32_t count)
{
	return ((count + 31) / 32) * 4;
}

size_t pages_hdr_len(uint32_t count, uint32_t nstored, uint32_t nzero)
{
	return sizeof(struct kdi_pages) + pages_bitmap_len(count) * (nzero ? 2 : 1) +
	       4 * (size_t)nstored;
}

/* Population of a count-bit bitmap; -1 if a bit past count is set. */
static int64_t bitmap_pop(const uint8_t *b, uint32_t count)
{
	int64_t pop = 0;

	for (uint32_t i = 0; i < pages_bitmap_len(count) * 8; i++)
		if ((b[i / 8] >> (i % 8)) & 1) {
			if (i >= count)
				return -1;
			pop++;
		}
	return pop;
}

/* The index's length a PAGES head gives, when its counts are sane and
 * it fits in LEN bytes; else 0. */
static size_t index_len(const uint8_t *head, size_t len)
{
	struct kdi_pages p;

	if (len < sizeof p)
		return 0;
	memcpy(&p, head, sizeof p);
	if (p.count == 0 || p.count > KDI_BLOCK_MAX || p.nstored > p.count || p.nzero > p.count)
		return 0;
	size_t hl = pages_hdr_len(p.count, p.nstored, p.nzero);
	return hl <= len ? hl : 0;
}

int pages_seal(const struct seal_dump *d, const struct seal_where *w, uint8_t *p)
{
	size_t hl = index_len(p, w->len), tb = KDI_TAG_BYTES;
	uint8_t *tags = p + w->len;

	if (!hl)
		return -EINVAL;
	seal_part(d, w, 1, p, sizeof(struct kdi_pages), tags);
	seal_part(d, w, 2, p + sizeof(struct kdi_pages), hl - sizeof(struct kdi_pages), tags + tb);
	seal_part(d, w, 3, p + hl, w->len - hl, tags + 2 * tb);
	return 0;
}

long pages_open_index(const struct seal_dump *d, const struct seal_where *w, uint8_t *p)
{
	const uint8_t *tags = p + w->len;
	size_t hl;

	if (w->len < sizeof(struct kdi_pages) ||
	    seal_open_part(d, w, 1, p, sizeof(struct kdi_pages), tags) < 0 ||
	    !(hl = index_len(p, w->len)) ||
	    seal_open_part(d, w, 2, p + sizeof(struct kdi_pages), hl - sizeof(struct kdi_pages),
			   tags + KDI_TAG_BYTES) < 0)
		return -EBADMSG;
	return (long)hl;
}

int pages_open_data(const struct seal_dump *d, const struct seal_where *w, uint8_t *p, size_t hl)
{
	if (hl > w->len)
		return -EBADMSG;
	return seal_open_part(d, w, 3, p + hl, w->len - hl, p + w->len + 2 * KDI_TAG_BYTES);
}

int chunk_seal(const struct seal_dump *d, const struct seal_where *w, uint32_t version, uint8_t *p)
{
	if (chunk_in_parts(w->type, version))
		return pages_seal(d, w, p);
	seal_chunk(d, w, p, p + w->len);
	return 0;
}

int chunk_open(const struct seal_dump *d, const struct seal_where *w, uint32_t version, uint8_t *p)
{
	if (!chunk_in_parts(w->type, version))
		return seal_open_chunk(d, w, p, p + w->len);
	long hl = pages_open_index(d, w, p);
	return hl < 0 ? -EBADMSG : pages_open_data(d, w, p, (size_t)hl);
}

int pages_parse(const void *payload, size_t len, uint32_t page_size,
		struct kdi_pages_view *v)
{
	struct kdi_pages p;

	if (len < sizeof p)
		return -EBADMSG;
	memcpy(&p, payload, sizeof p);
	if (p.count == 0 || p.count > KDI_BLOCK_MAX || p.nstored > p.count ||
	    p.nzero > p.count - p.nstored ||
	    (p.flags & ~(KDI_PAGES_LINKED | KDI_PAGES_LATER | KDI_PAGES_EARLY | KDI_PAGES_STARTUP)) ||
	    (p.flags & (KDI_PAGES_LATER | KDI_PAGES_EARLY)) == (KDI_PAGES_LATER | KDI_PAGES_EARLY) ||
	    (p.flags & (KDI_PAGES_STARTUP | KDI_PAGES_EARLY)) == KDI_PAGES_STARTUP ||
	    ((p.flags & KDI_PAGES_LINKED) && (uint64_t)p.nstored * page_size > KDI_LINKED_MAX) ||
	    p.pfn > (UINT64_MAX / page_size) - p.count)
		return -EBADMSG;
	size_t hl = pages_hdr_len(p.count, p.nstored, p.nzero), bl = pages_bitmap_len(p.count);
	if (len < hl)
		return -EBADMSG;
	v->pfn = p.pfn;
	v->count = p.count;
	v->nstored = p.nstored;
	v->nzero = p.nzero;
	v->flags = p.flags;
	v->bitmap = (const uint8_t *)payload + sizeof p;
	v->zbitmap = p.nzero ? v->bitmap + bl : NULL;
	v->sizes = (const uint32_t *)(v->bitmap + bl * (p.nzero ? 2 : 1));
	v->data = (const uint8_t *)payload + hl;
	v->data_len = len - hl;

	/* Populations must equal the counts, the two bitmaps must not
	 * overlap, and sizes must add up exactly to the data: anything else
	 * is corruption. */
	if (bitmap_pop(v->bitmap, p.count) != p.nstored)
		return -EBADMSG;
	if (v->zbitmap) {
		if (bitmap_pop(v->zbitmap, p.count) != p.nzero)
			return -EBADMSG;
		for (size_t i = 0; i < bl; i++)
			if (v->bitmap[i] & v->zbitmap[i])
				return -EBADMSG;
	}
	uint64_t total = 0;
	for (uint32_t i = 0; i < p.nstored; i++) {
		uint32_t s;
		memcpy(&s, &v->sizes[i], 4);
		uint32_t sz = s & KDI_PAGE_SIZEMASK;
		if (s & ~(KDI_PAGE_LZ4 | KDI_PAGE_SIZEMASK))
			return -EBADMSG;
		if (sz == 0 || sz > page_size || (!(s & KDI_PAGE_LZ4) && sz != page_size))
			return -EBADMSG;
		total += sz;
	}
	if (total != v->data_len)
		return -EBADMSG;
	return 0;
}
