#include "save.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

struct oload {
	uint64_t paddr, vaddr, filesz, memsz, off;
	uint32_t flags;
};

struct loads {
	struct oload *v;
	size_t n, cap;
};

static int push(struct loads *l, struct oload o)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		struct oload *nv = realloc(l->v, nc * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = o;
	return 0;
}

static int stored(const struct dumpfile *d, uint64_t addr, unsigned shift)
{
	uint32_t idx;
	return dumpfile_find(d, addr >> shift, &idx) != NULL;
}

/* Splits one original segment into runs of [stored pages][excluded pages];
 * every run becomes one PT_LOAD whose memsz covers both parts. */
static int split_segment(const struct dumpfile *d, const struct kdi_segment *s,
			 unsigned shift, struct loads *out)
{
	uint64_t ps = 1ull << shift;
	uint64_t P = s->paddr, F = P + s->filesz, M = P + s->memsz;
	uint64_t pos = P;

	while (pos < M) {
		uint64_t q = pos, e;
		while (q < F && stored(d, q, shift))
			q = MIN(F, ((q >> shift) + 1) * ps);
		/* Jump to the next stored page: a segment may describe far
		 * more memory than the dump holds (or than exists). */
		e = M;
		if (q < F) {
			uint64_t np = dumpfile_next_stored(d, q >> shift);
			if (np != UINT64_MAX && np < (F + ps - 1) >> shift)
				e = MAX(q, np << shift);
		}
		int r = push(out, (struct oload){ .paddr = pos, .vaddr = s->vaddr + (pos - P),
						  .filesz = q - pos, .memsz = e - pos,
						  .flags = s->p_flags });
		if (r < 0)
			return r;
		pos = e;
	}
	return 0;
}

struct obuf {
	int fd;
	struct room *room;
	uint8_t *buf;
	size_t used, cap;
	uint64_t off;
};

static int ob_flush(struct obuf *o)
{
	int r = room_write_at(o->room, o->fd, o->buf, o->used, o->off);
	if (r < 0)
		return r;
	o->off += o->used;
	o->used = 0;
	return 0;
}

static int ob_put(struct obuf *o, const void *p, size_t len)
{
	while (len) {
		if (o->used == o->cap) {
			int r = ob_flush(o);
			if (r < 0)
				return r;
		}
		size_t n = MIN(len, o->cap - o->used);
		memcpy(o->buf + o->used, p, n);
		o->used += n;
		p = (const uint8_t *)p + n;
		len -= n;
	}
	return 0;
}

static int write_headers(struct obuf *o, const struct dumpfile *d, const struct loads *l,
			 uint64_t notes_off, int xnum)
{
	size_t phnum = l->n + 1;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_CORE,
		.e_machine = d->start.e_machine,
		.e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = xnum ? PN_XNUM : phnum,
	};
	if (xnum) {
		/* More than 65534 headers: the real count lives in section
		 * header 0 (the ELF extended-numbering convention). */
		eh.e_shoff = sizeof eh + phnum * sizeof(Elf64_Phdr);
		eh.e_shentsize = sizeof(Elf64_Shdr);
		eh.e_shnum = 1;
	}
	int r = ob_put(o, &eh, sizeof eh);
	Elf64_Phdr note = { .p_type = PT_NOTE, .p_offset = notes_off,
			    .p_filesz = d->notes_len, .p_memsz = d->notes_len };
	if (!r)
		r = ob_put(o, &note, sizeof note);
	for (size_t i = 0; !r && i < l->n; i++) {
		const struct oload *x = &l->v[i];
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = x->flags, .p_offset = x->off,
				  .p_vaddr = x->vaddr, .p_paddr = x->paddr,
				  .p_filesz = x->filesz, .p_memsz = x->memsz, .p_align = 0 };
		r = ob_put(o, &ph, sizeof ph);
	}
	if (!r && xnum) {
		Elf64_Shdr sh = { .sh_info = phnum };
		r = ob_put(o, &sh, sizeof sh);
	}
	if (!r)
		r = ob_put(o, d->notes, d->notes_len);
	return r;
}

void save_warn_stale(const struct save_result *res)
{
	if (res->stale_pages)
		warn("%llu stored pages are in chunks that changed on the device since the dump "
		     "was read (written to it meanwhile?): they were written as zeros",
		     (unsigned long long)res->stale_pages);
	if (res->unauth_pages)
		warn("%llu stored pages are in sealed chunks whose pages fail their "
		     "authentication tag (changed on the device): they were written as zeros",
		     (unsigned long long)res->unauth_pages);
}

int save_elf(struct dumpfile *d, int out_fd, const struct save_opts *so,
	     struct save_result *res)
{
	uint32_t ps = d->start.page_size;
	unsigned shift = log2_pow2(ps);
	struct loads l = { 0 };
	struct obuf o = { .fd = out_fd, .room = so->room, .cap = 1u << 20 };
	uint8_t *page = malloc(ps), *zero = calloc(1, ps);
	struct dump_cursor *cur = malloc(sizeof *cur);
	int r = 0;

	if (cur)
		cursor_init(cur, d);

	memset(res, 0, sizeof *res);
	o.buf = malloc(o.cap);
	if (!page || !zero || !o.buf || !cur) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; !r && i < d->nr_seg; i++)
		r = split_segment(d, &d->seg[i], shift, &l);
	if (r < 0)
		goto out;

	int xnum = l.n + 1 >= PN_XNUM;
	uint64_t hdr = sizeof(Elf64_Ehdr) + (l.n + 1) * sizeof(Elf64_Phdr) +
		       (xnum ? sizeof(Elf64_Shdr) : 0);
	uint64_t notes_off = hdr;
	uint64_t data = (notes_off + d->notes_len + ps - 1) & ~(uint64_t)(ps - 1);
	for (size_t i = 0; i < l.n; i++) {
		l.v[i].off = data;
		data += l.v[i].filesz;
	}
	r = write_headers(&o, d, &l, notes_off, xnum);
	uint64_t pad = ((notes_off + d->notes_len + ps - 1) & ~(uint64_t)(ps - 1)) -
		       (notes_off + d->notes_len);
	if (!r)
		r = ob_put(&o, zero, pad);

	uint64_t total = 0;	/* pages written, for the progress */
	for (size_t i = 0; i < l.n; i++)
		total += (l.v[i].filesz + ps - 1) / ps;
	for (size_t i = 0; !r && i < l.n; i++) {
		const struct oload *x = &l.v[i];
		for (uint64_t a = x->paddr; !r && a < x->paddr + x->filesz; ) {
			uint64_t pfn = a >> shift, pstart = pfn << shift;
			uint64_t end = MIN(x->paddr + x->filesz, pstart + ps);
			int e = dumpfile_page(cur, pfn, page);
			if (e == -ENOMEM || e == -EIO) {
				r = e;
				break;
			}
			if (e < 0) {
				memset(page, 0, ps);
				res->bad_pages++;
				res->stale_pages += e == -ESTALE;
				res->unauth_pages += e == -EKEYREJECTED;
			}
			r = ob_put(&o, page + (a - pstart), end - a);
			res->pages++;
			if (so->progress && res->pages % SAVE_PROGRESS_PAGES == 0)
				so->progress(so->progress_arg, res->pages, total, o.off + o.used);
			a = end;
		}
	}
	if (!r)
		r = ob_flush(&o);
	save_warn_stale(res);
	res->phnum = l.n;
	res->bytes = o.off;
out:
	if (cur)
		cursor_fini(cur);
	free(cur);
	free(l.v);
	free(page);
	free(zero);
	free(o.buf);
	return r;
}

/* At most what save_elf writes: every stored page raw, and a PT_LOAD per
 * run, of which a segment has at most one more than it has stored pages. */
uint64_t save_elf_bound(const struct dumpfile *d)
{
	uint64_t phdrs = d->pages_stored + d->nr_seg + 1;

	return sizeof(Elf64_Ehdr) + phdrs * sizeof(Elf64_Phdr) + sizeof(Elf64_Shdr) +
	       d->notes_len + d->start.page_size + d->pages_stored * d->start.page_size;
}
