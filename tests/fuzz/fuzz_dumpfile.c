/* fuzz_dumpfile: the on-device reader, the path `kdumpinit info` and
 * `kdumpinit save` take.
 *
 * Input: byte 0 is a control byte for the harness, the rest is the device
 * image, written as it is to a memfd that the tool then opens by path.
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
 * Seeds are real images written by `kdumpinit capture` (control 0), with
 * the superblock re-claimed at data_offset 4096 to keep them small (see
 * mkcorpus.py).
 *
 * Steps: source_open (probe_fd, probe_buffer, super_decode), dumpfile_load,
 * what info prints (dumpfile_complete, vmcoreinfo_get), dumpfile_page for
 * every stored pfn, then both save formats into a memfd: save_elf and
 * save_kdump. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../../config/target.h"
#include "../../dump/dumpfile.h"
#include "../../dump/format.h"
#include "../../dump/save.h"
#include "../../dump/vmcore.h"
#include "../../dump/vmcoreinfo.h"
#include "../../lib/util.h"

/* Pages decoded one by one per input (save_elf decodes them again). */
#define FZ_MAX_PAGES 4096u
/* save_kdump does work in proportion to the memory the segments span, not
 * to what is stored: two bitmaps up to the highest segment end, calloc'ed,
 * written and walked pfn by pfn. That is the format (makedumpfile's too),
 * but a garbage segment of 2^55 bytes would make each input take minutes
 * and gigabytes, so the harness skips save_kdump above this many pfns;
 * -DFZ_SAVE_PAGES_MAX=0 drops the guard. (save_elf used to have the same
 * problem, crashes/README.md #6; it is no longer guarded.) */
#ifndef FZ_SAVE_PAGES_MAX
#define FZ_SAVE_PAGES_MAX 262144ull
#endif

static int devfd = -1, outfd = -1;

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
	size_t len = size - 1;
	uint8_t *img = malloc(len ? len : 1);
	if (!img)
		abort();
	memcpy(img, data + 1, len);
	if (ctl & 1)
		fix_super(img, len);
	if (ctl & 2)
		fix_chunks(img, len, ctl & 4);
	int fd = fz_memfd(&devfd, "fuzz_dumpfile_dev");
	if (len)
		fz_pwrite(fd, img, len, 0);
	free(img);

	struct target t;
	enum target_refusal why;
	char msg[400];
	int r = source_open(&t, fz_fdpath(fd), &why, msg, sizeof msg);
	assert(memchr(msg, 0, sizeof msg));
	if (r < 0) {
		assert(t.fd < 0);
		return 0;
	}
	assert(t.base >= KDI_SB_AREA && t.base % 4096 == 0);

	struct dumpfile d;
	r = dumpfile_load(&d, t.fd, t.base, t.limit);
	assert(memchr(d.why, 0, sizeof d.why));
	if (r < 0) {
		assert(r == -ENOENT || r == -EBADMSG || r == -EPROTONOSUPPORT || r == -ENOMEM);
		dumpfile_free(&d);
		target_close(&t);
		return 0;
	}
	assert(d.vmcoreinfo && d.seg);
	assert(d.stream_end <= t.limit);

	/* What info prints. */
	(void)dumpfile_complete(&d);
	char v[128];
	uint64_t ct = 0;
	if (vmcoreinfo_get(d.vmcoreinfo, "OSRELEASE", v, sizeof v) == 0)
		assert(memchr(v, 0, sizeof v));
	if (vmcoreinfo_get(d.vmcoreinfo, "CRASHTIME", v, sizeof v) == 0)
		(void)parse_u64(v, 10, &ct);
	/* The pfns save_kdump's bitmaps cover: up to the highest memory end. */
	uint32_t ps = d.start.page_size;
	uint64_t max_mapnr = 0;
	for (uint32_t i = 0; i < d.nr_seg; i++) {
		uint64_t end = d.seg[i].paddr / ps + d.seg[i].memsz / ps + 2;
		if (end > max_mapnr)
			max_mapnr = end;
	}

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
			assert(set ? (f == blk && idx == i) : f == NULL);
			assert(!(set && zero));
			if (!set)
				continue;
			seen++;
			budget--;
			int e = dumpfile_page(&cur, blk->pfn + i, page);
			assert(e == 0 || e == -EBADMSG || e == -EIO || e == -ENOMEM);
		}
		if (b > 0)
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
			assert(res.bad_pages <= res.pages);
			fz_keep(ofd, "FZ_SAVE_ELF");
		}
	}
	if (!FZ_SAVE_PAGES_MAX || max_mapnr <= FZ_SAVE_PAGES_MAX) {
		int ofd = fz_memfd(&outfd, "fuzz_dumpfile_out");
		struct save_opts so = { .zlib = !!(ctl & 8), .threads = (ctl & 16) ? 2 : 1 };
		r = save_kdump(&d, ofd, &so, &res);
		assert(r == 0 || r == -ENOMEM || r == -EIO);
		if (r == 0) {
			assert(res.bad_pages <= d.pages_stored);
			fz_keep(ofd, "FZ_SAVE_KDUMP");
		}
	}
	dumpfile_free(&d);
	target_close(&t);
	return 0;
}
