/* fuzz_dumpfile: the on-device reader, the path `kdumpinit info` and
 * `kdumpinit save` take.
 *
 * Input: byte 0 is a control byte for the harness (with bit 5, the forge
 * edits follow it, see below), the rest is a compact device image. The
 * claim rule wants a stream at data_offset >= KDI_DATA_MIN (128 KiB),
 * past a head of zeros, which is more than an input should be; so the
 * input holds the superblock area (its first KDI_SB_AREA = 4096 bytes)
 * and then the stream, and the harness expands it (expand_image):
 *   input:  [0, 4096) superblock area | [4096, size) stream
 *   device: [0, 4096) superblock area | zeros | [data_offset, ..) stream
 * when the input has all 4096 bytes and the superblock's data_offset
 * (read raw, whatever its checksum) is in [4096, FZ_EXPAND_MAX = 1 MiB];
 * otherwise the input is the device image as it is. Everything below
 * works on the expanded image, which is written to a memfd that the tool
 * then opens by path.
 *
 * Chunks are guarded by XXH64, so random mutations mostly stop at the
 * first checksum; the control byte lets the fuzzer also reach the parsers
 * behind them (the image is edited before it is written, the tool still
 * reads and checks it unmodified):
 *   bit 0  recompute the superblock checksum
 *   bit 1  recompute every chunk's payload and header hash, walking the
 *          stream from data_offset by each header's len
 *   bit 2  with bit 1: give every chunk the first chunk's dump_id and
 *          consecutive seq numbers
 *   bit 3  save_kdump with zlib (else raw pages)
 *   bit 4  save_kdump with 2 threads (else 1)
 *   bit 5  forge: byte 1 is a count n (at most FZ_FORGE_MAX used), then n
 *          8-byte edits of the chunk list follow, before the image; the
 *          stream is then rebuilt with consecutive seq, one dump_id and
 *          right hashes (forge_stream). Checksums stop random mutation
 *          before the cross-checks of END against the stream; this
 *          makes the fuzzer meet them with every chunk intact, as
 *          someone who forges the hashes again could.
 *   bit 6  damage: 5 bytes follow (after the forge edits, before the
 *          image): k (u16), at (u16), x (u8). Chunk k of the stream (k
 *          modulo their count, walking from data_offset by each header's
 *          len, as bit 1 does) gets its byte at (modulo its span) XORed
 *          with x (0x40 for 0), after every edit above: damage on the
 *          device. The image as it was before is read too (the
 *          reference), and the two are compared (below).
 *   bit 7  with bit 6: the damaged chunk's hashes are made right again
 *          (a forger's change rather than damage).
 * Seeds are real images written by `kdumpinit capture` (control 0), with
 * the superblock re-claimed at data_offset KDI_DATA_MIN and stored in the
 * compact layout (see mkcorpus.py).
 *
 * With FZ_REACH set in the environment, the harness prints at exit one
 * line "FZ_REACH inputs=N claimed=N loaded=N complete=N damaged=N kept=N":
 * how many inputs source_open took as a claim, dumpfile_load loaded
 * (returned 0) and dumpfile_complete called complete, and of the damaged
 * ones (bit 6) how many had a reference that loaded and how many were
 * held to the damage property below. run.sh runs the committed corpus so
 * and fails when no seed gets to a loaded, complete dump (a claim rule
 * the seeds no longer meet would otherwise only show as lost coverage).
 *
 * Steps: expand_image, the control bits' edits (fix_super, fix_chunks,
 * forge_stream), source_open (probe_fd, probe_buffer, super_decode), dumpfile_load,
 * what info prints (dumpfile_complete, vmcoreinfo_get), dumpfile_page for
 * every stored pfn, then both save formats into a memfd: save_elf and
 * save_kdump.
 *
 * Beyond "no crash": a dump read as complete has an END whose counts are
 * those of the stream (chunks, stream bytes, pages stored) and segments
 * it vouches for (pfn_limit); every block index entry is what its pages
 * say; save_kdump's bitmaps never span more than pfn_limit.
 *
 * Damage (bit 6) costs only the chunk it touched (docs/FORMAT.md,
 * "Reading past damage"): when the reference loads, the damaged image
 * loads too (a damaged START is recovered, never read as empty), and
 * every PAGES block of the reference whose chunk does not hold the
 * damaged byte is in the damaged dump's index as it was (pfns, bitmaps,
 * payload where it was, with its hash), unless the chunk damaged is
 * VMCOREINFO or SEGMENTS (without which nothing is placed), or START and
 * the recovery read another page size or version than START said (a
 * fuzzed START that disagrees with VMCOREINFO). With forged hashes (bit
 * 7), a changed payload byte of an intact chunk other than START and END
 * does not stop the stream: it is read to where the reference's ended,
 * and a changed chunk that is not PAGES costs no block. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../../config/target.h"
#include "../../dump/chain.h"
#include "../../dump/dumpfile.h"
#include "../../dump/format.h"
#include "../../dump/save.h"
#include "../../kernel/vmcore.h"
#include "../../kernel/vmcoreinfo.h"
#include "../../lib/util.h"

/* Pages decoded one by one per input (save_elf decodes them again). */
#define FZ_MAX_PAGES 4096u
/* save_kdump does work in proportion to the memory the segments span, not
 * to what is stored: two bitmaps up to the highest segment end, calloc'ed,
 * written and walked pfn by pfn. That is the format (makedumpfile's too),
 * but a garbage segment of 2^55 bytes would make each input take minutes
 * and gigabytes. save_kdump now keeps to pfn_limit where END does not
 * vouch for the segments (a forged END can still vouch for anything), so
 * the harness skips save_kdump above this many pfns of min(segment end,
 * pfn_limit);
 * -DFZ_SAVE_PAGES_MAX=0 drops the guard. (save_elf used to have the same
 * problem, crashes/README.md #6; it is no longer guarded.) */
#ifndef FZ_SAVE_PAGES_MAX
#define FZ_SAVE_PAGES_MAX 262144ull
#endif

static int devfd = -1, outfd = -1;

static int by_lo(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* FORMAT.md END pages_total of a complete capture: the pfns the segments'
 * file parts touch, each once. Counted here apart from dumpfile.c. */
static uint64_t described_pfns(const struct dumpfile *d)
{
	uint64_t (*r)[2] = malloc((d->nr_seg + 1) * sizeof *r), n = 0, total = 0, end = 0;
	uint32_t ps = d->start.page_size;
	if (!r)
		abort();
	for (uint32_t i = 0; i < d->nr_seg; i++)
		if (d->seg[i].filesz) {
			r[n][0] = d->seg[i].paddr / ps;
			r[n][1] = (d->seg[i].paddr + d->seg[i].filesz + ps - 1) / ps;
			n++;
		}
	qsort(r, n, sizeof *r, by_lo);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t lo = r[i][0] > end ? r[i][0] : end;
		if (r[i][1] > lo) {
			total += r[i][1] - lo;
			end = r[i][1];
		}
	}
	free(r);
	return total;
}

/* ---- forge mode (control bit 5) ---- */

#define FZ_FORGE_MAX 8
#define FZ_FORGE_CHUNKS 4096

struct fz_chunk {
	uint8_t *h;		/* header + payload, in the edited copy */
	uint32_t len;
};

/* One edit, 8 bytes: op, k (chunk index, mod the count), a, b, v (u32 LE).
 *   0 delete chunk k            1 duplicate chunk k after itself
 *   2 move chunk k to a         3 retype chunk k as 1 + a % 9
 *   4 END u64 field (a % 15) += (int32)v   (counts off by a little)
 *   5 SEGMENTS entry a, u64 field b % 4 = v << (8 * (b / 4 % 8))
 *   6 PAGES chunk k: count, nstored, nzero or flags (a % 4) = v
 *   7 the stream ends after chunk k */
static void forge_edit(struct fz_chunk *c, size_t *n, const uint8_t *e)
{
	size_t k = *n ? e[1] % *n : 0;
	uint32_t v;
	memcpy(&v, e + 4, 4);
	if (!*n)
		return;
	uint16_t type;
	memcpy(&type, c[k].h + 4, 2);
	uint8_t *pl = c[k].h + sizeof(struct kdi_chunk);
	switch (e[0] % 8) {
	case 0:
		memmove(c + k, c + k + 1, (*n - k - 1) * sizeof *c);
		(*n)--;
		break;
	case 1:
		if (*n < FZ_FORGE_CHUNKS) {
			memmove(c + k + 1, c + k, (*n - k) * sizeof *c);
			(*n)++;
		}
		break;
	case 2: {
		struct fz_chunk x = c[k];
		size_t to = e[2] % *n;
		memmove(c + k, c + k + 1, (*n - k - 1) * sizeof *c);
		memmove(c + to + 1, c + to, (*n - 1 - to) * sizeof *c);
		c[to] = x;
		break;
	}
	case 3:
		type = 1 + e[2] % 9;
		memcpy(c[k].h + 4, &type, 2);
		break;
	case 4:
		for (size_t i = 0; i < *n; i++) {
			memcpy(&type, c[i].h + 4, 2);
			if (type == KDI_CH_END && c[i].len == sizeof(struct kdi_end)) {
				uint8_t *f = c[i].h + sizeof(struct kdi_chunk) + 8 * (e[2] % 15);
				uint64_t x;
				memcpy(&x, f, 8);
				x += (int64_t)(int32_t)v;
				memcpy(f, &x, 8);
			}
		}
		break;
	case 5:
		for (size_t i = 0; i < *n; i++) {
			memcpy(&type, c[i].h + 4, 2);
			size_t ns = c[i].len / sizeof(struct kdi_segment);
			if (type == KDI_CH_SEGMENTS && ns) {
				uint8_t *f = c[i].h + sizeof(struct kdi_chunk) +
					     (e[2] % ns) * sizeof(struct kdi_segment) + 8 * (e[3] % 4);
				uint64_t x = (uint64_t)v << (8 * (e[3] / 4 % 8));
				memcpy(f, &x, 8);
			}
		}
		break;
	case 6:
		if (type == KDI_CH_PAGES && c[k].len >= sizeof(struct kdi_pages))
			memcpy(pl + 8 + 4 * (e[2] % 4), &v, 4);	/* count nstored nzero flags */
		break;
	case 7:
		*n = k + 1;
		break;
	}
}

/* The image with its stream rebuilt from the edited chunk list: chunks
 * back to back from data_offset, seq 0.., the first one's dump_id, both
 * hashes right. Returns a new buffer (*len updated), or NULL to keep the
 * image as it is. */
static uint8_t *forge_stream(const uint8_t *img, size_t *len, const uint8_t *edits, unsigned nedits)
{
	struct kdi_super sb;
	if (*len < sizeof sb)
		return NULL;
	memcpy(&sb, img, sizeof sb);
	if (sb.data_offset > *len)
		return NULL;
	static struct fz_chunk c[FZ_FORGE_CHUNKS];
	size_t n = 0;
	uint8_t *copy = malloc(*len);
	if (!copy)
		abort();
	memcpy(copy, img, *len);
	for (uint64_t pos = sb.data_offset;
	     n < FZ_FORGE_CHUNKS / 2 && pos <= *len && *len - pos >= sizeof(struct kdi_chunk);) {
		struct kdi_chunk h;
		memcpy(&h, copy + pos, sizeof h);
		if (memcmp(h.magic, KDI_CHUNK_MAGIC, 4) || h.len > *len - pos - sizeof h)
			break;
		c[n++] = (struct fz_chunk){ copy + pos, h.len };
		pos += chunk_span(h.len);
	}
	for (unsigned i = 0; i < nedits; i++)
		forge_edit(c, &n, edits + 8 * i);
	size_t out_len = sb.data_offset;
	for (size_t i = 0; i < n; i++)
		out_len += chunk_span(c[i].len);
	if (out_len < *len)
		out_len = *len;	/* the device keeps its size */
	uint8_t *out = calloc(1, out_len);
	if (!out)
		abort();
	memcpy(out, copy, sb.data_offset);
	uint64_t pos = sb.data_offset, dump_id = 0;
	for (size_t i = 0; i < n; i++) {
		struct kdi_chunk h;
		memcpy(&h, c[i].h, sizeof h);
		if (i == 0)
			dump_id = h.dump_id;
		h.dump_id = dump_id;
		h.seq = i;
		h.payload_hash = XXH64(c[i].h + sizeof h, c[i].len, 0);
		h.hdr_hash = 0;
		h.hdr_hash = XXH64(&h, sizeof h, 0);
		memcpy(out + pos, &h, sizeof h);
		memcpy(out + pos + sizeof h, c[i].h + sizeof h, c[i].len);
		pos += chunk_span(c[i].len);
	}
	free(copy);
	*len = out_len;
	return out;
}

/* ---- the compact input layout (header comment) ---- */

#define FZ_EXPAND_MAX (1u << 20)

/* The device image for a compact input: the superblock area, zeros up to
 * data_offset, then the rest of the input as the stream. Returns a new
 * buffer (*len updated), or NULL when the input is the image as it is. */
static uint8_t *expand_image(const uint8_t *in, size_t *len)
{
	struct kdi_super sb;
	if (*len < KDI_SB_AREA)
		return NULL;
	memcpy(&sb, in, sizeof sb);
	if (sb.data_offset < KDI_SB_AREA || sb.data_offset > FZ_EXPAND_MAX)
		return NULL;
	size_t stream = *len - KDI_SB_AREA, out_len = sb.data_offset + stream;
	uint8_t *out = calloc(1, out_len);
	if (!out)
		abort();
	memcpy(out, in, KDI_SB_AREA);
	memcpy(out + sb.data_offset, in + KDI_SB_AREA, stream);
	*len = out_len;
	return out;
}

/* FZ_REACH: what the inputs got to (header comment). */
static struct {
	unsigned long inputs, claimed, loaded, complete, damaged, kept;
} reach;

static void reach_print(void)
{
	fprintf(stderr, "FZ_REACH inputs=%lu claimed=%lu loaded=%lu complete=%lu damaged=%lu kept=%lu\n",
		reach.inputs, reach.claimed, reach.loaded, reach.complete, reach.damaged, reach.kept);
}

/* ---- damage mode (control bits 6 and 7) ---- */

struct fz_damage {
	unsigned k, at;
	uint8_t x;
	int forge;
	/* what was damaged: the byte's device offset, its chunk (device
	 * offset, span, type), whether the byte is in the payload, and
	 * whether the chunk was intact before (magic and both hashes) */
	uint64_t off, c_off, c_span;
	uint16_t type;
	int in_payload, was_intact;
};

/* Chunk dm->k of the stream gets one byte changed (header comment, bit
 * 6), and with dm->forge its hashes made right again. 0 when the image
 * holds no chunk to damage. */
static int damage_chunk(uint8_t *img, size_t len, struct fz_damage *dm)
{
	struct kdi_super sb;
	uint64_t pos, n = 0;

	if (len < sizeof sb)
		return 0;
	memcpy(&sb, img, sizeof sb);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t i = 0;
		for (pos = sb.data_offset; pos <= len && len - pos >= sizeof(struct kdi_chunk);) {
			struct kdi_chunk h;
			memcpy(&h, img + pos, sizeof h);
			if (memcmp(h.magic, KDI_CHUNK_MAGIC, 4) || h.len > len - pos - sizeof h)
				break;
			uint64_t sp = chunk_span(h.len);
			if (sp > len - pos)
				sp = len - pos;
			if (pass == 1 && i == dm->k % n) {
				uint64_t hh = h.hdr_hash;
				h.hdr_hash = 0;
				dm->was_intact = XXH64(&h, sizeof h, 0) == hh &&
						 XXH64(img + pos + sizeof h, h.len, 0) == h.payload_hash;
				dm->c_off = pos;
				dm->c_span = sp;
				dm->type = h.type;
				uint64_t rel = dm->at % sp;
				dm->off = pos + rel;
				dm->in_payload = rel >= sizeof h && rel < sizeof h + h.len;
				img[dm->off] ^= dm->x ? dm->x : 0x40;
				if (dm->forge) {
					memcpy(&h, img + pos, sizeof h);
					if (h.len <= len - pos - sizeof h)
						h.payload_hash = XXH64(img + pos + sizeof h, h.len, 0);
					h.hdr_hash = 0;
					h.hdr_hash = XXH64(&h, sizeof h, 0);
					memcpy(img + pos, &h, sizeof h);
				}
				return 1;
			}
			i++;
			pos += chunk_span(h.len);
		}
		if (pass == 0 && !(n = i))
			return 0;
	}
	return 0;
}

/* Block b of the reference in the damaged dump d as it was (blocks are
 * in stream order there, so by payload offset). */
static int block_kept(const struct dumpfile *d, const struct page_block *b)
{
	size_t lo = 0, hi = d->nblocks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->blocks[mid].payload_off < b->payload_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nblocks)
		return 0;
	const struct page_block *x = &d->blocks[lo];
	size_t bl = (b->count + 7) / 8;
	return x->payload_off == b->payload_off && x->pfn == b->pfn && x->count == b->count &&
	       x->nstored == b->nstored && x->payload_len == b->payload_len &&
	       x->payload_hash == b->payload_hash && x->seq == b->seq &&
	       !memcmp(x->bitmap, b->bitmap, bl) && !x->zbitmap == !b->zbitmap &&
	       (!x->zbitmap || !memcmp(x->zbitmap, b->zbitmap, bl));
}

static int reffd = -1;

/* The damaged dump d (dumpfile_load's r) against the reference, the
 * image before the damage (header comment). */
static void damage_check(const struct dumpfile *d, int r, const uint8_t *orig, size_t len,
			 const struct fz_damage *dm)
{
	int fd = fz_memfd(&reffd, "fuzz_dumpfile_ref");
	struct target t0;
	enum target_refusal why;
	char msg[400];
	struct dumpfile d0;

	if (len)
		fz_pwrite(fd, orig, len, 0);
	if (source_open(&t0, fz_fdpath(fd), &why, msg, sizeof msg) < 0)
		return;
	int r0 = dumpfile_load(&d0, t0.fd, t0.base, t0.limit);
	if (r0 < 0 || d0.sealed)
		goto out;
	reach.damaged++;
	if (dm->type == KDI_CH_VMCOREINFO || dm->type == KDI_CH_SEGMENTS)
		goto out;
	if (!dm->forge) {
		if (dm->type == KDI_CH_START) {
			/* never "empty" while the rest of the dump is there */
			assert(r != -ENOENT);
			if (r < 0 || d->start.page_size != d0.start.page_size ||
			    d->start.format_version != d0.start.format_version)
				goto out;
		}
		assert(r == 0);
		for (size_t i = 0; i < d0.nblocks; i++) {
			const struct page_block *b = &d0.blocks[i];
			uint64_t at = b->payload_off - sizeof(struct kdi_chunk);
			if (dm->off >= at && dm->off < at + chunk_span(b->payload_len))
				continue;	/* its chunk took the damage */
			assert(block_kept(d, b));
		}
		reach.kept++;
	} else if (dm->in_payload && dm->was_intact && dm->type != KDI_CH_START &&
		   dm->type != KDI_CH_END && dm->c_off + dm->c_span <= d0.stream_end && r == 0) {
		assert(d->stream_end == d0.stream_end);
		if (dm->type != KDI_CH_PAGES)
			for (size_t i = 0; i < d0.nblocks; i++)
				assert(block_kept(d, &d0.blocks[i]));
		reach.kept++;
	}
out:
	dumpfile_free(&d0);
	target_close(&t0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (getenv("FZ_REACH"))
		atexit(reach_print);
	return 0;
}

/* With NAME=path in the environment, a copy of what was saved goes there
 * (for looking at a saver's output on one input; not used when fuzzing). */
static void fz_keep(int fd, const char *name)
{
	const char *path = getenv(name);
	if (!path)
		return;
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	char buf[65536];
	ssize_t n;
	for (off_t off = 0; (n = pread(fd, buf, sizeof buf, off)) > 0; off += n)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
}

static void fix_super(uint8_t *img, size_t len)
{
	if (len < sizeof(struct kdi_super))
		return;
	uint64_t zero = 0, h;
	memcpy(img + offsetof(struct kdi_super, checksum), &zero, 8);
	h = XXH64(img, sizeof(struct kdi_super), 0);
	memcpy(img + offsetof(struct kdi_super, checksum), &h, 8);
}

static void fix_chunks(uint8_t *img, size_t len, int renumber)
{
	struct kdi_super sb;
	if (len < sizeof sb)
		return;
	memcpy(&sb, img, sizeof sb);
	uint64_t pos = sb.data_offset, dump_id = 0, seq = 0;
	while (pos <= len && len - pos >= sizeof(struct kdi_chunk)) {
		struct kdi_chunk h;
		memcpy(&h, img + pos, sizeof h);
		if (memcmp(h.magic, KDI_CHUNK_MAGIC, 4) || h.len > len - pos - sizeof h)
			break;
		if (renumber) {
			if (seq == 0)
				dump_id = h.dump_id;
			h.dump_id = dump_id;
			h.seq = seq++;
		}
		h.payload_hash = XXH64(img + pos + sizeof h, h.len, 0);
		h.hdr_hash = 0;
		h.hdr_hash = XXH64(&h, sizeof h, 0);
		memcpy(img + pos, &h, sizeof h);
		pos += chunk_span(h.len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned ctl = data[0];
	const uint8_t *edits = NULL;
	unsigned nedits = 0;
	data++;
	size--;
	if (ctl & 32) {
		if (size < 1)
			return 0;
		nedits = data[0] % (FZ_FORGE_MAX + 1);
		if (size < 1 + 8 * (size_t)nedits)
			return 0;
		edits = data + 1;
		data += 1 + 8 * (size_t)nedits;
		size -= 1 + 8 * (size_t)nedits;
	}
	struct fz_damage dm = { 0 };
	int damage = (ctl & 64) != 0;
	if (damage) {
		if (size < 5)
			return 0;
		dm.k = data[0] | data[1] << 8;
		dm.at = data[2] | data[3] << 8;
		dm.x = data[4];
		dm.forge = (ctl & 128) != 0;
		data += 5;
		size -= 5;
	}
	size_t len = size;
	uint8_t *img = expand_image(data, &len);
	if (!img) {
		img = malloc(len ? len : 1);
		if (!img)
			abort();
		memcpy(img, data, len);
	}
	if (ctl & 1)
		fix_super(img, len);
	if (ctl & 2)
		fix_chunks(img, len, ctl & 4);
	if (ctl & 32) {
		uint8_t *f = forge_stream(img, &len, edits, nedits);
		if (f) {
			free(img);
			img = f;
		}
	}
	uint8_t *orig = NULL;
	if (damage) {
		orig = malloc(len ? len : 1);
		if (!orig)
			abort();
		memcpy(orig, img, len);
		damage = damage_chunk(img, len, &dm);
	}
	int fd = fz_memfd(&devfd, "fuzz_dumpfile_dev");
	if (len)
		fz_pwrite(fd, img, len, 0);
	free(img);

	struct target t;
	enum target_refusal why;
	char msg[400];
	int r = source_open(&t, fz_fdpath(fd), &why, msg, sizeof msg);
	assert(memchr(msg, 0, sizeof msg));
	reach.inputs++;
	if (r < 0) {
		assert(t.fd < 0);
		free(orig);
		return 0;
	}
	assert(t.base >= KDI_DATA_MIN && t.base % 4096 == 0 && t.base <= t.limit);
	reach.claimed++;

	/* The chain walk the crash kernel places a dump by and the host
	 * finds dumps by: its dumps lie in order inside the device, each
	 * starting past the one before; a placement lands inside the device,
	 * past every dump it keeps. */
	static struct chain ch;
	assert(chain_walk(t.fd, t.base, t.limit, &ch) == 0);
	assert(ch.n <= KDI_CHAIN_MAX);
	for (unsigned i = 0; i < ch.n; i++) {
		assert(ch.d[i].at >= t.base && ch.d[i].end > ch.d[i].at && ch.d[i].end <= t.limit);
		assert(ch.d[i].index == i + 1);
		assert(i == 0 || ch.d[i].at >= ch.d[i - 1].end);
	}
	for (int full = 0; full < 2; full++) {
		struct chain_place p;
		chain_place(&ch, t.base, t.limit, t.sb.saved_dump_id, full, &p);
		assert(p.at >= t.base && p.at <= t.limit && p.rec.self_at == p.at);
		if (!p.refused && p.at != t.base)
			assert(ch.n && p.at >= ch.d[ch.n - 1].end && t.limit - p.at >= KDI_CHAIN_MIN_ROOM);
		/* OVERWRITE refuses only to keep a whole unsaved dump the
		 * device would not hold again with a quarter to spare. */
		if (p.refused && full == CHAIN_FULL_OVERWRITE) {
			int kept = 0;
			for (unsigned i = 0; i < ch.n; i++)
				kept |= !chain_saved(&ch, i, t.sb.saved_dump_id) && ch.d[i].whole &&
					ch.d[i].end - ch.d[i].at == p.kept_whole;
			assert(kept && p.kept_whole > (t.limit - t.base) / 5 * 4);
		}
		assert(!p.kept_whole || full == CHAIN_FULL_OVERWRITE);
		assert(!p.refused || full == CHAIN_FULL_KEEP || p.kept_whole);
	}

	struct dumpfile d;
	r = dumpfile_load(&d, t.fd, t.base, t.limit);
	assert(memchr(d.why, 0, sizeof d.why));
	if (damage)
		damage_check(&d, r, orig, len, &dm);
	free(orig);
	if (r < 0) {
		assert(r == -ENOENT || r == -EBADMSG || r == -EPROTONOSUPPORT || r == -ENOMEM);
		dumpfile_free(&d);
		target_close(&t);
		return 0;
	}
	assert(d.vmcoreinfo && d.seg);
	assert(d.stream_end <= t.limit);
	reach.loaded++;

	uint32_t ps = d.start.page_size;
	/* What info prints. A dump read as complete has the END its stream
	 * has: the cross-checks (dumpfile.c check_end) may not be bypassed. */
	if (dumpfile_complete(&d)) {
		reach.complete++;
		assert(d.have_end && !d.why[0]);
		assert(d.end.nr_chunks == d.nr_chunks);
		assert(d.end.bytes_out == d.stream_end - t.base);
		assert(d.end.pages_stored == d.pages_stored);
		assert(d.pfn_limit == UINT64_MAX);
		assert(d.end.pages_total == described_pfns(&d));
		assert(d.end.bytes_in == d.pages_stored * ps);
		uint64_t sum = d.end.pages_stored;
		for (int c = 0; c < KDI_EX_NCLASSES; c++)
			sum += d.end.excluded[c];
		assert(sum == d.end.pages_total);
	}
	/* An END that is used agrees with the stream: its chunk count (the
	 * parts lost count too), and the pages stored, of which a dump with
	 * a part lost read only some (FORMAT.md: END vouches for what it
	 * can). */
	if (d.have_end && !d.why[0]) {
		assert(d.end.nr_chunks == d.nr_chunks);
		assert(d.gaps ? d.end.pages_stored >= d.pages_stored : d.end.pages_stored == d.pages_stored);
	}
	char v[128];
	uint64_t ct = 0;
	if (vmcoreinfo_get(d.vmcoreinfo, "OSRELEASE", v, sizeof v) == 0)
		assert(memchr(v, 0, sizeof v));
	if (vmcoreinfo_get(d.vmcoreinfo, "CRASHTIME", v, sizeof v) == 0)
		(void)parse_u64(v, 10, &ct);
	/* The pfns save_kdump's bitmaps cover: up to the highest memory end. */
	uint64_t max_mapnr = 0, stored_end = 0;
	for (uint32_t i = 0; i < d.nr_seg; i++) {
		uint64_t end = d.seg[i].paddr / ps + d.seg[i].memsz / ps + 2;
		if (end > max_mapnr)
			max_mapnr = end;
	}
	if (d.nblocks)
		stored_end = d.blocks[d.nblocks - 1].pfn + d.blocks[d.nblocks - 1].count;
	/* save_kdump keeps to pfn_limit, which covers every block. */
	assert(d.pfn_limit >= stored_end);
	if (max_mapnr > d.pfn_limit)
		max_mapnr = d.pfn_limit;

	/* Every stored page, as save reads them, and the zero-page bitmap. */
	static struct dump_cursor cur;
	cursor_init(&cur, &d);
	uint8_t *page = malloc(ps);
	if (!page)
		abort();
	uint64_t seen = 0, budget = FZ_MAX_PAGES;
	for (size_t b = 0; b < d.nblocks && budget; b++) {
		const struct page_block *blk = &d.blocks[b];
		for (uint32_t i = 0; i < blk->count && budget; i++) {
			uint32_t idx;
			const struct page_block *f = dumpfile_find(&d, blk->pfn + i, &idx);
			int set = (blk->bitmap[i / 8] >> (i % 8)) & 1;
			int zero = dumpfile_is_zero(&d, blk->pfn + i);
			/* a pfn this block does not store may be another
			 * pass's (the EARLY, first and LATER passes cover the
			 * same pfns, each storing its own) */
			assert(set ? (f == blk && idx == i) : f != blk);
			assert(!(set && zero));
			if (!set)
				continue;
			seen++;
			budget--;
			int e = dumpfile_page(&cur, blk->pfn + i, page);
			/* -ESTALE only if the device changed: it did not here. */
			assert(e == 0 || e == -EBADMSG || e == -EIO || e == -ENOMEM);
		}
		/* pfns increase within each pass */
		if (b > 0 && b != d.nearly && b != d.nfirst)
			assert(blk->pfn >= d.blocks[b - 1].pfn + d.blocks[b - 1].count);
	}
	if (budget)
		assert(seen == d.pages_stored);
	cursor_fini(&cur);
	free(page);

	/* save --format elf and --format kdump, into a memfd. */
	struct save_result res;
	{
		int ofd = fz_memfd(&outfd, "fuzz_dumpfile_out");
		r = save_elf(&d, ofd, &(struct save_opts){ 0 }, &res);
		assert(r == 0 || r == -ENOMEM || r == -EIO);
		if (r == 0) {
			off_t end = lseek(ofd, 0, SEEK_END);
			assert(end >= 0 && (uint64_t)end == res.bytes);
			assert(res.bad_pages <= res.pages && !res.stale_pages);
			fz_keep(ofd, "FZ_SAVE_ELF");
		}
	}
	if (!FZ_SAVE_PAGES_MAX || max_mapnr <= FZ_SAVE_PAGES_MAX) {
		int ofd = fz_memfd(&outfd, "fuzz_dumpfile_out");
		struct save_opts so = { .zlib = !!(ctl & 8), .threads = (ctl & 16) ? 2 : 1 };
		r = save_kdump(&d, ofd, &so, &res);
		assert(r == 0 || r == -ENOMEM || r == -EIO);
		if (r == 0) {
			assert(res.bad_pages <= d.pages_stored && !res.stale_pages);
			fz_keep(ofd, "FZ_SAVE_KDUMP");
		}
	}
	dumpfile_free(&d);
	target_close(&t);
	return 0;
}
