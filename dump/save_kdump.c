/* The kdump-compressed format (makedumpfile's diskdump), which crash,
 * libkdumpfile/drgn, makedumpfile and `kdumpinit dmesg` read; its layout
 * is kernel/diskdump.h's, header version 6. */
#include "save.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "../arch/arch.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/ring.h"
#include "../lib/util.h"
#include "../kernel/diskdump.h"
#include "../kernel/vmcore.h"
#include "../kernel/vmcoreinfo.h"

/* ---- which pfns ---- */

#define SETBIT(b, n) ((b)[(n) / 8] |= 1u << ((n) % 8))
#define GETBIT(b, n) (((b)[(n) / 8] >> ((n) % 8)) & 1)

/* First bitmap: whole pages backed by the vmcore, as makedumpfile's.
 * Second: pages in the dump, zero pages included (they point at the one
 * shared zero page, which is how readers learn they are zero). */
static uint64_t fill_bitmaps(const struct dumpfile *d, unsigned shift, uint64_t max_mapnr,
			     uint8_t *bm1, uint8_t *bm2)
{
	uint64_t ps = 1ull << shift, n2 = 0;

	for (uint32_t i = 0; i < d->nr_seg; i++) {
		const struct kdi_segment *s = &d->seg[i];
		uint64_t lo = (s->paddr + ps - 1) >> shift, hi = (s->paddr + s->filesz) >> shift;
		for (uint64_t p = lo; p < hi && p < max_mapnr; p++)
			SETBIT(bm1, p);
	}
	for (size_t k = 0; k < d->nblocks; k++) {
		const struct page_block *b = &d->blocks[k];
		for (uint32_t i = 0; i < b->count; i++) {
			uint64_t p = b->pfn + i;
			if (p >= max_mapnr || !GETBIT(bm1, p))
				continue;
			if (GETBIT(b->bitmap, i) || (b->zbitmap && GETBIT(b->zbitmap, i))) {
				SETBIT(bm2, p);
				n2++;
			}
		}
	}
	return n2;
}

/* ---- the header's identity fields ---- */

struct env_vi {
	const struct vmcoreinfo *vi;
	const char *text;
};

static int env_number(const struct arch_env *env, const char *key, uint64_t *v)
{
	const struct env_vi *e = env->ctx;
	return vmcoreinfo_number(e->vi, e->text, key, v);
}

static void fill_utsname(struct disk_dump_header *h, const struct dumpfile *d,
			 const struct vmcoreinfo *vi, struct dump_cursor *cur)
{
	const struct arch_ops *arch = arch_lookup(d->start.e_machine);
	struct env_vi evi = { vi, d->vmcoreinfo };
	const struct arch_env env = { .number = env_number, .ctx = &evi };
	uint32_t ps = d->start.page_size;

	/* Best: the crashed kernel's own init_uts_ns, if its page was kept. */
	if (arch && arch->kimg_to_phys && vi_has(vi, VI_SYM_INIT_UTS_NS)) {
		uint64_t pa;
		uint64_t off = vi_has(vi, VI_OFF_UTS_NAME) ? vi_u(vi, VI_OFF_UTS_NAME) : 0;
		if (off < 4096 && arch->kimg_to_phys(&env, vi_u(vi, VI_SYM_INIT_UTS_NS) + off, &pa) == 0) {
			uint8_t *buf = malloc(2 * ps);
			uint64_t pfn = pa / ps, in = pa % ps;
			if (buf && dumpfile_page(cur, pfn, buf) == 0 &&
			    (in + sizeof h->utsname <= ps || dumpfile_page(cur, pfn + 1, buf + ps) == 0)) {
				memcpy(h->utsname, buf + in, sizeof h->utsname);
				for (int i = 0; i < 6; i++)
					h->utsname[i][64] = 0;
				free(buf);
				if (!strcmp(h->utsname[0], "Linux"))
					return;
			} else {
				free(buf);
			}
		}
	}
	memset(h->utsname, 0, sizeof h->utsname);
	strcpy(h->utsname[0], "Linux");
	snprintf(h->utsname[2], 65, "%s", vi->osrelease);
	snprintf(h->utsname[4], 65, "%s", arch ? arch->name : "unknown");
}

static int count_cpus(const uint8_t *p, size_t len)
{
	struct note n;
	int cpus = 0;

	for (size_t off = 0; note_next(p, len, &off, &n);)
		cpus += n.type == 1 && n.namesz == 5 && !memcmp(n.name, "CORE", 5); /* NT_PRSTATUS */
	return cpus;
}

/* ---- parallel zlib ---- */

#define BATCH 512u

struct batch {
	uint64_t pfn[BATCH];
	uint32_t n;
	uint8_t *out;			/* BATCH * bound bytes */
	uint32_t size[BATCH];
	uint32_t flags[BATCH];		/* DUMP_PAGE_ZLIB, 0 raw, ~0 = zero page */
	int err;
	uint64_t bad;			/* pages that did not decode */
	uint64_t stale;			/* of those, in chunks changed since loading */
	uint64_t unauth;		/* ... in chunks whose pages fail their tag */
};

/* Workers, the caller among them, take batches in pfn order and compress
 * them into an ordered ring of 2 slots per worker (lib/ring.h), which
 * writes them out strictly in order. */
struct pool {
	struct ring ring;		/* its lock covers the scan cursor too */
	const uint8_t *bm2;
	uint64_t pfn, max_mapnr;	/* scan cursor over the dumpable bitmap */
	struct batch *slots;

	/* Only the emitter (one worker at a time) touches these. */
	int fd;
	struct room *room;
	struct page_desc *descs;	/* BATCH of them */
	const struct save_opts *so;	/* its progress */
	struct page_desc zdesc;		/* the shared zero page */
	uint64_t data_off, desc_off, descs_done, ndescs;
	struct save_result *res;
};

struct job {
	const struct dumpfile *d;
	struct dump_cursor *cur;
	struct batch *b;
	uint8_t *page;
	int zlib;
	uint32_t bound;
	z_stream zs;			/* one deflate state per thread, reset per page */
	int zs_ok;
	struct pool *pool;
	uint64_t pfns[BATCH];		/* the next batch, before it has a slot */
	uint32_t n;
	pthread_t tid;
};

/* compress2() would allocate and free ~256 KiB of deflate state for every
 * page; with musl that is an mmap/munmap pair each time. */
static int zpage(struct job *j, const uint8_t *src, uint32_t len, uint8_t *dst, uint32_t *out)
{
	if (!j->zs_ok || deflateReset(&j->zs) != Z_OK)
		return -1;
	j->zs.next_in = (Bytef *)(uintptr_t)src;
	j->zs.avail_in = len;
	j->zs.next_out = dst;
	j->zs.avail_out = j->bound;
	if (deflate(&j->zs, Z_FINISH) != Z_STREAM_END)
		return -1;
	*out = j->bound - j->zs.avail_out;
	return 0;
}

static void *do_batch(void *arg)
{
	struct job *j = arg;
	struct batch *b = j->b;
	uint32_t ps = j->d->start.page_size;
	size_t used = 0;

	b->err = 0;
	b->bad = 0;
	b->stale = 0;
	b->unauth = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		uint8_t *dst = b->out + used;
		if (dumpfile_is_zero(j->d, b->pfn[i])) {
			b->flags[i] = ~0u;	/* points at the shared zero page */
			b->size[i] = 0;
			continue;
		}
		int e = dumpfile_page(j->cur, b->pfn[i], j->page);
		if (e == -ENOMEM || e == -EIO) {
			b->err = e;
			return NULL;
		}
		if (e < 0) {
			memset(j->page, 0, ps);
			b->bad++;
			b->stale += e == -ESTALE;
			b->unauth += e == -EKEYREJECTED;
		}
		uint32_t zl;
		if (j->zlib && zpage(j, j->page, ps, dst, &zl) == 0 && zl < ps) {
			b->flags[i] = DUMP_PAGE_ZLIB;
			b->size[i] = zl;
		} else {
			memcpy(dst, j->page, ps);
			b->flags[i] = 0;
			b->size[i] = ps;
		}
		used += b->size[i];
	}
	return NULL;
}

/* The ring's iterator, under its lock: the next BATCH dumpable pfns. */
static int next_batch(void *arg, uint64_t *idx)
{
	struct job *j = arg;
	struct pool *p = j->pool;

	j->n = 0;
	while (p->pfn < p->max_mapnr && j->n < BATCH) {
		if (GETBIT(p->bm2, p->pfn))
			j->pfns[j->n++] = p->pfn;
		p->pfn++;
	}
	if (!j->n)
		return 0;
	*idx = p->ring.issued++;
	return 1;
}

static void fill_batch(void *arg, unsigned slot, uint64_t idx)
{
	struct job *j = arg;
	struct batch *b = &j->pool->slots[slot];

	memcpy(b->pfn, j->pfns, j->n * sizeof *b->pfn);
	b->n = j->n;
	j->b = b;
	do_batch(j);
}

static void *pool_worker(void *arg)
{
	struct job *j = arg;
	ring_work(&j->pool->ring, next_batch, NULL, fill_batch, j);
	return NULL;
}

/* The ring's emitter: a batch's page data, then its descriptors. */
static int emit_batch(void *ctx, unsigned slot, uint64_t idx)
{
	struct pool *p = ctx;
	struct batch *b = &p->slots[slot];
	size_t off = 0;

	if (b->err)
		return b->err;
	p->res->bad_pages += b->bad;
	p->res->stale_pages += b->stale;
	p->res->unauth_pages += b->unauth;
	for (uint32_t i = 0; i < b->n; i++) {
		struct page_desc *pd = &p->descs[i];
		if (b->flags[i] == ~0u) {
			*pd = p->zdesc;
			continue;
		}
		*pd = (struct page_desc){ .offset = p->data_off, .size = b->size[i],
					  .flags = b->flags[i] };
		p->data_off += b->size[i];
		off += b->size[i];
		p->res->pages++;
	}
	int r = room_write_at(p->room, p->fd, b->out, off, p->data_off - off);
	if (!r)
		r = room_write_at(p->room, p->fd, p->descs, b->n * sizeof *p->descs,
				  p->desc_off + p->descs_done * sizeof *p->descs);
	uint64_t before = p->descs_done;
	p->descs_done += b->n;
	if (p->so->progress && before / SAVE_PROGRESS_PAGES != p->descs_done / SAVE_PROGRESS_PAGES)
		p->so->progress(p->so->progress_arg, p->descs_done, p->ndescs, p->data_off);
	return r;
}

/* The bitmaps span every pfn up to the highest segment end: the format
 * (makedumpfile's too) costs time and bytes in proportion to the memory
 * described, not to what is stored. Where END does not vouch for the
 * segments (dumpfile.h: pfn_limit), a forged or stale segment of 2^46
 * bytes would make gigabytes out of a small dump: the bitmaps end where
 * what the dump shows to be memory ends, and it is said. */
static uint64_t vouched_mapnr(const struct dumpfile *d, uint64_t max_mapnr, uint32_t ps)
{
	if (max_mapnr <= d->pfn_limit)
		return max_mapnr;
	warn("the dump's segments describe memory up to %.1f MiB, but what it holds "
	     "only shows memory up to %.1f MiB: the kdump file ends there",
	     (double)max_mapnr * ps / 1048576.0, (double)d->pfn_limit * ps / 1048576.0);
	return d->pfn_limit;
}

int save_kdump(struct dumpfile *d, int fd, const struct save_opts *so, struct save_result *res)
{
	uint32_t ps = d->start.page_size;
	unsigned shift = log2_pow2(ps), nt = so->threads ? so->threads : 1;
	struct vmcoreinfo vi;
	int r = 0;

	memset(res, 0, sizeof *res);
	vmcoreinfo_parse(&vi, d->vmcoreinfo);

	uint64_t max_mapnr = 0;
	for (uint32_t i = 0; i < d->nr_seg; i++) {
		uint64_t end = (d->seg[i].paddr + d->seg[i].memsz + ps - 1) >> shift;
		if (end > max_mapnr)
			max_mapnr = end;
	}
	max_mapnr = vouched_mapnr(d, max_mapnr, ps);
	uint64_t bm_bytes = (max_mapnr + 7) / 8;
	uint64_t bm_blocks = (bm_bytes + ps - 1) / ps;	/* per bitmap */
	size_t vi_len = strlen(d->vmcoreinfo);
	uint64_t sub_bytes = sizeof(struct kdump_sub_header) + vi_len + d->notes_len;
	uint64_t sub_blocks = (sub_bytes + ps - 1) / ps;
	uint64_t bm_off = (1 + sub_blocks) * ps;
	uint64_t desc_off = bm_off + 2 * bm_blocks * ps;

	uint8_t *bm1 = calloc(1, bm_blocks * ps), *bm2 = calloc(1, bm_blocks * ps);
	uint8_t *hdr = calloc(1, (1 + sub_blocks) * ps);
	unsigned nslots = 2 * nt;
	struct job *jobs = calloc(nt, sizeof *jobs);
	struct batch *bats = calloc(nslots, sizeof *bats);
	struct page_desc *descs = malloc(BATCH * sizeof *descs);
	uint32_t bound = compressBound(ps);
	struct pool pool = { .slots = bats, .fd = fd, .room = so->room, .so = so, .descs = descs,
			     .desc_off = desc_off, .res = res };
	unsigned started = 0;
	if (!bm1 || !bm2 || !hdr || !jobs || !bats || !descs ||
	    ring_init(&pool.ring, nslots, emit_batch, &pool) < 0) {
		r = -ENOMEM;
		goto out;
	}
	bound = bound > ps ? bound : ps;
	for (unsigned t = 0; t < nslots; t++) {
		bats[t].out = malloc((size_t)BATCH * bound);
		if (!bats[t].out) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (unsigned t = 0; t < nt; t++) {
		jobs[t].d = d;
		jobs[t].b = &bats[0];
		jobs[t].zlib = so->zlib;
		jobs[t].bound = bound;
		jobs[t].pool = &pool;
		jobs[t].page = malloc(ps);
		jobs[t].cur = calloc(1, sizeof *jobs[t].cur);
		if (!jobs[t].page || !jobs[t].cur) {
			r = -ENOMEM;
			goto out;
		}
		cursor_init(jobs[t].cur, d);
		if (so->zlib)
			jobs[t].zs_ok = deflateInit(&jobs[t].zs, 1) == Z_OK;
	}

	uint64_t n2 = fill_bitmaps(d, shift, max_mapnr, bm1, bm2);
	pool.ndescs = n2;

	/* Header, sub header, VMCOREINFO, notes. */
	struct disk_dump_header *h = (struct disk_dump_header *)hdr;
	memcpy(h->signature, DISKDUMP_SIGNATURE, sizeof h->signature);
	h->header_version = 6;
	fill_utsname(h, d, &vi, jobs[0].cur);
	h->tv_sec = vi_has(&vi, VI_CRASHTIME) ? vi_u(&vi, VI_CRASHTIME) : d->start.start_time;
	int complete = dumpfile_complete(d);
	h->status = (so->zlib ? DUMP_DH_COMPRESSED_ZLIB : 0) |
		    (complete ? 0 : DUMP_DH_COMPRESSED_INCOMPLETE) |
		    (d->start.flags & KDI_START_MEMMAP_EXCLUDED ? DUMP_DH_EXCLUDED_VMEMMAP : 0);
	h->block_size = ps;
	h->sub_hdr_size = sub_blocks;
	h->bitmap_blocks = 2 * bm_blocks;
	h->max_mapnr = max_mapnr > UINT32_MAX ? UINT32_MAX : max_mapnr;
	h->nr_cpus = count_cpus(d->notes, d->notes_len);
	struct kdump_sub_header *sh = (struct kdump_sub_header *)(hdr + ps);
	sh->phys_base = vi_has(&vi, VI_NUM_PHYS_BASE) ? vi_u(&vi, VI_NUM_PHYS_BASE) : 0;
	sh->dump_level = d->start.dump_level;
	sh->end_pfn = sh->end_pfn_64 = sh->max_mapnr_64 = max_mapnr;
	sh->offset_vmcoreinfo = ps + sizeof *sh;
	sh->size_vmcoreinfo = vi_len;
	sh->offset_note = sh->offset_vmcoreinfo + vi_len;
	sh->size_note = d->notes_len;
	memcpy(hdr + sh->offset_vmcoreinfo, d->vmcoreinfo, vi_len);
	if (d->notes_len)
		memcpy(hdr + sh->offset_note, d->notes, d->notes_len);
	r = room_write_at(so->room, fd, hdr, (1 + sub_blocks) * ps, 0);
	if (!r)
		r = room_write_at(so->room, fd, bm1, bm_blocks * ps, bm_off);
	if (!r)
		r = room_write_at(so->room, fd, bm2, bm_blocks * ps, bm_off + bm_blocks * ps);
	if (r < 0)
		goto out;

	/* The shared zero page first, as makedumpfile does; then the pages
	 * in pfn order, batches compressed in parallel, written in order. */
	uint64_t data_off = desc_off + n2 * sizeof(struct page_desc);
	struct page_desc zdesc = { .offset = data_off, .size = ps };
	memset(jobs[0].page, 0, ps);
	uint32_t zl;
	if (so->zlib && zpage(&jobs[0], jobs[0].page, ps, bats[0].out, &zl) == 0 && zl < ps) {
		zdesc.size = zl;
		zdesc.flags = DUMP_PAGE_ZLIB;
		r = room_write_at(so->room, fd, bats[0].out, zl, data_off);
	} else {
		r = room_write_at(so->room, fd, jobs[0].page, ps, data_off);
	}
	data_off += zdesc.size;
	pool.zdesc = zdesc;
	pool.data_off = data_off;
	pool.bm2 = bm2;
	pool.max_mapnr = max_mapnr;
	/* The caller is worker 0; more workers are only more speed. */
	for (started = 1; !r && started < nt; started++)
		if (pthread_create(&jobs[started].tid, NULL, pool_worker, &jobs[started]) != 0)
			break;
	if (!r) {
		pool_worker(&jobs[0]);
		r = pool.ring.err;
	}
	for (unsigned t = 1; t < started; t++)
		pthread_join(jobs[t].tid, NULL);
	uint64_t descs_done = pool.descs_done;
	data_off = pool.data_off;
	if (!r && descs_done != n2)
		r = -EIO;	/* the bitmap and the pages written disagree */
	save_warn_stale(res);
	res->bytes = data_off;
	res->phnum = 0;
out:
	ring_fini(&pool.ring);
	for (unsigned t = 0; jobs && t < nt; t++) {
		free(jobs[t].page);
		if (jobs[t].zs_ok)
			deflateEnd(&jobs[t].zs);
		if (jobs[t].cur)
			cursor_fini(jobs[t].cur);
		free(jobs[t].cur);
	}
	for (unsigned t = 0; bats && t < nslots; t++)
		free(bats[t].out);
	free(bm1);
	free(bm2);
	free(hdr);
	free(jobs);
	free(bats);
	free(descs);
	return r;
}

/* The room save_kdump needs. Without zlib an upper bound: every stored
 * page raw. The descriptors and both bitmaps are sized by pfns, not by
 * what is stored, so a sparse high address costs room even in a small
 * dump. With zlib the pages are counted at their LZ4 size in the dump
 * instead: an estimate, not a bound, but assuming zlib saves nothing
 * would ask a 6 GiB dump that compresses to 1.4 GB for 6 GB and refuse
 * real saves on a small /var/crash. zlib at its level compresses about
 * as well as LZ4 or better, and a page that does not shrink is stored
 * raw, which its LZ4 size (raw plus a size word) also covers; where it
 * errs (LZ4 of a block sees the pages before, zlib a page alone),
 * --min-free is kept while writing (struct room). */
uint64_t save_kdump_need(const struct dumpfile *d, int zlib)
{
	uint64_t ps = d->start.page_size, max_mapnr = 0, pfns = 0;

	for (uint32_t i = 0; i < d->nr_seg; i++) {
		uint64_t end = (d->seg[i].paddr + d->seg[i].memsz + ps - 1) / ps;
		max_mapnr = MAX(max_mapnr, end);
	}
	if (max_mapnr > (1ull << 52))
		return UINT64_MAX;	/* past any physical address: save_kdump fails too */
	pfns = d->pages_stored + d->pages_zero;	/* a descriptor each */
	uint64_t bm_blocks = ((max_mapnr + 7) / 8 + ps - 1) / ps;
	uint64_t head = sizeof(struct kdump_sub_header) + strlen(d->vmcoreinfo) + d->notes_len;
	uint64_t pages = d->pages_stored * ps;	/* raw: never more */
	if (zlib)
		pages = MIN(pages, d->bytes_stored);
	return (2 + head / ps + 2 * bm_blocks) * ps + pfns * sizeof(struct page_desc) +
	       ps /* the shared zero page */ + pages;
}
