/*
 * mkvmcore: write a deterministic synthetic x86_64 /proc/vmcore for tests.
 *
 * The file looks like what the crash kernel exports: an ELF64 ET_CORE with
 * one PT_NOTE (NT_PRSTATUS per CPU, then VMCOREINFO) and one PT_LOAD per
 * physical RAM range, p_vaddr in the direct map. Page contents depend only
 * on (seed, pfn), so the same physical page reads the same wherever it is
 * mapped (the --text-alias segment relies on that) and two runs with the
 * same options produce identical files. Zero pages are skipped with lseek,
 * so a 512 GiB mostly-zero vmcore costs almost no disk and little time.
 *
 * Without --mm the memory holds no real kernel structures (page tables,
 * mem_section, struct page): only zero-page exclusion can be tested
 * against it. With --mm LAYOUT the generator builds, inside the synthetic
 * physical memory, what a 6.1, 6.12 or 6.16 x86_64 kernel would leave
 * there: 4- or 5-level page tables reachable from SYMBOL(init_top_pgt), a
 * direct map, SPARSEMEM_EXTREME mem_section arrays, a vmemmap and one
 * struct page per pfn, filled with every class the dump levels tell apart
 * (free buddy blocks, page cache, anonymous, slab, hugetlb, hwpoison,
 * offline, unaccepted ...). --corrupt damages one of those structures.
 * It then reads the vmcore it wrote back, judges every pfn with its own
 * small implementation of makedumpfile's rules (docs/FILTERING.md) and
 * writes FILE.expect: per dump level, the pfns that must be excluded and
 * why (see "expectation" below).
 */
#define _FILE_OFFSET_BITS 64
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mkvmcore writes <elf.h> structs as they are: little-endian hosts only"
#endif

#define PAGE_SIZE 4096u
/* x86_64 layout without KASLR: page_offset_base and __START_KERNEL_map. */
#define DIRECT_MAP_BASE 0xffff888000000000ull
#define START_KERNEL_MAP 0xffffffff80000000ull
#define KTEXT_VADDR 0xffffffff81000000ull
#define KTEXT_PADDR 0x1000000ull /* CONFIG_PHYSICAL_START */
#define KTEXT_LEN (16ull << 20)
/* Real x86 vmcores start at 0x1000: page 0 is reserved by the BIOS. */
#define FIRST_PADDR 0x1000ull
/* sizeof(struct elf_prstatus) on x86_64, and where pr_pid / pr_reg sit. */
#define PRSTATUS_SIZE 336
#define PRSTATUS_PID_OFF 32
#define PRSTATUS_REG_OFF 112
#define MAX_SEGMENTS (1u << 20) /* keeps the phdr table under 64 MiB */
#define MAX_CPUS 8192
#define MAX_MEM (1ull << 46)    /* MAX_PHYSMEM_BITS with 4-level paging */
#define WBUF_PAGES 256          /* 1 MiB of pages per pwrite */
#define PPM 1000000u

static const char *prog = "mkvmcore";

enum bad {
	BAD_NONE,
	BAD_TRUNCATE,
	BAD_NO_VMCOREINFO,
	BAD_EXEC,
	BAD_PHDR,
	BAD_SHORT_HEADER,
	BAD_FILESZ_LT_MEMSZ,
};

static const struct {
	const char *name;
	enum bad mode;
} bad_modes[] = {
	{ "truncate", BAD_TRUNCATE },
	{ "no-vmcoreinfo", BAD_NO_VMCOREINFO },
	{ "exec", BAD_EXEC },
	{ "badphdr", BAD_PHDR },
	{ "short-header", BAD_SHORT_HEADER },
	{ "filesz-lt-memsz", BAD_FILESZ_LT_MEMSZ },
};

struct kver;
enum corrupt {
	CX_NONE, CX_VMEMMAP_PGD, CX_VMEMMAP_PUD, CX_PMD_OUTSIDE, CX_PTE_HOLE,
	CX_SECTION_GARBAGE, CX_SECTION_ABSENT, CX_ROOT_ZERO, CX_BUDDY_ORDER,
	CX_ORDER_MISALIGNED, CX_HEAD_511, CX_RANDOM_BYTES, CX_COUNT
};

#define MAX_RAM_RANGES 64

struct opts {
	const char *out;
	/* --mm: NULL without it */
	const struct kver *mm;
	unsigned mm_levels;	/* 4 or 5 */
	unsigned leaf;		/* largest leaf, as a shift: 12, 21 or 30 */
	unsigned ms_size;	/* SIZE(mem_section) */
	uint64_t kernel_at;	/* physical load address of the kernel image */
	enum corrupt corrupt;
	/* --ram: explicit RAM ranges (bytes), sorted; nram 0 without it */
	uint64_t ram_lo[MAX_RAM_RANGES], ram_len[MAX_RAM_RANGES];
	size_t nram;
	uint64_t mem;
	uint64_t segments;
	uint32_t zero_ppm; /* zero pages per million */
	uint64_t seed;
	const char *osrelease;
	int64_t crashtime;
	uint64_t cpus;
	int text_alias;
	uint64_t gap;
	enum bad bad;
};

/* One PT_LOAD. Bytes past filesz (up to memsz) are zero memory. */
struct seg {
	uint64_t paddr, vaddr, memsz, filesz, offset;
};

struct layout {
	struct seg *load;
	size_t nload, nram;
	size_t phnum;
	uint64_t phoff, shoff, note_off, note_size, data_off, file_size;
	int64_t phys_base;
};

struct blob {
	uint8_t *p;
	size_t len, cap;
};

/* ---- deterministic page contents ---- */

/* splitmix64 finalizer: a good 64-bit mix, so neighbouring pfns and seeds
 * give unrelated streams. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

enum page_kind { PK_ZERO, PK_PATTERN, PK_RANDOM, PK_ALMOST_ZERO };

static enum page_kind page_kind(const struct opts *o, uint64_t pfn, uint64_t *h)
{
	*h = mix64(o->seed ^ mix64(pfn));
	if (*h % PPM < o->zero_ppm)
		return PK_ZERO;
	switch ((*h >> 32) % 10) {
	case 0: case 1: case 2: case 3:
		return PK_PATTERN;
	case 4: case 5: case 6:
		return PK_RANDOM;
	default:
		return PK_ALMOST_ZERO;
	}
}

/* A 32-byte record repeated: compresses to almost nothing. */
static void fill_pattern(uint8_t *page, uint64_t h)
{
	uint64_t rec[4], s = h | 1;
	size_t i;

	for (i = 0; i < 4; i++)
		rec[i] = xorshift64(&s);
	rec[0] |= 1; /* never all zero */
	for (i = 0; i < PAGE_SIZE; i += sizeof(rec))
		memcpy(page + i, rec, sizeof(rec));
}

static void fill_random(uint8_t *page, uint64_t h)
{
	uint64_t s = h | 1, v;
	size_t i;

	for (i = 0; i < PAGE_SIZE; i += sizeof(v)) {
		v = xorshift64(&s);
		memcpy(page + i, &v, sizeof(v));
	}
	page[0] |= 1; /* never all zero */
}

/* One non-zero byte: zero detection that samples words or stops early
 * gets these wrong. Favour the last byte and the first byte, the cases an
 * off-by-one misses. */
static void fill_almost_zero(uint8_t *page, uint64_t h)
{
	uint64_t r = mix64(h);
	size_t pos;

	memset(page, 0, PAGE_SIZE);
	switch (r % 8) {
	case 0: case 1:
		pos = PAGE_SIZE - 1;
		break;
	case 2:
		pos = 0;
		break;
	default:
		pos = (r >> 8) % PAGE_SIZE;
		break;
	}
	page[pos] = (uint8_t)((r >> 32) % 255 + 1);
}

/* Fills page with the content of pfn; returns 0 (page untouched) for a
 * zero page. */
static int gen_page(const struct opts *o, uint64_t pfn, uint8_t *page)
{
	uint64_t h;

	switch (page_kind(o, pfn, &h)) {
	case PK_ZERO:
		return 0;
	case PK_PATTERN:
		fill_pattern(page, h);
		break;
	case PK_RANDOM:
		fill_random(page, h);
		break;
	case PK_ALMOST_ZERO:
		fill_almost_zero(page, h);
		break;
	}
	return 1;
}

/* ---- growable byte buffer for the header and notes ---- */

static int blob_reserve(struct blob *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	while (cap - b->len < more)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	memset(p + b->cap, 0, cap - b->cap);
	b->p = p;
	b->cap = cap;
	return 0;
}

static int blob_add(struct blob *b, const void *data, size_t n)
{
	int err = blob_reserve(b, n);

	if (err)
		return err;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

static int blob_pad4(struct blob *b)
{
	static const uint8_t zeros[4];

	return blob_add(b, zeros, (4 - b->len % 4) % 4);
}

static int blob_printf(struct blob *b, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	err = blob_reserve(b, (size_t)n + 1);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/* ---- notes ---- */

/* ELF notes: header, name padded to 4, descriptor padded to 4. */
static int add_note(struct blob *b, const char *name, uint32_t type,
		    const void *desc, size_t descsz)
{
	Elf64_Nhdr nh = {
		.n_namesz = (Elf64_Word)strlen(name) + 1,
		.n_descsz = (Elf64_Word)descsz,
		.n_type = type,
	};
	int err;

	if ((err = blob_add(b, &nh, sizeof(nh))) ||
	    (err = blob_add(b, name, nh.n_namesz)) ||
	    (err = blob_pad4(b)) ||
	    (err = blob_add(b, desc, descsz)))
		return err;
	return blob_pad4(b);
}

/* What crash_save_cpu() leaves: pid and registers; made up but stable. */
static void fill_prstatus(uint8_t *d, uint64_t cpu)
{
	/* user_regs_struct order: r15 … rip(16) cs(17) eflags(18) rsp(19) ss(20) */
	uint64_t reg[27] = { 0 };
	int32_t pid = (int32_t)cpu;
	size_t i;

	for (i = 0; i < 16; i++)
		reg[i] = mix64(cpu * 64 + i);
	reg[16] = KTEXT_VADDR + 0x1234 + cpu * 16;
	reg[17] = 0x10;
	reg[18] = 0x246;
	reg[19] = 0xffffc90000000000ull + cpu * 0x4000 + 0x3f00;
	reg[20] = 0x18;
	memset(d, 0, PRSTATUS_SIZE);
	memcpy(d + PRSTATUS_PID_OFF, &pid, sizeof(pid));
	memcpy(d + PRSTATUS_REG_OFF, reg, sizeof(reg));
}

/* Lines in the kernel's own formats (kernel/crash_core.c and
 * arch/x86/kernel/machine_kexec_64.c, 6.1-era values). Symbol addresses
 * lie inside the first 16 MiB of kernel text so they map into RAM. */
static int vmcoreinfo_text(struct blob *t, const struct opts *o, int64_t phys_base)
{
	static const char *const fixed =
		"PAGESIZE=4096\n"
		"SYMBOL(init_uts_ns)=ffffffff81c14a20\n"
		"OFFSET(uts_namespace.name)=0\n"
		"SYMBOL(node_online_map)=ffffffff81d3a7e8\n"
		"SYMBOL(swapper_pg_dir)=ffffffff81e0a000\n"
		"SYMBOL(_stext)=ffffffff81000000\n"
		"SYMBOL(vmap_area_list)=ffffffff81d40e70\n"
		"SYMBOL(mem_section)=ffffffff81f2b3c0\n"
		"LENGTH(mem_section)=2048\n"
		"SIZE(mem_section)=16\n"
		"OFFSET(mem_section.section_mem_map)=0\n"
		"NUMBER(SECTION_SIZE_BITS)=27\n"
		"NUMBER(MAX_PHYSMEM_BITS)=46\n"
		"SIZE(page)=64\n"
		"SIZE(pglist_data)=171968\n"
		"SIZE(zone)=1664\n"
		"SIZE(free_area)=104\n"
		"SIZE(list_head)=16\n"
		"SIZE(nodemask_t)=128\n"
		"OFFSET(page.flags)=0\n"
		"OFFSET(page._refcount)=52\n"
		"OFFSET(page.mapping)=24\n"
		"OFFSET(page.lru)=8\n"
		"OFFSET(page._mapcount)=48\n"
		"OFFSET(page.private)=40\n"
		"OFFSET(page.compound_dtor)=16\n"
		"OFFSET(page.compound_order)=17\n"
		"OFFSET(page.compound_head)=8\n"
		"OFFSET(pglist_data.node_zones)=0\n"
		"OFFSET(pglist_data.nr_zones)=171232\n"
		"OFFSET(pglist_data.node_start_pfn)=171240\n"
		"OFFSET(pglist_data.node_spanned_pages)=171256\n"
		"OFFSET(pglist_data.node_id)=171264\n"
		"OFFSET(zone.free_area)=192\n"
		"OFFSET(zone.vm_stat)=1472\n"
		"OFFSET(zone.spanned_pages)=96\n"
		"OFFSET(free_area.free_list)=0\n"
		"OFFSET(list_head.next)=0\n"
		"OFFSET(list_head.prev)=8\n"
		"OFFSET(vmap_area.va_start)=0\n"
		"OFFSET(vmap_area.list)=40\n"
		"LENGTH(zone.free_area)=11\n"
		"LENGTH(free_area.free_list)=6\n"
		"NUMBER(NR_FREE_PAGES)=0\n"
		"NUMBER(PG_lru)=4\n"
		"NUMBER(PG_private)=13\n"
		"NUMBER(PG_swapcache)=10\n"
		"NUMBER(PG_swapbacked)=19\n"
		"NUMBER(PG_slab)=9\n"
		"NUMBER(PG_hwpoison)=23\n"
		"NUMBER(PG_head_mask)=65536\n"
		"NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)=-129\n"
		"NUMBER(HUGETLB_PAGE_DTOR)=2\n"
		"NUMBER(PAGE_OFFLINE_MAPCOUNT_VALUE)=-257\n";
	int err;

	if ((err = blob_printf(t, "OSRELEASE=%s\n", o->osrelease)) ||
	    (err = blob_printf(t, "BUILD-ID=%016" PRIx64 "%016" PRIx64 "%08" PRIx32 "\n",
			       mix64(o->seed), mix64(o->seed + 1),
			       (uint32_t)mix64(o->seed + 2))) ||
	    (err = blob_printf(t, "%s", fixed)) ||
	    (err = blob_printf(t, "NUMBER(phys_base)=%" PRId64 "\n", phys_base)) ||
	    (err = blob_printf(t, "SYMBOL(init_top_pgt)=ffffffff81e0a000\n")) ||
	    (err = blob_printf(t, "NUMBER(pgtable_l5_enabled)=0\n")) ||
	    (err = blob_printf(t, "SYMBOL(node_data)=ffffffff81d3b900\n")) ||
	    (err = blob_printf(t, "LENGTH(node_data)=1024\n")) ||
	    (err = blob_printf(t, "KERNELOFFSET=0\n")) ||
	    (err = blob_printf(t, "NUMBER(KERNEL_IMAGE_SIZE)=1073741824\n")) ||
	    (err = blob_printf(t, "NUMBER(sme_mask)=0\n")) ||
	    (err = blob_printf(t, "CRASHTIME=%" PRId64 "\n", o->crashtime)))
		return err;
	return 0;
}

static int build_notes(struct blob *n, const struct opts *o, int64_t phys_base)
{
	uint8_t prs[PRSTATUS_SIZE];
	struct blob text = { 0 };
	uint64_t cpu;
	int err;

	for (cpu = 0; cpu < o->cpus; cpu++) {
		fill_prstatus(prs, cpu);
		if ((err = add_note(n, "CORE", NT_PRSTATUS, prs, sizeof(prs))))
			return err;
	}
	if (o->bad == BAD_NO_VMCOREINFO)
		return 0;
	/* The kernel's descsz counts the text without a terminating NUL. */
	err = vmcoreinfo_text(&text, o, phys_base);
	if (!err)
		err = add_note(n, "VMCOREINFO", 0, text.p, text.len);
	free(text.p);
	return err;
}

/* ---- layout ---- */

static uint64_t page_up(uint64_t x)
{
	return (x + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
}

static uint64_t direct_map_base(const struct opts *o);

static void plan_ram(struct layout *L, const struct opts *o)
{
	uint64_t pages = o->mem / PAGE_SIZE, paddr = FIRST_PADDR;
	uint64_t per = pages / o->segments, rem = pages % o->segments;
	size_t i;

	for (i = 0; i < L->nram; i++) {
		struct seg *s = &L->load[i];

		if (o->nram) {
			s->paddr = o->ram_lo[i];
			s->vaddr = direct_map_base(o) + s->paddr;
			s->memsz = s->filesz = o->ram_len[i];
			continue;
		}
		s->paddr = paddr;
		s->vaddr = direct_map_base(o) + paddr;
		s->memsz = (per + (i < rem)) * PAGE_SIZE;
		s->filesz = s->memsz;
		paddr += s->memsz + o->gap;
	}
	if (o->bad == BAD_FILESZ_LT_MEMSZ) {
		struct seg *s = &L->load[L->nram - 1];

		s->filesz = (s->memsz / 2) & ~(uint64_t)(PAGE_SIZE - 1);
	}
}

/* The kernel maps its image a second time at __START_KERNEL_map; kexec
 * exports that as its own PT_LOAD. Put it at CONFIG_PHYSICAL_START, cut
 * to what the first RAM range holds; a first range that ends below that
 * gets the alias at its start instead (phys_base then comes out negative,
 * which the kernel's "%ld" would print the same way). */
static void plan_alias(struct layout *L, const struct opts *o)
{
	const struct seg *r = &L->load[0];
	uint64_t end = r->paddr + r->memsz, paddr = r->paddr, len;
	uint64_t want = o->mm ? o->kernel_at : KTEXT_PADDR;
	struct seg *a;

	if (r->paddr <= want && want < end)
		paddr = want;
	len = end - paddr < KTEXT_LEN ? end - paddr : KTEXT_LEN;
	L->phys_base = (int64_t)(paddr - KTEXT_PADDR);
	if (!o->text_alias)
		return;
	a = &L->load[L->nram];
	a->paddr = paddr;
	a->vaddr = KTEXT_VADDR;
	a->memsz = len;
	a->filesz = len;
}

static void place_data(struct layout *L)
{
	uint64_t off;
	size_t i;

	L->phoff = sizeof(Elf64_Ehdr);
	off = L->phoff + L->phnum * sizeof(Elf64_Phdr);
	if (L->phnum >= PN_XNUM) {
		L->shoff = off;
		off += sizeof(Elf64_Shdr);
	}
	L->note_off = off;
	off = page_up(off + L->note_size);
	L->data_off = off;
	for (i = 0; i < L->nload; i++) {
		L->load[i].offset = off;
		off += L->load[i].filesz;
	}
	L->file_size = off;
}

/* ---- header ---- */

static void put_ehdr(struct blob *h, const struct layout *L, const struct opts *o)
{
	Elf64_Ehdr *e = (Elf64_Ehdr *)h->p;

	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_ident[EI_OSABI] = ELFOSABI_NONE;
	e->e_type = o->bad == BAD_EXEC ? ET_EXEC : ET_CORE;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_phoff = L->phoff;
	e->e_ehsize = sizeof(Elf64_Ehdr);
	e->e_phentsize = sizeof(Elf64_Phdr);
	e->e_phnum = L->phnum >= PN_XNUM ? PN_XNUM : (Elf64_Half)L->phnum;
	if (L->shoff) {
		/* Extended numbering as binfmt_elf's fill_extnum_info() does. */
		Elf64_Shdr *sh = (Elf64_Shdr *)(h->p + L->shoff);

		e->e_shoff = L->shoff;
		e->e_shentsize = sizeof(Elf64_Shdr);
		e->e_shnum = 1;
		sh->sh_type = SHT_NULL;
		sh->sh_size = 1;
		sh->sh_info = (Elf64_Word)L->phnum;
	}
}

static void put_phdrs(struct blob *h, const struct layout *L, const struct opts *o)
{
	Elf64_Phdr *ph = (Elf64_Phdr *)(h->p + L->phoff);
	size_t i;

	ph[0].p_type = PT_NOTE;
	ph[0].p_offset = L->note_off;
	ph[0].p_filesz = L->note_size;
	ph[0].p_memsz = L->note_size;
	for (i = 0; i < L->nload; i++) {
		const struct seg *s = &L->load[i];
		Elf64_Phdr *p = &ph[i + 1];

		p->p_type = PT_LOAD;
		p->p_flags = PF_R | PF_W | PF_X;
		p->p_offset = s->offset;
		p->p_vaddr = s->vaddr;
		p->p_paddr = s->paddr;
		p->p_filesz = s->filesz;
		p->p_memsz = s->memsz;
	}
	if (o->bad == BAD_PHDR) {
		/* offset + filesz wraps past 2^64; filesz == memsz stays "legal". */
		Elf64_Phdr *p = &ph[L->nram];

		p->p_filesz = 0xfffffffffffff000ull;
		p->p_memsz = p->p_filesz;
	}
}

/* Header, phdr table, optional extended-numbering shdr and notes: all of
 * the file before the first page of data. */
static int build_header(struct blob *h, const struct layout *L,
			const struct opts *o, const struct blob *notes)
{
	int err = blob_reserve(h, L->note_off);

	if (err)
		return err;
	h->len = L->note_off;
	put_ehdr(h, L, o);
	put_phdrs(h, L, o);
	return blob_add(h, notes->p, notes->len);
}

/* ---- output ---- */

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* The bytes of pfn: what --mm built there, or gen_page(). 0 for a zero
 * page. */
static int page_content(const struct opts *o, uint64_t pfn, uint8_t *page);

/* Pages accumulate in buf while they are contiguous and non-zero; a zero
 * page ends the run, leaving a hole in the sparse file. */
struct writer {
	int fd;
	uint8_t *buf;
	size_t npages;
	uint64_t at;
	uint64_t written;
};

static int wr_flush(struct writer *w)
{
	int err = pwrite_all(w->fd, w->buf, w->npages * PAGE_SIZE, w->at);

	w->written += w->npages;
	w->npages = 0;
	return err;
}

/* The buffer slot for the page at file offset off. A full buffer, or a
 * page that does not continue the buffered run, flushes first. */
static int wr_slot(struct writer *w, uint64_t off, uint8_t **slot)
{
	int err = 0;

	if (w->npages && (w->npages == WBUF_PAGES ||
			  w->at + w->npages * PAGE_SIZE != off))
		err = wr_flush(w);
	if (!w->npages)
		w->at = off;
	*slot = w->buf + w->npages * PAGE_SIZE;
	return err;
}

/* The alias lies inside the first RAM range and copies its memory, so
 * where that range's p_filesz stops short the alias holds zeros too. */
static int alias_backed(const struct layout *L, uint64_t pfn)
{
	return pfn * PAGE_SIZE < L->load[0].paddr + L->load[0].filesz;
}

static int write_seg(struct writer *w, const struct opts *o,
		     const struct layout *L, const struct seg *s, int is_alias)
{
	uint64_t i, n = s->filesz / PAGE_SIZE, pfn0 = s->paddr / PAGE_SIZE;

	for (i = 0; i < n; i++) {
		uint64_t pfn = pfn0 + i;
		uint8_t *slot;
		int err = wr_slot(w, s->offset + i * PAGE_SIZE, &slot);

		if (err)
			return err;
		/* A zero page is simply not queued: it stays a hole. */
		if ((!is_alias || alias_backed(L, pfn)) && page_content(o, pfn, slot))
			w->npages++;
	}
	return wr_flush(w);
}

/* Where --bad truncate cuts: mid-page, about halfway into the last
 * PT_LOAD in file order. */
static uint64_t truncate_point(const struct layout *L)
{
	const struct seg *s = &L->load[L->nload - 1];

	if (s->filesz < 2 * PAGE_SIZE)
		return s->offset + s->filesz / 2;
	return s->offset + ((s->filesz / 2) & ~(uint64_t)(PAGE_SIZE - 1)) + PAGE_SIZE / 2;
}

static int write_data(int fd, const struct opts *o, const struct layout *L,
		      uint64_t *written)
{
	struct writer w = { .fd = fd };
	size_t i;
	int err = 0;

	w.buf = malloc((size_t)WBUF_PAGES * PAGE_SIZE);
	if (!w.buf)
		return -ENOMEM;
	for (i = 0; i < L->nload && !err; i++)
		err = write_seg(&w, o, L, &L->load[i], i >= L->nram);
	free(w.buf);
	*written = w.written;
	return err;
}

static int write_file(const struct opts *o, const struct layout *L,
		      const struct blob *hdr, uint64_t *written, uint64_t *size_out)
{
	uint64_t size = L->file_size;
	int fd, err;

	fd = open(o->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	*written = 0;
	if (o->bad == BAD_SHORT_HEADER) {
		err = pwrite_all(fd, hdr->p, 40, 0);
		size = 40;
	} else {
		err = pwrite_all(fd, hdr->p, hdr->len, 0);
		if (!err)
			err = write_data(fd, o, L, written);
		if (o->bad == BAD_TRUNCATE)
			size = truncate_point(L);
	}
	/* Sets the length over trailing holes, and cuts for --bad truncate. */
	if (!err && ftruncate(fd, (off_t)size) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	*size_out = size;
	return err;
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s -o FILE [--mem SIZE] [--segments N] [--zero-pct P] [--seed S]\n"
		"       [--osrelease STR] [--crashtime T] [--cpus N] [--text-alias]\n"
		"       [--sparse-gap SIZE] [--bad MODE]\n"
		"  --mem SIZE        physical memory, page multiple, K/M/G/T suffixes (64M)\n"
		"  --segments N      RAM PT_LOADs splitting --mem (2)\n"
		"  --zero-pct P      percent of all-zero pages, may be fractional (30)\n"
		"  --seed S          content seed (1)\n"
		"  --osrelease STR   OSRELEASE in VMCOREINFO (6.1.0-mkvmcore)\n"
		"  --crashtime T     CRASHTIME in VMCOREINFO (1700000000)\n"
		"  --cpus N          NT_PRSTATUS notes (2)\n"
		"  --text-alias      add the kernel-text PT_LOAD at 0xffffffff81000000\n"
		"  --sparse-gap SIZE physical hole between RAM segments (1M)\n"
		"  --bad MODE        truncate no-vmcoreinfo exec badphdr short-header\n"
		"                    filesz-lt-memsz\n",
		prog);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (*s == '-')
		return -1;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

static int parse_size(const char *s, uint64_t *v)
{
	static const char suffix[] = "KMGT";
	unsigned long long n;
	const char *p;
	char *end;

	errno = 0;
	if (*s == '-')
		return -1;
	n = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (*end) {
		if (end[1] || !(p = strchr(suffix, *end)) || !*p)
			return -1;
		for (; p >= suffix; p--) {
			if (n > UINT64_MAX / 1024)
				return -1;
			n *= 1024;
		}
	}
	*v = n;
	return 0;
}

/* Percent as parts per million, so 99.9 works for scale tests. */
static int parse_pct(const char *s, uint32_t *ppm)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !(d >= 0.0 && d <= 100.0))
		return -1;
	*ppm = (uint32_t)(d * (PPM / 100) + 0.5);
	return 0;
}

static int parse_bad(const char *s, enum bad *mode)
{
	size_t i;

	for (i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++) {
		if (!strcmp(s, bad_modes[i].name)) {
			*mode = bad_modes[i].mode;
			return 0;
		}
	}
	return -1;
}

static int bad_arg(const char *opt, const char *val)
{
	fprintf(stderr, "%s: bad value for --%s: '%s'\n", prog, opt, val);
	return -1;
}

static int check_opts(const struct opts *o)
{
	const char *why = NULL;

	if (!o->out)
		why = "-o FILE is required";
	else if (!o->mem || o->mem % PAGE_SIZE || o->mem > MAX_MEM)
		why = "--mem must be a non-zero multiple of 4096, at most 64T";
	else if (o->gap % PAGE_SIZE || o->gap > MAX_MEM)
		why = "--sparse-gap must be a multiple of 4096, at most 64T";
	else if (!o->segments || o->segments > MAX_SEGMENTS ||
		 o->segments > o->mem / PAGE_SIZE)
		why = "--segments must be 1..1048576 and at most one per page";
	else if (o->cpus > MAX_CPUS)
		why = "--cpus must be at most 8192";
	else if (strlen(o->osrelease) > 64)
		why = "--osrelease is at most 64 bytes (utsname)";
	if (why)
		fprintf(stderr, "%s: %s\n", prog, why);
	return why ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mem", required_argument, NULL, 'm' },
		{ "segments", required_argument, NULL, 's' },
		{ "zero-pct", required_argument, NULL, 'z' },
		{ "seed", required_argument, NULL, 'S' },
		{ "osrelease", required_argument, NULL, 'r' },
		{ "crashtime", required_argument, NULL, 't' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "text-alias", no_argument, NULL, 'a' },
		{ "sparse-gap", required_argument, NULL, 'g' },
		{ "bad", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t t;
	int c, idx = 0;

	while ((c = getopt_long(argc, argv, "o:h", longopts, &idx)) != -1) {
		const char *name = longopts[idx].name; /* only read for long options */

		switch (c) {
		case 'o': o->out = optarg; break;
		case 'a': o->text_alias = 1; break;
		case 'r': o->osrelease = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'm': if (parse_size(optarg, &o->mem)) return bad_arg(name, optarg); break;
		case 'g': if (parse_size(optarg, &o->gap)) return bad_arg(name, optarg); break;
		case 's': if (parse_u64(optarg, &o->segments)) return bad_arg(name, optarg); break;
		case 'c': if (parse_u64(optarg, &o->cpus)) return bad_arg(name, optarg); break;
		case 'S': if (parse_u64(optarg, &o->seed)) return bad_arg(name, optarg); break;
		case 'z': if (parse_pct(optarg, &o->zero_ppm)) return bad_arg(name, optarg); break;
		case 'b': if (parse_bad(optarg, &o->bad)) return bad_arg(name, optarg); break;
		case 't':
			if (parse_u64(optarg, &t) || t > INT64_MAX)
				return bad_arg(name, optarg);
			o->crashtime = (int64_t)t;
			break;
		default: return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return -1;
	}
	return check_opts(o);
}

static int make_layout(struct layout *L, const struct opts *o, struct blob *notes)
{
	int err;

	L->nram = (size_t)o->segments;
	L->nload = L->nram + (o->text_alias ? 1 : 0);
	L->phnum = 1 + L->nload;
	L->load = calloc(L->nload, sizeof(*L->load));
	if (!L->load)
		return -ENOMEM;
	plan_ram(L, o);
	plan_alias(L, o);
	if ((err = build_notes(notes, o, L->phys_base)))
		return err;
	L->note_size = notes->len;
	place_data(L);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.mem = 64ull << 20, .segments = 2, .zero_ppm = 30 * (PPM / 100),
		.seed = 1, .osrelease = "6.1.0-mkvmcore", .crashtime = 1700000000,
		.cpus = 2, .gap = 1ull << 20,
	};
	struct layout L = { 0 };
	struct blob notes = { 0 }, hdr = { 0 };
	uint64_t written = 0, size = 0;
	int err;

	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	err = make_layout(&L, &o, &notes);
	if (!err)
		err = build_header(&hdr, &L, &o, &notes);
	if (err) {
		fprintf(stderr, "%s: building header: %s\n", prog, strerror(-err));
		return 1;
	}
	if ((err = write_file(&o, &L, &hdr, &written, &size))) {
		fprintf(stderr, "%s: writing %s: %s\n", prog, o.out, strerror(-err));
		return 1;
	}
	printf("%s: %zu PT_LOAD, %" PRIu64 " bytes of memory, %" PRIu64
	       " non-zero pages written, file size %" PRIu64 "\n",
	       o.out, L.nload, o.mem, written, size);
	free(L.load);
	free(notes.p);
	free(hdr.p);
	return 0;
}
