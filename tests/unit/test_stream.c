/* Unit tests for the chunk stream (dump/format.c writer and reader,
 * pages_parse) and for dump/dumpfile.c, on streams this file encodes
 * itself from docs/FORMAT.md (field offsets, XXH64 seed 0, 8-byte
 * padding), not through format.h's structs.
 *
 * The last case mutates a valid stream at random, many times, and loads
 * each result: nothing may crash, every return code must be one the API
 * documents, and a single damaged byte in a checksummed region must stop
 * the stream exactly there, keeping every chunk before it.
 *   KDI_FUZZ_ITERS  iterations (default 3000)
 *   KDI_FUZZ_SEED   PRNG seed (default 1); printed on failure */
#define CHECK_PREFIX "stream"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../../capture/writer.h"
#include "../../dump/dumpfile.h"
#include "../../dump/format.h"
#include "../../dump/save.h"
#include "../../dump/seal.h"

#define PS 4096u
#define BASE 4096u		/* stream offset in the test file */
#define MAXCH 64

enum { T_START = 1, T_NOTES, T_VMCOREINFO, T_SEGMENTS, T_PAGES, T_DMESG, T_END, T_PAD,
       T_DEBUGGER = 12 };

/* ---------------- an encoder written from FORMAT.md ---------------- */

struct sb {
	uint8_t *b;
	size_t len, cap;
	uint64_t dump_id, seq;
	int n;			/* chunks */
	size_t off[MAXCH];	/* stream offset of each header */
	size_t plen[MAXCH];
	uint16_t type[MAXCH];
};

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = v >> (8 * i); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = v >> (8 * i); }
static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static void grow(struct sb *s, size_t more)
{
	if (s->len + more <= s->cap)
		return;
	size_t nc = s->cap ? s->cap : 65536;
	while (nc < s->len + more)
		nc *= 2;
	s->b = realloc(s->b, nc);
	memset(s->b + s->cap, 0, nc - s->cap);
	s->cap = nc;
}

/* Header hash: XXH64 of the 48 header bytes with the field at 40 zero. */
static void hash_header(uint8_t *h)
{
	memset(h + 40, 0, 8);
	put64(h + 40, XXH64(h, 48, 0));
}

/* Both hashes right again for the chunk at h; `room` is how many bytes
 * follow h in its buffer (a mutated len may claim more than there is). */
static void rehash_chunk_in(uint8_t *h, size_t room)
{
	uint32_t len = get32(h + 8);
	if (room >= 48 && len <= room - 48)
		put64(h + 32, XXH64(h + 48, len, 0));
	hash_header(h);
}

static void rehash_chunk(uint8_t *h)
{
	rehash_chunk_in(h, 48 + (size_t)get32(h + 8));
}

static void chunk_ex(struct sb *s, uint16_t type, const void *p, size_t len,
		     uint64_t dump_id, uint64_t seq, uint32_t flags)
{
	size_t span = (48 + len + 7) & ~(size_t)7;
	grow(s, span);
	uint8_t *h = s->b + s->len;
	memset(h, 0, span);
	memcpy(h, "KDCK", 4);
	put16(h + 4, type);
	put16(h + 6, 48);
	put32(h + 8, (uint32_t)len);
	put32(h + 12, flags);
	put64(h + 16, dump_id);
	put64(h + 24, seq);
	if (len)
		memcpy(h + 48, p, len);
	put64(h + 32, XXH64(h + 48, len, 0));
	hash_header(h);
	if (s->n < MAXCH) {
		s->off[s->n] = s->len;
		s->plen[s->n] = len;
		s->type[s->n] = type;
		s->n++;
	}
	s->len += span;
}

static void chunk(struct sb *s, uint16_t type, const void *p, size_t len)
{
	chunk_ex(s, type, p, len, s->dump_id, s->seq++, 0);
}

/* START, 80 bytes. */
static void start_payload(uint8_t *p, uint32_t version, uint32_t ps, uint32_t nseg)
{
	memset(p, 0, 80);
	put32(p + 0, version);
	put32(p + 4, ps);
	put16(p + 8, 62);		/* EM_X86_64 */
	p[10] = 2;
	p[11] = 1;
	put32(p + 12, 31);
	put64(p + 16, 1700000000);
	put32(p + 24, nseg);
	memcpy(p + 48, "unit-test", 9);
}

static void segment(uint8_t *p, uint64_t paddr, uint64_t memsz, uint64_t filesz)
{
	memset(p, 0, 40);
	put64(p, paddr);
	put64(p + 8, 0xffff888000000000ull + paddr);
	put64(p + 16, memsz);
	put64(p + 24, filesz);
	put32(p + 32, 7);
}

static void end_payload(uint8_t *p, uint32_t status)
{
	memset(p, 0, 120);
	put32(p, status);
}

/* END as the writer makes it for the stream so far: FORMAT.md's
 * pages_total (pfns scanned), pages_stored, bytes_in (at 32: the stored
 * pages' size), bytes_out (at 40: the stream with END), nr_chunks (at 48:
 * END included), and the pfns not stored as excluded[0] (zero). */
static void end_counts(uint8_t *p, const struct sb *s, uint32_t status, uint64_t total,
		       uint64_t stored)
{
	end_payload(p, status);
	put64(p + 16, total);
	put64(p + 24, stored);
	put64(p + 32, stored * PS);
	put64(p + 40, s->len + 168);
	put64(p + 48, s->seq + 1);
	put64(p + 56, total - stored);
}

/* Page content by pfn: mostly compressible, every 5th random. */
static void page_of(uint64_t pfn, uint8_t *out)
{
	uint64_t x = pfn * 0x9e3779b97f4a7c15ull + 1;
	for (uint32_t i = 0; i < PS; i += 8) {
		if (pfn % 5 == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		memcpy(out + i, &x, 8);
	}
	out[0] = (uint8_t)pfn;
	out[1] = 1;
}

/* One PAGES payload for pfns [pfn, pfn+count): pfn+i stored where
 * keep(i), reported as an all-zero page where zero(i) (and not kept), left
 * out otherwise. FORMAT.md: a 24-byte header {pfn, count, nstored, nzero,
 * flags}, the stored bitmap, the zero bitmap only when nzero > 0, the size
 * words, the data. Returns the payload (malloc'd), its length in *len. */
/* When set, pages_payload writes LINKED chunks (flags bit 0): the stored
 * pages are one LZ4 stream, each compressed with the earlier ones (as
 * they decode, raw ones too) as its dictionary. */
static int linked;

static uint8_t *pages_payload(uint64_t pfn, uint32_t count, int (*keep)(uint32_t),
			      int (*zero)(uint32_t), size_t *len)
{
	size_t bl = ((count + 31) / 32) * 4;
	uint32_t n = 0, nz = 0;
	for (uint32_t i = 0; i < count; i++) {
		n += keep(i) != 0;
		nz += !keep(i) && zero && zero(i);
	}
	size_t sizes = 24 + bl * (nz ? 2 : 1);
	size_t hl = sizes + 4 * (size_t)n;
	uint8_t *p = calloc(1, hl + (size_t)n * PS + 64);
	uint8_t page[PS], *hist = malloc((size_t)n * PS + 1);
	LZ4_stream_t *ls = LZ4_createStream();
	put64(p, pfn);
	put32(p + 8, count);
	put32(p + 12, n);
	put32(p + 16, nz);
	put32(p + 20, linked ? 1 : 0);
	size_t d = hl, k = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (!keep(i)) {
			if (nz && zero(i))
				p[24 + bl + i / 8] |= 1u << (i % 8);
			continue;
		}
		p[24 + i / 8] |= 1u << (i % 8);
		page_of(pfn + i, page);
		int c;
		if (linked) {
			/* The stream reads its history in place: keep it all. */
			memcpy(hist + k * PS, page, PS);
			char out[LZ4_COMPRESSBOUND(PS)];
			c = LZ4_compress_fast_continue(ls, (const char *)hist + k * PS, out, PS,
						       sizeof out, 1);
			if (c > 0 && c < (int)PS)
				memcpy(p + d, out, c);
			else
				c = 0;
		} else {
			c = LZ4_compress_default((const char *)page, (char *)p + d, PS, PS - 1);
		}
		uint32_t w;
		if (c > 0) {
			w = (uint32_t)c | 0x80000000u;
		} else {
			memcpy(p + d, page, PS);
			c = PS;
			w = PS;
		}
		put32(p + sizes + 4 * k++, w);
		d += c;
	}
	LZ4_freeStream(ls);
	free(hist);
	*len = d;
	return p;
}

/* Offset of the size words in a PAGES payload. */
static size_t sizes_at(const uint8_t *p)
{
	size_t bl = ((get32(p + 8) + 31) / 32) * 4;
	return 24 + bl * (get32(p + 16) ? 2 : 1);
}

static int keep_a(uint32_t i) { return i % 3 != 1; }	/* block A: pfn 0.., 40 pfns */
static int zero_a(uint32_t i) { return i % 2 == 0; }	/* of the rest: every other zero */
static int keep_b(uint32_t i) { return i == 0 || i == 32 || i % 7 == 3; }	/* block B */
static int keep_c(uint32_t i) { return i < 10 || i > 60; }	/* block C */
static int zero_c(uint32_t i) { return i >= 10 && i < 30; }
static int keep_none(uint32_t i) { return 0; }		/* block D: zero pages only */
static int zero_all(uint32_t i) { return 1; }

static const struct {
	uint64_t pfn;
	uint32_t count;
	int (*keep)(uint32_t), (*zero)(uint32_t);
} blocks[] = {
	{ 0, 40, keep_a, zero_a }, { 100, 33, keep_b, NULL }, { 4000, 70, keep_c, zero_c },
	{ 4200, 16, keep_none, zero_all },
};
#define NBLOCKS 4
static const char vmcoreinfo[] = "OSRELEASE=6.1.0-unit\nPAGESIZE=4096\nCRASHTIME=1700000000\n";
static const uint8_t notes[] = "CORE\0\0\0\0 pretend notes";

static size_t stored_in(int b)
{
	size_t n = 0;
	for (uint32_t i = 0; i < blocks[b].count; i++)
		n += blocks[b].keep(i) != 0;
	return n;
}

/* Chunk indexes of the standard stream. */
enum { C_START, C_NOTES, C_VMCI, C_SEGS, C_PAGES0, C_DMESG = C_PAGES0 + 1, C_PAGES1, C_PAD,
       C_UNKNOWN, C_PAGES2, C_PAGES3, C_END, C_COUNT };

/* The standard valid stream: metadata, four PAGES chunks with a DMESG,
 * a PAD and an unknown type 99 among them, END. With `upto` < C_COUNT the
 * stream holds only chunks [0, upto) (no END). */
static void build(struct sb *s, uint32_t end_status, int upto)
{
	uint8_t st[80], seg[2 * 40], end[120];
	size_t len;

	memset(s, 0, sizeof *s);
	s->dump_id = 0x1122334455667788ull;
	start_payload(st, 1, PS, 2);
	segment(seg, 0, 200 * PS, 200 * PS);
	segment(seg + 40, 4000ull * PS, 300 * PS, 300 * PS);
	for (int k = 0; k < upto && k < C_COUNT; k++) {
		uint8_t *p;
		switch (k) {
		case C_START: chunk(s, T_START, st, 80); break;
		case C_NOTES: chunk(s, T_NOTES, notes, sizeof notes); break;
		case C_VMCI: chunk(s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo)); break;
		case C_SEGS: chunk(s, T_SEGMENTS, seg, sizeof seg); break;
		case C_PAGES0: case C_PAGES1: case C_PAGES2: case C_PAGES3: {
			int b = k == C_PAGES0 ? 0 : k == C_PAGES1 ? 1 : k == C_PAGES2 ? 2 : 3;
			p = pages_payload(blocks[b].pfn, blocks[b].count, blocks[b].keep,
					  blocks[b].zero, &len);
			chunk(s, T_PAGES, p, len);
			free(p);
			break;
		}
		case C_DMESG: chunk(s, T_DMESG, "<6>log line\n", 12); break;
		case C_PAD: chunk(s, T_PAD, NULL, 0); break;
		case C_UNKNOWN: chunk(s, 99, "future", 6); break;
		case C_END:
			end_counts(end, s, end_status, 500,
				   stored_in(0) + stored_in(1) + stored_in(2) + stored_in(3));
			chunk(s, T_END, end, 120);
			break;
		}
	}
}

/* ---------------- a file to hold streams ---------------- */

static int sfd = -1;
static char spath[1100];

static void file_open(void)
{
	const char *dir = getenv("TMPDIR");
	snprintf(spath, sizeof spath, "%s/kdi-stream-XXXXXX", dir && *dir ? dir : "/tmp");
	sfd = mkstemp(spath);
	if (sfd < 0) {
		perror("mkstemp");
		exit(2);
	}
	unlink(spath);
}

/* The stream at BASE; returns the limit (end of what was written). */
static uint64_t file_put(const uint8_t *b, size_t len)
{
	if (ftruncate(sfd, 0) < 0 || ftruncate(sfd, BASE) < 0 ||
	    (len && pwrite(sfd, b, len, BASE) != (ssize_t)len)) {
		perror("stream file");
		exit(2);
	}
	return BASE + len;
}

static int load(struct dumpfile *d, const struct sb *s, uint64_t limit)
{
	file_put(s->b, s->len);
	return dumpfile_load(d, sfd, BASE, limit ? limit : BASE + s->len);
}

/* ---------------- cases ---------------- */

/* The project's writer produces the same bytes as this file's encoder. */
static void writer_matches_format_md(void)
{
	struct sb s = { 0 };
	struct kdi_writer w;
	uint8_t wbuf[4096];		/* small: forces several flushes */
	uint8_t st[80];

	s.dump_id = 0xabcdef0123456789ull;
	start_payload(st, 1, PS, 0);
	chunk(&s, T_START, st, 80);
	chunk(&s, T_NOTES, notes, sizeof notes);		/* odd length: padding */
	chunk(&s, T_PAD, NULL, 0);
	uint8_t *big = malloc(10000);
	for (int i = 0; i < 10000; i++)
		big[i] = (uint8_t)(i * 7);
	chunk(&s, T_DMESG, big, 10000);

	file_put(NULL, 0);
	writer_init(&w, sfd, BASE, 1u << 30, wbuf, sizeof wbuf, s.dump_id);
	CHECK_INT(w.dump_id, s.dump_id);
	CHECK_INT(writer_put(&w, T_START, st, 40, st + 40, 40, NULL, 0), 0);	/* in pieces */
	CHECK_INT(writer_put(&w, T_NOTES, notes, sizeof notes, NULL, 0, NULL, 0), 0);
	CHECK_INT(writer_put(&w, T_PAD, NULL, 0, NULL, 0, NULL, 0), 0);
	CHECK_INT(writer_put(&w, T_DMESG, big, 1, big + 1, 4999, big + 5000, 5000), 0);
	CHECK_INT(writer_flush(&w), 0);
	CHECK_INT(w.pos, s.len);
	CHECK_INT(w.seq, 4);
	CHECK_INT(chunk_span(0), 48);
	CHECK_INT(chunk_span(1), 56);
	CHECK_INT(chunk_span(8), 56);
	CHECK_INT(chunk_span(9), 64);
	uint8_t *got = malloc(s.len);
	CHECK(pread(sfd, got, s.len, BASE) == (ssize_t)s.len, "short read back");
	size_t diff = s.len;
	for (size_t i = 0; i < s.len; i++)
		if (got[i] != s.b[i]) {
			diff = i;
			break;
		}
	CHECK(diff == s.len, "writer output differs from FORMAT.md encoding at stream byte %zu", diff);
	free(got);
	free(big);
	free(s.b);
}

static void roundtrip_complete(void)
{
	struct sb s;
	struct dumpfile d;

	build(&s, 0, C_COUNT);
	int r = load(&d, &s, 0);
	CHECK_INT(r, 0);
	if (r) {
		free(s.b);
		return;
	}
	CHECK(dumpfile_complete(&d), "not complete: %s", d.why);
	CHECK_INT(d.have_end, 1);
	CHECK_STR(d.why, "");
	CHECK_INT(d.dump_id, s.dump_id);
	CHECK_INT(d.start.page_size, PS);
	CHECK_INT(d.notes_len, sizeof notes);
	CHECK(d.notes && !memcmp(d.notes, notes, sizeof notes), "notes differ");
	CHECK_STR(d.vmcoreinfo, vmcoreinfo);
	CHECK_INT(d.nr_seg, 2);
	CHECK_INT(d.nblocks, NBLOCKS);
	CHECK_INT(d.pages_stored, stored_in(0) + stored_in(1) + stored_in(2) + stored_in(3));
	CHECK_INT(d.stream_end, BASE + s.len);
	/* Every pfn: stored ones decode to their bytes, zero ones are
	 * reported as such, the rest is absent. */
	struct dump_cursor *c = malloc(sizeof *c);
	cursor_init(c, &d);
	uint8_t page[PS], want[PS];
	int bad = 0, missing = 0, extra = 0, zbad = 0, nzero = 0;
	for (int b = 0; b < NBLOCKS; b++)
		for (uint32_t i = 0; i < blocks[b].count + 5; i++) {
			uint64_t pfn = blocks[b].pfn + i;
			int e = dumpfile_page(c, pfn, page);
			int in = i < blocks[b].count;
			int should = in && blocks[b].keep(i);
			int zero = in && !should && blocks[b].zero && blocks[b].zero(i);
			if (should) {
				page_of(pfn, want);
				if (e)
					missing++;
				else if (memcmp(page, want, PS))
					bad++;
			} else if (e != -ENOENT) {
				extra++;
			}
			nzero += zero;
			if (dumpfile_is_zero(&d, pfn) != zero)
				zbad++;
		}
	CHECK(!bad && !missing && !extra, "pages: %d wrong, %d missing, %d unexpected", bad, missing, extra);
	CHECK(!zbad && nzero > 20, "zero pages: %d misreported (of %d)", zbad, nzero);
	/* Going back to an earlier block works too (block cache). */
	CHECK_INT(dumpfile_page(c, 0, page), 0);
	page_of(0, want);
	CHECK(!memcmp(page, want, PS), "pfn 0 after a later block differs");
	cursor_fini(c);
	free(c);
	dumpfile_free(&d);
	free(s.b);
}

static void reader_sequence(void)
{
	struct sb s;
	struct kdi_reader r;
	struct kdi_start st;
	struct kdi_chunk h;
	uint8_t *buf = NULL;
	size_t cap = 0;

	build(&s, 0, C_COUNT);
	file_put(s.b, s.len);
	CHECK_INT(reader_open(&r, sfd, BASE, BASE + s.len, &st), 0);
	CHECK_INT(st.page_size, PS);
	CHECK_INT(st.nr_segments, 2);
	int k = 1, bad = 0;
	for (;;) {
		int n = reader_next(&r, &h, &buf, &cap);
		if (n != 1) {
			CHECK_INT(n, 0);
			break;
		}
		if (k >= s.n || h.type != s.type[k] || h.len != s.plen[k] || h.seq != (uint64_t)k ||
		    reader_payload_offset(&r, &h) != BASE + s.off[k] + 48)
			bad++;
		k++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(k, C_COUNT);
	CHECK_INT(reader_next(&r, &h, &buf, &cap), 0);	/* stays done */
	free(buf);
	free(s.b);
}

static void empty_and_start(void)
{
	struct sb s;
	struct dumpfile d;
	uint8_t zero[4096] = { 0 };

	file_put(zero, sizeof zero);
	CHECK_INT(dumpfile_load(&d, sfd, BASE, BASE + sizeof zero), -ENOENT);
	dumpfile_free(&d);
	CHECK_INT(dumpfile_load(&d, sfd, BASE, BASE + 10), -ENOENT);	/* no room for a header */
	dumpfile_free(&d);

	/* A stream whose first chunk is not START. */
	memset(&s, 0, sizeof s);
	s.dump_id = 5;
	chunk(&s, T_NOTES, notes, sizeof notes);
	CHECK_INT(load(&d, &s, 0), -EBADMSG);
	CHECK(check_mentions(d.why, "start"), "why: %s", d.why);
	dumpfile_free(&d);
	free(s.b);

	/* START with a seq other than 0. */
	uint8_t st[80];
	memset(&s, 0, sizeof s);
	start_payload(st, 1, PS, 0);
	chunk_ex(&s, T_START, st, 80, 5, 1, 0);
	CHECK_INT(load(&d, &s, 0), -EBADMSG);
	dumpfile_free(&d);
	free(s.b);

	/* Out-of-range START fields. */
	static const struct { uint32_t ver, ps, nseg; int want; } t[] = {
		{ KDI_FORMAT_VERSION + 1, PS, 1, -EPROTONOSUPPORT }, { 0, PS, 1, -EBADMSG },
		{ 2, PS, 1, 0 }, { 3, PS, 1, 0 }, { 4, PS, 1, 0 }, { 5, PS, 1, 0 }, { 6, PS, 1, 0 },
		{ 1, 1000, 1, -EBADMSG }, { 1, 256, 1, -EBADMSG },
		{ 1, 131072, 1, -EBADMSG }, { 1, PS, 65537, -EBADMSG }, { 1, 0, 1, -EBADMSG },
		{ 1, 65536, 65536, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct kdi_reader r;
		struct kdi_start got;
		memset(&s, 0, sizeof s);
		start_payload(st, t[i].ver, t[i].ps, t[i].nseg);
		chunk_ex(&s, T_START, st, 80, 5, 0, 0);
		file_put(s.b, s.len);
		int e = reader_open(&r, sfd, BASE, BASE + s.len, &got);
		CHECK(e == t[i].want, "START version %u page_size %u nr_segments %u: reader_open %d, want %d",
		      t[i].ver, t[i].ps, t[i].nseg, e, t[i].want);
		free(s.b);
	}
}

/* Damage at chunk k; the dump must keep exactly the chunks before it. */
static void expect_prefix(const char *what, struct sb *s, uint64_t limit, int k, const char *word)
{
	struct dumpfile d;
	int r = load(&d, s, limit);
	int want_blocks = (k > C_PAGES0) + (k > C_PAGES1) + (k > C_PAGES2) + (k > C_PAGES3);

	CHECK(r == 0, "%s: dumpfile_load %d (%s)", what, r, d.why);
	if (r == 0) {
		CHECK(!dumpfile_complete(&d), "%s: still complete", what);
		CHECK(!d.have_end, "%s: END taken", what);
		CHECK((int)d.nblocks == want_blocks, "%s: %zu blocks kept, want %d", what, d.nblocks, want_blocks);
		CHECK(d.stream_end == BASE + s->off[k], "%s: stream_end %llu, want %llu", what,
		      (unsigned long long)d.stream_end, (unsigned long long)(BASE + s->off[k]));
		CHECK(!word || check_mentions(d.why, word), "%s: why \"%s\" lacks \"%s\"", what, d.why, word);
	}
	dumpfile_free(&d);
}

/* Damage at chunk k, with the stream intact after it: the reader goes on
 * past it (FORMAT.md), keeps every other chunk, and says where it broke. */
static void expect_hole(const char *what, struct sb *s, int k, const char *word)
{
	struct dumpfile d;
	int r = load(&d, s, 0);
	int pages = k == C_PAGES0 || k == C_PAGES1 || k == C_PAGES2 || k == C_PAGES3;

	CHECK(r == 0, "%s: dumpfile_load %d (%s)", what, r, d.why);
	if (r == 0) {
		CHECK(!dumpfile_complete(&d), "%s: still complete", what);
		CHECK(d.have_end, "%s: END lost after damage before it", what);
		CHECK(!d.why[0], "%s: the stream stopped: %s", what, d.why);
		CHECK((int)d.nblocks == NBLOCKS - pages, "%s: %zu blocks kept, want %d", what,
		      d.nblocks, NBLOCKS - pages);
		CHECK(d.gaps == 1 && d.damaged == 1 && d.nholes == 1, "%s: gaps %u damaged %u holes %u",
		      what, d.gaps, d.damaged, d.nholes);
		CHECK(d.nholes && d.holes[0].seq_from == (uint64_t)k && d.holes[0].seq_to == (uint64_t)k + 1,
		      "%s: hole %llu-%llu, want chunk %d", what,
		      (unsigned long long)d.holes[0].seq_from, (unsigned long long)d.holes[0].seq_to, k);
		CHECK(d.nholes && d.holes[0].at == BASE + s->off[k], "%s: hole at %llu, want %llu", what,
		      (unsigned long long)d.holes[0].at, (unsigned long long)(BASE + s->off[k]));
		CHECK(d.stream_end == BASE + s->len, "%s: stream_end %llu, want %llu", what,
		      (unsigned long long)d.stream_end, (unsigned long long)(BASE + s->len));
		CHECK(!word || check_mentions(d.gap_why, word), "%s: gap_why \"%s\" lacks \"%s\"",
		      what, d.gap_why, word);
	}
	dumpfile_free(&d);
}

static void stops_at_damage(void)
{
	struct sb s;

	/* A payload byte of the second PAGES chunk. */
	build(&s, 0, C_COUNT);
	s.b[s.off[C_PAGES1] + 48 + s.plen[C_PAGES1] / 2] ^= 0x40;
	expect_hole("payload byte", &s, C_PAGES1, "checksum");
	free(s.b);

	/* A header byte (the len field) of the third. */
	build(&s, 0, C_COUNT);
	s.b[s.off[C_PAGES2] + 9] ^= 0x01;
	expect_hole("header byte", &s, C_PAGES2, "checksum");
	free(s.b);

	/* Magic gone. */
	build(&s, 0, C_COUNT);
	s.b[s.off[C_DMESG]] = 'X';
	expect_hole("magic", &s, C_DMESG, "magic");
	free(s.b);

	/* The device ends inside the last PAGES chunk, or inside END. */
	build(&s, 0, C_COUNT);
	expect_prefix("limit in PAGES", &s, BASE + s.off[C_PAGES2] + 100, C_PAGES2, "end of the device");
	expect_prefix("limit in a header", &s, BASE + s.off[C_PAGES2] + 20, C_PAGES2, "end of the device");
	expect_prefix("limit in END", &s, BASE + s.off[C_END] + 60, C_END, "end of the device");
	free(s.b);

	/* The source file itself is shorter than the limit says. */
	struct dumpfile d;
	build(&s, 0, C_COUNT);
	file_put(s.b, s.off[C_PAGES1] + 500);
	int r = dumpfile_load(&d, sfd, BASE, BASE + s.len);
	CHECK(r == 0 && !dumpfile_complete(&d) && d.nblocks == 1, "short file: r %d blocks %zu", r, d.nblocks);
	CHECK(check_mentions(d.why, "truncated"), "short file: why \"%s\"", d.why);
	dumpfile_free(&d);
	free(s.b);
}

/* Re-encodes chunk k of a standard stream with changed header fields. */
static void replace_chunk(struct sb *s, int k, uint16_t type, uint64_t dump_id, uint64_t seq,
			  uint32_t flags, uint16_t hdr_size)
{
	uint8_t *h = s->b + s->off[k];
	put16(h + 4, type);
	put16(h + 6, hdr_size);
	put32(h + 12, flags);
	put64(h + 16, dump_id);
	put64(h + 24, seq);
	rehash_chunk(h);
}

static void stops_at_foreign_chunks(void)
{
	struct sb s;

	/* A well-formed chunk of another dump (a stale one from an earlier,
	 * longer dump) where END should be. */
	build(&s, 0, C_COUNT);
	replace_chunk(&s, C_END, T_END, s.dump_id ^ 1, C_END, 0, 48);
	expect_prefix("stale dump_id", &s, 0, C_END, "another");
	free(s.b);

	/* Sequence gap, or a repeated sequence number. */
	build(&s, 0, C_COUNT);
	replace_chunk(&s, C_PAGES1, T_PAGES, s.dump_id, C_PAGES1 + 1, 0, 48);
	expect_hole("seq gap", &s, C_PAGES1, "sequence");
	free(s.b);
	build(&s, 0, C_COUNT);
	replace_chunk(&s, C_PAGES1, T_PAGES, s.dump_id, C_PAGES1 - 1, 0, 48);
	expect_hole("seq repeat", &s, C_PAGES1, "sequence");
	free(s.b);

	/* Flags and header size must be what version 1 writes. */
	build(&s, 0, C_COUNT);
	replace_chunk(&s, C_PAGES2, T_PAGES, s.dump_id, C_PAGES2, 1, 48);
	expect_hole("flags", &s, C_PAGES2, "flags");
	free(s.b);
	build(&s, 0, C_COUNT);
	replace_chunk(&s, C_PAGES2, T_PAGES, s.dump_id, C_PAGES2, 0, 56);
	expect_hole("hdr_size", &s, C_PAGES2, "header size");
	free(s.b);

	/* A payload length over 64 MiB, correctly hashed header. */
	build(&s, 0, C_COUNT);
	uint8_t *h = s.b + s.off[C_DMESG];
	put32(h + 8, (64u << 20) + 1);
	hash_header(h);
	expect_hole("len > 64 MiB", &s, C_DMESG, "length");
	free(s.b);

	/* END of the wrong size. */
	build(&s, 0, C_END);
	uint8_t end[136] = { 0 };
	chunk(&s, T_END, end, 136);
	s.n = C_COUNT;
	expect_prefix("END size", &s, 0, C_END, "size");
	free(s.b);

	/* END of version 4's size in a version 1 stream: not that dump's. */
	build(&s, 0, C_END);
	chunk(&s, T_END, end, 128);
	s.n = C_COUNT;
	{
		struct dumpfile d;
		load(&d, &s, 0);
		CHECK(!d.have_end, "a 128-byte END taken in a version 1 stream");
		dumpfile_free(&d);
	}
	free(s.b);

	/* No END at all: incomplete, everything kept. */
	build(&s, 0, C_END);
	struct dumpfile d;
	int r = load(&d, &s, BASE + s.len + 4096);
	CHECK(r == 0 && !d.have_end && !dumpfile_complete(&d) && d.nblocks == NBLOCKS,
	      "no END: r %d have_end %d blocks %zu", r, d.have_end, d.nblocks);
	dumpfile_free(&d);
	free(s.b);
}

static void end_status(void)
{
	struct sb s;
	struct dumpfile d;

	static const uint32_t st[] = { 0x1, 0x3, 0x5, 0x9, 0x11 };
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
		build(&s, st[i], C_COUNT);
		int r = load(&d, &s, 0);
		CHECK(r == 0 && d.have_end && !dumpfile_complete(&d) && d.end.status == st[i],
		      "END status %#x: r %d have_end %d complete %d", st[i], r, d.have_end,
		      dumpfile_complete(&d));
		dumpfile_free(&d);
		free(s.b);
	}
	/* Flags without INCOMPLETE do not make a dump incomplete. */
	build(&s, 0x4, C_COUNT);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "status 0x4 alone judged incomplete");
	dumpfile_free(&d);
	free(s.b);
}

/* Metadata that is wrong although every checksum is right. */
static void malformed_metadata(void)
{
	struct sb s;
	struct dumpfile d;
	uint8_t st[80], seg[3 * 40];
	size_t len;
	uint8_t *p;

	/* PAGES before SEGMENTS. */
	memset(&s, 0, sizeof s);
	s.dump_id = 9;
	start_payload(st, 1, PS, 1);
	chunk(&s, T_START, st, 80);
	chunk(&s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	p = pages_payload(0, 8, keep_a, NULL, &len);
	chunk(&s, T_PAGES, p, len);
	free(p);
	CHECK_INT(load(&d, &s, 0), -EBADMSG);	/* and no layout: metadata missing */
	CHECK(d.nblocks == 0, "pages before the layout kept");
	dumpfile_free(&d);
	free(s.b);

	/* SEGMENTS count differs from START, filesz > memsz, wrapping range. */
	for (int v = 0; v < 4; v++) {
		memset(&s, 0, sizeof s);
		s.dump_id = 9;
		start_payload(st, 1, PS, v == 0 ? 3 : 2);
		chunk(&s, T_START, st, 80);
		chunk(&s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
		segment(seg, 0, 100 * PS, 100 * PS);
		segment(seg + 40, 1000 * PS, 100 * PS, v == 1 ? 101 * PS : 100 * PS);
		if (v == 2)
			put64(seg + 40, UINT64_MAX - PS);	/* paddr + memsz wraps */
		if (v == 3)
			put64(seg + 8, UINT64_MAX - PS);	/* vaddr + memsz wraps */
		chunk(&s, T_SEGMENTS, seg, 80);
		int r = load(&d, &s, 0);
		CHECK(r == -EBADMSG && check_mentions(d.gap_why, "malformed"),
		      "bad SEGMENTS variant %d: r %d gap_why %s", v, r, d.gap_why);
		dumpfile_free(&d);
		free(s.b);
	}

	/* Two SEGMENTS chunks. */
	memset(&s, 0, sizeof s);
	s.dump_id = 9;
	start_payload(st, 1, PS, 1);
	chunk(&s, T_START, st, 80);
	chunk(&s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	segment(seg, 0, 100 * PS, 100 * PS);
	chunk(&s, T_SEGMENTS, seg, 40);
	chunk(&s, T_SEGMENTS, seg, 40);
	int r = load(&d, &s, 0);
	CHECK(r == 0 && !dumpfile_complete(&d) && d.nr_seg == 1, "second SEGMENTS: r %d", r);
	dumpfile_free(&d);
	free(s.b);

	/* PAGES whose pfns do not increase: the stream stops before it. */
	memset(&s, 0, sizeof s);
	s.dump_id = 9;
	start_payload(st, 1, PS, 1);
	chunk(&s, T_START, st, 80);
	chunk(&s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	chunk(&s, T_SEGMENTS, seg, 40);
	p = pages_payload(10, 20, keep_a, zero_a, &len);
	chunk(&s, T_PAGES, p, len);
	free(p);
	p = pages_payload(29, 5, keep_a, NULL, &len);		/* overlaps pfn 29 */
	chunk(&s, T_PAGES, p, len);
	free(p);
	r = load(&d, &s, 0);
	CHECK(r == 0 && d.nblocks == 1 && !dumpfile_complete(&d), "overlapping blocks: r %d blocks %zu",
	      r, d.nblocks);
	dumpfile_free(&d);
	free(s.b);

	/* No VMCOREINFO. */
	memset(&s, 0, sizeof s);
	s.dump_id = 9;
	start_payload(st, 1, PS, 1);
	chunk(&s, T_START, st, 80);
	chunk(&s, T_SEGMENTS, seg, 40);
	uint8_t end[120];
	end_payload(end, 0);
	chunk(&s, T_END, end, 120);
	CHECK_INT(load(&d, &s, 0), -EBADMSG);
	CHECK(check_mentions(d.why, "vmcoreinfo"), "why: %s", d.why);
	dumpfile_free(&d);
	free(s.b);
}

/* Zero-length metadata payloads (the reader has not needed a buffer yet). */
static void empty_payloads(void)
{
	struct sb s;
	struct dumpfile d;
	uint8_t st[80], seg[40], end[120];

	memset(&s, 0, sizeof s);
	s.dump_id = 3;
	start_payload(st, 1, PS, 1);
	segment(seg, 0, 10 * PS, 10 * PS);
	chunk(&s, T_START, st, 80);
	chunk(&s, T_NOTES, NULL, 0);
	chunk(&s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	chunk(&s, T_SEGMENTS, seg, 40);
	end_counts(end, &s, 0, 10, 0);
	chunk(&s, T_END, end, 120);
	int r = load(&d, &s, 0);
	CHECK(r == 0 && dumpfile_complete(&d), "empty NOTES: r %d why %s", r, d.why);
	CHECK_INT(d.notes_len, 0);
	dumpfile_free(&d);
	free(s.b);
}

/* pages_parse on payloads that are wrong in one field each. */
static void pages_parse_rules(void)
{
	size_t len;
	struct kdi_pages_view v;
	uint8_t *good = pages_payload(1000, 40, keep_a, zero_a, &len);
	uint8_t *p = malloc(len + 64);
	size_t bl = 8;	/* 40 bits -> 2 words */
	uint32_t n = get32(good + 12), nz = get32(good + 16);
	size_t zb = 24 + bl, sz = 24 + 2 * bl;	/* zero bitmap, size words */

	CHECK(nz > 0 && n > 0, "test premise: stored and zero pages");
	CHECK_INT(pages_parse(good, len, PS, &v), 0);
	CHECK(v.pfn == 1000 && v.count == 40 && v.nstored == n && v.nzero == nz, "view fields");
	CHECK(v.bitmap == good + 24 && v.zbitmap == good + zb && (const uint8_t *)v.sizes == good + sz,
	      "view pointers");
	CHECK_INT(pages_hdr_len(40, n, nz), sz + 4 * n);
	CHECK_INT(pages_hdr_len(40, n, 0), 24 + bl + 4 * n);
	CHECK_INT(pages_hdr_len(32, 0, 0), 28);
	CHECK_INT(pages_hdr_len(33, 0, 1), 40);

#define MUT(desc, stmt, plen)                                                   \
	do {                                                                    \
		memcpy(p, good, len);                                           \
		stmt;                                                           \
		int r_ = pages_parse(p, (plen), PS, &v);                        \
		CHECK(r_ == -EBADMSG, "%s: pages_parse %d, want -EBADMSG", desc, r_); \
	} while (0)

	MUT("count 0", put32(p + 8, 0), len);
	MUT("count 4097", put32(p + 8, 4097), len);
	MUT("nstored > count", put32(p + 12, 41), len);
	MUT("nstored one less", put32(p + 12, n - 1), len);
	MUT("nzero one less", put32(p + 16, nz - 1), len);
	MUT("nzero one more", put32(p + 16, nz + 1), len);
	MUT("nzero > count - nstored", put32(p + 16, 40 - n + 1), len);
	MUT("nzero 0 with a zero bitmap", put32(p + 16, 0), len);
	MUT("flags: unknown bit", put32(p + 20, 8), len);
	MUT("flags: EARLY with LATER", put32(p + 20, 4 | 2), len);
	MUT("flags: EARLY with LATER, linked", put32(p + 20, 4 | 2 | 1), len);
	MUT("flags high bit", put32(p + 20, 0x80000000u), len);
	MUT("bit past count", p[24 + 5] |= 0x01, len);		/* bit 40 */
	MUT("bit in the pad word", p[24 + 7] |= 0x80, len);
	MUT("zero bit past count", p[zb + 5] |= 0x01, len);
	MUT("extra stored bit", p[24 + 0] |= 0x02, len);	/* pfn 1: not kept */
	MUT("stored bit cleared", p[24 + 0] &= ~0x01, len);
	/* pfn 2 stored, pfn 1 not zero (odd): move the zero bit from pfn 4
	 * to pfn 2; same population, bitmaps overlap. */
	MUT("bitmaps overlap", (p[zb] &= ~0x10, p[zb] |= 0x04), len);
	MUT("size word stray bit", put32(p + sz, get32(p + sz) | 0x01000000), len);
	MUT("size word length 0", put32(p + sz, 0x80000000u), len);
	MUT("size word raw not page_size", put32(p + sz, 100), len);
	MUT("size word over page_size", put32(p + sz, 0x80000000u | (PS + 1)), len);
	MUT("data one byte short", (void)0, len - 1);
	MUT("data one byte long", p[len] = 0, len + 1);
	MUT("shorter than its header", (void)0, sz + 4 * n - 1);
	MUT("shorter than 24", (void)0, 23);
	MUT("pfn overflows", put64(p, UINT64_MAX - 10), len);
	MUT("pfn * page_size overflows", put64(p, (UINT64_MAX / PS) - 39), len);
#undef MUT
	memcpy(p, good, len);
	CHECK(p[zb] & 0x10, "test premise: pfn 4 is a zero page");
	/* Either pass flag alone is defined (versions 2 and 3); only the
	 * pair is refused. */
	put32(p + 20, 4);
	CHECK_INT(pages_parse(p, len, PS, &v), 0);
	CHECK_INT(v.flags, 4);
	put32(p + 20, 2 | 1);
	CHECK_INT(pages_parse(p, len, PS, &v), 0);
	memcpy(p, good, len);
	/* The largest count, nothing stored, nothing zero. */
	uint8_t big[24 + 512];
	memset(big, 0, sizeof big);
	put32(big + 8, 4096);
	CHECK_INT(pages_parse(big, sizeof big, PS, &v), 0);
	/* Zero pages only (FORMAT.md: a chunk may store no page). */
	uint8_t zo[24 + 2 * 4];
	memset(zo, 0, sizeof zo);
	put32(zo + 8, 16);
	put32(zo + 16, 16);
	zo[28] = zo[29] = 0xff;
	CHECK_INT(pages_parse(zo, sizeof zo, PS, &v), 0);
	CHECK(v.nstored == 0 && v.nzero == 16, "zero-only view");
	free(p);
	free(good);
}

/* A page whose LZ4 data is broken although the chunk checks out. */
static void bad_page_data(void)
{
	struct sb s;
	struct dumpfile d;

	build(&s, 0, C_COUNT);
	uint8_t *h = s.b + s.off[C_PAGES0];
	uint8_t *pl = h + 48;
	uint32_t n = get32(pl + 12);
	size_t sz = sizes_at(pl), hl = sz + 4 * (size_t)n;
	/* Block A stores pfn 0 (raw), then pfn 2 (LZ4), then pfn 3. */
	uint32_t w0 = get32(pl + sz), w1 = get32(pl + sz + 4);
	CHECK(!(w0 & 0x80000000u) && (w1 & 0x80000000u), "test premise: pfn 0 raw, pfn 2 LZ4");
	memset(pl + hl + (w0 & 0xffffff), 0xff, w1 & 0xffffff);	/* runs past its input */
	rehash_chunk(h);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "chunk hash fixed, dump must load complete");
	uint8_t page[PS], want[PS];
	struct dump_cursor *c = malloc(sizeof *c);
	cursor_init(c, &d);
	CHECK_INT(dumpfile_page(c, 2, page), -EBADMSG);
	CHECK_INT(dumpfile_page(c, 0, page), 0);	/* its neighbours still decode */
	page_of(0, want);
	CHECK(!memcmp(page, want, PS), "pfn 0 wrong");
	CHECK_INT(dumpfile_page(c, 3, page), 0);
	page_of(3, want);
	CHECK(!memcmp(page, want, PS), "pfn 3 wrong");
	cursor_fini(c);
	free(c);
	dumpfile_free(&d);
	free(s.b);
}

/* LINKED chunks from this file's encoder decode to the same pages; a bad
 * page in one spoils the pages after it in its chunk (they may copy from
 * it), not those before it and not other chunks. */
static void linked_pages(void)
{
	struct sb s;
	struct dumpfile d;
	uint8_t page[PS], want[PS];

	linked = 1;
	build(&s, 0, C_COUNT);
	linked = 0;
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "linked stream must load complete");
	struct dump_cursor *c = malloc(sizeof *c);
	cursor_init(c, &d);
	int bad = 0, n = 0;
	for (int b = 0; b < NBLOCKS; b++)
		for (uint32_t i = 0; i < blocks[b].count; i++) {
			if (!blocks[b].keep(i))
				continue;
			n++;
			page_of(blocks[b].pfn + i, want);
			if (dumpfile_page(c, blocks[b].pfn + i, page) != 0 || memcmp(page, want, PS))
				bad++;
		}
	CHECK(n > 40 && bad == 0, "%d of %d linked pages wrong", bad, n);
	cursor_fini(c);
	dumpfile_free(&d);

	/* Damage block A's second stored page (pfn 2, LZ4), re-hash. */
	uint8_t *h = s.b + s.off[C_PAGES0];
	uint8_t *pl = h + 48;
	uint32_t np = get32(pl + 12);
	size_t sz = sizes_at(pl), hl = sz + 4 * (size_t)np;
	uint32_t w0 = get32(pl + sz), w1 = get32(pl + sz + 4);
	CHECK((w1 & 0x80000000u) != 0, "test premise: pfn 2 is LZ4");
	memset(pl + hl + (w0 & 0xffffff), 0xff, w1 & 0xffffff);
	rehash_chunk(h);
	CHECK_INT(load(&d, &s, 0), 0);
	cursor_init(c, &d);
	CHECK_INT(dumpfile_page(c, 0, page), 0);	/* before the damage */
	page_of(0, want);
	CHECK(!memcmp(page, want, PS), "pfn 0 wrong");
	CHECK_INT(dumpfile_page(c, 3, page), -EBADMSG);	/* after it */
	CHECK_INT(dumpfile_page(c, 100, page), 0);	/* block B is intact */
	page_of(100, want);
	CHECK(!memcmp(page, want, PS), "pfn 100 wrong");
	CHECK_INT(dumpfile_page(c, 2, page), -EBADMSG);
	cursor_fini(c);
	free(c);
	dumpfile_free(&d);
	free(s.b);
}

/* The writer keeps room for END, never writes past its limit, and END
 * counts what the stream holds. */
static void writer_reserve_and_limit(void)
{
	struct kdi_writer w;
	uint8_t wbuf[8192];
	uint8_t st[80], payload[1000];
	uint64_t limit = BASE + 20000;

	memset(payload, 0xa5, sizeof payload);
	file_put(NULL, 0);
	writer_init(&w, sfd, BASE, limit, wbuf, sizeof wbuf, 0);
	CHECK(w.dump_id != 0, "dump_id 0");
	start_payload(st, KDI_FORMAT_PLAIN, PS, 0);
	CHECK_INT(writer_put(&w, T_START, st, 80, NULL, 0, NULL, 0), 0);
	int r, n = 0;
	while ((r = writer_put(&w, T_DMESG, payload, sizeof payload, NULL, 0, NULL, 0)) == 0)
		n++;
	CHECK_INT(r, -ENOSPC);
	CHECK(n > 10, "only %d chunks fit", n);
	struct kdi_end e;
	memset(&e, 0, sizeof e);
	e.status = 3;
	CHECK_INT(writer_put_end(&w, &e), 0);
	CHECK_INT(writer_flush(&w), 0);
	CHECK(BASE + w.pos <= limit, "stream ends at %llu, past the limit %llu",
	      (unsigned long long)(BASE + w.pos), (unsigned long long)limit);
	struct stat sbuf;
	fstat(sfd, &sbuf);
	CHECK((uint64_t)sbuf.st_size <= limit, "file grew to %lld past the limit", (long long)sbuf.st_size);
	/* Oversized payloads are refused before anything is read. */
	CHECK_INT(writer_put(&w, T_DMESG, NULL, (64u << 20) + 1, NULL, 0, NULL, 0), -EFBIG);

	struct dumpfile d;
	/* No SEGMENTS/VMCOREINFO: the loader says -EBADMSG but reads END. */
	dumpfile_load(&d, sfd, BASE, limit);
	CHECK(d.have_end, "END not read back: %s", d.why);
	CHECK_INT(d.end.status, 3);
	CHECK_INT(d.end.nr_chunks, w.seq);
	CHECK_INT(d.end.bytes_out, w.pos);
	CHECK_INT(d.stream_end, BASE + w.pos);
	dumpfile_free(&d);

	/* A limit below the END reserve: nothing fits. */
	writer_init(&w, sfd, BASE, BASE + 100, wbuf, sizeof wbuf, 7);
	CHECK_INT(writer_put(&w, T_START, st, 80, NULL, 0, NULL, 0), -ENOSPC);
	CHECK_INT(w.pos, 0);
}

/* ---------------- END and the stream agree ---------------- */

/* A copy of s with only the chunks in keep[] (indexes into s, in order),
 * renumbered and re-hashed: what someone forging the checksums can make
 * of a dump, every chunk intact. */
static void restream(struct sb *t, const struct sb *s, const int *keep, int n)
{
	memset(t, 0, sizeof *t);
	t->dump_id = s->dump_id;
	for (int i = 0; i < n; i++) {
		int k = keep[i];
		chunk(t, get32(s->b + s->off[k] + 4) & 0xffff, s->b + s->off[k] + 48, s->plen[k]);
	}
}

static void expect_disagrees(const char *what, struct sb *s, const char *word)
{
	struct dumpfile d;
	int r = load(&d, s, 0);

	CHECK(r == 0, "%s: dumpfile_load %d (%s)", what, r, d.why);
	if (r == 0) {
		CHECK(!dumpfile_complete(&d), "%s: read as complete", what);
		CHECK(check_mentions(d.why, "END") && check_mentions(d.why, word),
		      "%s: why \"%s\" does not name END and \"%s\"", what, d.why, word);
		CHECK(d.pfn_limit != UINT64_MAX, "%s: segments still vouched for", what);
	}
	dumpfile_free(&d);
}

/* FORMAT.md END: nr_chunks, bytes_out, pages_stored and pages_total are
 * those of the stream; with the hashes forged again, chunks deleted,
 * an END moved up or PAGES retyped must not read as complete. */
static void end_cross_checks(void)
{
	struct sb s, t;
	struct dumpfile d;

	build(&s, 0, C_COUNT);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "the standard stream: %s", d.why);
	CHECK(d.pfn_limit == UINT64_MAX, "the standard stream's segments not vouched for");
	dumpfile_free(&d);

	/* PAGES chunks deleted, the rest renumbered. */
	int del[] = { C_START, C_NOTES, C_VMCI, C_SEGS, C_PAGES0, C_DMESG, C_PAD, C_UNKNOWN,
		      C_PAGES3, C_END };
	restream(&t, &s, del, 10);
	expect_disagrees("PAGES deleted", &t, "chunks");
	free(t.b);

	/* An early END: the full stream's END right after block B. */
	int early[] = { C_START, C_NOTES, C_VMCI, C_SEGS, C_PAGES0, C_DMESG, C_PAGES1, C_END };
	restream(&t, &s, early, 8);
	expect_disagrees("early END", &t, "chunks");
	free(t.b);

	/* The same early END with its counts made right but for the pages. */
	restream(&t, &s, early, 7);
	uint8_t end[120];
	end_counts(end, &t, 0, 500, stored_in(0) + stored_in(1) + stored_in(2) + stored_in(3));
	chunk(&t, T_END, end, 120);
	expect_disagrees("early END, chunk counts forged", &t, "pages stored");
	free(t.b);

	/* PAGES retyped as PAD: same chunks, same bytes, pages gone. */
	build(&t, 0, C_COUNT);
	replace_chunk(&t, C_PAGES2, T_PAD, t.dump_id, C_PAGES2, 0, 48);
	expect_disagrees("PAGES as PAD", &t, "pages stored");
	free(t.b);

	/* The pages' bytes, and every pfn scanned stored or excluded. */
	for (int v = 0; v < 2; v++) {
		build(&t, 0, C_END);
		end_counts(end, &t, 0, 500, stored_in(0) + stored_in(1) + stored_in(2) + stored_in(3));
		put64(end + (v ? 56 : 32), get32(end + (v ? 56 : 32)) + 1);
		chunk(&t, T_END, end, 120);
		expect_disagrees(v ? "excluded" : "bytes_in", &t, v ? "excluded" : "uncompressed");
		free(t.b);
	}

	/* END's pfns scanned against the segments: a complete dump scanned
	 * them all; an incomplete one no more than there are. */
	for (int v = 0; v < 3; v++) {
		uint64_t total = v == 0 ? 499 : v == 1 ? 501 : 600;
		restream(&t, &s, early, 4);
		for (int k = C_PAGES0; k < C_END; k++)
			chunk(&t, get32(s.b + s.off[k] + 4) & 0xffff, s.b + s.off[k] + 48, s.plen[k]);
		end_counts(end, &t, v == 2 ? 1 : 0, total,
			   stored_in(0) + stored_in(1) + stored_in(2) + stored_in(3));
		chunk(&t, T_END, end, 120);
		expect_disagrees("pages_total", &t, "segments");
		free(t.b);
	}

	/* Incomplete but consistent (device full): END kept; the segments
	 * are vouched for only as far as the scan got, or the last block. */
	restream(&t, &s, early, 7);
	end_counts(end, &t, 3, 250, stored_in(0) + stored_in(1));
	chunk(&t, T_END, end, 120);
	CHECK_INT(load(&d, &t, 0), 0);
	CHECK(d.have_end && !d.why[0] && !dumpfile_complete(&d), "device full: have_end %d why %s",
	      d.have_end, d.why);
	CHECK_INT(d.pfn_limit, 4050);	/* 200 pfns of [0, 200), 50 of [4000, 4300) */
	dumpfile_free(&d);
	free(t.b);
	build(&t, 0, C_END);		/* no END: up to the last block's end */
	CHECK_INT(load(&d, &t, 0), 0);
	CHECK_INT(d.pfn_limit, 4216);
	dumpfile_free(&d);
	free(t.b);
	free(s.b);
}

/* ---------------- the dump changes under the reader ---------------- */

/* A PAGES payload rewritten in place after loading, with one that is
 * valid and as long but says something else: its pages are refused
 * (-ESTALE), never decoded with the old index, and no other block is
 * affected. Linked and unlinked chunks. */
static void changed_under_reader(void)
{
	for (int lk = 0; lk < 2; lk++) {
		struct sb s;
		struct dumpfile d;
		uint8_t page[PS], want[PS];

		linked = lk;
		build(&s, 0, C_COUNT);
		linked = 0;
		CHECK_INT(load(&d, &s, 0), 0);
		struct dump_cursor *c = malloc(sizeof *c);
		cursor_init(c, &d);
		/* Block C first, so the cursor's tables hold 70 entries. */
		CHECK_INT(dumpfile_page(c, 4065, page), 0);

		/* Block B (33 pfns) becomes 40 pfns: the bits past 33 are
		 * clear, the lengths unchanged, so it parses as valid. */
		uint8_t *pl = s.b + s.off[C_PAGES1] + 48;
		put32(pl + 8, 40);
		rehash_chunk(pl - 48);
		CHECK(pwrite(sfd, s.b + s.off[C_PAGES1], 48 + s.plen[C_PAGES1],
			     BASE + s.off[C_PAGES1]) == (ssize_t)(48 + s.plen[C_PAGES1]), "rewrite");
		int stale = 0, other = 0;
		for (uint32_t i = 0; i < blocks[1].count; i++)
			if (blocks[1].keep(i)) {
				int e = dumpfile_page(c, 100 + i, page);
				stale += e == -ESTALE;
				other += e != -ESTALE;
			}
		CHECK(stale == (int)stored_in(1) && !other, "linked %d: %d pages stale, %d not", lk,
		      stale, other);
		CHECK_INT(dumpfile_page(c, 0, page), 0);	/* block A still reads */
		page_of(0, want);
		CHECK(!memcmp(page, want, PS), "linked %d: pfn 0 wrong after a stale block", lk);

		/* Block C's payload cut short (the device shrank): refused too,
		 * on a fresh cursor. */
		cursor_fini(c);
		cursor_init(c, &d);
		CHECK(ftruncate(sfd, BASE + s.off[C_PAGES2] + 100) == 0, "truncate");
		CHECK_INT(dumpfile_page(c, 4000, page), -ESTALE);

		/* And save, both formats: the stale pages count, nothing
		 * crashes, every other page is written. */
		file_put(s.b, s.len);
		struct save_result res;
		char opath[1200];
		snprintf(opath, sizeof opath, "%s.out", spath);
		int ofd = open(opath, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(ofd >= 0, "output file");
		unlink(opath);
		CHECK_INT(save_elf(&d, ofd, &(struct save_opts){ 0 }, &res), 0);
		CHECK_INT(res.stale_pages, stored_in(1));
		CHECK(res.bad_pages >= res.stale_pages, "bad %llu < stale %llu",
		      (unsigned long long)res.bad_pages, (unsigned long long)res.stale_pages);
		struct save_opts so = { .zlib = 1, .threads = 2 };
		CHECK(ftruncate(ofd, 0) == 0, "truncate output");
		CHECK_INT(save_kdump(&d, ofd, &so, &res), 0);
		CHECK_INT(res.stale_pages, stored_in(1));
		CHECK_INT(res.bad_pages, stored_in(1));
		close(ofd);
		cursor_fini(c);
		free(c);
		dumpfile_free(&d);
		free(s.b);
	}
}

/* ---------------- one rule for segments ---------------- */

/* segment_valid is the reader's rule (dumpfile_load refuses a SEGMENTS
 * chunk with any entry it rejects) and segment_repair, what the capture
 * does before writing, makes every segment it keeps pass it. */
static void segment_rule(void)
{
	const uint64_t L = 1ull << 56, PO = 0xffff888000000000ull;
	static const struct {
		uint64_t paddr, vaddr, memsz, filesz;
		int repair;		/* segment_repair's answer */
		uint64_t vaddr_after;
	} t[] = {
		{ 0, PO, 1 << 20, 1 << 20, 0, PO },
		{ L - 4096, PO, 4096, 4096, 0, PO },		/* ends at 2^56 */
		{ L - 4096, PO, 8192, 8192, -1, 0 },		/* past it */
		{ L, 0, 4096, 4096, -1, 0 },			/* above it */
		{ UINT64_MAX - 4095, 0, 8192, 8192, -1, 0 },	/* paddr wraps */
		{ 0, UINT64_MAX - 4095, 8192, 8192, 1, 0 },	/* vaddr wraps */
		{ 1 << 20, UINT64_MAX, 1, 1, 1, 0 },		/* by one byte */
		{ 1 << 20, UINT64_MAX, 0, 0, 0, UINT64_MAX },	/* empty is fine */
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct kdi_segment sg = { .paddr = t[i].paddr, .vaddr = t[i].vaddr,
					  .memsz = t[i].memsz, .filesz = t[i].filesz };
		CHECK(segment_valid(&sg) == (t[i].repair == 0), "case %zu: valid %d", i, segment_valid(&sg));
		int c = segment_repair(&sg);
		CHECK(c == t[i].repair, "case %zu: repair %d, want %d", i, c, t[i].repair);
		if (c >= 0) {
			CHECK(segment_valid(&sg), "case %zu: repaired but still invalid", i);
			CHECK(sg.paddr == t[i].paddr && sg.memsz == t[i].memsz && sg.filesz == t[i].filesz &&
			      sg.vaddr == t[i].vaddr_after, "case %zu: vaddr %#llx memsz %#llx filesz %#llx",
			      i, (unsigned long long)sg.vaddr, (unsigned long long)sg.memsz,
			      (unsigned long long)sg.filesz);
		}
		/* The reader agrees: one SEGMENTS entry as it was, and repaired. */
		for (int fixed = 0; fixed < 2; fixed++) {
			struct sb s;
			struct dumpfile d;
			uint8_t st[80], seg[40];
			struct kdi_segment x = { .paddr = t[i].paddr, .vaddr = t[i].vaddr,
						 .memsz = t[i].memsz, .filesz = t[i].filesz };
			if (fixed && segment_repair(&x) < 0)
				continue;
			memset(&s, 0, sizeof s);
			s.dump_id = 5;
			start_payload(st, 1, PS, 1);
			memcpy(seg, &x, 40);
			chunk(&s, T_START, st, 80);
			chunk(&s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
			chunk(&s, T_SEGMENTS, seg, 40);
			int r = load(&d, &s, 0);
			CHECK((r == 0) == segment_valid(&x), "case %zu repaired %d: load %d (%s)", i,
			      fixed, r, d.why);
			dumpfile_free(&d);
			free(s.b);
		}
	}
}

/* ---------------- fuzz ---------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Which chunk's hashed bytes (header or payload) hold stream offset off;
 * -1 for padding or beyond. */
static int chunk_at(const struct sb *s, size_t off)
{
	for (int k = 0; k < s->n; k++)
		if (off >= s->off[k] && off < s->off[k] + 48 + s->plen[k])
			return k;
	return -1;
}

static int check_loaded(struct dumpfile *d, int r, uint64_t limit, char *why, size_t wsz)
{
	if (r != 0 && r != -ENOENT && r != -EBADMSG && r != -EPROTONOSUPPORT) {
		snprintf(why, wsz, "dumpfile_load returned %d", r);
		return -1;
	}
	if (r == -ENOENT)
		return 0;
	if (d->stream_end > limit) {
		snprintf(why, wsz, "stream_end %llu past limit %llu", (unsigned long long)d->stream_end,
			 (unsigned long long)limit);
		return -1;
	}
	for (size_t i = 0; i < d->nblocks; i++) {
		const struct page_block *b = &d->blocks[i];
		if (b->count < 1 || b->count > KDI_BLOCK_MAX || b->nstored > b->count ||
		    (i && i != d->nearly && i != d->nfirst &&
		     b->pfn < d->blocks[i - 1].pfn + d->blocks[i - 1].count) ||
		    b->payload_off + b->payload_len > limit) {
			snprintf(why, wsz, "block %zu invalid (pfn %llu count %u)", i,
				 (unsigned long long)b->pfn, b->count);
			return -1;
		}
	}
	if (r != 0)
		return 0;
	static uint8_t page[65536];
	static struct dump_cursor c;
	cursor_init(&c, d);
	int ret = 0;
	for (size_t i = 0; i < d->nblocks && !ret; i++) {
		const struct page_block *b = &d->blocks[i];
		for (uint64_t pfn = b->pfn; pfn < b->pfn + b->count; pfn++) {
			int e = dumpfile_page(&c, pfn, page);
			(void)dumpfile_is_zero(d, pfn);
			if (e != 0 && e != -ENOENT && e != -EBADMSG && e != -ESTALE) {
				snprintf(why, wsz, "dumpfile_page(%llu) returned %d", (unsigned long long)pfn, e);
				ret = -1;
				break;
			}
		}
	}
	cursor_fini(&c);
	return ret;
}

/* ---------------- two passes: the kernel's pages first (version 2) ---------------- */

/* Pass one stores what keep_first keeps and records zero_first's zeros;
 * the LATER pass stores, over the same blocks, what keep_later keeps. */
static int keep_first(uint32_t i) { return i % 4 == 0; }
static int zero_first(uint32_t i) { return i % 4 == 1; }
static int keep_later(uint32_t i) { return i % 4 == 2; }
static int keep_later_bad(uint32_t i) { return i % 4 == 2 || i == 8; }	/* pfn +8: stored first */
static int keep_later_zbad(uint32_t i) { return i % 4 == 2 || i == 9; }	/* +9: zero first */

enum { LP_OK, LP_V1, LP_FIRST_AFTER, LP_OVERLAP, LP_OVERLAP_ZERO, LP_BACKWARDS };

static uint8_t *later_payload(uint64_t pfn, uint32_t count, int (*keep)(uint32_t), size_t *len)
{
	uint8_t *p = pages_payload(pfn, count, keep, NULL, len);
	put32(p + 20, get32(p + 20) | 2);	/* LATER */
	return p;
}

/* Two first-pass blocks (pfn 0 and 1000, 64 pfns each), then LATER
 * chunks over them; `upto` later chunks (2 = all) and then END if
 * with_end. */
static void build_two_pass(struct sb *s, int variant, int upto, int with_end)
{
	uint8_t st[80], seg[40], end[120];
	size_t len;
	uint64_t pfns[2] = { 0, 1000 };
	uint64_t stored = 0;

	memset(s, 0, sizeof *s);
	s->dump_id = 0x2020202020202020ull;
	start_payload(st, variant == LP_V1 ? 1 : 2, PS, 1);
	segment(seg, 0, 1100 * PS, 1100 * PS);
	chunk(s, T_START, st, 80);
	chunk(s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	chunk(s, T_SEGMENTS, seg, sizeof seg);
	for (int b = 0; b < 2; b++) {
		uint8_t *p = pages_payload(pfns[b], 64, keep_first, zero_first, &len);
		chunk(s, T_PAGES, p, len);
		free(p);
		stored += 16;
	}
	for (int b = 0; b < upto; b++) {
		int (*k)(uint32_t) = keep_later;
		uint64_t pfn = pfns[b];
		if (variant == LP_OVERLAP && b == 1)
			k = keep_later_bad;
		if (variant == LP_OVERLAP_ZERO && b == 1)
			k = keep_later_zbad;
		if (variant == LP_BACKWARDS)
			pfn = pfns[1 - b];
		uint8_t *p = later_payload(pfn, 64, k, &len);
		if (variant == LP_FIRST_AFTER && b == 1)
			put32(p + 20, get32(p + 20) & ~2u);
		chunk(s, T_PAGES, p, len);
		free(p);
		stored += 16;
	}
	if (with_end) {
		end_counts(end, s, upto < 2 ? 1 : 0, 1100, stored);
		chunk(s, T_END, end, 120);
	}
}

/* What pfn should read as in a two-pass dump with `later` LATER chunks
 * loaded: 1 stored, 2 zero, 0 absent. */
static int two_pass_state(uint64_t pfn, int later)
{
	uint64_t base = pfn >= 1000 ? 1000 : 0;
	uint32_t i = pfn - base;
	if (i >= 64)
		return 0;
	if (keep_first(i))
		return 1;
	if (zero_first(i))
		return 2;
	return keep_later(i) && (base == 0 ? later >= 1 : later >= 2) ? 1 : 0;
}

/* Every pfn of [0, 1100) reads as state(pfn, n) says (1 stored, with
 * page_of's bytes; 2 zero; 0 absent), and dumpfile_next_stored finds
 * the next stored one from each. */
static void check_passes(struct dumpfile *d, int (*state)(uint64_t, int), int n, const char *what)
{
	struct dump_cursor *c = malloc(sizeof *c);
	uint8_t page[PS], want[PS];
	int bad = 0, wrong = 0, nexts = 0;

	cursor_init(c, d);
	for (uint64_t pfn = 0; pfn < 1100; pfn++) {
		int st = state(pfn, n);
		int e = dumpfile_page(c, pfn, page);
		page_of(pfn, want);
		if (st == 1 && (e || memcmp(page, want, PS)))
			bad++;
		if (st != 1 && e != -ENOENT)
			wrong++;
		if (dumpfile_is_zero(d, pfn) != (st == 2))
			wrong++;
		uint64_t nx = UINT64_MAX;
		for (uint64_t q = pfn; q < 1100; q++)
			if (state(q, n) == 1) {
				nx = q;
				break;
			}
		nexts += dumpfile_next_stored(d, pfn) != nx;
	}
	CHECK(!bad && !wrong && !nexts, "%s: %d pages wrong, %d states wrong, %d next_stored wrong",
	      what, bad, wrong, nexts);
	cursor_fini(c);
	free(c);
}

static void later_pass(void)
{
	struct sb s;
	struct dumpfile d;

	/* Whole: complete, every page from either pass. */
	build_two_pass(&s, LP_OK, 2, 1);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "two passes: not complete: %s", d.why);
	CHECK_INT(d.nblocks, 4);
	CHECK_INT(d.nfirst, 2);
	CHECK_INT(d.pages_stored, 64);
	CHECK_INT(d.pages_zero, 32);
	check_passes(&d, two_pass_state, 2, "two passes");
	/* save --format kdump's room: a descriptor per stored or zero page */
	uint64_t need = save_kdump_need(&d, 0);
	CHECK(need < 2 * 1024 * 1024, "save_kdump_need %llu: descriptors counted twice?",
	      (unsigned long long)need);
	dumpfile_free(&d);
	free(s.b);

	/* Cut in the LATER pass (no END): the first pass whole, the LATER
	 * chunk that made it, and the segments believed to their end (the
	 * first pass had scanned every pfn). */
	build_two_pass(&s, LP_OK, 1, 0);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(!dumpfile_complete(&d), "cut in the LATER pass reads as complete");
	CHECK_INT(d.nblocks, 3);
	check_passes(&d, two_pass_state, 1, "cut in the LATER pass");
	CHECK_INT(d.pfn_limit, 1100);
	dumpfile_free(&d);
	free(s.b);

	/* Cut before the LATER pass: the pages the first pass left for
	 * later are absent, nothing else is. */
	build_two_pass(&s, LP_OK, 0, 0);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK_INT(d.nblocks, 2);
	check_passes(&d, two_pass_state, 0, "cut before the LATER pass");
	dumpfile_free(&d);
	free(s.b);

	/* Broken rules: the stream stops at the offending chunk, which is
	 * not used; what came before is. */
	static const struct { int variant, keep; const char *what; } bad[] = {
		{ LP_V1, 2, "a LATER chunk in a version-1 dump" },
		{ LP_FIRST_AFTER, 3, "a first-pass chunk after a LATER one" },
		{ LP_OVERLAP, 3, "a LATER chunk storing a pfn the first pass stored" },
		{ LP_OVERLAP_ZERO, 3, "a LATER chunk storing a pfn the first pass called zero" },
		{ LP_BACKWARDS, 3, "LATER chunks going back in pfn" },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		build_two_pass(&s, bad[k].variant, 2, 1);
		CHECK_INT(load(&d, &s, 0), 0);
		CHECK(!dumpfile_complete(&d), "%s: read as complete", bad[k].what);
		/* The chunk is left out and said; those after it that are
		 * sound by themselves are kept. */
		CHECK(strstr(d.gap_why, "malformed") != NULL, "%s: gap_why is '%s'", bad[k].what,
		      d.gap_why);
		CHECK(d.nblocks >= (size_t)bad[k].keep, "%s: %zu blocks kept, want %d or more",
		      bad[k].what, d.nblocks, bad[k].keep);
		dumpfile_free(&d);
		free(s.b);
	}
}

/* ---------------- three passes: the debugger's pages first (version 3) ---------------- */

/* Over the same two blocks, the EARLY pass stores what keep_early keeps
 * and records zero_early's zeros, the first pass stores and zeroes
 * others, the LATER pass stores others again: each pfn is decided by one
 * pass only (i % 6 == 5 by none), so a page read from the wrong pass or
 * a pass not consulted shows. */
static int keep_early(uint32_t i) { return i % 6 == 0; }
static int zero_early(uint32_t i) { return i % 6 == 1; }
static int keep_first3(uint32_t i) { return i % 6 == 2; }
static int zero_first3(uint32_t i) { return i % 6 == 3; }
static int keep_later3(uint32_t i) { return i % 6 == 4; }
/* Each breaks one rule over pfn 1000 + i, and only that one: */
static int keep_first3_bad(uint32_t i) { return i % 6 == 2 || i == 6; }	/* +6: EARLY stored */
static int zero_first3_bad(uint32_t i) { return i % 6 == 3 || i == 12; }	/* +12: EARLY stored */
static int keep_later3_bad(uint32_t i) { return i % 6 == 4 || i == 7; }	/* +7: EARLY zero */

enum { EP_OK, EP_V1, EP_V2, EP_EARLY_AFTER, EP_OVERLAP, EP_OVERLAP_ZERO, EP_LATER_ZERO,
       EP_BACKWARDS, EP_BOTH };

/* A DEBUGGER chunk for build_three_pass: its payload, and the PAGES
 * chunk it goes before (0: before them all; past the last: after it). */
struct dbg_chunk {
	const uint8_t *p;
	size_t len;
	int at;
};

/* DEBUGGER's 24 bytes (FORMAT.md): pfns, last_pfn, parts, ranges. */
static void debugger_payload(uint8_t *p, uint64_t pfns, uint64_t last, uint32_t parts, uint32_t ranges)
{
	put64(p, pfns);
	put64(p + 8, last);
	put32(p + 16, parts);
	put32(p + 20, ranges);
}

/* Six PAGES chunks over two blocks (pfn 0 and 1000, 64 pfns each): an
 * EARLY chunk for each, then a first-pass chunk for each, then a LATER
 * one for each; only the first `upto` of them, then END if with_end. */
static void build_three_pass(struct sb *s, int variant, int upto, int with_end,
			     const struct dbg_chunk *dbg)
{
	uint8_t st[80], seg[40], end[120];
	size_t len;
	uint64_t pfns[2] = { 0, 1000 };
	uint64_t stored = 0;

	memset(s, 0, sizeof *s);
	s->dump_id = 0x3030303030303030ull;
	start_payload(st, variant == EP_V1 ? 1 : variant == EP_V2 ? 2 : 3, PS, 1);
	segment(seg, 0, 1100 * PS, 1100 * PS);
	chunk(s, T_START, st, 80);
	chunk(s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	chunk(s, T_SEGMENTS, seg, sizeof seg);
	for (int k = 0; k < upto; k++) {
		int pass = k / 2, b = k % 2;	/* 0 EARLY, 1 first, 2 LATER */
		int (*keep)(uint32_t) = pass == 0 ? keep_early : pass == 1 ? keep_first3 : keep_later3;
		int (*zero)(uint32_t) = pass == 0 ? zero_early : pass == 1 ? zero_first3 : NULL;
		uint32_t flags = pass == 0 ? 4 : pass == 2 ? 2 : 0;
		uint64_t pfn = pfns[b];
		if (variant == EP_BACKWARDS && pass == 0)
			pfn = pfns[1 - b];
		if (variant == EP_BOTH && k == 1)
			flags = 4 | 2;
		if (variant == EP_EARLY_AFTER && k == 3)
			flags = 4;
		if (variant == EP_OVERLAP && k == 3)
			keep = keep_first3_bad;
		if (variant == EP_OVERLAP_ZERO && k == 3)
			zero = zero_first3_bad;
		if (variant == EP_LATER_ZERO && k == 5)
			keep = keep_later3_bad;
		if (dbg && dbg->at == k)
			chunk(s, T_DEBUGGER, dbg->p, dbg->len);
		uint8_t *p = pages_payload(pfn, 64, keep, zero, &len);
		put32(p + 20, get32(p + 20) | flags);
		chunk(s, T_PAGES, p, len);
		stored += get32(p + 12);
		free(p);
	}
	if (dbg && dbg->at >= upto)
		chunk(s, T_DEBUGGER, dbg->p, dbg->len);
	if (with_end) {
		end_counts(end, s, upto < 6 ? 1 : 0, 1100, stored);
		chunk(s, T_END, end, 120);
	}
}

/* What pfn should read as with the first `upto` PAGES chunks of
 * build_three_pass (EP_OK) loaded: 1 stored, 2 zero, 0 absent. Chunk
 * 2 * pass + block decides it. */
static int three_pass_state(uint64_t pfn, int upto)
{
	int b = pfn >= 1000;
	uint32_t i = pfn - (b ? 1000 : 0);
	if (i >= 64)
		return 0;
	int pass = keep_early(i) || zero_early(i) ? 0 : keep_first3(i) || zero_first3(i) ? 1 :
		   keep_later3(i) ? 2 : -1;
	if (pass < 0 || 2 * pass + b >= upto)
		return 0;
	return keep_early(i) || keep_first3(i) || keep_later3(i) ? 1 : 2;
}

static void early_pass(void)
{
	struct sb s;
	struct dumpfile d;

	/* Whole: complete, every page from the pass that decided it. */
	build_three_pass(&s, EP_OK, 6, 1, NULL);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "three passes: not complete: %s", d.why);
	CHECK_INT(d.nearly, 2);
	CHECK_INT(d.nfirst, 4);
	CHECK_INT(d.nblocks, 6);
	/* per block: 11 + 11 + 10 stored (i % 6 == 0, 2, 4 of 64), 11 + 11 zero */
	CHECK_INT(d.pages_stored, 64);
	CHECK_INT(d.pages_zero, 44);
	CHECK(d.pfn_limit == UINT64_MAX, "three passes: pfn_limit %llu with END agreeing",
	      (unsigned long long)d.pfn_limit);
	CHECK_INT(d.have_dbg, 0);
	check_passes(&d, three_pass_state, 6, "three passes");
	/* A reader in pfn order goes EARLY, first, LATER, EARLY, ... in a
	 * block: the cursor keeps one of each pass loaded, not one for all
	 * that would be read again at every switch. */
	struct dump_cursor *c = malloc(sizeof *c);
	uint8_t page[PS];
	cursor_init(c, &d);
	CHECK(!dumpfile_page(c, 0, page) && !dumpfile_page(c, 2, page) && !dumpfile_page(c, 4, page),
	      "pfn 0, 2, 4 of the three passes do not read");
	/* (slot 0 is the startup tier's, which this dump has not) */
	CHECK(c->s[1].cur == &d.blocks[0] && c->s[2].cur == &d.blocks[2] && c->s[3].cur == &d.blocks[4],
	      "the cursor does not hold a block of each pass: %td %td %td",
	      c->s[1].cur ? c->s[1].cur - d.blocks : -1, c->s[2].cur ? c->s[2].cur - d.blocks : -1,
	      c->s[3].cur ? c->s[3].cur - d.blocks : -1);
	cursor_fini(c);
	free(c);
	dumpfile_free(&d);
	free(s.b);

	/* Cut after the EARLY pass (no END): the debugger's pages there,
	 * nothing else; the EARLY block at 1000 is vouched for although no
	 * first-pass chunk got past pfn 0. */
	build_three_pass(&s, EP_OK, 2, 0, NULL);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(!dumpfile_complete(&d), "cut after the EARLY pass reads as complete");
	CHECK_INT(d.nearly, 2);
	CHECK_INT(d.nfirst, 2);
	CHECK_INT(d.nblocks, 2);
	CHECK_INT(d.pages_stored, 22);
	CHECK_INT(d.pages_zero, 22);
	check_passes(&d, three_pass_state, 2, "cut after the EARLY pass");
	CHECK_INT(d.pfn_limit, 1064);
	dumpfile_free(&d);
	free(s.b);

	/* Cut in the first pass, after its chunk at pfn 0: the first pass
	 * reached pfn 64, the EARLY pass 1064, and the EARLY pages up there
	 * must not fall outside pfn_limit (save_kdump's bitmaps end there). */
	build_three_pass(&s, EP_OK, 3, 0, NULL);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(!dumpfile_complete(&d), "cut in the first pass reads as complete");
	CHECK_INT(d.nearly, 2);
	CHECK_INT(d.nfirst, 3);
	CHECK_INT(d.nblocks, 3);
	check_passes(&d, three_pass_state, 3, "cut in the first pass");
	CHECK_INT(d.pfn_limit, 1064);
	dumpfile_free(&d);
	free(s.b);

	/* Cut in the LATER pass: the first pass had scanned every pfn. */
	build_three_pass(&s, EP_OK, 5, 0, NULL);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK_INT(d.nblocks, 5);
	check_passes(&d, three_pass_state, 5, "cut in the LATER pass of three");
	CHECK_INT(d.pfn_limit, 1100);
	dumpfile_free(&d);
	free(s.b);

	/* Broken rules: the stream stops at the offending chunk, which is
	 * not used; what came before is. */
	static const struct { int variant, nearly, nfirst, keep; const char *what; } bad[] = {
		{ EP_V1, 0, 0, 0, "an EARLY chunk in a version-1 dump" },
		{ EP_V2, 0, 0, 0, "an EARLY chunk in a version-2 dump" },
		{ EP_EARLY_AFTER, 2, 3, 3, "an EARLY chunk after a first-pass one" },
		{ EP_OVERLAP, 2, 3, 3, "a first-pass chunk storing a pfn EARLY stored" },
		{ EP_OVERLAP_ZERO, 2, 3, 3, "a first-pass chunk calling zero a pfn EARLY stored" },
		{ EP_LATER_ZERO, 2, 4, 5, "a LATER chunk storing a pfn EARLY called zero" },
		{ EP_BACKWARDS, 1, 1, 1, "EARLY chunks going back in pfn" },
		{ EP_BOTH, 1, 1, 1, "a chunk both EARLY and LATER" },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		build_three_pass(&s, bad[k].variant, 6, 1, NULL);
		CHECK_INT(load(&d, &s, 0), 0);
		CHECK(!dumpfile_complete(&d), "%s: read as complete", bad[k].what);
		CHECK(strstr(d.gap_why, "malformed") != NULL, "%s: gap_why is '%s'", bad[k].what,
		      d.gap_why);
		/* What came before the bad chunk, at least (those after it
		 * that are sound by themselves are kept too). */
		CHECK(d.nearly >= (size_t)bad[k].nearly && d.nfirst >= (size_t)bad[k].nfirst &&
		      d.nblocks >= (size_t)bad[k].keep,
		      "%s: %zu/%zu/%zu blocks kept (EARLY, to first, all), want %d/%d/%d or more", bad[k].what,
		      d.nearly, d.nfirst, d.nblocks, bad[k].nearly, bad[k].nfirst, bad[k].keep);
		dumpfile_free(&d);
		free(s.b);
	}
}

/* ---------------- the startup tier (versions 8 and 9) ---------------- */

/* Four PAGES chunks: the startup tier at pfn 1000 (STARTUP | EARLY), the
 * rest of the EARLY pass at pfn 0 (pfn order starts again in a new
 * tier), then the first pass over both blocks; only the first `upto`,
 * then END if with_end. Each pfn is decided by one chunk: the tiers
 * store what keep_early keeps and zero what zero_early zeroes, the first
 * pass the others. */
enum { ST_OK, ST_V4, ST_V3, ST_AFTER, ST_ALONE, ST_OVERLAP, ST_FIRST_OVERLAP };

static int keep_tier_bad(uint32_t i) { return i % 6 == 0 || i == 2; }

static void build_tiers(struct sb *s, int variant, int upto, int with_end, const uint8_t *dbg,
			size_t dbg_len)
{
	uint8_t st[80], seg[40], end[128] = { 0 };
	size_t len;
	uint64_t stored = 0;
	static const uint64_t pfn[4] = { 1000, 0, 0, 1000 };
	static const uint32_t flags[4] = { 8 | 4, 4, 0, 0 };

	memset(s, 0, sizeof *s);
	s->dump_id = 0x3838383838383838ull;
	start_payload(st, variant == ST_V4 ? 4 : variant == ST_V3 ? 3 : 8, PS, 1);
	segment(seg, 0, 1100 * PS, 1100 * PS);
	chunk(s, T_START, st, 80);
	chunk(s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	chunk(s, T_SEGMENTS, seg, sizeof seg);
	if (dbg)
		chunk(s, T_DEBUGGER, dbg, dbg_len);
	for (int k = 0; k < upto; k++) {
		int (*keep)(uint32_t) = k < 2 ? keep_early : keep_first3;
		int (*zero)(uint32_t) = k < 2 ? zero_early : zero_first3;
		uint32_t f = flags[k];
		uint64_t at = pfn[k];
		if (variant == ST_AFTER && k == 1)
			f = 8 | 4, at = 1064;	/* a second startup chunk would be fine; */
		if (variant == ST_AFTER && k == 2)
			f = 8 | 4;		/* one after the rest of EARLY is not */
		if (variant == ST_ALONE && k == 0)
			f = 8;
		if (variant == ST_OVERLAP && k == 1)
			at = 1000;		/* the second tier storing the first's pfns */
		if (variant == ST_FIRST_OVERLAP && k == 3)
			keep = keep_tier_bad;	/* the first pass storing pfn 1000 */
		uint8_t *p = pages_payload(at, 64, keep, zero, &len);
		put32(p + 20, get32(p + 20) | f);
		chunk(s, T_PAGES, p, len);
		stored += get32(p + 12);
		free(p);
	}
	if (with_end && variant == ST_V3) {
		end_counts(end, s, upto < 4 ? 1 : 0, 1100, stored);
		chunk(s, T_END, end, 120);
	} else if (with_end) {
		end_counts(end, s, upto < 4 ? 1 : 0, 1100, stored);
		put64(end + 40, s->len + 176);	/* a 128-byte END, version 4 on */
		chunk(s, T_END, end, 128);
	}
}

/* As three_pass_state, for build_tiers: chunk 0 decides block 1000's
 * EARLY pfns, chunk 1 block 0's, chunks 2 and 3 the first pass's. */
static int tiers_state(uint64_t pfn, int upto)
{
	int b = pfn >= 1000;
	uint32_t i = pfn - (b ? 1000 : 0);
	if (i >= 64)
		return 0;
	int early = keep_early(i) || zero_early(i), first = keep_first3(i) || zero_first3(i);
	int k = early ? (b ? 0 : 1) : first ? (b ? 3 : 2) : -1;
	if (k < 0 || k >= upto)
		return 0;
	return keep_early(i) || keep_first3(i) ? 1 : 2;
}

static void startup_tier(void)
{
	struct sb s;
	struct dumpfile d;
	struct dump_progress pr;

	/* Whole: both tiers and the first pass read, each pfn from its own. */
	build_tiers(&s, ST_OK, 4, 1, NULL, 0);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "tiers: not complete: %s", d.why);
	CHECK_INT(d.nstartup, 1);
	CHECK_INT(d.nearly, 2);
	CHECK_INT(d.nfirst, 4);
	check_passes(&d, tiers_state, 4, "tiers");
	dumpfile_progress(&d, &pr);
	CHECK(pr.startup == 1 && pr.early == 1, "tiers: progress %d %d", pr.startup, pr.early);
	dumpfile_free(&d);
	free(s.b);

	/* Cut after the startup tier: it is whole, the EARLY pass is not. */
	build_tiers(&s, ST_OK, 1, 0, NULL, 0);
	CHECK_INT(load(&d, &s, 0), 0);
	check_passes(&d, tiers_state, 1, "cut after the startup tier");
	dumpfile_progress(&d, &pr);
	CHECK(pr.startup == 0 && pr.early == 0, "cut in the startup tier (its last chunk read, "
	      "nothing after): progress %d %d", pr.startup, pr.early);
	dumpfile_free(&d);
	free(s.b);
	build_tiers(&s, ST_OK, 2, 0, NULL, 0);
	CHECK_INT(load(&d, &s, 0), 0);
	check_passes(&d, tiers_state, 2, "cut after the EARLY pass's second tier");
	CHECK_INT(d.pfn_limit, 1064);
	dumpfile_progress(&d, &pr);
	CHECK(pr.startup == 1 && pr.early == 0, "cut after the second tier: progress %d %d",
	      pr.startup, pr.early);
	dumpfile_free(&d);
	free(s.b);

	/* A dump that ran out of room in its startup tier has an END, which
	 * is no proof the tier is whole (DEVICE_FULL: INCOMPLETE set). */
	build_tiers(&s, ST_OK, 1, 1, NULL, 0);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK_INT(d.have_end, 1);
	dumpfile_progress(&d, &pr);
	CHECK(pr.startup == 0 && pr.early == 0, "an incomplete dump's END after the startup tier's "
	      "first chunk: progress %d %d", pr.startup, pr.early);
	dumpfile_free(&d);
	free(s.b);

	/* DEBUGGER's 40-byte record says a startup tier was to come: cut
	 * before any page, the tier is said to be cut short. */
	uint8_t rec[40];
	memset(rec, 0, sizeof rec);
	debugger_payload(rec, 22, 1060, 0xfff, 2);
	put64(rec + 24, 11);
	put32(rec + 32, 1);
	build_tiers(&s, ST_OK, 0, 0, rec, sizeof rec);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK_INT(d.have_dbg, 1);
	CHECK_INT(d.dbg.startup_pfns, 11);
	dumpfile_progress(&d, &pr);
	CHECK(pr.startup == 0, "no page written, DEBUGGER with a startup tier: progress %d", pr.startup);
	dumpfile_free(&d);
	free(s.b);
	/* ... one whose startup tier is larger than the set is not believed
	 * in that field. */
	put64(rec + 24, 23);
	build_tiers(&s, ST_OK, 0, 0, rec, sizeof rec);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(d.have_dbg && d.dbg.startup_pfns == 0, "an insane startup_pfns was kept: %llu",
	      (unsigned long long)d.dbg.startup_pfns);
	dumpfile_free(&d);
	free(s.b);

	static const struct { int variant; size_t nstartup, keep; const char *what; } bad[] = {
		{ ST_V4, 0, 0, "a STARTUP chunk in a version-4 dump" },
		{ ST_V3, 0, 0, "a STARTUP chunk in a version-3 dump" },
		{ ST_AFTER, 2, 2, "a STARTUP chunk after the rest of the EARLY pass" },
		{ ST_ALONE, 0, 0, "STARTUP without EARLY" },
		{ ST_OVERLAP, 1, 1, "the second tier storing a pfn the first stored" },
		{ ST_FIRST_OVERLAP, 1, 3, "the first pass storing a pfn the startup tier stored" },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		build_tiers(&s, bad[k].variant, 4, 1, NULL, 0);
		CHECK_INT(load(&d, &s, 0), 0);
		CHECK(!dumpfile_complete(&d), "%s: read as complete", bad[k].what);
		CHECK(strstr(d.gap_why, "malformed") != NULL, "%s: gap_why is '%s'", bad[k].what,
		      d.gap_why);
		CHECK(d.nstartup >= bad[k].nstartup && d.nblocks >= bad[k].keep,
		      "%s: %zu/%zu blocks kept (startup, all), want %zu/%zu or more", bad[k].what,
		      d.nstartup, d.nblocks, bad[k].nstartup, bad[k].keep);
		dumpfile_free(&d);
		free(s.b);
	}
}

/* DEBUGGER: what the EARLY pass was to cover, for info on a cut dump.
 * Taken only whole and sane, before the pages; any other is left
 * unsaid, and never stops the stream. */
static void debugger_record(void)
{
	struct sb s;
	struct dumpfile d;
	uint8_t good[25];

	memset(good, 0, sizeof good);
	debugger_payload(good, 22, 1060, 0x1ff, 2);
	build_three_pass(&s, EP_OK, 6, 1, &(struct dbg_chunk){ good, 24, 0 });
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(dumpfile_complete(&d), "with DEBUGGER: not complete: %s", d.why);
	CHECK_INT(d.have_dbg, 1);
	CHECK_INT(d.dbg.pfns, 22);
	CHECK_INT(d.dbg.last_pfn, 1060);
	CHECK_INT(d.dbg.parts, 0x1ff);
	CHECK_INT(d.dbg.ranges, 2);
	CHECK_INT(d.nblocks, 6);
	dumpfile_free(&d);
	free(s.b);

	/* As many ranges as pfns (none adjacent) is still sane. */
	uint8_t edge[24];
	debugger_payload(edge, 5, 1000, 1, 5);
	build_three_pass(&s, EP_OK, 6, 1, &(struct dbg_chunk){ edge, 24, 0 });
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(d.have_dbg && d.dbg.ranges == 5, "DEBUGGER with ranges == pfns: have_dbg %d", d.have_dbg);
	dumpfile_free(&d);
	free(s.b);

	uint8_t more[24], nopfn[24], norange[24];
	debugger_payload(more, 4, 1000, 1, 5);
	debugger_payload(nopfn, 0, 1000, 1, 1);
	debugger_payload(norange, 4, 1000, 1, 0);
	const struct { struct dbg_chunk c; const char *what; } ignored[] = {
		{ { good, 23, 0 }, "23 bytes" }, { { good, 25, 0 }, "25 bytes" },
		{ { more, 24, 0 }, "ranges > pfns" }, { { nopfn, 24, 0 }, "pfns 0" },
		{ { norange, 24, 0 }, "ranges 0" }, { { good, 24, 1 }, "after a PAGES chunk" },
		{ { good, 24, 6 }, "after the last PAGES chunk" },
	};
	for (size_t k = 0; k < sizeof ignored / sizeof *ignored; k++) {
		build_three_pass(&s, EP_OK, 6, 1, &ignored[k].c);
		CHECK_INT(load(&d, &s, 0), 0);
		CHECK(!d.have_dbg, "DEBUGGER %s: taken", ignored[k].what);
		CHECK(dumpfile_complete(&d) && d.nblocks == 6,
		      "DEBUGGER %s: complete %d, %zu blocks, why '%s'", ignored[k].what,
		      dumpfile_complete(&d), d.nblocks, d.why);
		dumpfile_free(&d);
		free(s.b);
	}
}

/* ---------------- write errors gone around: GAP (version 2) ---------------- */

enum { GP_OK, GP_V1, GP_WRONG_TO, GP_OTHER_DUMP, GP_UNALIGNED, GP_END_COMPLETE, GP_NONE };

/* A PAGES block at pfn 0, one at pfn 200 whose chunk a failed write
 * left damaged, and a lost seq after it; the stream resumes at the next
 * 1 MiB boundary with a GAP chunk, then a block at pfn 1000 and END. */
static void build_gap(struct sb *s, int variant)
{
	uint8_t st[80], seg[40], end[120], g[24];
	size_t len;

	memset(s, 0, sizeof *s);
	s->dump_id = 0x3131313131313131ull;
	start_payload(st, variant == GP_V1 ? 1 : 2, PS, 1);
	segment(seg, 0, 1100 * PS, 1100 * PS);
	chunk(s, T_START, st, 80);
	chunk(s, T_VMCOREINFO, vmcoreinfo, strlen(vmcoreinfo));
	chunk(s, T_SEGMENTS, seg, sizeof seg);
	uint8_t *p = pages_payload(0, 64, keep_first, NULL, &len);
	chunk(s, T_PAGES, p, len);
	free(p);
	size_t broke = s->len;
	p = pages_payload(200, 64, keep_first, NULL, &len);
	chunk(s, T_PAGES, p, len);
	free(p);
	s->seq++;				/* a second chunk lost whole */
	size_t at = (s->len / (1u << 20) + 1) * (1u << 20);
	grow(s, at - s->len);
	memset(s->b + broke + 100, 0xa5, at - broke - 100);	/* what the failed write left */
	s->len = at + (variant == GP_UNALIGNED ? 8 : 0);
	if (variant != GP_NONE) {
		put64(g, broke + 50);
		put64(g + 8, variant == GP_WRONG_TO ? at + 4096 : s->len);
		put32(g + 16, (uint32_t)-5);
		put32(g + 20, 1);
		chunk_ex(s, 10, g, sizeof g, variant == GP_OTHER_DUMP ? 77 : s->dump_id, s->seq++, 0);
	}
	p = pages_payload(1000, 64, keep_first, NULL, &len);
	chunk(s, T_PAGES, p, len);
	free(p);
	end_counts(end, s, variant == GP_END_COMPLETE ? 0 : 0x21, 1100, 48);
	chunk(s, T_END, end, 120);
}

static void gap_resync(void)
{
	struct sb s;
	struct dumpfile d;
	uint8_t page[PS], want[PS];
	struct dump_cursor c;

	build_gap(&s, GP_OK);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(!dumpfile_complete(&d), "a dump with a gap reads as complete");
	CHECK_INT(d.gaps, 1);
	CHECK_INT(d.gap_chunks, 2);
	CHECK_INT(d.have_end, 1);
	CHECK(!d.end_disagrees, "END disagrees past the gap: %s", d.why);
	CHECK_INT(d.nblocks, 2);
	CHECK(strstr(d.gap_why, "checksum") || strstr(d.gap_why, "magic"), "gap_why: %s", d.gap_why);
	cursor_init(&c, &d);
	int bad = 0;
	for (uint64_t pfn = 0; pfn < 1100; pfn++) {
		uint32_t i = pfn % 1000 < 64 ? pfn % 1000 : 64;
		int stored = (pfn < 64 || (pfn >= 1000 && pfn < 1064)) && keep_first(i);
		int e = dumpfile_page(&c, pfn, page);
		page_of(pfn, want);
		bad += stored ? (e || memcmp(page, want, PS)) : e != -ENOENT;
	}
	CHECK(!bad, "%d pages wrong around the gap", bad);
	cursor_fini(&c);
	dumpfile_free(&d);
	free(s.b);

	/* No GAP to be found (or one that is not this break's): the reader
	 * goes on at the next intact chunk of the dump all the same, and
	 * counts the break as damage, not as a write error gone around. */
	static const struct { int variant; const char *what; } stop[] = {
		{ GP_NONE, "no GAP" }, { GP_V1, "a GAP in a version-1 dump" },
		{ GP_WRONG_TO, "a GAP whose lost_to is not its offset" },
		{ GP_OTHER_DUMP, "a GAP of another dump" }, { GP_UNALIGNED, "a GAP off the boundary" },
	};
	for (size_t k = 0; k < sizeof stop / sizeof *stop; k++) {
		build_gap(&s, stop[k].variant);
		CHECK_INT(load(&d, &s, 0), 0);
		CHECK(d.gaps == 1 && d.damaged == 1 && d.nblocks == 2 && !dumpfile_complete(&d),
		      "%s: gaps %u (damaged %u), %zu blocks, have_end %d, why '%s'", stop[k].what,
		      d.gaps, d.damaged, d.nblocks, d.have_end, d.why);
		dumpfile_free(&d);
		free(s.b);
	}

	/* An END that calls a dump with a gap complete is not believed. */
	build_gap(&s, GP_END_COMPLETE);
	CHECK_INT(load(&d, &s, 0), 0);
	CHECK(d.gaps == 1 && d.end_disagrees && strstr(d.why, "gap"),
	      "END complete across a gap: gaps %u, disagrees %d, why '%s'", d.gaps, d.end_disagrees, d.why);
	dumpfile_free(&d);
	free(s.b);
}

static void fuzz_mutations(void)
{
	struct sb s;
	const char *e = getenv("KDI_FUZZ_ITERS");
	long iters = e ? atol(e) : 3000;
	e = getenv("KDI_FUZZ_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : 1;
	rng = seed * 0x9e3779b97f4a7c15ull | 1;

	build(&s, 0, C_COUNT);
	uint8_t *m = malloc(s.len + 4096);
	char why[300];
	long single = 0, structured = 0, prefix_ok = 0;
	int failed = 0;

	for (long it = 0; it < iters && !failed; it++) {
		memcpy(m, s.b, s.len);
		size_t mlen = s.len;
		uint64_t limit = BASE + s.len;
		int kind = (int)rnd_below(4), hit = -2;
		if (kind == 0) {
			/* One byte changed: exact-prefix property. */
			size_t off = rnd_below(s.len);
			m[off] ^= (uint8_t)(1 + rnd_below(255));
			hit = chunk_at(&s, off);
			single++;
		} else if (kind == 1) {
			/* A few raw changes anywhere, maybe a shorter device. */
			int nm = 1 + (int)rnd_below(6);
			for (int j = 0; j < nm; j++) {
				size_t off = rnd_below(s.len);
				static const uint32_t odd[] = { 0, 1, 0xffffffffu, 0x80000000u, 4096, 4097 };
				size_t n = rnd_below(200), from = rnd_below(s.len);
				switch (rnd_below(4)) {
				case 0:
					m[off] = (uint8_t)rnd();
					break;
				case 1:
					if (off + 4 <= mlen)
						put32(m + off, odd[rnd_below(6)]);
					break;
				case 2:
					if (off + n <= mlen)
						memset(m + off, 0, n);
					break;
				case 3:
					if (from + n <= mlen && off + n <= mlen)
						memmove(m + off, m + from, n);
					break;
				}
			}
			if (rnd_below(3) == 0)
				limit = BASE + rnd_below(s.len + 1);
		} else {
			/* Structured: change fields of one chunk, then make its
			 * hashes right again so the parsers behind them run. */
			int k = (int)rnd_below(s.n);
			uint8_t *h = m + s.off[k];
			uint8_t *pl = h + 48;
			size_t plen = s.plen[k];
			int nm = 1 + (int)rnd_below(4);
			for (int j = 0; j < nm; j++) {
				uint64_t v = rnd();
				switch (rnd_below(kind == 2 ? 8 : 3)) {
				case 0: if (plen) pl[rnd_below(plen)] ^= (uint8_t)(1 + rnd_below(255)); break;
				case 1: if (plen >= 16) put32(pl + 8, (uint32_t[]){ 0, 1, 31, 32, 33, 4096, 4097, (uint32_t)v }[rnd_below(8)]); break;
				case 2: if (plen >= 16) put32(pl + 12, (uint32_t)rnd_below(80)); break;
				case 3: put16(h + 4, (uint16_t)(1 + rnd_below(9))); break;
				case 4: put32(h + 8, (uint32_t)(plen + rnd_below(64)) - 32); break;
				case 5: if (plen >= 40) put32(pl + 24 + 4 * rnd_below(4),
							      (uint32_t)(v & 0x80000fffu)); break;
				case 6: if (plen >= 24) put32(pl + 16, (uint32_t)rnd_below(80)); break;
				case 7: if (plen >= 24) put32(pl + 20, (uint32_t)(rnd_below(2) << rnd_below(32))); break;
				}
			}
			rehash_chunk_in(h, mlen - s.off[k]);
			structured++;
		}
		struct dumpfile d;
		file_put(m, mlen);
		int r = dumpfile_load(&d, sfd, BASE, limit);
		why[0] = 0;
		if (check_loaded(&d, r, limit, why, sizeof why) < 0) {
			failed = 1;
		} else if (kind == 0 && hit >= 0) {
			/* Every chunk but `hit` kept: the reader goes on past it.
			 * Without VMCOREINFO or the segments nothing can be
			 * read; without START or the notes the rest still can. */
			int pages = hit == C_PAGES0 || hit == C_PAGES1 || hit == C_PAGES2 ||
				    hit == C_PAGES3;
			int want_blocks = NBLOCKS - pages;
			uint64_t want_end = BASE + (hit == C_END ? s.off[C_END] : s.len);
			if (hit == C_VMCI || hit == C_SEGS) {
				if (r == 0) {
					snprintf(why, sizeof why, "metadata chunk %d damaged, load still 0", hit);
					failed = 1;
				}
			} else if (r != 0 || dumpfile_complete(&d) || (int)d.nblocks != want_blocks ||
				   (hit > C_START && d.stream_end != want_end)) {
				snprintf(why, sizeof why, "byte in chunk %d: r %d complete %d blocks %zu (want %d)",
					 hit, r, r == 0 && dumpfile_complete(&d), d.nblocks, want_blocks);
				failed = 1;
			} else {
				prefix_ok++;
			}
		}
		if (failed)
			CHECK(0, "seed %llu iteration %ld: %s", (unsigned long long)seed, it, why);
		dumpfile_free(&d);
	}
	CHECK(single > 0 && structured > 0 && prefix_ok > 0,
	      "mutations did not cover the kinds (%ld single, %ld structured, %ld prefix)",
	      single, structured, prefix_ok);
	free(m);
	free(s.b);
}

/* A chunk the capture's workers sealed under a seq it does not get (a
 * GAP came first) is sealed again by the writer: the reader opens it; and
 * one under its own seq is written as it is. */
static void sealed_reseal(void)
{
	uint8_t pk[32], sk[32], st[80], wbuf[8192], a[64], b[64];
	static const char la[] = "sealed under another seq\n", lb[] = "sealed under its own\n";
	struct seal_dump sd;
	struct kdi_writer w;
	uint64_t limit = BASE + (1u << 20);

	CHECK_INT(seal_keypair(pk, sk), 0);
	CHECK_INT(seal_begin(&sd, pk), 0);
	file_put(NULL, 0);
	writer_init(&w, sfd, BASE, limit, wbuf, sizeof wbuf, 0);
	writer_seal(&w, &sd);
	start_payload(st, KDI_FORMAT_AEGIS, PS, 0);
	CHECK_INT(writer_put(&w, T_START, st, 80, NULL, 0, NULL, 0), 0);
	struct kdi_seal rec = { .scheme = KDI_SEAL_SCHEME };
	memcpy(rec.eph_pk, sd.eph_pk, 32);
	memcpy(rec.key_id, sd.key_id, sizeof rec.key_id);
	CHECK_INT(writer_put(&w, KDI_CH_SEAL, &rec, sizeof rec, NULL, 0, NULL, 0), 0);
	uint32_t n = sizeof la - 1;
	memcpy(a, la, n);
	struct seal_where wh = { .dump_id = w.dump_id, .seq = w.seq + 3, .type = KDI_CH_DMESG, .len = n };
	seal_chunk(&sd, &wh, a, a + n);
	CHECK_INT(writer_put_sealed(&w, KDI_CH_DMESG, a, n + KDI_TAG_BYTES, XXH64(a, n + KDI_TAG_BYTES, 0), w.seq + 3), 0);
	uint32_t m = sizeof lb - 1;
	memcpy(b, lb, m);
	struct seal_where wb = { .dump_id = w.dump_id, .seq = w.seq, .type = KDI_CH_SETTINGS, .len = m };
	seal_chunk(&sd, &wb, b, b + m);
	CHECK_INT(writer_put_sealed(&w, KDI_CH_SETTINGS, b, m + KDI_TAG_BYTES, XXH64(b, m + KDI_TAG_BYTES, 0), w.seq), 0);
	struct kdi_end e;
	memset(&e, 0, sizeof e);
	CHECK_INT(writer_put_end(&w, &e), 0);
	CHECK_INT(writer_flush(&w), 0);
	writer_fini(&w);

	struct dumpfile d;
	dumpfile_load_key(&d, sfd, BASE, limit, sk);
	CHECK(d.sealed && !d.locked, "not opened: %s", d.why);
	CHECK(d.dmesg && d.dmesg_len == n && !memcmp(d.dmesg, la, n), "the resealed chunk: %s", d.why);
	CHECK(d.settings && !strcmp(d.settings, lb), "the chunk sealed under its own seq");
	CHECK(d.have_end, "END not read back: %s", d.why);
	dumpfile_free(&d);
	seal_end(&sd);
}

/* Write errors in a sealed dump are gone around as in a clear one
 * (capture/writer.c, go_around): the GAP is the writer's own chunk even
 * when the error shows while a chunk the caller sealed is being put, the
 * chunk is sealed again under its new seq, and a second error is gone
 * around too. The same stream is written clear and sealed, with the same
 * two writes failing (the fd swapped for a read-only one); both must read
 * to END, with two gaps and the same chunks lost. */
#define WE_CHUNKS 120u
#define WE_LEN 3000u
static void write_errors_run(int sealed, const uint8_t *pk, const uint8_t *sk, uint64_t *lost,
			     unsigned *gaps, int *end, int *opened)
{
	static uint8_t wbuf[16384];
	uint8_t st[80], seg[40], pl[WE_LEN + KDI_TAG_BYTES];
	struct seal_dump sd;
	struct kdi_writer w;
	uint64_t limit = BASE + (64u << 20);
	char fdp[64];

	snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", sfd);
	int ro = open(fdp, O_RDONLY);
	CHECK(ro >= 0, "a read-only fd of the stream file");
	file_put(NULL, 0);
	writer_init(&w, sfd, BASE, limit, wbuf, sizeof wbuf, 0);
	if (sealed) {
		CHECK_INT(seal_begin(&sd, pk), 0);
		writer_seal(&w, &sd);
	}
	start_payload(st, sealed ? KDI_FORMAT_AEGIS : KDI_FORMAT_PLAIN, PS, 1);
	CHECK_INT(writer_put(&w, T_START, st, 80, NULL, 0, NULL, 0), 0);
	if (sealed) {
		struct kdi_seal rec = { .scheme = KDI_SEAL_SCHEME };
		memcpy(rec.eph_pk, sd.eph_pk, 32);
		memcpy(rec.key_id, sd.key_id, sizeof rec.key_id);
		CHECK_INT(writer_put(&w, KDI_CH_SEAL, &rec, sizeof rec, NULL, 0, NULL, 0), 0);
	}
	CHECK_INT(writer_put(&w, KDI_CH_VMCOREINFO, vmcoreinfo, sizeof vmcoreinfo - 1, NULL, 0, NULL, 0), 0);
	segment(seg, 0, 1u << 20, 1u << 20);
	CHECK_INT(writer_put(&w, KDI_CH_SEGMENTS, seg, sizeof seg, NULL, 0, NULL, 0), 0);
	for (unsigned i = 0; i < WE_CHUNKS; i++) {
		/* The writes while chunks 30-35 and 80-85 are put fail: each
		 * window is 18 KB of chunks, more than the 16 KiB buffer, so
		 * a write falls in it whatever the tags' length. */
		w.fd = (i >= 30 && i < 36) || (i >= 80 && i < 86) ? ro : sfd;
		memset(pl, (int)i + 1, WE_LEN);
		if (!sealed) {
			CHECK_INT(writer_put(&w, 99, pl, WE_LEN, NULL, 0, NULL, 0), 0);
			continue;
		}
		/* As the capture's workers do: sealed ahead, under the seq the
		 * chunk should get, which a GAP put in between moves. */
		uint64_t seq = w.seq;
		struct seal_where wh = { .dump_id = w.dump_id, .seq = seq, .type = 99, .len = WE_LEN };
		seal_chunk(&sd, &wh, pl, pl + WE_LEN);
		CHECK_INT(writer_put_sealed(&w, 99, pl, WE_LEN + KDI_TAG_BYTES,
					    XXH64(pl, WE_LEN + KDI_TAG_BYTES, 0), seq), 0);
	}
	w.fd = sfd;
	struct kdi_end e;
	memset(&e, 0, sizeof e);
	CHECK_INT(writer_put_end(&w, &e), 0);
	CHECK_INT(writer_flush(&w), 0);
	CHECK_INT(w.gaps, 2);
	writer_fini(&w);
	close(ro);

	struct dumpfile d;
	dumpfile_load_key(&d, sfd, BASE, limit, sealed ? sk : NULL);
	/* Each loss found through its GAP (the probe at the 1 MiB
	 * boundaries), not by the scan for any intact chunk. */
	*lost = 0;
	for (uint32_t i = 0; i < d.nholes; i++) {
		*lost += d.holes[i].seq_to - d.holes[i].seq_from;
		CHECK(d.holes[i].kind == KDI_RESUME_GAP, "%s: loss %u found as kind %d, not through its GAP",
		      sealed ? "sealed" : "clear", i, d.holes[i].kind);
	}
	*gaps = d.gaps;
	*end = d.have_end && !d.end_disagrees;
	*opened = !sealed || (d.sealed && !d.locked);
	dumpfile_free(&d);
	if (sealed)
		seal_end(&sd);
}

static void sealed_write_errors(void)
{
	uint8_t pk[32], sk[32];
	uint64_t lost[2];
	unsigned gaps[2];
	int end[2], opened[2];

	CHECK_INT(seal_keypair(pk, sk), 0);
	for (int s = 0; s < 2; s++) {
		write_errors_run(s, pk, sk, &lost[s], &gaps[s], &end[s], &opened[s]);
		CHECK(gaps[s] == 2 && end[s] && opened[s] && lost[s] > 0 && lost[s] < 40,
		      "%s: %u gaps, END %d, opened %d, %llu chunks lost", s ? "sealed" : "clear",
		      gaps[s], end[s], opened[s], (unsigned long long)lost[s]);
	}
	/* A sealed chunk is a tag longer: the failed writes cover about
	 * the same chunks, never many more. */
	CHECK(lost[1] <= lost[0] + 4, "sealed loses %llu chunks, clear %llu",
	      (unsigned long long)lost[1], (unsigned long long)lost[0]);
}

int main(void)
{
	file_open();
	RUN(writer_matches_format_md);
	RUN(roundtrip_complete);
	RUN(linked_pages);
	RUN(reader_sequence);
	RUN(empty_and_start);
	RUN(stops_at_damage);
	RUN(stops_at_foreign_chunks);
	RUN(end_status);
	RUN(malformed_metadata);
	RUN(empty_payloads);
	RUN(pages_parse_rules);
	RUN(bad_page_data);
	RUN(writer_reserve_and_limit);
	RUN(sealed_reseal);
	RUN(sealed_write_errors);
	RUN(end_cross_checks);
	RUN(changed_under_reader);
	RUN(segment_rule);
	RUN(later_pass);
	RUN(early_pass);
	RUN(debugger_record);
	RUN(startup_tier);
	RUN(gap_resync);
	RUN(fuzz_mutations);
	return check_done();
}
