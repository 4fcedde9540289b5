/* fuzz_sealed: the sealed-chunk reader (format versions 6 and 7), the path
 * `kdumpinit save --key`, `info` and `save --dir` take on a sealed dump.
 *
 * Tags stop random mutation at the first chunk, so the harness seals
 * what the fuzzer gives it: the input is an unsealed stream (the seeds
 * are fuzz_dumpfile's: a 4096-byte superblock area, then a version-4
 * stream), whose chunk headers give only type and length. The harness
 * writes it again as a capture would seal it (capture/writer.c): START
 * with version 7 (or 6, bit 5), CHAIN if it is next, a SEAL record, then every other
 * chunk sealed or tagged as chunk_seal_mode says, each under a fixed key
 * pair so that runs repeat. The fuzzer therefore reaches the parsers
 * behind the tags with content that authenticates.
 *
 * Byte 0 is a control byte:
 *   bit 0  no SEAL record (sealed chunks with nothing to open them)
 *   bit 1  tamper: bytes 1..4 name a chunk (u16, counted in the output
 *          stream) and a byte of its payload (u16, modulo its length) to
 *          flip after sealing, the hashes made right again (as someone
 *          who forges XXH64 could)
 *   bit 2  write the sealed types in the clear with their flags set (the
 *          tags are then garbage)
 *   bit 3  read with another secret key
 *   bit 4  give every chunk the flags of another mode (a mode mismatch)
 *   bit 5  version 6: XChaCha20-Poly1305 and 16-byte tags, where
 *          version 7 (what captures write) has AEGIS-256 and 32
 * (bytes 1..4 are always consumed, so a seed's layout does not depend on
 * the control bits.)
 *
 * Beyond "no crash":
 *   - without the key (and with another key) a sealed dump is locked:
 *     no notes, VMCOREINFO, segments, log, settings or page index;
 *   - with the key, a dump read as unlocked has every PAGES block sealed,
 *     and a tamper inside a sealed or tagged payload costs that chunk
 *     only: nothing of it is kept, and every block of the same stream
 *     read untampered (the reference) from another chunk is kept as it
 *     was, past the tampered one too (docs/FORMAT.md, "Reading past
 *     damage"), unless the chunk tampered is one the dump cannot be
 *     read without (START and CHAIN, which SEAL's tag covers, SEAL,
 *     VMCOREINFO, SEGMENTS);
 *   - every stored page decodes or is refused, never read past.
 * With FZ_REACH set, it prints at exit "FZ_REACH inputs=N opened=N
 * complete=N kept=N": inputs read with the key and unlocked, of them read
 * complete, and tampered ones held to the reference; run.sh fails when no seed opens to a complete dump (a harness
 * that no longer seals right would otherwise only show as lost coverage). */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include <sodium.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../../dump/dumpfile.h"
#include "../../dump/format.h"
#include "../../dump/seal.h"

#define FZ_OUT_MAX (4u << 20)
#define FZ_MAX_PAGES 2048u

static uint8_t sk[32], other_sk[32], pk[32];
static struct seal_dump sd;	/* the key a capture to pk would have used */
static uint8_t eph_pk[32];
static uint32_t version, tagb;	/* this input's format version, and its tags' length */

static void keys_init(void)
{
	static int done;
	static const uint8_t base[32] = { 9 };
	uint8_t esk[32];

	if (done)
		return;
	for (int i = 0; i < 32; i++) {
		sk[i] = (uint8_t)(0x11 * (i + 1));
		other_sk[i] = (uint8_t)(0x5a ^ i);
		esk[i] = (uint8_t)(0xa5 + 3 * i);
	}
	if (crypto_scalarmult(pk, sk, base) || crypto_scalarmult(eph_pk, esk, base))
		abort();
	uint8_t id[SEAL_KEYID_BYTES];
	seal_key_id(pk, id);
	/* The reader derives the same key from sk and eph_pk. */
	if (seal_open_begin(&sd, KDI_SEAL_SCHEME, sk, eph_pk, id) != 0)
		abort();
	done = 1;
}

struct out {
	uint8_t *b;
	size_t len;
	uint64_t seq, dump_id;
	uint8_t pre[sizeof(struct kdi_start) + sizeof(struct kdi_chain_rec)];
	size_t prelen;
	/* each chunk's payload offset and length, for the tamper */
	size_t poff[512];
	uint32_t plen[512];
	uint16_t ptype[512];
	unsigned n;
};

static int put(struct out *o, uint16_t type, const uint8_t *p, uint32_t len, uint32_t mode,
	       int clear, uint32_t flags_override)
{
	uint32_t extra = mode ? chunk_tags_len(type, version) : 0;
	size_t span = chunk_span(len + extra);

	if (o->len + span > FZ_OUT_MAX || o->n >= 512)
		return -1;
	uint8_t *pl = o->b + o->len + sizeof(struct kdi_chunk);
	memcpy(pl, p, len);
	struct seal_where w = { .dump_id = o->dump_id, .seq = o->seq, .type = type, .len = len };
	if (mode == KDI_CHUNK_SEALED && !clear && type == KDI_CH_PAGES && version >= KDI_FORMAT_AEGIS) {
		/* in its parts; a head that does not describe the payload
		 * cannot be, and gets tags no key made */
		if (pages_seal(&sd, &w, pl) < 0)
			memset(pl + len, 0x3c, extra);
	} else if (mode == KDI_CHUNK_SEALED && !clear)
		seal_chunk(&sd, &w, pl, pl + len);
	else if (mode == KDI_CHUNK_AUTH && type == KDI_CH_SEAL)
		seal_auth(&sd, &w, o->pre, o->prelen, pl, len, pl + len);
	else if (mode == KDI_CHUNK_AUTH && type == KDI_CH_PAD && !clear)
		seal_auth(&sd, &w, NULL, 0, NULL, 0, pl + len);	/* zeros: bound by place */
	else if (mode == KDI_CHUNK_AUTH && !clear)
		seal_auth(&sd, &w, pl, len, NULL, 0, pl + len);
	else if (mode)
		memset(pl + len, 0x3c, extra);
	if ((type == KDI_CH_START || type == KDI_CH_CHAIN) && o->prelen + len <= sizeof o->pre) {
		memcpy(o->pre + o->prelen, p, len);
		o->prelen += len;
	}
	struct kdi_chunk h = { .type = type, .hdr_size = sizeof h, .len = len + extra,
			       .flags = flags_override ? flags_override : mode,
			       .dump_id = o->dump_id, .seq = o->seq };
	memcpy(h.magic, KDI_CHUNK_MAGIC, 4);
	h.payload_hash = XXH64(pl, len + extra, 0);
	h.hdr_hash = XXH64(&h, sizeof h, 0);
	memcpy(o->b + o->len, &h, sizeof h);
	o->poff[o->n] = o->len + sizeof h;
	o->plen[o->n] = len + extra;
	o->ptype[o->n] = type;
	o->n++;
	o->len += span;
	o->seq++;
	return 0;
}

/* The tamper: one payload byte flipped, the hashes made right again. */
static void tamper(struct out *o, unsigned k, unsigned at)
{
	size_t hoff = o->poff[k] - sizeof(struct kdi_chunk);
	struct kdi_chunk h;

	o->b[o->poff[k] + at] ^= 0x40;
	memcpy(&h, o->b + hoff, sizeof h);
	h.payload_hash = XXH64(o->b + o->poff[k], o->plen[k], 0);
	h.hdr_hash = 0;
	h.hdr_hash = XXH64(&h, sizeof h, 0);
	memcpy(o->b + hoff, &h, sizeof h);
}

static int fd_dev = -1;

static struct {
	unsigned long inputs, opened, complete, kept;
} reach;

static void reach_print(void)
{
	fprintf(stderr, "FZ_REACH inputs=%lu opened=%lu complete=%lu kept=%lu\n", reach.inputs,
		reach.opened, reach.complete, reach.kept);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (getenv("FZ_REACH"))
		atexit(reach_print);
	return 0;
}

static void check_locked(const struct dumpfile *d)
{
	if (!d->sealed)
		return;
	assert(d->locked);
	assert(!d->key);
	assert(!d->notes && !d->vmcoreinfo && !d->seg && !d->dmesg && !d->settings);
	assert(!d->nblocks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	keys_init();
	reach.inputs++;
	unsigned ctl = (unsigned)fz_take(&in, 1);
	unsigned tk = (unsigned)fz_take(&in, 2), tat = (unsigned)fz_take(&in, 2);
	const uint8_t *p = in.p;
	size_t n = in.n;

	/* fuzz_dumpfile's seeds: a superblock area, then the stream. */
	if (n >= KDI_SB_AREA + sizeof(struct kdi_chunk) && !memcmp(p, KDI_SB_MAGIC, 8)) {
		p += KDI_SB_AREA;
		n -= KDI_SB_AREA;
	}
	static uint8_t *buf;
	if (!buf && !(buf = malloc(FZ_OUT_MAX)))
		abort();
	struct out o = { .b = buf, .dump_id = 0x5eed5eed5eedull };

	int seal_done = 0;
	uint32_t flip = (ctl & 16) ? 1 : 0;
	version = (ctl & 32) ? KDI_FORMAT_SEALED_ALL : KDI_FORMAT_AEGIS;
	tagb = chunk_tag_bytes(version);
	sd.scheme = seal_scheme_of(version);
	size_t at = 0;
	while (at + sizeof(struct kdi_chunk) <= n) {
		struct kdi_chunk h;
		memcpy(&h, p + at, sizeof h);
		size_t len = h.len;
		if (len > n - at - sizeof h)
			len = n - at - sizeof h;
		const uint8_t *pl = p + at + sizeof h;
		at += sizeof h + ((len + 7) & ~(size_t)7);
		if (o.seq == 0) {
			/* START, whatever the input said: the version sealing
			 * writes. */
			struct kdi_start st;
			memset(&st, 0, sizeof st);
			memcpy(&st, pl, len < sizeof st ? len : sizeof st);
			st.format_version = version;
			if (put(&o, KDI_CH_START, (const uint8_t *)&st, sizeof st, 0, 0, 0) < 0)
				break;
			continue;
		}
		if (h.type == KDI_CH_SEAL || h.type == KDI_CH_START)
			continue;	/* the harness writes those */
		if (!seal_done && h.type != KDI_CH_CHAIN && !(ctl & 1)) {
			struct kdi_seal s = { .scheme = seal_scheme_of(version) };
			memcpy(s.eph_pk, eph_pk, 32);
			seal_key_id(pk, s.key_id);
			snprintf(s.release, sizeof s.release, "fuzz");
			if (put(&o, KDI_CH_SEAL, (const uint8_t *)&s, sizeof s, KDI_CHUNK_AUTH, 0,
				flip ? KDI_CHUNK_SEALED : 0) < 0)
				break;
			seal_done = 1;
		}
		uint32_t mode = chunk_seal_mode(h.type, version);
		uint32_t clen = (uint32_t)len;
		struct kdi_end e;
		if (h.type == KDI_CH_END) {
			/* The counts of the stream as sealed, as the writer puts
			 * them: one chunk more (SEAL), a tag per chunk; an older
			 * seed's shorter END grows its last class, zero. */
			memset(&e, 0, sizeof e);
			memcpy(&e, pl, clen < sizeof e ? clen : sizeof e);
			clen = sizeof e;
			e.nr_chunks = o.seq + 1;
			e.bytes_out = o.len + chunk_span(sizeof e + tagb);
			pl = (const uint8_t *)&e;
		}
		if (put(&o, h.type, pl, clen, mode, (ctl & 4) != 0,
			flip ? (mode == KDI_CHUNK_SEALED ? KDI_CHUNK_AUTH : KDI_CHUNK_SEALED) : 0) < 0)
			break;
		if (h.type == KDI_CH_END)
			break;
	}
	if (!o.n)
		return 0;
	/* The reference: the same stream untampered, read with the key. */
	static int fd_ref = -1;
	struct dumpfile d0;
	int r0 = -1;
	if ((ctl & 2) && !(ctl & 8) && o.plen[tk % o.n]) {
		int rf = fz_memfd(&fd_ref, "sealed_ref");
		fz_pwrite(rf, o.b, o.len, 0);
		r0 = dumpfile_load_key(&d0, rf, 0, o.len, sk);
		if (r0 == -EBADMSG || (r0 == 0 && !(d0.sealed && !d0.locked))) {
			dumpfile_free(&d0);
			r0 = -1;
		}
	}
	int tampered = -1;
	if ((ctl & 2) && o.n) {
		unsigned k = tk % o.n;
		if (o.plen[k]) {
			tamper(&o, k, tat % o.plen[k]);
			tampered = (int)k;
		}
	}
	int fd = fz_memfd(&fd_dev, "sealed");
	fz_pwrite(fd, o.b, o.len, 0);

	struct dumpfile d;
	/* Without a key: locked, nothing sealed used. */
	int r = dumpfile_load_key(&d, fd, 0, o.len, NULL);
	if (r == 0 || r == -EBADMSG)
		check_locked(&d);
	dumpfile_free(&d);

	r = dumpfile_load_key(&d, fd, 0, o.len, (ctl & 8) ? other_sk : sk);
	if (ctl & 8) {
		if (r == 0 || r == -EBADMSG)
			check_locked(&d);
	} else if ((r == 0 || r == -EBADMSG) && d.sealed && !d.locked) {
		reach.opened++;
		reach.complete += r == 0 && dumpfile_complete(&d);
		for (size_t i = 0; i < d.nblocks; i++)
			assert(d.blocks[i].sealed);
		/* A chunk changed after sealing: its content never used; every
		 * other chunk's block is kept as the untampered stream has it
		 * (a tamper in START or CHAIN fails SEAL: the dump stays
		 * locked, not here). */
		uint16_t ty = tampered >= 0 ? o.ptype[tampered] : 0;
		if (tampered >= 0 && ty != KDI_CH_PAD && ty != KDI_CH_GAP) {
			for (size_t i = 0; i < d.nblocks; i++)
				assert(d.blocks[i].seq != (uint64_t)tampered);
			if (ty == KDI_CH_END)
				assert(!d.have_end);
		}
		if (r0 == 0 && ty != KDI_CH_START && ty != KDI_CH_CHAIN && ty != KDI_CH_SEAL &&
		    ty != KDI_CH_VMCOREINFO && ty != KDI_CH_SEGMENTS) {
			reach.kept++;
			for (size_t i = 0; i < d0.nblocks; i++) {
				const struct page_block *b = &d0.blocks[i];
				if (b->seq == (uint64_t)tampered)
					continue;
				size_t j = 0;
				while (j < d.nblocks && d.blocks[j].seq != b->seq)
					j++;
				assert(j < d.nblocks);
				const struct page_block *x = &d.blocks[j];
				assert(x->pfn == b->pfn && x->count == b->count && x->nstored == b->nstored &&
				       x->payload_off == b->payload_off && x->payload_hash == b->payload_hash &&
				       !memcmp(x->bitmap, b->bitmap, (b->count + 7) / 8));
			}
		}
		if (r == 0) {
			struct dump_cursor c;
			uint8_t *page = malloc(d.start.page_size);
			if (!page)
				abort();
			cursor_init(&c, &d);
			unsigned got = 0;
			for (uint64_t pfn = dumpfile_next_stored(&d, 0);
			     pfn != UINT64_MAX && got < FZ_MAX_PAGES;
			     pfn = dumpfile_next_stored(&d, pfn + 1), got++)
				(void)dumpfile_page(&c, pfn, page);
			cursor_fini(&c);
			free(page);
		}
		/* Loaded as save loads it (each chunk's pages opened when
		 * read, DUMPFILE_DEFER_PAGES): a page reads as it does above,
		 * and one of a chunk whose pages were changed fails there
		 * (-EKEYREJECTED), never reads. */
		struct dumpfile dd;
		if (r == 0 && dumpfile_load_how(&dd, fd, 0, o.len, sk, DUMPFILE_DEFER_PAGES) == 0) {
			struct dump_cursor c, cd;
			uint8_t *pa = malloc(d.start.page_size), *pb = malloc(d.start.page_size);
			if (!pa || !pb)
				abort();
			cursor_init(&c, &d);
			cursor_init(&cd, &dd);
			unsigned got = 0;
			for (uint64_t pfn = dumpfile_next_stored(&dd, 0);
			     pfn != UINT64_MAX && got < FZ_MAX_PAGES;
			     pfn = dumpfile_next_stored(&dd, pfn + 1), got++) {
				int ea = dumpfile_page(&c, pfn, pa), eb = dumpfile_page(&cd, pfn, pb);
				assert(eb != 0 || (ea == 0 && !memcmp(pa, pb, d.start.page_size)));
				assert(ea != 0 || eb == 0);
			}
			cursor_fini(&c);
			cursor_fini(&cd);
			free(pa);
			free(pb);
			dumpfile_free(&dd);
		}
	}
	if (r == 0 || r == -EBADMSG)
		dumpfile_free(&d);
	if (r0 == 0)
		dumpfile_free(&d0);
	return 0;
}
