/*
 * mkvmcore: write a deterministic synthetic x86_64 or arm64 /proc/vmcore
 * for tests.
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
 * physical memory, what a 6.1, 6.12, 6.16 or 7.1 x86_64 kernel would leave
 * there: 4- or 5-level page tables reachable from SYMBOL(init_top_pgt), a
 * direct map, SPARSEMEM_EXTREME mem_section arrays, a vmemmap and one
 * struct page per pfn, filled with every class the dump levels tell apart
 * (free buddy blocks, page cache, anonymous, slab, hugetlb, hwpoison,
 * offline, unaccepted ...). --corrupt damages one of those structures.
 * It then reads the vmcore it wrote back, judges every pfn with its own
 * small implementation of makedumpfile's rules (docs/FILTERING.md) and
 * writes FILE.expect: per dump level, the pfns that must be excluded and
 * why (see "expectation" below).
 *
 * --arch arm64 writes an EM_AARCH64 vmcore instead, as Debian's arm64
 * kernels leave it (see "arm64" below): RAM from PHYS_OFFSET 0x40000000,
 * a linear map, the kernel image at kimage_voffset, 4 KiB-granule tables
 * for 39-, 48- or 52-bit VA; with --mm also init_uts_ns and a printk ring,
 * whose records' texts it writes to FILE.dmesg, one line each.
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

/* arm64, from arch/arm64/include/asm/memory.h and kernel/crash_core.c
 * (6.1; 6.12 where it differs):
 *   PAGE_OFFSET = -2^VA_BITS, the VA of PHYS_OFFSET (memstart_addr: the
 *     first RAM rounded down to 1 GiB; a 52-bit kernel on a CPU that runs
 *     48 bits lowers it by _PAGE_OFFSET(48) - _PAGE_OFFSET(52), so RAM
 *     lands at -2^48 all the same);
 *   the kernel image at KIMAGE_VADDR = _PAGE_END(VA_BITS_MIN) + the
 *     module area (128 MiB in 6.1, 2 GiB in 6.12), plus KASLR's offset:
 *     2^(VA_BITS_MIN - 3) + a seed, 2 MiB aligned; kimage_voffset is its
 *     VA minus its PA;
 *   vmemmap = VMEMMAP_START - (memstart_addr >> 12) * sizeof(struct page),
 *     VMEMMAP_START = -2^(VA_BITS - 6) in 6.1, -1 GiB - the struct pages
 *     of the 52/48-bit linear range in 6.12;
 *   NT_PRSTATUS: struct elf_prstatus is 392 bytes, pr_reg = x0..x30, sp,
 *     pc, pstate at 112. QEMU's virt machine has RAM at 0x40000000. */
#define A64_RAM_BASE 0x40000000ull
#define A64_KERNEL_AT (A64_RAM_BASE + (2ull << 20))
#define A64_TEXT_LEN (32ull << 20)
#define A64_PRSTATUS_SIZE 392
#define A64_KASLR_SEED 0x1a2b3c00000ull

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
	int arm64;		/* --arch arm64 */
	unsigned va_bits;	/* arm64: CONFIG_ARM64_VA_BITS, 39, 48 or 52 */
	unsigned cpu_va_bits;	/* arm64: what the CPU runs (48 under a 52-bit kernel) */
	/* --mm: NULL without it */
	const struct kver *mm;
	unsigned mm_levels;	/* 4 or 5 */
	unsigned leaf;		/* largest leaf, as a shift: 12, 21 or 30 */
	unsigned ms_size;	/* SIZE(mem_section) */
	uint64_t kernel_at;	/* physical load address of the kernel image */
	enum corrupt corrupt;
	unsigned sme_bit;	/* 0, or the AMD SME C-bit set in every PTE */
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
	int straddle;		/* --straddle: place_straddle */
	int memmap_edges;	/* --memmap-edges: place_memmap_edges */
	int ring_zero;		/* --ring-zero-pages: a64_uts_and_ring */
	/* scale mode (--mix, --no-expect; see "scale mode" below) */
	int no_expect;
	struct mix { int on; uint32_t free, cache, user, kernel, kzero; } mix; /* ppm */
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
	uint64_t fixed_data_off;	/* scale mode: data_off decided before the notes */
};

struct blob {
	uint8_t *p;
	size_t len, cap;
};

/* arm64 addresses ("arm64 address space" below) */
static uint64_t a64_kimage_voffset(const struct opts *o);
static uint64_t a64_text_va(const struct opts *o);
static uint64_t a64_phys_offset(const struct opts *o);
static uint64_t a64_kaslr(const struct opts *o);

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
static void fill_prstatus_a64(uint8_t *d, uint64_t cpu, uint64_t pc);

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
static int vmcoreinfo_mm(struct blob *t, const struct opts *o, int64_t phys_base);

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

	if (o->mm)
		return vmcoreinfo_mm(t, o, phys_base);
	if (o->arm64) {
		/* no kernel structures: the translation keys only */
		uint64_t voff = a64_kimage_voffset(o), text = a64_text_va(o);
		return blob_printf(t, "OSRELEASE=%s\nPAGESIZE=4096\n"
				   "SYMBOL(init_uts_ns)=%" PRIx64 "\n"
				   "OFFSET(uts_namespace.name)=0\n"
				   "SYMBOL(swapper_pg_dir)=%" PRIx64 "\n"
				   "SYMBOL(_stext)=%" PRIx64 "\n"
				   "NUMBER(VA_BITS)=%u\n"
				   "NUMBER(kimage_voffset)=0x%" PRIx64 "\n"
				   "NUMBER(PHYS_OFFSET)=0x%" PRIx64 "\n"
				   "NUMBER(TCR_EL1_T1SZ)=0x%x\n"
				   "KERNELOFFSET=%" PRIx64 "\n"
				   "CRASHTIME=%" PRId64 "\n",
				   o->osrelease, text + 0x1c14a20, text + 0x1e0a000, text + 0x10000,
				   o->va_bits, voff, a64_phys_offset(o), 64 - o->cpu_va_bits,
				   a64_kaslr(o), o->crashtime);
	}
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
	uint8_t prs[A64_PRSTATUS_SIZE];
	struct blob text = { 0 };
	uint64_t cpu;
	int err;

	for (cpu = 0; cpu < o->cpus; cpu++) {
		if (o->arm64)
			fill_prstatus_a64(prs, cpu, a64_kimage_voffset(o) + o->kernel_at + 0x10000);
		else
			fill_prstatus(prs, cpu);
		if ((err = add_note(n, "CORE", NT_PRSTATUS, prs,
				    o->arm64 ? A64_PRSTATUS_SIZE : PRSTATUS_SIZE)))
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
static void die(const char *fmt, ...);

static void plan_ram(struct layout *L, const struct opts *o)
{
	uint64_t pages = o->mem / PAGE_SIZE, paddr = o->arm64 ? A64_RAM_BASE : FIRST_PADDR;
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
	uint64_t want = o->mm || o->arm64 ? o->kernel_at : KTEXT_PADDR;
	struct seg *a;

	if (r->paddr <= want && want < end)
		paddr = want;
	uint64_t tlen = o->arm64 ? A64_TEXT_LEN : KTEXT_LEN;
	len = end - paddr < tlen ? end - paddr : tlen;
	L->phys_base = (int64_t)(paddr - KTEXT_PADDR);
	if (!o->text_alias)
		return;
	a = &L->load[L->nram];
	a->paddr = paddr;
	/* arm64: the image's own mapping, vaddr - paddr = kimage_voffset */
	a->vaddr = o->arm64 ? a64_kimage_voffset(o) + paddr : KTEXT_VADDR;
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
	if (L->fixed_data_off) {
		if (off > L->fixed_data_off)
			die("internal: headers and notes overrun the fixed data offset");
		off = L->fixed_data_off;
	}
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
	e->e_machine = o->arm64 ? EM_AARCH64 : EM_X86_64;
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
/* Scale mode: pfn's bytes are already in the file (the mapped region). */
static int region_in_file(uint64_t pfn);
/* Scale mode: the output's descriptor, opened by the region mapping; -1. */
static int scale_fd(void);

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
		if (!is_alias && region_in_file(pfn))
			continue;
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

	fd = scale_fd();
	if (fd < 0)
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

/* ==================================================================== *
 * --mm: a kernel's memory-management structures in the synthetic RAM
 * ==================================================================== *
 *
 * Everything the filter needs lives in a "kernel region" of the first RAM
 * range, starting at --kernel-at (the kernel's load address, so phys_base
 * = kernel_at - 16 MiB):
 *
 *   [pool]    page tables, the mem_section root array and section blocks;
 *   [chunks]  2 MiB of struct pages per present 128 MiB section.
 *
 * Virtual layout (x86_64 without KASLR offsets of the image, but with a
 * KASLR-like page_offset):
 *   direct map  page_offset + pa, every RAM range, --leaf sized leaves;
 *   text        0xffffffff81000000 -> kernel_at, 2 MiB leaves (4k: PTEs);
 *   vmemmap     struct page of pfn P at vmemmap + P * 64. The vmemmap
 *               is placed so that a top-level (PGD; 5-level: PML5) entry
 *               boundary falls right after the first present section's
 *               struct pages: the rest sits under other PGD/PUD entries,
 *               which --corrupt vmemmap-pgd / vmemmap-pud remove.
 *               With --leaf 1g the struct pages are reached through two
 *               1 GiB leaves that both map physical [0, 1 GiB): section
 *               mem_maps are then not one linear array (section_mem_map
 *               encodes each one, so nothing needs it to be).
 *               With --leaf 4k the 512 pages of a section's struct pages
 *               are scattered over its chunk (a fixed permutation), so a
 *               reader that assumes physical contiguity reads garbage.
 */

#define SEC_SHIFT 15			/* pfns per section: 2^(27-12) */
#define SEC_PFNS (1ull << SEC_SHIFT)
#define SPAGE 64ull			/* SIZE(page) */
#define SEC_MAP_BYTES (SEC_PFNS * SPAGE)	/* 2 MiB */
#define SZ_2M (2ull << 20)
#define SZ_1G (1ull << 30)
#define MM_PO4 0xffff8cf980000000ull	/* page_offset_base, 4-level */
#define MM_PO5 0xff372bf300000000ull	/* 5-level */
#define MM_VTB4 0xffffea8000000000ull	/* 512 GiB boundary in the vmemmap area */
#define MM_VTB5 0xffd5000000000000ull	/* 256 TiB boundary, 5-level */
#define MM_OUTSIDE_PA 0x3f0000000000ull	/* no RAM there */
#define PTE_TABLE 0x63ull		/* present, rw, accessed, dirty */
#define PTE_LEAF 0x163ull		/* + global */
#define PTE_PSE 0x80ull
#define PTE_NX (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull
#define SME(m) ((m)->o->sme_bit ? 1ull << (m)->o->sme_bit : 0)
#define TAIL_MAPPING 0xdead000000000400ull
#define SECTION_FLAGS 0xfull		/* present, has mem_map, online, early */
#define MAX_ORDER_PAGES 1024u		/* 2^(LENGTH(zone.free_area) - 1) */

/* struct page field offsets: the same in 6.1 and 6.12 */
#define SP_FLAGS 0
#define SP_HEAD 8			/* compound_head, overlays lru.next */
#define SP_LRU_PREV 16
#define SP_MAPPING 24
#define SP_INDEX 32
#define SP_PRIVATE 40
#define SP_MAPCOUNT 48
#define SP_REFCOUNT 52
#define SP_DTOR 16			/* 6.1, first tail */
#define SP_ORDER 17

#define BIT(n) (1ull << (n))

struct kver {
	const char *name, *release;
	int lru, private_, swapcache, swapbacked, slab /* -1: not exported */, hwpoison,
	    head, reserved, waiters, uptodate;
	uint64_t benign;	/* flag bits that no filter rule looks at */
	uint32_t t_buddy, t_offline, t_table, t_guard;
	/* 6.12+: one page type in the top byte of _mapcount */
	int types;
	uint32_t t_hugetlb, t_slab, t_zsmalloc, t_unaccepted;
	int dtor;		/* 6.1: compound_dtor/order bytes in the first tail */
	int export_unaccepted;	/* 6.16: NUMBER(PAGE_UNACCEPTED_MAPCOUNT_VALUE) */
	int print_unsigned;	/* page-type NUMBERs printed as unsigned */
	/* 7.1: the field is OFFSET(page.compound_info) (kernel d50569612c29),
	 * and with HVO and a power-of-2 struct page a tail holds a mask that
	 * turns its own address into its head's, not the head's address
	 * (8c846c879e22): GENMASK(63, order + log2(sizeof(struct page))) | 1.
	 * Bit 0 still marks a tail. */
	int compound_info;
};

/* The flag bits and page types of 6.1 but PG_hwpoison, which x86 and
 * arm64 number differently (kv61_a64). */
#define KV61_LAYOUT								\
	.lru = 4, .private_ = 13, .swapcache = 10, .swapbacked = 19, .slab = 9,		\
	.head = 16, .reserved = 12, .waiters = 7, .uptodate = 2,			\
	.benign = BIT(1) | BIT(2) | BIT(3) | BIT(5) | BIT(6) | BIT(11) | BIT(17) | BIT(18) |	\
		  BIT(20) | BIT(21),							\
	.t_buddy = 0xffffff7f, .t_offline = 0xfffffeff, .t_table = 0xfffffdff,		\
	.t_guard = 0xfffffbff,								\
	.dtor = 1

static const struct kver kv61 = {
	.name = "6.1", .release = "6.1.0-mkvmcore",
	KV61_LAYOUT,
	.hwpoison = 23,
};

/* The flag bits and page types of 6.12, which 6.16 keeps. */
#define KV612_LAYOUT								\
	.lru = 5, .private_ = 14, .swapcache = 10, .swapbacked = 17, .slab = -1, .hwpoison = 20, \
	.head = 6, .reserved = 13, .waiters = 7, .uptodate = 3,				\
	.benign = BIT(2) | BIT(3) | BIT(4) | BIT(8) | BIT(9) | BIT(12) | BIT(16) | BIT(18) |	\
		  BIT(19),							\
	.t_buddy = 0xf0000000, .t_offline = 0xf1000000, .t_table = 0xf2000000,		\
	.t_guard = 0xf3000000,								\
	.types = 1, .t_hugetlb = 0xf4000000, .t_slab = 0xf5000000, .t_zsmalloc = 0xf6000000, \
	.t_unaccepted = 0xf7000000

static const struct kver kv612 = {
	.name = "6.12", .release = "6.12.0-mkvmcore",
	KV612_LAYOUT,
};

/* 6.12's layout plus the unaccepted key (added in 6.16); its page-type
 * numbers are printed unsigned, the other form a kernel may use. */
static const struct kver kv616 = {
	.name = "6.16", .release = "6.16.0-mkvmcore",
	KV612_LAYOUT,
	.export_unaccepted = 1, .print_unsigned = 1,
};

/* 7.1: 6.16's layout (flags, page types, unaccepted) with compound_info;
 * its page-type numbers printed signed, as 6.12 does. */
static const struct kver kv71 = {
	.name = "7.1", .release = "7.1.0-mkvmcore",
	KV612_LAYOUT,
	.export_unaccepted = 1, .compound_info = 1,
};

/* arm64 6.1 numbers its flags as x86 does up to PG_mlocked (21), but has
 * no PG_uncached (CONFIG_ARCH_USES_PG_UNCACHED is x86's): PG_hwpoison is
 * 22. From 6.12 neither has it, and the layouts agree. */
static const struct kver kv61_a64 = {
	.name = "6.1", .release = "6.1.0-mkvmcore-arm64",
	KV61_LAYOUT,
	.hwpoison = 22,
};

/* ---- arm64 address space (facts at the top of the file) ---- */

static int a64_new_layout(const struct opts *o)
{
	return o->mm && o->mm->types;	/* 6.12 and later */
}

static unsigned a64_va_min(const struct opts *o)
{
	return o->va_bits > 48 ? 48 : o->va_bits;
}

/* memstart_addr, as NUMBER(PHYS_OFFSET) shows it */
static uint64_t a64_phys_offset(const struct opts *o)
{
	uint64_t first = o->nram ? o->ram_lo[0] : A64_RAM_BASE;
	uint64_t ms = first & ~((1ull << 30) - 1);

	if (o->cpu_va_bits != o->va_bits)
		ms -= (~0ull << o->cpu_va_bits) - (~0ull << o->va_bits);
	return ms;
}

static uint64_t a64_kaslr(const struct opts *o)
{
	unsigned min = a64_va_min(o);

	return (1ull << (min - 3)) + (A64_KASLR_SEED & ((1ull << (min - 2)) - 1) & ~((2ull << 20) - 1));
}

/* the VA of _text, which sits at --kernel-at */
static uint64_t a64_text_va(const struct opts *o)
{
	uint64_t modules = ~0ull << (a64_va_min(o) - 1);

	return modules + (a64_new_layout(o) ? 2ull << 30 : 128ull << 20) + a64_kaslr(o);
}

static uint64_t a64_kimage_voffset(const struct opts *o)
{
	return a64_text_va(o) - o->kernel_at;
}

static uint64_t a64_vmemmap_start(const struct opts *o)
{
	if (!a64_new_layout(o))
		return ~0ull << (o->va_bits - 6);
	uint64_t range = (~0ull << (a64_va_min(o) - 1)) - (~0ull << o->va_bits);
	return -(1ull << 30) - (range >> 12) * 64;
}

/* vmemmap: pfn P's struct page at vmemmap + P * 64 (memstart_addr is
 * signed: the shift keeps its sign) */
static uint64_t a64_vmemmap(const struct opts *o)
{
	return a64_vmemmap_start(o) - (uint64_t)((int64_t)a64_phys_offset(o) >> 12) * 64;
}

static void fill_prstatus_a64(uint8_t *d, uint64_t cpu, uint64_t pc)
{
	uint64_t reg[34] = { 0 };
	int32_t pid = (int32_t)cpu;

	for (size_t i = 0; i < 31; i++)
		reg[i] = mix64(cpu * 64 + i);
	reg[31] = 0xffff800008000000ull + 0x4000000 + cpu * 0x4000 + 0x3f00;	/* sp */
	reg[32] = pc + cpu * 16;
	reg[33] = 0x604000c5;	/* pstate: EL1h, DAIF masked */
	memset(d, 0, A64_PRSTATUS_SIZE);
	memcpy(d + PRSTATUS_PID_OFF, &pid, sizeof(pid));
	memcpy(d + PRSTATUS_REG_OFF, reg, sizeof(reg));
}

static const char *const corrupt_names[CX_COUNT] = {
	"none", "vmemmap-pgd", "vmemmap-pud", "pmd-outside", "pte-hole",
	"section-garbage", "section-absent", "root-zero", "buddy-order",
	"order-misaligned", "head-511", "random-bytes",
};

/* What the generator puts at a run of pfns. The intent column of
 * obj_intent() says how makedumpfile's rules should judge it. */
enum otype {
	O_KERNEL, O_TABLE, O_BUDDY, O_BUDDY_STALE, O_CACHE, O_CACHE_PRIV, O_SHMEM,
	O_SWAPCACHE_FILE, O_OWNERPRIV, O_ANON, O_ANON_THP, O_ANON_SWAPCACHE, O_KSM,
	O_MOVABLE, O_ANON_SLAB, O_WAITERS_ANON, O_SLAB, O_HUGETLB, O_HUGETLB_FREE,
	O_HUGETLB_1G, O_HWPOISON, O_HWPOISON_ANON, O_HWPOISON_CACHE, O_HWPOISON_THP,
	O_OFFLINE, O_OFFLINE_SLAB, O_UNACCEPTED, O_TYPED_DATA, O_BUDDY_SLAB,
	O_TYPED_OTHER, O_BIG_CACHE, O_BAD_BUDDY, O_BAD_BUDDY11, O_MISALIGNED_THP,
	O_MISALIGNED_HUGETLB, O_HEAD511, O_RANDOM, O_THP_POISONED_TAIL,
	O_FOLIO_POISONED_TAIL, O_NTYPES
};

static const char *const otype_names[O_NTYPES] = {
	"kernel", "pagetable", "buddy", "buddy-stale-inner", "cache", "cache-private", "shmem",
	"swapcache-file", "owner-priv-1", "anon", "anon-thp", "anon-swapcache", "ksm",
	"movable", "anon-but-slab", "anon-waiters", "slab", "hugetlb", "hugetlb-free",
	"hugetlb-1g", "hwpoison", "hwpoison-anon", "hwpoison-cache", "hwpoison-thp",
	"offline", "offline-but-slab", "unaccepted", "typed-with-data", "buddy-but-slab",
	"other-page-type", "cache-order13", "buddy-order-200", "buddy-order-11",
	"misaligned-thp", "misaligned-hugetlb", "hugetlb-head-at-511", "random-bytes",
	"anon-thp-hwpoison-tail", "cache-folio-hwpoison-tail",
};

/* Classes, numbered as kdumpinit's "info" names them. */
enum ecls { E_ZERO, E_CACHE, E_PRIV, E_USER, E_FREE, E_HWPOISON, E_OFFLINE, E_MEMMAP, E_NCLS,
	    E_KEEP = 0xff };
static const char *const ecls_names[E_NCLS] = {
	"zero", "cache", "cache-private", "user", "free", "hwpoison", "offline", "memmap",
};

struct mmsec {
	uint64_t nr, chunk, va;	/* chunk: physical address of its struct pages */
};

struct mobj {
	uint64_t pfn, npfn;
	uint8_t order, type;
	uint64_t stale;		/* O_BUDDY_STALE: the inner pfn with stale flags */
};

struct mm {
	const struct kver *kv;
	const struct opts *o;
	struct layout *L;
	unsigned levels, leaf;
	unsigned top_bits;	/* index bits of the top table: 9, or 4 (arm64, 52-bit VA) */
	int lpa2;		/* arm64 52-bit: output address bits 51:50 in bits 9:8 */
	uint64_t ktext;		/* VA of the kernel image (at --kernel-at) */
	uint64_t ram_base;	/* arm64: first RAM, where kptr() points */
	unsigned mpb;		/* MAX_PHYSMEM_BITS */
	uint64_t uts, ring;	/* arm64: init_uts_ns, the printk ring (physical) */
	uint64_t po, vtb, rbase, rend, pool, pool_end, chunks;
	uint8_t *img;		/* bytes of [rbase, rend) */
	uint8_t *is_table;	/* per region page: holds a page table */
	uint64_t pgd, roots, roots_len, spr, vmemmap;
	struct mmsec *sec;
	size_t nsec;
	uint64_t end_pfn;	/* highest RAM pfn + 1 */
	uint8_t *used;		/* bitmap of pfns [0, end_pfn) given to an object */
	struct mobj *obj;
	size_t nobj, objcap;
	uint64_t rng;
	uint64_t blocks_r[64], blocks_pa[64];	/* section block of each used root */
	size_t nblocks;
	/* scale mode */
	int mapped, img_fd;	/* img is the output file's region, shared */
	int no_record;		/* objects mark pfns used but are not kept */
	struct mobj scratch;	/* what add_obj returns then */
	uint8_t *kdata;		/* --mix: bitmap of pfns with non-zero content */
};

static struct mm *g_mm;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* VA - PA in the direct (x86) or linear (arm64) map */
static uint64_t direct_map_base(const struct opts *o)
{
	if (o->arm64)
		return (~0ull << o->va_bits) - a64_phys_offset(o);
	if (!o->mm)
		return DIRECT_MAP_BASE;
	return o->mm_levels == 5 ? MM_PO5 : MM_PO4;
}

static uint64_t rnd(struct mm *m)
{
	m->rng = m->rng * 6364136223846793005ull + 1442695040888963407ull;
	return mix64(m->rng);
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* ---- the region image ---- */

static int in_region(const struct mm *m, uint64_t pa, uint64_t len)
{
	return pa >= m->rbase && pa + len <= m->rend;
}

static uint8_t *img_at(struct mm *m, uint64_t pa, uint64_t len)
{
	if (!in_region(m, pa, len))
		die("internal: physical 0x%" PRIx64 " outside the kernel region", pa);
	return m->img + (pa - m->rbase);
}

static uint64_t rd_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t rd_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void wr_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void wr_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static uint64_t pool_alloc(struct mm *m, uint64_t size, int table)
{
	uint64_t pa = align_up(m->pool, PAGE_SIZE);

	size = align_up(size, PAGE_SIZE);
	if (pa + size > m->pool_end)
		die("internal: kernel region pool exhausted");
	m->pool = pa + size;
	memset(img_at(m, pa, size), 0, size);
	for (uint64_t p = pa; p < pa + size; p += PAGE_SIZE)
		m->is_table[(p - m->rbase) / PAGE_SIZE] = (uint8_t)table;
	return pa;
}

/* ---- page tables (generator side) ---- */

/* arm64 descriptors (4 KiB granule): bit 0 valid, bit 1 table (levels
 * 0-2) or page (level 3), else a block; AF, inner shareable (not with
 * LPA2, whose bits 9:8 are address bits 51:50), AttrIndx 0 (normal);
 * writable data as the kernel maps it (DBM, bit 51), code read-only. */
#define A64_TABLE 0x3ull
#define A64_AF (1ull << 10)
#define A64_SH_INNER (3ull << 8)
#define A64_RDONLY (1ull << 7)
#define A64_DBM (1ull << 51)
#define A64_PXN (1ull << 53)
#define A64_UXN (1ull << 54)
#define A64_OA_48 0x0000fffffffff000ull
#define A64_OA_LPA2 0x0003fffffffff000ull

static uint64_t a64_oa(const struct mm *m, uint64_t pa)
{
	if (!m->lpa2)
		return pa & A64_OA_48;
	return (pa & A64_OA_LPA2) | ((pa >> 50) & 3) << 8;
}

static uint64_t pte_addr(const struct mm *m, uint64_t v)
{
	if (!m->o->arm64)
		return v & PTE_ADDR & ~SME(m);
	if (!m->lpa2)
		return v & A64_OA_48;
	return (v & A64_OA_LPA2) | ((v >> 8) & 3) << 50;
}

static uint64_t pte_table(const struct mm *m, uint64_t pa)
{
	return m->o->arm64 ? a64_oa(m, pa) | A64_TABLE : pa | PTE_TABLE | SME(m);
}

/* A leaf at level (1: a page); nx: data, not code */
static uint64_t pte_leaf(const struct mm *m, uint64_t pa, unsigned level, int nx)
{
	if (!m->o->arm64)
		return pa | PTE_LEAF | (nx ? PTE_NX : 0) | SME(m) | (level > 1 ? PTE_PSE : 0);
	return a64_oa(m, pa) | (level == 1 ? 3 : 1) | A64_AF | (m->lpa2 ? 0 : A64_SH_INNER) |
	       (nx ? A64_PXN | A64_UXN | A64_DBM : A64_UXN | A64_RDONLY);
}

static int pte_is_leaf(const struct mm *m, uint64_t v, unsigned level)
{
	if (!m->o->arm64)
		return level <= 3 && (v & PTE_PSE);
	return level <= 3 && !(v & 2);
}

/* The entry for va at `level` (1 = PTE ... 5 = PML5), creating the tables
 * above it. */
static uint8_t *pt_slot(struct mm *m, uint64_t va, unsigned level)
{
	uint64_t table = m->pgd;

	for (unsigned l = m->levels;; l--) {
		unsigned shift = 12 + 9 * (l - 1);
		unsigned bits = l == m->levels ? m->top_bits : 9;
		uint8_t *e = img_at(m, table + ((va >> shift) & ((1u << bits) - 1)) * 8, 8);
		uint64_t v = rd_u64(e);

		if (l == level)
			return e;
		if (!(v & 1)) {
			v = pte_table(m, pool_alloc(m, PAGE_SIZE, 1));
			wr_u64(e, v);
		} else if (pte_is_leaf(m, v, l)) {
			die("internal: mapping 0x%" PRIx64 " under a large leaf", va);
		}
		table = pte_addr(m, v);
	}
}

static void map_leaf(struct mm *m, uint64_t va, uint64_t pa, unsigned shift, uint64_t extra)
{
	unsigned level = shift == 12 ? 1 : shift == 21 ? 2 : 3;
	uint8_t *e = pt_slot(m, va, level);
	uint64_t want = pte_leaf(m, pa, level, extra != 0);
	uint64_t v = rd_u64(e);

	if ((v & 1) && v != want)
		die("internal: 0x%" PRIx64 " mapped twice", va);
	wr_u64(e, want);
}

/* ---- struct pages (generator side) ---- */

static const struct mmsec *sec_of(const struct mm *m, uint64_t pfn)
{
	uint64_t nr = pfn >> SEC_SHIFT;
	size_t lo = 0, hi = m->nsec;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->sec[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nsec && m->sec[lo].nr == nr ? &m->sec[lo] : NULL;
}

/* Page j (0..511) of a section's struct pages sits at page perm(j) of
 * its chunk when the vmemmap uses 4 KiB leaves. */
static uint64_t perm(const struct mm *m, uint64_t j)
{
	return m->leaf == 12 ? (j * 167 + 85) & 511 : j;
}

static uint64_t sp_pa(const struct mm *m, uint64_t pfn)
{
	const struct mmsec *s = sec_of(m, pfn);
	uint64_t byte = (pfn & (SEC_PFNS - 1)) * SPAGE;

	return s->chunk + perm(m, byte / PAGE_SIZE) * PAGE_SIZE + byte % PAGE_SIZE;
}

static uint64_t sp_va(const struct mm *m, uint64_t pfn)
{
	const struct mmsec *s = sec_of(m, pfn);

	return s->va + (pfn & (SEC_PFNS - 1)) * SPAGE;
}

/* The struct page of pfn, or NULL if its section has none. */
static uint8_t *sp(struct mm *m, uint64_t pfn)
{
	return sec_of(m, pfn) ? img_at(m, sp_pa(m, pfn), SPAGE) : NULL;
}

static uint64_t zone_bits(uint64_t pfn)
{
	/* ZONE_DMA, DMA32, NORMAL in the top bits, as page_zonenum() reads them */
	uint64_t z = pfn < 4096 ? 0 : pfn < (4ull << 30) / PAGE_SIZE ? 1 : 2;
	return z << 62;
}

/* A plausible kernel pointer into the direct map (8-aligned, so its low
 * bits are never the anon/movable marks). */
static uint64_t kptr(struct mm *m)
{
	return m->po + m->ram_base + ((rnd(m) % (64ull << 20)) & ~7ull) + 0x100000;
}

static void put_page(struct mm *m, uint64_t pfn, uint64_t flags, uint64_t mapping,
		     uint64_t priv, uint32_t mapcount, uint32_t refcount)
{
	uint8_t *p = sp(m, pfn);
	uint64_t self;

	if (!p)
		return;
	self = sp_va(m, pfn) + 8;	/* an empty list_head points at itself */
	memset(p, 0, SPAGE);
	wr_u64(p + SP_FLAGS, flags | zone_bits(pfn));
	wr_u64(p + SP_HEAD, self);
	wr_u64(p + SP_LRU_PREV, self);
	wr_u64(p + SP_MAPPING, mapping);
	wr_u64(p + SP_INDEX, mapping ? rnd(m) % 100000 : 0);
	wr_u64(p + SP_PRIVATE, priv);
	wr_u32(p + SP_MAPCOUNT, mapcount);
	wr_u32(p + SP_REFCOUNT, refcount);
}

static uint64_t benign(struct mm *m)
{
	return rnd(m) & m->kv->benign;
}

/* A compound page: head at h, order k, head fields as given. dtor: the
 * 6.1 compound_dtor (1 compound, 2 hugetlb, 3 THP). order_byte: the order
 * the first tail states (normally k). ntails: how many tails get
 * compound_head (normally 2^k - 1). */
static void put_compound(struct mm *m, uint64_t h, unsigned k, uint64_t hflags,
			 uint64_t mapping, uint64_t priv, uint32_t mapcount, int dtor,
			 unsigned order_byte, uint64_t ntails)
{
	const struct kver *kv = m->kv;
	uint64_t head_va = sec_of(m, h) ? sp_va(m, h) : 0;

	put_page(m, h, hflags | BIT(kv->head), mapping, priv, mapcount, 1 + rnd(m) % 3);
	for (uint64_t i = 1; i <= ntails; i++) {
		uint64_t t = h + i;
		uint8_t *p = sp(m, t);

		if (!p)
			continue;
		memset(p, 0, SPAGE);
		wr_u64(p + SP_FLAGS, zone_bits(t));
		if (kv->compound_info)
			wr_u64(p + SP_HEAD, (~0ull << (k + 6 < 64 ? k + 6 : 63)) | 1);
		else
			wr_u64(p + SP_HEAD, head_va | 1);
		wr_u64(p + SP_MAPPING, TAIL_MAPPING);
		wr_u32(p + SP_MAPCOUNT, 0xffffffff);
		if (i == 1) {
			if (kv->dtor) {
				p[SP_DTOR] = (uint8_t)dtor;
				p[SP_ORDER] = (uint8_t)order_byte;
				wr_u32(p + 20, 0xffffffff);	/* compound_mapcount */
				wr_u32(p + 28, 1u << (k < 31 ? k : 0));	/* compound_nr */
			} else {
				/* folio->_flags_1: the order in its low byte */
				wr_u64(p + SP_FLAGS, zone_bits(t) | order_byte);
				wr_u32(p + 16, 0xffffffff);	/* _large_mapcount */
				/* Counters where a page has mapping (6.12's
				 * _nr_pages_mapped, partly mapped: odd): bit 0
				 * set, so this tail judged as a page of its own
				 * looks anonymous. Only the tail marker keeps it
				 * with its head. */
				wr_u32(p + 20, 0xffffffff);	/* _entire_mapcount */
				wr_u32(p + SP_MAPPING, 1 + 2 * (uint32_t)((h >> 1) % 256));
				wr_u32(p + SP_MAPPING + 4, 0);	/* _pincount */
			}
		}
	}
	(void)kv;
}

/* ---- objects ---- */

static int pfn_used(const struct mm *m, uint64_t pfn)
{
	return pfn < m->end_pfn && (m->used[pfn / 8] >> (pfn % 8) & 1);
}

static void mark_used(struct mm *m, uint64_t pfn)
{
	if (pfn < m->end_pfn)
		m->used[pfn / 8] |= (uint8_t)(1u << (pfn % 8));
}

static int in_ram(const struct mm *m, uint64_t pfn)
{
	for (size_t i = 0; i < m->L->nram; i++) {
		const struct seg *s = &m->L->load[i];
		if (pfn >= s->paddr / PAGE_SIZE && pfn < (s->paddr + s->filesz) / PAGE_SIZE)
			return 1;
	}
	return 0;
}

static int pfn_free(const struct mm *m, uint64_t pfn)
{
	return in_ram(m, pfn) && !pfn_used(m, pfn) && sec_of(m, pfn);
}

static struct mobj *add_obj(struct mm *m, uint64_t pfn, uint64_t npfn, unsigned order, enum otype t)
{
	if (!m->no_record && m->nobj == m->objcap) {
		m->objcap = m->objcap ? m->objcap * 2 : 1024;
		m->obj = realloc(m->obj, m->objcap * sizeof(*m->obj));
		if (!m->obj)
			die("out of memory");
	}
	struct mobj *ob = m->no_record ? &m->scratch : &m->obj[m->nobj++];
	*ob = (struct mobj){ .pfn = pfn, .npfn = npfn, .order = (uint8_t)order, .type = (uint8_t)t };
	for (uint64_t p = pfn; p < pfn + npfn; p++)
		if (in_ram(m, p))
			mark_used(m, p);
	return ob;
}

/* First run of n free pfns at pfn = phase (mod align) inside one RAM range;
 * 0 if none (pfn 0 is never RAM here). */
static uint64_t find_run(const struct mm *m, uint64_t n, uint64_t align, uint64_t phase)
{
	for (size_t i = 0; i < m->L->nram; i++) {
		const struct seg *s = &m->L->load[i];
		uint64_t lo = s->paddr / PAGE_SIZE, hi = (s->paddr + s->filesz) / PAGE_SIZE;
		uint64_t c = align_up(lo > phase ? lo - phase : 0, align) + phase;

		if (c < lo)
			c += align;
		while (c + n <= hi) {
			uint64_t bad = 0;
			for (uint64_t p = c; p < c + n; p++)
				if (!pfn_free(m, p)) {
					bad = p + 1;
					break;
				}
			if (!bad)
				return c;
			c = align_up(bad > phase ? bad - phase : 0, align) + phase;
			if (c < bad)
				c += align;
		}
	}
	return 0;
}

static uint64_t anon_ptr(struct mm *m) { return kptr(m) | 1; }

/* Writes object t at [pfn, pfn + 2^order) (or its special size). */
static void put_obj(struct mm *m, uint64_t pfn, unsigned k, enum otype t)
{
	const struct kver *kv = m->kv;
	uint64_t n = 1ull << k, i;
	uint64_t lru = BIT(kv->lru), upd = BIT(kv->uptodate);
	uint64_t slabf = kv->slab >= 0 ? BIT(kv->slab) : 0;
	uint32_t slabt = kv->types ? kv->t_slab : 0xffffffff;
	struct mobj *ob;

	switch (t) {
	case O_KERNEL:
	case O_TABLE:
		for (i = 0; i < n; i++)
			put_page(m, pfn + i, BIT(kv->reserved) | benign(m), 0, 0,
				 t == O_TABLE ? kv->t_table : 0xffffffff, 1);
		break;
	case O_BUDDY:
	case O_BUDDY_STALE:
		put_page(m, pfn, 0, 0, k, kv->t_buddy, 0);
		wr_u64(sp(m, pfn) + SP_HEAD, kptr(m));	/* on a free list */
		wr_u64(sp(m, pfn) + SP_LRU_PREV, kptr(m));
		for (i = 1; i < n; i++)
			put_page(m, pfn + i, 0, 0, 0, 0xffffffff, 0);
		if (t == O_BUDDY_STALE) {
			/* stale page-cache state on an inner page: only examined
			 * when the block is not excluded as free */
			uint64_t s = pfn + 5;
			put_page(m, s, lru | upd, kptr(m), 0, 0xffffffff, 0);
			ob = add_obj(m, pfn, n, k, t);
			ob->stale = s;
			return;
		}
		break;
	case O_CACHE:
	case O_CACHE_PRIV:
	case O_BIG_CACHE: {
		uint64_t f = lru | upd | benign(m) | (t == O_CACHE_PRIV ? BIT(kv->private_) : 0);
		uint64_t pr = t == O_CACHE_PRIV ? kptr(m) : 0;
		if (k == 0)
			put_page(m, pfn, f, kptr(m), pr, rnd(m) % 2 ? 0 : 0xffffffff, 2);
		else
			put_compound(m, pfn, k, f, kptr(m), pr, 0xffffffff, 1, k, n - 1);
		break;
	}
	case O_SHMEM:
		put_page(m, pfn, lru | upd | BIT(kv->swapbacked) | benign(m), kptr(m), 0, 0, 2);
		break;
	case O_SWAPCACHE_FILE:
		put_page(m, pfn, upd | BIT(kv->swapbacked) | BIT(kv->swapcache), kptr(m),
			 rnd(m) & 0xffffff, 0xffffffff, 1);
		break;
	case O_OWNERPRIV:
		put_page(m, pfn, BIT(kv->swapcache) | upd, kptr(m), 0, 0xffffffff, 1);
		break;
	case O_ANON:
		put_page(m, pfn, lru | upd | BIT(kv->swapbacked) | benign(m), anon_ptr(m), 0, 0, 1);
		break;
	case O_ANON_THP:
	case O_HWPOISON_THP:
		put_compound(m, pfn, k, lru | upd | BIT(kv->swapbacked) |
			     (t == O_HWPOISON_THP ? BIT(kv->hwpoison) : 0),
			     anon_ptr(m), 0, 0xffffffff, 3, k, n - 1);
		break;
	case O_ANON_SWAPCACHE:
		put_page(m, pfn, lru | upd | BIT(kv->swapbacked) | BIT(kv->swapcache),
			 anon_ptr(m), rnd(m) & 0xffffff, 0, 2);
		break;
	case O_KSM:
		put_page(m, pfn, lru | upd | BIT(kv->swapbacked), kptr(m) | 3, 0, 1, 3);
		break;
	case O_MOVABLE:
		put_page(m, pfn, 0, kptr(m) | 2, 0, 0xffffffff, 1);
		break;
	case O_ANON_SLAB:
		/* slab.slabs overlays mapping and may be odd */
		put_page(m, pfn, slabf, 0x0000000100000005ull, 0, slabt, 1);
		wr_u64(sp(m, pfn) + SP_HEAD, kptr(m));	/* slab_cache */
		break;
	case O_WAITERS_ANON:
		put_page(m, pfn, lru | upd | BIT(kv->swapbacked) | BIT(kv->waiters), anon_ptr(m), 0,
			 0, 1);
		break;
	case O_SLAB:
		if (k == 0) {
			put_page(m, pfn, slabf, kptr(m), 0, slabt, 1);
			wr_u64(sp(m, pfn) + SP_HEAD, kptr(m));
		} else {
			put_compound(m, pfn, k, slabf, kptr(m), 0, slabt, 1, k, n - 1);
		}
		break;
	case O_HUGETLB:
	case O_HUGETLB_FREE:
	case O_HUGETLB_1G:
		put_compound(m, pfn, k, upd, t == O_HUGETLB_FREE ? 0 : kptr(m), 0,
			     kv->types ? kv->t_hugetlb : 0xffffffff, 2, k, n - 1);
		break;
	case O_HWPOISON:
		put_page(m, pfn, BIT(kv->hwpoison), 0, 0, 0xffffffff, 1);
		break;
	case O_HWPOISON_ANON:
		put_page(m, pfn, lru | upd | BIT(kv->swapbacked) | BIT(kv->hwpoison), anon_ptr(m), 0,
			 0, 1);
		break;
	case O_HWPOISON_CACHE:
		put_page(m, pfn, lru | upd | BIT(kv->hwpoison), kptr(m), 0, 0xffffffff, 1);
		break;
	case O_OFFLINE:
		put_page(m, pfn, 0, 0, 0, kv->t_offline, 1);
		break;
	case O_OFFLINE_SLAB:
		/* 6.1: PG_slab set; 6.12: bit 7 (PG_waiters, read as PG_slab) */
		put_page(m, pfn, kv->slab >= 0 ? slabf : BIT(kv->waiters), 0, 0, kv->t_offline, 1);
		break;
	case O_UNACCEPTED:
		put_page(m, pfn, 0, 0, 0, kv->t_unaccepted, 0);
		for (i = 1; i < n; i++)
			put_page(m, pfn + i, 0, 0, 0, 0xffffffff, 0);
		break;
	case O_TYPED_DATA:
		/* a page type with extra bits: exact compares must not match */
		put_page(m, pfn, 0, 0, 0, kv->types ? kv->t_buddy | 1 : kv->t_buddy - 1, 1);
		break;
	case O_BUDDY_SLAB:
		put_page(m, pfn, kv->slab >= 0 ? slabf : BIT(kv->waiters), 0, 0, kv->t_buddy, 0);
		break;
	case O_TYPED_OTHER:
		put_page(m, pfn, 0, 0, 0, kv->types ? (rnd(m) % 2 ? kv->t_zsmalloc | 0x123 : kv->t_guard)
						    : kv->t_guard, 1);
		break;
	case O_BAD_BUDDY:
	case O_BAD_BUDDY11:
		put_page(m, pfn, t == O_BAD_BUDDY ? BIT(kv->hwpoison) : 0, 0,
			 t == O_BAD_BUDDY ? 200 : 11, kv->t_buddy, 0);
		for (i = 1; i < n; i++)
			put_page(m, pfn + i, 0, 0, 0, 0xffffffff, 0);
		break;
	case O_MISALIGNED_THP:
		put_compound(m, pfn, 9, lru | upd | BIT(kv->swapbacked), anon_ptr(m), 0, 0xffffffff, 3,
			     9, 511);
		add_obj(m, pfn, 512, 9, t);
		return;
	case O_MISALIGNED_HUGETLB:
		put_compound(m, pfn, 9, upd, kptr(m), 0, kv->types ? kv->t_hugetlb : 0xffffffff, 2, 9,
			     511);
		add_obj(m, pfn, 512, 9, t);
		return;
	case O_HEAD511:
		/* an order-10 slot of kernel pages, with a hugetlb head of
		 * stated order 1 at offset 511 (pfn = 511 mod 512) */
		for (i = 0; i < n; i++)
			put_page(m, pfn + i, BIT(kv->reserved), 0, 0, 0xffffffff, 1);
		put_compound(m, pfn + 511, 1, upd, kptr(m), 0, kv->types ? kv->t_hugetlb : 0xffffffff,
			     2, 1, 1);
		break;
	case O_THP_POISONED_TAIL:
	case O_FOLIO_POISONED_TAIL: {
		/* PG_hwpoison may sit on a tail: judged with the head, never
		 * alone, so it is kept whenever the head is */
		uint8_t *tp;
		if (t == O_THP_POISONED_TAIL)
			put_compound(m, pfn, k, lru | upd | BIT(kv->swapbacked), anon_ptr(m), 0,
				     0xffffffff, 3, k, n - 1);
		else
			put_compound(m, pfn, k, lru | upd, kptr(m), 0, 0xffffffff, 1, k, n - 1);
		tp = sp(m, pfn + n / 2 + 1);
		wr_u64(tp + SP_FLAGS, rd_u64(tp + SP_FLAGS) | BIT(kv->hwpoison));
		break;
	}
	case O_RANDOM:
	case O_NTYPES:
		break;
	}
	add_obj(m, pfn, n, k, t);
}

/* Catalogue: every class at least once, placed first. */
static void place(struct mm *m, enum otype t, unsigned k)
{
	uint64_t at = find_run(m, 1ull << k, 1ull << k, 0);

	if (!at) {
		fprintf(stderr, "%s: note: no room for %s order %u\n", prog, otype_names[t], k);
		return;
	}
	put_obj(m, at, k, t);
}

static void place_at_phase(struct mm *m, enum otype t, uint64_t n, uint64_t align, uint64_t phase)
{
	uint64_t at = find_run(m, n, align, phase);

	if (!at) {
		fprintf(stderr, "%s: note: no room for %s\n", prog, otype_names[t]);
		return;
	}
	put_obj(m, at, 0, t);
}

/* The 1 GiB hugetlb page: at a 1 GiB-aligned pfn whose own and first tail
 * struct pages exist; it may run over holes and sections without RAM. */
static void place_1g(struct mm *m)
{
	const uint64_t n = 1ull << 18;

	for (uint64_t p = n; p < m->end_pfn; p += n) {
		if (!pfn_free(m, p) || !pfn_free(m, p + 1))
			continue;
		int ok = 1;
		for (uint64_t q = p; q < p + n && ok; q++)
			if (in_ram(m, q) && pfn_used(m, q))
				ok = 0;
		if (ok) {
			put_obj(m, p, 18, O_HUGETLB_1G);
			return;
		}
	}
}

static void fill_mix(struct mm *m)
{
	static const struct { enum otype t; unsigned weight, maxorder; } mix[] = {
		{ O_BUDDY, 30, 10 }, { O_CACHE, 18, 4 }, { O_CACHE_PRIV, 5, 2 }, { O_ANON, 14, 0 },
		{ O_ANON_THP, 2, 9 }, { O_SHMEM, 3, 0 }, { O_SLAB, 8, 3 }, { O_KERNEL, 10, 0 },
		{ O_HUGETLB, 1, 9 }, { O_HWPOISON, 1, 0 }, { O_OFFLINE, 1, 0 }, { O_KSM, 1, 0 },
		{ O_MOVABLE, 1, 0 }, { O_ANON_SLAB, 1, 0 }, { O_WAITERS_ANON, 1, 0 },
		{ O_TYPED_OTHER, 1, 0 }, { O_ANON_SWAPCACHE, 1, 0 }, { O_SWAPCACHE_FILE, 1, 0 },
	};
	unsigned total = 0;

	for (size_t i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		total += mix[i].weight;
	for (size_t si = 0; si < m->L->nram; si++) {
		const struct seg *s = &m->L->load[si];
		uint64_t lo = s->paddr / PAGE_SIZE, hi = (s->paddr + s->filesz) / PAGE_SIZE;

		for (uint64_t p = lo; p < hi; p++) {
			if (!pfn_free(m, p))
				continue;
			uint64_t r = rnd(m);
			unsigned w = (unsigned)(r % total), k;
			size_t i = 0;
			while (w >= mix[i].weight)
				w -= mix[i++].weight;
			enum otype t = mix[i].t;
			/* orders: geometric below the type's maximum; THP and
			 * hugetlb are all or nothing */
			if (t == O_ANON_THP || t == O_HUGETLB)
				k = 9;
			else
				for (k = 0; k < mix[i].maxorder && (r >> (32 + k)) & 1; k++)
					;
			for (;;) {
				uint64_t n = 1ull << k, q;
				int ok = !(p & (n - 1)) && p + n <= hi;
				for (q = p; ok && q < p + n; q++)
					ok = pfn_free(m, q);
				if (ok)
					break;
				if (k == 0 || t == O_ANON_THP || t == O_HUGETLB) {
					if (t == O_ANON_THP || t == O_HUGETLB) {
						t = O_ANON;
						k = 0;
						continue;
					}
					break;
				}
				k--;
			}
			if (!pfn_free(m, p))
				continue;
			put_obj(m, p, k, t);
			p += (1ull << k) - 1;
		}
	}
}

/* --straddle: the capture classifies struct pages in spans of 4096 pfns,
 * each from no carry, and joins each to the run that carries into it; it
 * encodes 256-pfn blocks. Here runs cross those boundaries wherever the
 * catalogue left room: a free block not aligned to its order (the rules
 * do not ask for that) across nearly every block boundary, so that runs
 * end inside the next span; an order-9 THP across every eighth; and
 * every 64 Ki pfns an order-13 page-cache folio, which covers a whole
 * span and ends on the next boundary. Boundaries that a THP ends on
 * cannot also be crossed. At the other span boundaries, a stale buddy
 * head inside such a free block states a run past its end: the in-order
 * pass never sees it (it lies inside the block), a span's own pass does,
 * and the join must judge the pfns after the block again. */
static int all_free(const struct mm *m, uint64_t pfn, uint64_t n)
{
	for (uint64_t p = pfn; p < pfn + n; p++)
		if (!pfn_free(m, p))
			return 0;
	return 1;
}

static void place_straddle(struct mm *m)
{
	for (size_t i = 0; i < m->L->nram; i++) {
		const struct seg *s = &m->L->load[i];
		uint64_t lo = s->paddr / PAGE_SIZE, hi = (s->paddr + s->filesz) / PAGE_SIZE;

		for (uint64_t b = align_up(lo + 16, 256); b + 256 <= hi; b += 256) {
			uint64_t r = b % 2048, j = b / 256;
			if (b % 65536 == 8192 && all_free(m, b, 8192)) {
				put_obj(m, b, 13, O_BIG_CACHE);
				b += 8192 - 256;
				continue;
			}
			if (r == 1024 + 256) {
				if (all_free(m, b - 256, 512))
					put_obj(m, b - 256, 9, O_ANON_THP);
				continue;
			}
			if (r == 1024 || r == 1024 + 512)
				continue;
			if (b % 4096 == 0 && all_free(m, b - 3, 32 + 45)) {
				put_obj(m, b - 3, 5, O_BUDDY);		/* [b-3, b+29) */
				for (uint64_t p = b + 29; p < b + 74; p++)
					put_obj(m, p, 0, O_KERNEL);
				put_page(m, b + 10, 0, 0, 6, m->kv->t_buddy, 0);	/* to b+74 */
				continue;
			}
			unsigned k = 2 + (unsigned)(j % 4);
			uint64_t h = b - 3 - j % 3;
			if (all_free(m, h, 1ull << k))
				put_obj(m, h, k, O_BUDDY);
		}
	}
}

/* Around a span (4096-pfn) or section (32768-pfn: a 2 MiB leaf of struct
 * pages) boundary B, for the memory map's exclusion: the page of struct
 * pages for [B-64, B) describes free blocks and one kernel page, at B-1,
 * and the one for [B, B+64) a kernel page at B and free blocks: both are
 * needed, whichever side of the boundary judges them. Beyond them, an
 * order-6 free block on each side, whose page of struct pages describes
 * only free pages. Up to 4 span boundaries per RAM range, and every
 * section boundary with room. */
static void place_memmap_edges(struct mm *m)
{
	for (size_t i = 0; i < m->L->nram; i++) {
		const struct seg *s = &m->L->load[i];
		uint64_t lo = s->paddr / PAGE_SIZE, hi = (s->paddr + s->filesz) / PAGE_SIZE;
		unsigned spans = 0;

		for (uint64_t b = align_up(lo + 128, 4096); b + 128 <= hi; b += 4096) {
			int sec = b % SEC_PFNS == 0;
			if ((!sec && spans >= 4) || !all_free(m, b - 128, 256))
				continue;
			spans += !sec;
			put_obj(m, b - 128, 6, O_BUDDY);
			for (unsigned k = 5, at = 64; k < 6; k--, at >>= 1)
				put_obj(m, b - at, k, O_BUDDY);		/* b-64 .. b-2 */
			put_obj(m, b - 1, 0, O_KERNEL);
			put_obj(m, b, 0, O_KERNEL);
			for (unsigned k = 0; k < 6; k++)
				put_obj(m, b + (1ull << k), k, O_BUDDY);	/* b+1 .. b+63 */
			put_obj(m, b + 64, 6, O_BUDDY);
		}
	}
}

/* ---- arm64: init_uts_ns and the printk ring ----
 *
 * What `kdumpinit info`, `dmesg` and drgn read by virtual address, in
 * the kernel image: init_uts_ns (struct new_utsname at offset 0: six
 * 65-byte strings), and `prb`, a pointer to a printk_ringbuffer whose
 * descriptor, info and text arrays it points at through the linear map
 * (log_buf_len= moves them to memblock memory). The 6.1 layout, as
 * VMCOREINFO gives it: printk_ringbuffer {desc_ring at 0: count_bits,
 * descs 8, infos 16, head_id 24, tail_id 32; text_data_ring at 48:
 * size_bits, data 8}, 88 bytes; prb_desc {state_var, text_blk_lpos
 * {begin, next}}, 24; printk_info {seq, ts_nsec, text_len u16}, 88. */
#define RING_COUNT_BITS 4
#define RING_SIZE_BITS 12
/* --ring-zero-pages: a text ring of 16 KiB, its last three pages unused
 * (zero), as a real ring has pages nothing was written to yet: a dump at
 * level 31 leaves them out, and a saved ELF holds them as zero fill. */
#define RING_SIZE_BITS_ZERO 14
static const char *const ring_msgs[] = {
	"Booting Linux on physical CPU 0x0000000000 [0x000f0510]",
	"Linux version %s (mkvmcore) #1 SMP Debian",
	"Machine model: linux,dummy-virt",
	"sysrq: Trigger a crash",
	"Kernel panic - not syncing: sysrq triggered crash\nCPU: 0 PID: 1 Comm: sh",
};
#define RING_NMSGS (sizeof(ring_msgs) / sizeof(ring_msgs[0]))

static void a64_uts_and_ring(struct mm *m)
{
	const struct opts *o = m->o;
	const char *rel = o->osrelease ? o->osrelease : m->kv->release;
	const char *uts[6] = { "Linux", "mkvmcore", rel, "#1 SMP Debian", "aarch64", "(none)" };
	uint64_t voff = a64_kimage_voffset(o);

	m->uts = pool_alloc(m, PAGE_SIZE, 0);
	for (int i = 0; i < 6; i++)
		memcpy(img_at(m, m->uts + 65 * i, 65), uts[i], strlen(uts[i]));

	/* page 1: prb, the ring at +256, descs at +1024, infos at +1536;
	 * page 2 on: the text data ring */
	unsigned size_bits = o->ring_zero ? RING_SIZE_BITS_ZERO : RING_SIZE_BITS;
	uint64_t size = 1ull << size_bits, lpos = 0, first = 100;
	uint64_t pg = pool_alloc(m, PAGE_SIZE + size, 0), rb = pg + 256;
	uint64_t descs = pg + 1024, infos = pg + 1536, text = pg + PAGE_SIZE;
	m->ring = pg;
	memset(img_at(m, pg, PAGE_SIZE + size), 0, PAGE_SIZE + size);
	wr_u64(img_at(m, pg, 8), voff + rb);
	wr_u32(img_at(m, rb, 4), RING_COUNT_BITS);
	wr_u64(img_at(m, rb + 8, 8), m->po + descs);
	wr_u64(img_at(m, rb + 16, 8), m->po + infos);
	wr_u32(img_at(m, rb + 48, 4), size_bits);
	wr_u64(img_at(m, rb + 56, 8), m->po + text);
	for (uint64_t k = 0; k < RING_NMSGS; k++) {
		char t[256];
		int n = snprintf(t, sizeof t, ring_msgs[k], rel);
		uint64_t id = first + k, blk = (8 + (uint64_t)n + 7) & ~7ull;
		if (lpos % size + blk > size)
			die("internal: printk text ring too small");
		wr_u64(img_at(m, text + lpos % size, 8), id);
		memcpy(img_at(m, text + lpos % size + 8, (size_t)n), t, (size_t)n);
		uint64_t d = descs + (id % (1u << RING_COUNT_BITS)) * 24;
		wr_u64(img_at(m, d, 8), (2ull << 62) | id);	/* finalized */
		wr_u64(img_at(m, d + 8, 8), lpos);
		wr_u64(img_at(m, d + 16, 8), lpos + blk);
		uint64_t i = infos + (id % (1u << RING_COUNT_BITS)) * 88;
		wr_u64(img_at(m, i, 8), id);	/* seq: congruent to the slot, as the kernel's */
		wr_u64(img_at(m, i + 8, 8), 1000000ull * (k + 1) * 1234567);	/* ts_nsec */
		uint8_t *tl = img_at(m, i + 16, 2);
		tl[0] = (uint8_t)n;
		tl[1] = (uint8_t)(n >> 8);
		lpos += blk;
	}
	wr_u64(img_at(m, rb + 24, 8), first + RING_NMSGS - 1);	/* head_id */
	wr_u64(img_at(m, rb + 32, 8), first);			/* tail_id */
}

/* FILE.dmesg: the records' texts, one line each (a record's own newlines
 * start a further line), for tests that read the log back. */
static void write_ring_text(const struct opts *o)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.dmesg", o->out);
	if (!(f = fopen(path, "w")))
		die("%s: %s", path, strerror(errno));
	for (size_t k = 0; k < RING_NMSGS; k++) {
		fprintf(f, ring_msgs[k], o->osrelease);
		fputc('\n', f);
	}
	if (fclose(f))
		die("%s: %s", path, strerror(errno));
}

/* ---- building it all ---- */

static void mm_sections(struct mm *m)
{
	size_t cap = 0;

	for (size_t i = 0; i < m->L->nram; i++) {
		const struct seg *s = &m->L->load[i];
		uint64_t a = s->paddr / PAGE_SIZE, b = (s->paddr + s->filesz) / PAGE_SIZE;
		if (b > m->end_pfn)
			m->end_pfn = b;
		for (uint64_t nr = a >> SEC_SHIFT; b > a && nr <= (b - 1) >> SEC_SHIFT; nr++) {
			if (m->nsec && m->sec[m->nsec - 1].nr >= nr)
				continue;
			if (m->nsec == cap) {
				cap = cap ? cap * 2 : 16;
				m->sec = realloc(m->sec, cap * sizeof(*m->sec));
				if (!m->sec)
					die("out of memory");
			}
			m->sec[m->nsec++] = (struct mmsec){ .nr = nr };
		}
	}
}

static int scale_mode(const struct opts *o);
static uint8_t *scale_map_region(struct mm *m, const struct opts *o, struct layout *L);
static void fill_mix_ref(struct mm *m);

static void mm_build(struct mm *m, const struct opts *o, struct layout *L)
{
	const struct seg *s0 = &L->load[0];
	uint64_t ram_pages = 0;

	m->o = o;
	m->L = L;
	m->kv = o->mm;
	m->levels = o->mm_levels;
	m->leaf = o->leaf;
	m->top_bits = 9;
	m->ktext = KTEXT_VADDR;
	m->mpb = m->levels == 5 ? 52 : 46;
	if (o->arm64) {
		/* each level resolves 9 bits above the page offset; 52 bits
		 * leave 4 for a 16-entry top table */
		m->levels = (o->cpu_va_bits - 12 + 8) / 9;
		m->top_bits = o->cpu_va_bits - 12 - 9 * (m->levels - 1);
		m->lpa2 = o->cpu_va_bits > 48;
		m->ktext = a64_text_va(o);
		m->ram_base = L->load[0].paddr & ~(SZ_1G - 1);
		m->mpb = o->va_bits > 48 ? 52 : 48;	/* CONFIG_ARM64_PA_BITS */
	}
	m->po = direct_map_base(o);
	m->vtb = m->levels == 5 ? MM_VTB5 : MM_VTB4;
	m->rng = o->seed * 0x2545f4914f6cdd1dull + 7;
	mm_sections(m);
	for (size_t i = 0; i < L->nram; i++)
		ram_pages += L->load[i].filesz / PAGE_SIZE;

	/* SPARSEMEM_EXTREME: LENGTH = NR_SECTION_ROOTS */
	m->spr = PAGE_SIZE / o->ms_size;
	m->roots_len = ((1ull << (m->mpb - 27)) + m->spr - 1) / m->spr;

	/* the region: pool, then one 2 MiB chunk per present section */
	uint64_t pool_pages = 64 + ram_pages / 512 + ram_pages / (512 * 512) + 16 * L->nram +
			      8 * m->nsec + (m->roots_len * 8 + PAGE_SIZE - 1) / PAGE_SIZE + m->nsec;
	m->rbase = o->kernel_at;
	m->pool = m->rbase;
	m->pool_end = m->rbase + align_up(pool_pages * PAGE_SIZE, SZ_2M);
	m->chunks = m->pool_end;
	m->rend = m->chunks + m->nsec * SEC_MAP_BYTES;
	if (m->rbase < s0->paddr || m->rend > s0->paddr + s0->filesz)
		die("--mm: the first RAM range [0x%" PRIx64 ", 0x%" PRIx64 ") must hold the kernel "
		    "region [0x%" PRIx64 ", 0x%" PRIx64 ") (--kernel-at, more memory)",
		    s0->paddr, s0->paddr + s0->filesz, m->rbase, m->rend);
	if (m->leaf == 30 && !o->arm64 && m->rend > SZ_1G)
		die("--leaf 1g: the kernel region must lie below 1 GiB");
	m->img = scale_mode(o) ? scale_map_region(m, o, L) : malloc(m->rend - m->rbase);
	m->is_table = calloc((m->rend - m->rbase) / PAGE_SIZE, 1);
	m->used = calloc(m->end_pfn / 8 + 1, 1);
	if (!m->img || !m->is_table || !m->used)
		die("out of memory");
	/* unused region memory looks like any other kernel memory (mapped:
	 * the chunks are all struct pages, written below) */
	for (uint64_t pa = m->rbase; pa < (m->mapped ? m->chunks : m->rend); pa += PAGE_SIZE) {
		uint8_t *pg = m->img + (pa - m->rbase);
		if (!gen_page(o, pa / PAGE_SIZE, pg))
			memset(pg, 0, PAGE_SIZE);	/* mapped: a block, not a hole (an extent) */
	}
	for (size_t i = 0; i < m->nsec; i++)
		m->sec[i].chunk = m->chunks + i * SEC_MAP_BYTES;

	m->pgd = pool_alloc(m, PAGE_SIZE, 1);

	/* direct map */
	for (size_t i = 0; i < L->nram; i++) {
		const struct seg *s = &L->load[i];
		uint64_t step = 1ull << m->leaf;
		uint64_t a = s->paddr / step * step, b = align_up(s->paddr + s->filesz, step);
		for (uint64_t pa = a; pa < b; pa += step)
			map_leaf(m, m->po + pa, pa, m->leaf, PTE_NX);
	}
	/* kernel text */
	{
		unsigned sh = m->leaf == 12 ? 12 : 21;
		uint64_t len = s0->paddr + s0->filesz - o->kernel_at;
		uint64_t tlen = o->arm64 ? A64_TEXT_LEN : KTEXT_LEN;
		if (len > tlen)
			len = tlen;
		len = len >> sh << sh;
		for (uint64_t x = 0; x < len; x += 1ull << sh)
			map_leaf(m, m->ktext + x, o->kernel_at + x, sh, 0);
	}
	/* vmemmap */
	if (o->arm64) {
		/* the kernel's own formula; vmemmap_populate() maps it with
		 * 2 MiB blocks (--leaf 1g too) or, for --leaf 4k, pages */
		m->vmemmap = a64_vmemmap(o);
		for (size_t i = 0; i < m->nsec; i++) {
			struct mmsec *sc = &m->sec[i];
			sc->va = m->vmemmap + sc->nr * SEC_MAP_BYTES;
			if (m->leaf != 12) {
				map_leaf(m, sc->va, sc->chunk, 21, PTE_NX);
			} else {
				for (uint64_t j = 0; j < SEC_MAP_BYTES / PAGE_SIZE; j++)
					map_leaf(m, sc->va + j * PAGE_SIZE,
						 sc->chunk + perm(m, j) * PAGE_SIZE, 12, PTE_NX);
			}
		}
	} else if (m->leaf == 30) {
		uint64_t va_a = m->vtb - SZ_1G, va_b = m->vtb;
		map_leaf(m, va_a, 0, 30, PTE_NX);
		if (m->nsec > 1)
			map_leaf(m, va_b, 0, 30, PTE_NX);
		for (size_t i = 0; i < m->nsec; i++)
			m->sec[i].va = (i == 0 ? va_a : va_b) + m->sec[i].chunk;
		m->vmemmap = va_a;
	} else {
		m->vmemmap = m->vtb - SEC_MAP_BYTES * (m->sec[0].nr + 1);
		for (size_t i = 0; i < m->nsec; i++) {
			struct mmsec *sc = &m->sec[i];
			sc->va = m->vmemmap + sc->nr * SEC_MAP_BYTES;
			if (m->leaf == 21) {
				map_leaf(m, sc->va, sc->chunk, 21, PTE_NX);
			} else {
				for (uint64_t j = 0; j < SEC_MAP_BYTES / PAGE_SIZE; j++)
					map_leaf(m, sc->va + j * PAGE_SIZE,
						 sc->chunk + perm(m, j) * PAGE_SIZE, 12, PTE_NX);
			}
		}
	}
	/* mem_section */
	m->roots = pool_alloc(m, m->roots_len * 8, 0);
	{
		uint64_t usage = pool_alloc(m, PAGE_SIZE, 0);
		memset(img_at(m, usage, PAGE_SIZE), 0xff, PAGE_SIZE);	/* subsection map */
		for (size_t i = 0; i < m->nsec; i++) {
			const struct mmsec *sc = &m->sec[i];
			uint64_t r = sc->nr / m->spr, blk = 0;
			for (size_t b = 0; b < m->nblocks; b++)
				if (m->blocks_r[b] == r)
					blk = m->blocks_pa[b];
			if (!blk) {
				if (m->nblocks == 64)
					die("--mm: RAM spread over too many mem_section roots");
				blk = pool_alloc(m, PAGE_SIZE, 0);
				m->blocks_r[m->nblocks] = r;
				m->blocks_pa[m->nblocks++] = blk;
				wr_u64(img_at(m, m->roots + r * 8, 8), m->po + blk);
			}
			uint8_t *e = img_at(m, blk + (sc->nr % m->spr) * o->ms_size, o->ms_size);
			wr_u64(e, (sc->va - (sc->nr << SEC_SHIFT) * SPAGE) | SECTION_FLAGS);
			wr_u64(e + 8, m->po + usage);
		}
	}
	if (o->arm64) {
		a64_uts_and_ring(m);
	} else {
		/* init_uts_ns, where the text mapping reaches it: what
		 * makedumpfile checks OSRELEASE against */
		const char *rel = o->osrelease ? o->osrelease : m->kv->release;
		const char *uts[6] = { "Linux", "mkvmcore", rel, "#1 SMP Debian", "x86_64", "(none)" };
		m->uts = pool_alloc(m, PAGE_SIZE, 0);
		for (int i = 0; i < 6; i++)
			memcpy(img_at(m, m->uts + 65 * i, 65), uts[i], strlen(uts[i]));
	}

	/* struct pages: everything reserved first, then the kernel region,
	 * then the catalogue, then a random mix */
	for (size_t i = 0; i < m->nsec; i++)
		for (uint64_t p = m->sec[i].nr << SEC_SHIFT; p < (m->sec[i].nr + 1) << SEC_SHIFT; p++)
			put_page(m, p, BIT(m->kv->reserved), 0, 0, 0xffffffff, 1);
	for (uint64_t pa = m->rbase; pa < m->rend; pa += PAGE_SIZE) {
		uint64_t pfn = pa / PAGE_SIZE;
		put_obj(m, pfn, 0, m->is_table[(pa - m->rbase) / PAGE_SIZE] ? O_TABLE : O_KERNEL);
	}

	switch (o->corrupt) {
	case CX_BUDDY_ORDER:
		place(m, O_BAD_BUDDY, 3);
		place(m, O_BAD_BUDDY11, 3);
		break;
	case CX_ORDER_MISALIGNED:
		place_at_phase(m, O_MISALIGNED_THP, 512, 512, 256);
		place_at_phase(m, O_MISALIGNED_HUGETLB, 512, 512, 256);
		break;
	case CX_HEAD_511:
		place(m, O_HEAD511, 10);
		break;
	default:
		break;
	}
	place_1g(m);
	place(m, O_BIG_CACHE, 13);
	for (unsigned k = 0; k <= 10; k++)
		place(m, O_BUDDY, k);
	place(m, O_BUDDY, 10);
	place(m, O_BUDDY_STALE, 3);
	place(m, O_ANON_THP, 9);
	place(m, O_ANON_THP, 9);
	place(m, O_HUGETLB, 9);
	place(m, O_HUGETLB_FREE, 9);
	place(m, O_HWPOISON_THP, 9);
	place(m, O_THP_POISONED_TAIL, 9);
	place(m, O_FOLIO_POISONED_TAIL, 4);
	if (m->kv->types)
		place(m, O_UNACCEPTED, 10);
	place(m, O_CACHE, 2);
	place(m, O_CACHE_PRIV, 4);
	place(m, O_SLAB, 3);
	static const enum otype singles[] = {
		O_CACHE, O_CACHE_PRIV, O_SHMEM, O_SWAPCACHE_FILE, O_OWNERPRIV, O_ANON,
		O_ANON_SWAPCACHE, O_KSM, O_MOVABLE, O_ANON_SLAB, O_WAITERS_ANON, O_SLAB,
		O_HWPOISON, O_HWPOISON_ANON, O_HWPOISON_CACHE, O_OFFLINE, O_OFFLINE_SLAB,
		O_TYPED_DATA, O_BUDDY_SLAB, O_TYPED_OTHER, O_KERNEL,
	};
	for (int rep = 0; rep < 2; rep++)
		for (size_t i = 0; i < sizeof(singles) / sizeof(singles[0]); i++)
			place(m, singles[i], 0);
	if (o->straddle)
		place_straddle(m);
	if (o->memmap_edges)
		place_memmap_edges(m);
	/* the mix is kept only for the expectation */
	m->no_record = o->no_expect;
	if (o->mix.on)
		fill_mix_ref(m);
	else
		fill_mix(m);
}

/* The first object of type t, or NULL. */
static const struct mobj *first_obj(const struct mm *m, enum otype t)
{
	for (size_t i = 0; i < m->nobj; i++)
		if (m->obj[i].type == t)
			return &m->obj[i];
	return NULL;
}

static void mm_corrupt(struct mm *m)
{
	const struct opts *o = m->o;
	const struct mobj *ob;

	if (o->corrupt != CX_NONE && o->corrupt != CX_BUDDY_ORDER &&
	    o->corrupt != CX_ORDER_MISALIGNED && o->corrupt != CX_HEAD_511 &&
	    o->corrupt != CX_RANDOM_BYTES && o->corrupt != CX_ROOT_ZERO &&
	    o->corrupt != CX_PTE_HOLE && m->nsec < 2)
		die("--corrupt %s needs RAM in two sections (more than 128 MiB)",
		    corrupt_names[o->corrupt]);
	switch (o->corrupt) {
	case CX_VMEMMAP_PGD:
		wr_u64(pt_slot(m, m->sec[1].va, m->levels), 0);
		break;
	case CX_VMEMMAP_PUD:
		wr_u64(pt_slot(m, m->sec[1].va, 3), 0);
		break;
	case CX_PMD_OUTSIDE:
		if (o->arm64)	/* its vmemmap has PMDs whatever --leaf says */
			wr_u64(pt_slot(m, m->sec[1].va, 2), m->leaf == 12 ?
			       pte_table(m, MM_OUTSIDE_PA) : pte_leaf(m, MM_OUTSIDE_PA, 2, 1));
		else if (m->leaf == 30)	/* no PMDs under this vmemmap: the PUD leaf instead */
			wr_u64(pt_slot(m, m->sec[1].va, 3), MM_OUTSIDE_PA | PTE_LEAF | PTE_PSE);
		else if (m->leaf == 21)
			wr_u64(pt_slot(m, m->sec[1].va, 2), MM_OUTSIDE_PA | PTE_LEAF | PTE_PSE);
		else
			wr_u64(pt_slot(m, m->sec[1].va, 2), MM_OUTSIDE_PA | PTE_TABLE);
		break;
	case CX_PTE_HOLE:
		if (m->leaf != 12)
			die("--corrupt pte-hole needs --leaf 4k");
		/* the page of struct pages holding an anon THP head, and a
		 * page of tails (not the first) of a hugetlb page */
		if (!(ob = first_obj(m, O_ANON_THP)))
			die("pte-hole: no THP placed");
		wr_u64(pt_slot(m, sp_va(m, ob->pfn), 1), 0);
		if (!(ob = first_obj(m, O_HUGETLB)))
			die("pte-hole: no hugetlb page placed");
		wr_u64(pt_slot(m, sp_va(m, ob->pfn + 128), 1), 0);
		break;
	case CX_SECTION_GARBAGE:
	case CX_SECTION_ABSENT: {
		const struct mmsec *sc = &m->sec[1];
		uint64_t blk = 0;
		for (size_t b = 0; b < m->nblocks; b++)
			if (m->blocks_r[b] == sc->nr / m->spr)
				blk = m->blocks_pa[b];
		wr_u64(img_at(m, blk + (sc->nr % m->spr) * o->ms_size, 8),
		       o->corrupt == CX_SECTION_GARBAGE ? 0x0000dead00000000ull | SECTION_FLAGS : 0);
		break;
	}
	case CX_ROOT_ZERO:
		wr_u64(img_at(m, m->roots, 8), 0);
		break;
	case CX_RANDOM_BYTES: {
		/* the page of struct pages of 64 pfns near the end of the
		 * first range, well inside one section */
		const struct seg *s0 = &m->L->load[0];
		uint64_t p = ((s0->paddr + s0->filesz) / PAGE_SIZE - 300) & ~63ull;
		uint8_t *pg = img_at(m, sp_pa(m, p), PAGE_SIZE);
		uint64_t st = o->seed ^ 0x5eedull;
		for (size_t i = 0; i < PAGE_SIZE; i += 8) {
			uint64_t v = mix64(st + i);
			memcpy(pg + i, &v, 8);
		}
		/* the objects that lost their struct pages become "random" */
		for (size_t i = 0; i < m->nobj; i++)
			if (m->obj[i].pfn < p + 64 && m->obj[i].pfn + m->obj[i].npfn > p)
				m->obj[i].type = O_RANDOM;
		break;
	}
	default:
		break;
	}
}

static int mix_content(const struct opts *o, const struct mm *m, uint64_t pfn, uint8_t *page);

static int page_content(const struct opts *o, uint64_t pfn, uint8_t *page)
{
	struct mm *m = g_mm;

	if (m && in_region(m, pfn * PAGE_SIZE, PAGE_SIZE)) {
		const uint8_t *src = m->img + (pfn * PAGE_SIZE - m->rbase);
		for (size_t i = 0; i < PAGE_SIZE; i++)
			if (src[i]) {
				memcpy(page, src, PAGE_SIZE);
				return 1;
			}
		return 0;
	}
	if (m && m->kdata)
		return mix_content(o, m, pfn, page);
	return gen_page(o, pfn, page);
}

/* VMCOREINFO as a 6.1 / 6.12 / 6.16 x86_64 kernel writes it (the keys
 * kernel/vmcore_info.c and arch/x86/kernel/machine_kexec_64.c emit; sizes
 * of structs the filter does not use are the Debian kernels' values). */
static void type_line(struct blob *t, const struct kver *kv, const char *key, uint32_t v)
{
	if (kv->print_unsigned)
		blob_printf(t, "NUMBER(%s)=%" PRIu32 "\n", key, v);
	else
		blob_printf(t, "NUMBER(%s)=%" PRId32 "\n", key, (int32_t)v);
}

/* The printk keys (kernel/printk/printk.c, log_buf_vmcoreinfo_setup),
 * then what arm64's arch_crash_save_vmcoreinfo() adds (6.1: VA_BITS in
 * decimal, the rest in hex; 6.12 also the region bounds), then CRASHTIME. */
static int vmcoreinfo_a64_tail(struct blob *t, const struct opts *o, const struct mm *m)
{
	uint64_t voff = a64_kimage_voffset(o);

	blob_printf(t, "SYMBOL(node_data)=%" PRIx64 "\n"
		    "LENGTH(node_data)=16\n"
		    "SYMBOL(prb)=%" PRIx64 "\n"
		    "SIZE(printk_ringbuffer)=88\n"
		    "OFFSET(printk_ringbuffer.desc_ring)=0\n"
		    "OFFSET(printk_ringbuffer.text_data_ring)=48\n"
		    "OFFSET(prb_desc_ring.count_bits)=0\n"
		    "OFFSET(prb_desc_ring.descs)=8\n"
		    "OFFSET(prb_desc_ring.infos)=16\n"
		    "OFFSET(prb_desc_ring.head_id)=24\n"
		    "OFFSET(prb_desc_ring.tail_id)=32\n"
		    "SIZE(prb_desc)=24\n"
		    "OFFSET(prb_desc.state_var)=0\n"
		    "OFFSET(prb_desc.text_blk_lpos)=8\n"
		    "OFFSET(prb_data_blk_lpos.begin)=0\n"
		    "OFFSET(prb_data_blk_lpos.next)=8\n"
		    "SIZE(printk_info)=88\n"
		    "OFFSET(printk_info.seq)=0\n"
		    "OFFSET(printk_info.ts_nsec)=8\n"
		    "OFFSET(printk_info.text_len)=16\n"
		    "OFFSET(prb_data_ring.size_bits)=0\n"
		    "OFFSET(prb_data_ring.data)=8\n"
		    "OFFSET(atomic_long_t.counter)=0\n"
		    "NUMBER(VA_BITS)=%u\n"
		    "NUMBER(kimage_voffset)=0x%" PRIx64 "\n"
		    "NUMBER(PHYS_OFFSET)=0x%" PRIx64 "\n"
		    "NUMBER(TCR_EL1_T1SZ)=0x%x\n",
		    m->ktext + 0x1a3b900, voff + m->ring, o->va_bits, voff, a64_phys_offset(o),
		    64 - o->cpu_va_bits);
	if (a64_new_layout(o)) {
		uint64_t modules = ~0ull << (a64_va_min(o) - 1), vs = a64_vmemmap_start(o);
		blob_printf(t, "NUMBER(MODULES_VADDR)=0x%" PRIx64 "\n"
			    "NUMBER(MODULES_END)=0x%" PRIx64 "\n"
			    "NUMBER(VMALLOC_START)=0x%" PRIx64 "\n"
			    "NUMBER(VMALLOC_END)=0x%" PRIx64 "\n"
			    "NUMBER(VMEMMAP_START)=0x%" PRIx64 "\n"
			    "NUMBER(VMEMMAP_END)=0x%" PRIx64 "\n",
			    modules, modules + (2ull << 30), modules + (2ull << 30),
			    vs - (8ull << 20), vs, -(1ull << 30));
	}
	blob_printf(t, "KERNELOFFSET=%" PRIx64 "\n"
		    "NUMBER(KERNELPACMASK)=0x%" PRIx64 "\n"
		    "CRASHTIME=%" PRId64 "\n",
		    a64_kaslr(o), ~0ull << o->cpu_va_bits, o->crashtime);
	return 0;
}

static int vmcoreinfo_mm(struct blob *t, const struct opts *o, int64_t phys_base)
{
	const struct mm *m = g_mm;
	const struct kver *kv = m->kv;
	uint64_t pgd_sym = START_KERNEL_MAP + m->pgd - (uint64_t)phys_base;

	blob_printf(t, "OSRELEASE=%s\n", o->osrelease ? o->osrelease : kv->release);
	blob_printf(t, "BUILD-ID=%016" PRIx64 "%016" PRIx64 "%08" PRIx32 "\n", mix64(o->seed),
		    mix64(o->seed + 1), (uint32_t)mix64(o->seed + 2));
	if (o->arm64) {
		uint64_t voff = a64_kimage_voffset(o);
		blob_printf(t, "PAGESIZE=4096\n"
			    "SYMBOL(init_uts_ns)=%" PRIx64 "\n"
			    "OFFSET(uts_namespace.name)=0\n"
			    "SYMBOL(node_online_map)=%" PRIx64 "\n"
			    "SYMBOL(swapper_pg_dir)=%" PRIx64 "\n"
			    "SYMBOL(_stext)=%" PRIx64 "\n", voff + m->uts, m->ktext + 0x1a3c7e8,
			    voff + m->pgd, m->ktext + 0x10000);
	} else {
		blob_printf(t, "PAGESIZE=4096\n"
			    "SYMBOL(init_uts_ns)=%" PRIx64 "\n"
			    "OFFSET(uts_namespace.name)=0\n"
			    "SYMBOL(node_online_map)=ffffffff81d3a7e8\n"
			    "SYMBOL(swapper_pg_dir)=%" PRIx64 "\n"
			    "SYMBOL(_stext)=ffffffff81000000\n", m->ktext + (m->uts - o->kernel_at), pgd_sym);
	}
	if (kv->types && o->arm64)
		blob_printf(t, "SYMBOL(vmemmap)=%" PRIx64 "\n", m->vmemmap);
	else if (kv->types)
		blob_printf(t, "NUMBER(VMALLOC_START)=0x%" PRIx64 "\n"
			    "SYMBOL(vmemmap)=%" PRIx64 "\n",
			    m->levels == 5 ? 0xffa0000000000000ull : 0xffffc90000000000ull, m->vmemmap);
	else if (o->arm64)
		blob_printf(t, "SYMBOL(vmap_area_list)=%" PRIx64 "\n", m->ktext + 0x1a40e70);
	else
		blob_printf(t, "SYMBOL(vmap_area_list)=ffffffff81d40e70\n");
	blob_printf(t, "SYMBOL(mem_section)=%" PRIx64 "\n"
		    "LENGTH(mem_section)=%" PRIu64 "\n"
		    "SIZE(mem_section)=%u\n"
		    "OFFSET(mem_section.section_mem_map)=0\n"
		    "NUMBER(SECTION_SIZE_BITS)=27\n"
		    "NUMBER(MAX_PHYSMEM_BITS)=%u\n"
		    "SIZE(page)=64\n"
		    "SIZE(pglist_data)=174208\n"
		    "SIZE(zone)=1536\n"
		    "SIZE(free_area)=88\n"
		    "SIZE(list_head)=16\n"
		    "SIZE(nodemask_t)=128\n"
		    "OFFSET(page.flags)=0\n"
		    "OFFSET(page._refcount)=52\n"
		    "OFFSET(page.mapping)=24\n"
		    "OFFSET(page.lru)=8\n"
		    "OFFSET(page._mapcount)=48\n"
		    "OFFSET(page.private)=40\n",
		    m->po + m->roots, m->roots_len, o->ms_size, m->mpb);
	if (kv->dtor)
		blob_printf(t, "OFFSET(page.compound_dtor)=16\n"
			    "OFFSET(page.compound_order)=17\n");
	blob_printf(t, "OFFSET(page.%s)=8\n"
		    "OFFSET(pglist_data.node_zones)=0\n"
		    "OFFSET(pglist_data.nr_zones)=171552\n"
		    "OFFSET(pglist_data.node_start_pfn)=171560\n"
		    "OFFSET(pglist_data.node_spanned_pages)=171576\n"
		    "OFFSET(pglist_data.node_id)=171584\n"
		    "OFFSET(zone.free_area)=256\n"
		    "OFFSET(zone.vm_stat)=1344\n"
		    "OFFSET(zone.spanned_pages)=%u\n"
		    "OFFSET(free_area.free_list)=0\n"
		    "OFFSET(list_head.next)=0\n"
		    "OFFSET(list_head.prev)=8\n"
		    "LENGTH(zone.free_area)=11\n"
		    "LENGTH(free_area.free_list)=5\n"
		    "NUMBER(NR_FREE_PAGES)=0\n"
		    "NUMBER(PG_lru)=%d\n"
		    "NUMBER(PG_private)=%d\n"
		    "NUMBER(PG_swapcache)=%d\n"
		    "NUMBER(PG_swapbacked)=%d\n",
		    kv->compound_info ? "compound_info" : "compound_head",
		    kv->types ? 160 : 144, kv->lru, kv->private_, kv->swapcache, kv->swapbacked);
	if (kv->slab >= 0)
		blob_printf(t, "NUMBER(PG_slab)=%d\n", kv->slab);
	else
		type_line(t, kv, "PAGE_SLAB_MAPCOUNT_VALUE", kv->t_slab);
	blob_printf(t, "NUMBER(PG_hwpoison)=%d\n"
		    "NUMBER(PG_head_mask)=%llu\n", kv->hwpoison, 1ull << kv->head);
	type_line(t, kv, "PAGE_BUDDY_MAPCOUNT_VALUE", kv->t_buddy);
	if (kv->types)
		type_line(t, kv, "PAGE_HUGETLB_MAPCOUNT_VALUE", kv->t_hugetlb);
	else
		blob_printf(t, "NUMBER(HUGETLB_PAGE_DTOR)=2\n");
	type_line(t, kv, "PAGE_OFFLINE_MAPCOUNT_VALUE", kv->t_offline);
	if (kv->export_unaccepted)
		type_line(t, kv, "PAGE_UNACCEPTED_MAPCOUNT_VALUE", kv->t_unaccepted);
	if (o->arm64)
		return vmcoreinfo_a64_tail(t, o, m);
	blob_printf(t, "NUMBER(phys_base)=%" PRId64 "\n"
		    "SYMBOL(init_top_pgt)=%" PRIx64 "\n"
		    "NUMBER(pgtable_l5_enabled)=%d\n"
		    "SYMBOL(node_data)=ffffffff81d3b900\n"
		    "LENGTH(node_data)=1024\n"
		    "KERNELOFFSET=0\n"
		    "NUMBER(KERNEL_IMAGE_SIZE)=1073741824\n"
		    "NUMBER(sme_mask)=%" PRIu64 "\n"
		    "CRASHTIME=%" PRId64 "\n",
		    phys_base, pgd_sym, m->levels == 5, SME(m), o->crashtime);
	return 0;
}

/* ==================================================================== *
 * The expectation: an independent judge
 * ==================================================================== *
 *
 * This part knows nothing of the builder above. It reads the vmcore file
 * back (ELF headers, VMCOREINFO, PT_LOAD bytes) and applies
 * docs/FILTERING.md's account of makedumpfile literally:
 *   - page tables walked from SYMBOL(init_top_pgt) (§5); on EM_AARCH64
 *     from SYMBOL(swapper_pg_dir) - NUMBER(kimage_voffset), 64 - T1SZ
 *     bits deep, every address walked (the linear map too);
 *   - mem_section roots, sections up to ceil(max_mapnr / 32768) (§2);
 *   - per section, pfns one by one, only those is_in_segs(); 512-pfn
 *     struct page windows (a head at index 511 gets nothing from its
 *     first tail); the decision chain of §3.4; an exclusion of n pfns
 *     clears [pfn, pfn + n) and jumps over it, the next section starts
 *     at its own start (§3.7);
 *   - zero pages last, only among what survived (§4).
 * Where makedumpfile would abort (a struct page it cannot read, §Q8) the
 * judge keeps the pfn instead, as kdumpinit promises: such pfns are listed
 * as "unreadable". A first tail that cannot be read counts as not read
 * (like index 511). A section whose entry is unreadable, not present or
 * decodes below page_offset has no mem_map: its pfns are kept.
 *
 * FILE.expect, one item per line (pfn ranges "A-B" are inclusive, "A" is
 * one pfn):
 *   mkvmcore-expect 1
 *   layout LAYOUT levels N leaf SIZE ms-size N corrupt MODE
 *   pfns RANGES            the vmcore's pfns (bitmap 1)
 *   nosection 0|1          1: no mem_section could be read at all
 *   obj PFN NPFN TYPE      what the builder put there (for messages)
 *   unreadable-pfns RANGES pfns whose struct page cannot be read
 *   unreadable L N         how many of those level L keeps
 *   level L CLASS RANGES   pfns level L excludes as CLASS (zero, cache,
 *                          cache-private, user, free, hwpoison, offline);
 *                          a class with no pfn has no line
 * for every level L in 0..31. Without --corrupt the judge's verdicts are
 * also checked against what the builder meant each object to be
 * (obj_intent()); a disagreement is an internal error, exit 1.
 */

#define J_NOTFOUND INT64_MIN

struct jload { uint64_t off, vaddr, paddr, filesz, memsz; };

struct judge {
	const uint8_t *map;
	uint64_t size;
	struct jload *ld;
	size_t nld;
	const char *vi;
	size_t vilen;
	/* from VMCOREINFO */
	int64_t off_flags, off_mapping, off_mapcount, off_private, off_head, size_page;
	int64_t order_off, dtor_off, hugetlb_dtor;
	int64_t pg_lru, pg_private, pg_swapcache, pg_swapbacked, pg_slab, pg_hwpoison, head_mask;
	int64_t v_buddy, v_offline, v_slab, v_hugetlb, v_unaccepted, len_free_area;
	int has_pg_hugetlb;
	int64_t pg_hugetlb;
	uint64_t pgd, pte_mask, page_offset;
	int l5;
	/* arm64 (EM_AARCH64): the walk's depth, top-table width, LPA2 */
	int arm64, a64_levels, a64_top_bits, a64_lpa2;
	/* bitmap1 pfns: merged ranges, with a running index */
	uint64_t *rlo, *rhi, *ridx;
	size_t nr;
	uint64_t npfn;
	/* struct pages, per section of the scan */
	uint64_t max_mapnr, num_section;
	uint8_t **secbuf;	/* [num_section] 32768 * SIZE(page) bytes, or NULL */
	uint8_t **secok;	/* per pfn: struct page readable */
	uint64_t *secmap;	/* [num_section] the virtual address of its struct pages, or 0 */
	uint8_t *cls[32];	/* per bitmap1 pfn and level */
	uint64_t unreadable[32];
	int nosection;
};

static int64_t j_key(const struct judge *J, const char *key, int hex_only)
{
	size_t kl = strlen(key);
	const char *p = J->vi, *end = J->vi + J->vilen;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len > kl && !memcmp(p, key, kl) && p[kl] == '=') {
			char buf[64], *e;
			size_t vl = len - kl - 1 < sizeof(buf) - 1 ? len - kl - 1 : sizeof(buf) - 1;
			memcpy(buf, p + kl + 1, vl);
			buf[vl] = 0;
			if (hex_only)
				return (int64_t)strtoull(buf, NULL, 16);
			int64_t v = strtoll(buf, &e, 10);
			if (*e)
				v = (int64_t)strtoull(buf, NULL, 16);
			return v;
		}
		p += len + 1;
	}
	return J_NOTFOUND;
}

static int j_load(struct judge *J, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	J->size = (uint64_t)st.st_size;
	J->map = mmap(NULL, J->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (J->map == MAP_FAILED)
		return -1;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)J->map;
	size_t phnum = eh->e_phnum;
	J->arm64 = eh->e_machine == EM_AARCH64;
	if (phnum == PN_XNUM)
		phnum = ((const Elf64_Shdr *)(J->map + eh->e_shoff))->sh_info;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(J->map + eh->e_phoff);
	J->ld = calloc(phnum, sizeof(*J->ld));
	if (!J->ld)
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			J->ld[J->nld++] = (struct jload){ ph[i].p_offset, ph[i].p_vaddr, ph[i].p_paddr,
							  ph[i].p_filesz, ph[i].p_memsz };
		} else if (ph[i].p_type == PT_NOTE) {
			uint64_t o = ph[i].p_offset, e = o + ph[i].p_filesz;
			while (o + sizeof(Elf64_Nhdr) <= e) {
				const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(J->map + o);
				uint64_t name = o + sizeof(*nh);
				uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);
				if (nh->n_namesz == 11 && !memcmp(J->map + name, "VMCOREINFO", 11)) {
					J->vi = (const char *)J->map + desc;
					J->vilen = nh->n_descsz;
				}
				o = desc + ((nh->n_descsz + 3) & ~3u);
			}
		}
	}
	return J->vi ? 0 : -1;
}

/* paddr_to_offset: the first PT_LOAD whose file part holds the range. */
static const uint8_t *j_phys(const struct judge *J, uint64_t pa, uint64_t len)
{
	for (size_t i = 0; i < J->nld; i++) {
		const struct jload *l = &J->ld[i];
		if (pa >= l->paddr && pa + len <= l->paddr + l->filesz && pa + len > pa)
			return J->map + l->off + (pa - l->paddr);
	}
	return NULL;
}

static int j_in_segs(const struct judge *J, uint64_t pfn)
{
	uint64_t a = pfn * PAGE_SIZE;
	for (size_t i = 0; i < J->nld; i++)
		if (a >= J->ld[i].paddr && a < J->ld[i].paddr + J->ld[i].filesz)
			return 1;
	return 0;
}

/* arm64, 4 KiB granule: bit 0 valid; above the last level bit 1 set is
 * a table, clear a block (2 MiB, 1 GiB); at the last level it must be set
 * (a page). The top table of a 52-bit walk has 16 entries. */
static int j_vtop_a64(const struct judge *J, uint64_t va, uint64_t *pa)
{
	uint64_t table = J->pgd;

	for (int l = J->a64_levels; l >= 1; l--) {
		unsigned shift = 12 + 9 * (unsigned)(l - 1);
		unsigned nb = l == J->a64_levels ? (unsigned)J->a64_top_bits : 9;
		const uint8_t *p = j_phys(J, table + ((va >> shift) & ((1ull << nb) - 1)) * 8, 8);
		if (!p)
			return -1;
		uint64_t e = rd_u64(p);
		if (!(e & 1))
			return -1;
		uint64_t a = e & (J->a64_lpa2 ? 0x0003fffffffff000ull : 0x0000fffffffff000ull);
		if (J->a64_lpa2)
			a |= ((e >> 8) & 3) << 50;
		if (l == 1) {
			if (!(e & 2))
				return -1;
			*pa = a + (va & 4095);
			return 0;
		}
		if (!(e & 2)) {
			if (l > 3)
				return -1;
			uint64_t sz = 1ull << shift;
			*pa = (a & ~(sz - 1)) + (va & (sz - 1));
			return 0;
		}
		table = a;
	}
	return -1;
}

static int j_vtop(const struct judge *J, uint64_t va, uint64_t *pa)
{
	uint64_t table = J->pgd;
	int top = J->l5 ? 5 : 4;

	if (J->arm64)
		return j_vtop_a64(J, va, pa);
	for (int l = top; l >= 1; l--) {
		unsigned shift = 12 + 9 * (unsigned)(l - 1);
		const uint8_t *p = j_phys(J, table + ((va >> shift) & 511) * 8, 8);
		if (!p)
			return -1;
		uint64_t e = rd_u64(p);
		if (!(e & 1))
			return -1;
		if ((l == 3 || l == 2) && (e & 0x80)) {
			uint64_t sz = 1ull << shift;
			*pa = (e & J->pte_mask & ~(sz - 1)) + (va & (sz - 1));
			return 0;
		}
		if (l == 1) {
			*pa = (e & J->pte_mask) + (va & 4095);
			return 0;
		}
		table = e & J->pte_mask;
	}
	return -1;
}

static const uint8_t *j_vread(const struct judge *J, uint64_t va, uint64_t len)
{
	uint64_t pa;

	/* callers never cross a 4 KiB page */
	if (j_vtop(J, va, &pa) < 0)
		return NULL;
	return j_phys(J, pa, len);
}

static int64_t j_num(const struct judge *J, const char *k) { return j_key(J, k, 0); }
static int64_t j_or(int64_t v, int64_t dflt) { return v == J_NOTFOUND ? dflt : v; }

/* test_bit(): 1 << (nr & 31) as an int, against the flags */
static int j_bit(uint64_t flags, int64_t nr)
{
	if (nr == J_NOTFOUND)
		return 0;
	return (flags & (uint64_t)(int64_t)(int32_t)(1u << (nr & 31))) != 0;
}

static int j_eq32(uint32_t v, int64_t key)
{
	return key != J_NOTFOUND && v == (uint32_t)key;
}

static void j_setup(struct judge *J)
{
	char k[64];

	J->off_flags = j_num(J, "OFFSET(page.flags)");
	J->off_mapping = j_num(J, "OFFSET(page.mapping)");
	J->off_mapcount = j_num(J, "OFFSET(page._mapcount)");
	J->off_private = j_num(J, "OFFSET(page.private)");
	/* 7.1 renamed the field; bit 0 marks a tail under either name */
	J->off_head = j_num(J, "OFFSET(page.compound_head)");
	if (J->off_head == J_NOTFOUND)
		J->off_head = j_num(J, "OFFSET(page.compound_info)");
	J->size_page = j_num(J, "SIZE(page)");
	J->pg_lru = j_or(j_num(J, "NUMBER(PG_lru)"), 5);
	J->pg_private = j_or(j_num(J, "NUMBER(PG_private)"), 11);
	J->pg_swapcache = j_or(j_num(J, "NUMBER(PG_swapcache)"), 15);
	J->pg_swapbacked = j_num(J, "NUMBER(PG_swapbacked)");
	if (J->pg_swapbacked == J_NOTFOUND && J->pg_swapcache < J->pg_private)
		J->pg_swapbacked = J->pg_private + 6;
	J->pg_slab = j_or(j_num(J, "NUMBER(PG_slab)"), 7);
	J->pg_hwpoison = j_num(J, "NUMBER(PG_hwpoison)");
	J->head_mask = j_or(j_num(J, "NUMBER(PG_head_mask)"), 1 << 14);
	J->v_buddy = j_or(j_num(J, "NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)"), -128);
	J->v_offline = j_num(J, "NUMBER(PAGE_OFFLINE_MAPCOUNT_VALUE)");
	J->v_slab = j_num(J, "NUMBER(PAGE_SLAB_MAPCOUNT_VALUE)");
	J->v_hugetlb = j_num(J, "NUMBER(PAGE_HUGETLB_MAPCOUNT_VALUE)");
	J->v_unaccepted = j_num(J, "NUMBER(PAGE_UNACCEPTED_MAPCOUNT_VALUE)");
	J->len_free_area = j_num(J, "LENGTH(zone.free_area)");
	J->pg_hugetlb = j_num(J, "NUMBER(PG_hugetlb)");
	J->has_pg_hugetlb = J->pg_hugetlb != J_NOTFOUND;
	int64_t fo = j_num(J, "OFFSET(folio._folio_order)"), fd = j_num(J, "OFFSET(folio._folio_dtor)");
	J->order_off = fo != J_NOTFOUND ? fo - J->size_page : j_or(j_num(J, "OFFSET(page.compound_order)"), 0);
	J->dtor_off = fd != J_NOTFOUND ? fd - J->size_page : j_or(j_num(J, "OFFSET(page.compound_dtor)"), 0);
	J->hugetlb_dtor = j_num(J, "NUMBER(HUGETLB_PAGE_DTOR)");

	if (J->arm64) {
		/* swapper_pg_dir is an image symbol: its VA - kimage_voffset;
		 * the MMU walks 64 - T1SZ bits */
		int64_t t1 = j_num(J, "NUMBER(TCR_EL1_T1SZ)"), vb = j_num(J, "NUMBER(VA_BITS)");
		int64_t bits = t1 != J_NOTFOUND ? 64 - t1 : vb;
		uint64_t sw = (uint64_t)j_key(J, "SYMBOL(swapper_pg_dir)", 1);
		uint64_t voff = (uint64_t)j_num(J, "NUMBER(kimage_voffset)");
		J->a64_levels = (int)((bits - 12 + 8) / 9);
		J->a64_top_bits = (int)(bits - 12 - 9 * (J->a64_levels - 1));
		J->a64_lpa2 = bits > 48;
		J->pgd = sw - voff;
		J->page_offset = ~0ull << bits;
	} else {
		/* §5 */
		int64_t top = j_key(J, "SYMBOL(init_level4_pgt)", 1);
		if (top == J_NOTFOUND || !top)
			top = j_key(J, "SYMBOL(init_top_pgt)", 1);
		int64_t pb = j_num(J, "NUMBER(phys_base)");
		if (pb == J_NOTFOUND)
			for (size_t i = 0; i < J->nld; i++)
				if (J->ld[i].vaddr >= START_KERNEL_MAP) {
					pb = (int64_t)(J->ld[i].paddr - (J->ld[i].vaddr & ~START_KERNEL_MAP));
					break;
				}
		J->pgd = (uint64_t)top - START_KERNEL_MAP + (uint64_t)pb;
		int64_t l5 = j_num(J, "NUMBER(pgtable_l5_enabled)");
		J->l5 = l5 != J_NOTFOUND && l5 != 0;
		J->pte_mask = 0x000ffffffffff000ull & ~(uint64_t)j_or(j_num(J, "NUMBER(sme_mask)"), 0);
		J->page_offset = J->l5 ? 0xff10000000000000ull : 0xffff880000000000ull;
		for (size_t i = 0; i < J->nld; i++)
			if (J->ld[i].vaddr < START_KERNEL_MAP)
				J->page_offset = J->ld[i].vaddr - J->ld[i].paddr;
	}
	/* bitmap 1 */
	uint64_t maxend = 0;
	for (size_t i = 0; i < J->nld; i++)
		if (J->ld[i].paddr + J->ld[i].memsz > maxend)
			maxend = J->ld[i].paddr + J->ld[i].memsz;
	J->max_mapnr = align_up(maxend, PAGE_SIZE) / PAGE_SIZE;
	J->rlo = calloc(J->nld, 8);
	J->rhi = calloc(J->nld, 8);
	J->ridx = calloc(J->nld, 8);
	struct jload *tmp = malloc(J->nld * sizeof(*tmp));
	if (!J->rlo || !J->rhi || !J->ridx || !tmp)
		die("out of memory");
	memcpy(tmp, J->ld, J->nld * sizeof(*tmp));
	for (size_t i = 1; i < J->nld; i++)	/* by paddr */
		for (size_t j = i; j > 0 && tmp[j - 1].paddr > tmp[j].paddr; j--) {
			struct jload x = tmp[j];
			tmp[j] = tmp[j - 1];
			tmp[j - 1] = x;
		}
	for (size_t i = 0; i < J->nld; i++) {
		uint64_t a = tmp[i].paddr / PAGE_SIZE, b = (tmp[i].paddr + tmp[i].memsz) / PAGE_SIZE;
		if (b <= a)
			continue;
		if (J->nr && a <= J->rhi[J->nr - 1]) {
			if (b > J->rhi[J->nr - 1])
				J->rhi[J->nr - 1] = b;
		} else {
			J->rlo[J->nr] = a;
			J->rhi[J->nr++] = b;
		}
	}
	free(tmp);
	for (size_t i = 0; i < J->nr; i++) {
		J->ridx[i] = J->npfn;
		J->npfn += J->rhi[i] - J->rlo[i];
	}
	for (int l = 0; l < 32; l++) {
		J->cls[l] = malloc(J->npfn ? J->npfn : 1);
		if (!J->cls[l])
			die("out of memory");
		memset(J->cls[l], E_KEEP, J->npfn);
	}
	(void)k;
}

/* Index of pfn among bitmap-1 pfns, or -1. */
static int64_t j_idx(const struct judge *J, uint64_t pfn)
{
	size_t lo = 0, hi = J->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (J->rhi[mid] <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < J->nr && pfn >= J->rlo[lo])
		return (int64_t)(J->ridx[lo] + pfn - J->rlo[lo]);
	return -1;
}

/* §2: the mem_map of every section, read once. */
static void j_sections(struct judge *J)
{
	int64_t ms_size = j_num(J, "SIZE(mem_section)"), ms_off = j_num(J, "OFFSET(mem_section.section_mem_map)");
	int64_t len = j_num(J, "LENGTH(mem_section)");
	int64_t ssb = j_or(j_num(J, "NUMBER(SECTION_SIZE_BITS)"), 27);
	int64_t mpb = j_or(j_num(J, "NUMBER(MAX_PHYSMEM_BITS)"), J->l5 ? 52 : 46);
	uint64_t sym = (uint64_t)j_key(J, "SYMBOL(mem_section)", 1);
	uint64_t pps = 1ull << (ssb - 12), spr = PAGE_SIZE / (uint64_t)ms_size;
	uint64_t nsec_all = 1ull << (mpb - ssb);
	int extreme = len == J_NOTFOUND || (uint64_t)len == (nsec_all + spr - 1) / spr;

	if (pps != SEC_PFNS || J->size_page != (int64_t)SPAGE)
		die("internal: judge expects 32768-pfn sections and 64-byte struct pages");
	J->num_section = (J->max_mapnr + pps - 1) / pps;
	J->secbuf = calloc(J->num_section, sizeof(*J->secbuf));
	J->secok = calloc(J->num_section, sizeof(*J->secok));
	J->secmap = calloc(J->num_section, sizeof(*J->secmap));
	if (!J->secbuf || !J->secok || !J->secmap)
		die("out of memory");
	J->nosection = 1;
	for (uint64_t nr = 0; nr < J->num_section; nr++) {
		uint64_t entry;
		if (extreme) {
			const uint8_t *rp = j_vread(J, sym + (nr / spr) * 8, 8);
			if (!rp || !rd_u64(rp))
				continue;
			entry = rd_u64(rp) + (nr % spr) * (uint64_t)ms_size;
		} else {
			entry = sym + nr * (uint64_t)ms_size;
		}
		if (entry < J->page_offset)
			continue;
		const uint8_t *ep = j_vread(J, entry + (uint64_t)ms_off, 8);
		if (!ep)
			continue;
		uint64_t v = rd_u64(ep);
		if (!(v & 1))
			continue;
		uint64_t mem_map = (v & ~0x1full) + nr * pps * SPAGE;
		if (mem_map < J->page_offset)
			continue;
		J->nosection = 0;
		J->secmap[nr] = mem_map;
		uint64_t n = pps;
		J->secbuf[nr] = calloc(n, SPAGE);
		J->secok[nr] = calloc(n, 1);
		if (!J->secbuf[nr] || !J->secok[nr])
			die("out of memory");
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = j_vread(J, mem_map + i * SPAGE, SPAGE);
			if (p) {
				memcpy(J->secbuf[nr] + i * SPAGE, p, SPAGE);
				J->secok[nr][i] = 1;
			}
		}
	}
}

/* clear [pfn, pfn + n) in level l's bitmap; the first clear names the class */
static void j_clear(struct judge *J, int l, uint64_t pfn, uint64_t n, uint8_t c)
{
	for (uint64_t p = pfn; p < pfn + n; p++) {
		int64_t i = j_idx(J, p);
		if (i >= 0 && J->cls[l][i] == E_KEEP)
			J->cls[l][i] = c;
	}
}

static void j_scan(struct judge *J, int level)
{
	for (uint64_t nr = 0; nr < J->num_section; nr++) {
		if (!J->secbuf[nr])
			continue;
		uint64_t start = nr * SEC_PFNS, end = start + SEC_PFNS;
		if (end > J->max_mapnr)
			end = J->max_mapnr;
		for (uint64_t pfn = start; pfn < end; pfn++) {
			if (!j_in_segs(J, pfn))
				continue;
			uint64_t k = pfn - start;
			if (!J->secok[nr][k])
				continue;	/* kept: unreadable */
			const uint8_t *P = J->secbuf[nr] + k * SPAGE, *T = NULL;
			uint64_t flags = rd_u64(P + J->off_flags);
			uint64_t mapping = rd_u64(P + J->off_mapping);
			uint32_t mapcount = J->off_mapcount != J_NOTFOUND ? rd_u32(P + J->off_mapcount) : 0;
			uint64_t priv = J->off_private != J_NOTFOUND ? rd_u64(P + J->off_private) : 0;
			uint64_t head = J->off_head != J_NOTFOUND ? rd_u64(P + J->off_head) : 0;
			uint64_t order = 0;
			int hugetlb = 0;

			if (pfn % 512 < 511 && (flags & (uint64_t)J->head_mask) && pfn + 1 < end &&
			    J->secok[nr][k + 1])
				T = P + SPAGE;
			if (T) {
				if (J->v_hugetlb != J_NOTFOUND) {
					order = rd_u64(T + J->off_flags) & 0xff;
					hugetlb = j_eq32(mapcount, J->v_hugetlb);
				} else if (J->has_pg_hugetlb) {
					uint64_t f1 = rd_u64(T + J->off_flags);
					order = f1 & 0xff;
					hugetlb = j_bit(f1, J->pg_hugetlb);
				} else {
					if (J->order_off)
						order = T[J->order_off];
					if (J->dtor_off)
						hugetlb = J->hugetlb_dtor != J_NOTFOUND &&
							  T[J->dtor_off] == (uint64_t)J->hugetlb_dtor;
				}
				if (order >= 64 || (pfn & ((1ull << order) - 1)))
					order = 0;
			}
			if (head & 1)
				continue;

			int slab = j_eq32(mapcount, J->v_slab) ? 1 : j_bit(flags, J->pg_slab);
			int anon = (mapping & 1) && !slab;
			int cache = j_bit(flags, J->pg_lru) ||
				    (j_bit(flags, J->pg_swapcache) &&
				     (J->pg_swapbacked == J_NOTFOUND || j_bit(flags, J->pg_swapbacked)));
			int priv_f = j_bit(flags, J->pg_private);
			int buddy_test = (level & 16) && J->off_private != J_NOTFOUND &&
					 J->off_mapcount != J_NOTFOUND;
			uint64_t n = 1ull << order;
			uint8_t c;

			if (buddy_test && !slab && j_eq32(mapcount, J->v_buddy)) {
				if (J->len_free_area != J_NOTFOUND && priv >= (uint64_t)J->len_free_area)
					continue;	/* invalid free page order: skipped */
				n = 1ull << priv;
				c = E_FREE;
			} else if ((level & 16) && j_eq32(mapcount, J->v_unaccepted)) {
				n = 1ull << (J->len_free_area - 1);
				c = E_FREE;
			} else if ((level & 2) && cache && !priv_f && !anon) {
				c = E_CACHE;
			} else if ((level & 4) && cache && !anon) {
				c = priv_f ? E_PRIV : E_CACHE;
			} else if ((level & 8) && (anon || hugetlb)) {
				c = E_USER;
			} else if (J->pg_hwpoison != J_NOTFOUND && j_bit(flags, J->pg_hwpoison)) {
				c = E_HWPOISON;
			} else if (J->v_offline != J_NOTFOUND && J->off_mapcount != J_NOTFOUND && !slab &&
				   j_eq32(mapcount, J->v_offline)) {
				c = E_OFFLINE;
			} else {
				continue;
			}
			j_clear(J, level, pfn, n, c);
			pfn += n - 1;
		}
	}
	/* unreadable and kept */
	for (size_t r = 0; r < J->nr; r++)
		for (uint64_t pfn = J->rlo[r]; pfn < J->rhi[r]; pfn++) {
			uint64_t nr = pfn / SEC_PFNS;
			int ok = nr < J->num_section && J->secbuf[nr] && J->secok[nr][pfn % SEC_PFNS];
			if (!ok && j_in_segs(J, pfn) && J->cls[level][J->ridx[r] + pfn - J->rlo[r]] == E_KEEP)
				J->unreadable[level]++;
		}
	/* §4 */
	if (level & 1)
		for (size_t r = 0; r < J->nr; r++)
			for (uint64_t pfn = J->rlo[r]; pfn < J->rhi[r]; pfn++) {
				uint8_t *c = &J->cls[level][J->ridx[r] + pfn - J->rlo[r]];
				if (*c != E_KEEP || !j_in_segs(J, pfn))
					continue;
				const uint8_t *pg = j_phys(J, pfn * PAGE_SIZE, PAGE_SIZE);
				int zero = 1;
				for (size_t i = 0; pg && i < PAGE_SIZE && zero; i += 8)
					zero = !rd_u64(pg + i);
				if (zero)
					*c = E_ZERO;
			}
}

static void j_ranges(FILE *f, const struct judge *J, int level, uint8_t c)
{
	int any = 0;

	for (size_t r = 0; r < J->nr; r++) {
		uint64_t pfn = J->rlo[r];
		while (pfn < J->rhi[r]) {
			const uint8_t *v = J->cls[level] + J->ridx[r];
			uint64_t lo = J->rlo[r];
			if (v[pfn - lo] != c) {
				pfn++;
				continue;
			}
			uint64_t a = pfn;
			while (pfn < J->rhi[r] && v[pfn - lo] == c)
				pfn++;
			if (!any)
				fprintf(f, "level %d %s", level, ecls_names[c]);
			any = 1;
			if (pfn - a == 1)
				fprintf(f, " %" PRIu64, a);
			else
				fprintf(f, " %" PRIu64 "-%" PRIu64, a, pfn - 1);
		}
	}
	if (any)
		fputc('\n', f);
}

/* Does section nr hold a pfn of the vmcore? */
static int j_sec_in_dump(const struct judge *J, uint64_t nr)
{
	for (size_t r = 0; r < J->nr; r++)
		if (J->rlo[r] < (nr + 1) * SEC_PFNS && J->rhi[r] > nr * SEC_PFNS)
			return 1;
	return 0;
}

/* The memory map's own pages (kdumpinit's default, kernel/vmemmap.h): a
 * page of struct pages that level l keeps is excluded as memmap when
 * every pfn it describes is in the vmcore and excluded by a struct-page
 * rule (a zero page is in the dump: its struct page stays). Judged from
 * the level's decisions before this one; the page's place comes from the
 * page tables, as the capture finds it. */
static void j_memmap(struct judge *J, int l)
{
	uint64_t per_page = PAGE_SIZE / SPAGE;
	uint64_t *drop = NULL, coded = 0, votes = 0, agree = 0, nsec = 0;
	size_t n = 0, cap = 0;

	/* The sections that hold a pfn of the vmcore vote on the one coded
	 * map of the array; a section that disagrees (corrupt) is left out,
	 * and with no majority there is no array. */
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t nr = 0; nr < J->num_section; nr++) {
			if (!J->secmap[nr] || !j_sec_in_dump(J, nr))
				continue;
			uint64_t c = J->secmap[nr] - nr * SEC_PFNS * SPAGE;
			if (pass == 0) {
				if (!votes)
					coded = c;
				votes += c == coded ? 1 : (uint64_t)-1;
			} else {
				agree += c == coded;
				nsec++;
			}
		}
	if (agree * 2 <= nsec)
		return;
	for (uint64_t nr = 0; nr < J->num_section; nr++) {
		if (!J->secmap[nr] || !j_sec_in_dump(J, nr) ||
		    J->secmap[nr] - nr * SEC_PFNS * SPAGE != coded)
			continue;
		for (uint64_t k = 0; k < SEC_PFNS / per_page; k++) {
			uint64_t pa;
			if (j_vtop(J, J->secmap[nr] + k * PAGE_SIZE, &pa) < 0)
				continue;
			int64_t bi = j_idx(J, pa / PAGE_SIZE);
			if (bi < 0 || (J->cls[l][bi] != E_KEEP && J->cls[l][bi] != E_ZERO))
				continue;
			int need = 0;
			for (uint64_t p = nr * SEC_PFNS + k * per_page; p < nr * SEC_PFNS + (k + 1) * per_page && !need; p++) {
				int64_t i = j_idx(J, p);
				need = i < 0 || J->cls[l][i] == E_KEEP || J->cls[l][i] == E_ZERO;
			}
			if (need)
				continue;
			if (n == cap && !(drop = realloc(drop, (cap = cap ? 2 * cap : 256) * sizeof *drop)))
				die("out of memory");
			drop[n++] = (uint64_t)bi;
			/* kept for its own unreadable struct page no more */
			uint64_t b = pa / PAGE_SIZE, bn = b / SEC_PFNS;
			if (j_in_segs(J, b) && !(bn < J->num_section && J->secbuf[bn] && J->secok[bn][b % SEC_PFNS]))
				J->unreadable[l]--;
		}
	}
	for (size_t i = 0; i < n; i++)
		J->cls[l][drop[i]] = E_MEMMAP;
	free(drop);
}

/* ---- intent: what the builder meant each object to be ---- */

static uint8_t obj_intent(const struct mm *m, const struct mobj *ob, uint64_t pfn, int L)
{
	int types = m->kv->types;

	switch ((enum otype)ob->type) {
	case O_BUDDY:
		return L & 16 ? E_FREE : E_KEEP;
	case O_BUDDY_STALE:
		if (L & 16)
			return E_FREE;
		return pfn == ob->stale && (L & 6) ? E_CACHE : E_KEEP;
	case O_CACHE:
	case O_SHMEM:
	case O_SWAPCACHE_FILE:
	case O_BIG_CACHE:
		return L & 6 ? E_CACHE : E_KEEP;
	case O_CACHE_PRIV:
		return L & 4 ? E_PRIV : E_KEEP;
	case O_FOLIO_POISONED_TAIL:
		return L & 6 ? E_CACHE : E_KEEP;
	case O_ANON:
	case O_ANON_THP:
	case O_THP_POISONED_TAIL:
	case O_ANON_SWAPCACHE:
	case O_KSM:
	case O_HUGETLB:
	case O_HUGETLB_FREE:
	case O_HUGETLB_1G:
		return L & 8 ? E_USER : E_KEEP;
	case O_WAITERS_ANON:
		/* 6.12: bit 7 reads as PG_slab (Q1): not anon, but on the LRU */
		if (types)
			return L & 6 ? E_CACHE : E_KEEP;
		return L & 8 ? E_USER : E_KEEP;
	case O_HWPOISON:
		return E_HWPOISON;
	case O_HWPOISON_ANON:
	case O_HWPOISON_THP:
		return L & 8 ? E_USER : E_HWPOISON;
	case O_HWPOISON_CACHE:
		return L & 6 ? E_CACHE : E_HWPOISON;
	case O_OFFLINE:
		return E_OFFLINE;
	case O_UNACCEPTED:
		return m->kv->export_unaccepted && (L & 16) ? E_FREE : E_KEEP;
	default:
		return E_KEEP;
	}
}

static void write_expect(const struct opts *o, struct mm *m)
{
	struct judge J = { 0 };
	char path[4096];
	FILE *f;

	if (j_load(&J, o->out) < 0)
		die("reading back %s failed", o->out);
	j_setup(&J);
	j_sections(&J);
	for (int l = 0; l < 32; l++)
		j_scan(&J, l);

	/* Two accounts of the same memory must agree before a test relies
	 * on them (only meaningful without corruption). */
	if (o->corrupt == CX_NONE) {
		size_t bad = 0;
		for (size_t i = 0; i < m->nobj; i++) {
			const struct mobj *ob = &m->obj[i];
			for (uint64_t p = ob->pfn; p < ob->pfn + ob->npfn; p++) {
				int64_t x = j_idx(&J, p);
				if (x < 0 || !j_in_segs(&J, p))
					continue;
				for (int l = 0; l < 32; l++) {
					uint8_t got = J.cls[l][x], want = obj_intent(m, ob, p, l);
					if (got == E_ZERO)
						got = E_KEEP;
					if (got != want && bad++ < 10)
						fprintf(stderr, "%s: internal: pfn %" PRIu64 " (%s at %" PRIu64
							" order %u) level %d: judged %s, meant %s\n",
							prog, p, otype_names[ob->type], ob->pfn, ob->order, l,
							got == E_KEEP ? "kept" : ecls_names[got],
							want == E_KEEP ? "kept" : ecls_names[want]);
				}
			}
		}
		if (bad)
			die("internal: the judge and the builder disagree on %zu decisions", bad);
	}

	for (int l = 0; l < 32; l++)
		j_memmap(&J, l);

	snprintf(path, sizeof(path), "%s.expect", o->out);
	if (!(f = fopen(path, "w")))
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# mkvmcore --mm expectation: pfns ranges are inclusive\n"
		   "# level L CLASS RANGES: pfns level L must exclude as CLASS\n"
		   "# unreadable-pfns RANGES: pfns whose struct page cannot be read\n"
		   "# unreadable L N: how many of them level L keeps (the others lie in a\n"
		   "#   range excluded through a readable compound or buddy head)\n"
		   "mkvmcore-expect 1\n");
	fprintf(f, "layout %s levels %u leaf %s ms-size %u corrupt %s\n", m->kv->name, m->levels,
		m->leaf == 12 ? "4k" : m->leaf == 21 ? "2m" : "1g", o->ms_size,
		corrupt_names[o->corrupt]);
	fprintf(f, "pfns");
	for (size_t r = 0; r < J.nr; r++)
		fprintf(f, " %" PRIu64 "-%" PRIu64, J.rlo[r], J.rhi[r] - 1);
	fprintf(f, "\nnosection %d\n", J.nosection);
	for (size_t i = 0; i < m->nobj; i++)
		if (m->obj[i].type != O_KERNEL && m->obj[i].type != O_TABLE)
			fprintf(f, "obj %" PRIu64 " %" PRIu64 " %s\n", m->obj[i].pfn, m->obj[i].npfn,
				otype_names[m->obj[i].type]);
	/* pfns whose struct page cannot be read, whatever the level */
	fprintf(f, "unreadable-pfns");
	for (size_t r = 0; r < J.nr; r++) {
		uint64_t pfn = J.rlo[r], a = 0;
		int run = 0;
		for (; pfn <= J.rhi[r]; pfn++) {
			uint64_t nr = pfn / SEC_PFNS;
			int bad = pfn < J.rhi[r] && j_in_segs(&J, pfn) &&
				  !(nr < J.num_section && J.secbuf[nr] && J.secok[nr][pfn % SEC_PFNS]);
			if (bad && !run)
				a = pfn;
			if (!bad && run) {
				if (pfn - a == 1)
					fprintf(f, " %" PRIu64, a);
				else
					fprintf(f, " %" PRIu64 "-%" PRIu64, a, pfn - 1);
			}
			run = bad;
		}
	}
	fputc('\n', f);
	for (int l = 0; l < 32; l++) {
		fprintf(f, "unreadable %d %" PRIu64 "\n", l, J.unreadable[l]);
		for (uint8_t c = 0; c < E_NCLS; c++)
			j_ranges(f, &J, l, c);
	}
	if (fclose(f))
		die("%s: %s", path, strerror(errno));
	munmap((void *)J.map, J.size);
}

/* ==================================================================== *
 * scale mode: --mix and --no-expect, for benchmarks at 64..256 GiB
 * ==================================================================== *
 *
 * Memory described costs neither host memory nor disk: the kernel region
 * (page tables, mem_section, 2 MiB of struct pages per 128 MiB section) is
 * mapped from the output file at its final offset, so it is page cache the
 * kernel writes back rather than process memory, and only pfns with
 * non-zero content are written; everything else stays a hole. The objects
 * of the random mix are not kept (they only serve FILE.expect), so the
 * generator's own memory is two bitmaps of a bit per pfn.
 *
 * --mix ref follows a real kernel: the classes kdumpinit's capture reports
 * on the raw /proc/vmcore of a 6 GiB Debian 6.1 guest crashed under the
 * e2e harness (tests/e2e/run.sh --cpu max,la57=off --mem 6G --raw-only,
 * the guest and load of the e2e-88M-6G suite; 1507028 pfns):
 *   level 30 excludes free 1351630 (89.69 %), cache 38910 + cache-private
 *   241 (2.60 %), user 39063 (2.59 %), hwpoison 3, and keeps 77181 kernel
 *   pages (5.12 %); level 31 also excludes 24732 zero pages among them:
 *   32.0 % of kernel pages are zero.
 * Free memory there is almost all in order-10 buddy blocks (a machine that
 * has not filled its memory), so free blocks are drawn at order 10 mostly.
 * Struct pages and page tables count as kernel pages, as they do in the
 * reference. Only kernel pages get content (pattern, random or one byte,
 * like gen_page): the other classes' pages are zero, i.e. holes. Level 31
 * excludes those classes through their struct pages before reading them,
 * so level 31 sees the reference's mix; level 1 on such a file measures
 * mostly the zero scan (use the real vmcores for level 1).
 */

static int scale_mode(const struct opts *o)
{
	return o->mix.on || o->no_expect;
}

/* The data offset, fixed before the notes exist: room for the headers, a
 * section header, every NT_PRSTATUS and 64 KiB of VMCOREINFO. */
static uint64_t scale_data_off(const struct layout *L, const struct opts *o)
{
	uint64_t hdr = sizeof(Elf64_Ehdr) + L->phnum * sizeof(Elf64_Phdr) + sizeof(Elf64_Shdr);
	uint64_t notes = o->cpus * (12 + 8 + (o->arm64 ? A64_PRSTATUS_SIZE : PRSTATUS_SIZE)) +
			 (64u << 10);

	return align_up(hdr + notes, SZ_2M);
}

static uint8_t *scale_map_region(struct mm *m, const struct opts *o, struct layout *L)
{
	uint64_t len = m->rend - m->rbase, off;
	void *p;
	int fd;

	L->fixed_data_off = scale_data_off(L, o);
	off = L->fixed_data_off + (m->rbase - L->load[0].paddr);
	fd = open(o->out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("%s: %s", o->out, strerror(errno));
	if (ftruncate(fd, (off_t)(off + len)) < 0)
		die("%s: %s", o->out, strerror(errno));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		die("mapping %s: %s", o->out, strerror(errno));
	m->mapped = 1;
	m->img_fd = fd;
	if (o->mix.on && !(m->kdata = calloc(m->end_pfn / 8 + 1, 1)))
		die("out of memory");
	return p;
}

static int region_in_file(uint64_t pfn)
{
	return g_mm && g_mm->mapped && in_region(g_mm, pfn * PAGE_SIZE, PAGE_SIZE);
}

static int scale_fd(void)
{
	return g_mm && g_mm->mapped ? g_mm->img_fd : -1;
}

/* A kernel page's bytes: gen_page's kinds without its zero pages (the
 * zero share is decided when the page is placed). */
static int mix_content(const struct opts *o, const struct mm *m, uint64_t pfn, uint8_t *page)
{
	uint64_t h = mix64(o->seed ^ mix64(pfn));

	if (pfn >= m->end_pfn || !(m->kdata[pfn / 8] >> (pfn % 8) & 1))
		return 0;
	switch ((h >> 32) % 10) {
	case 0: case 1: case 2: case 3:
		fill_pattern(page, h);
		break;
	case 4: case 5: case 6:
		fill_random(page, h);
		break;
	default:
		fill_almost_zero(page, h);
		break;
	}
	return 1;
}

/* The largest order <= k whose aligned block at p is free and inside
 * [.., hi); -1 if not even p itself is. */
static int fit_order(const struct mm *m, uint64_t p, uint64_t hi, int k)
{
	for (; k >= 0; k--) {
		uint64_t n = 1ull << k, q;
		int ok = !(p & (n - 1)) && p + n <= hi;
		for (q = p; ok && q < p + n; q++)
			ok = pfn_free(m, q);
		if (ok)
			return k;
	}
	return -1;
}

/* A geometric order below max: each step up with probability 1/2. */
static int geo_order(uint64_t r, int max)
{
	int k = 0;

	while (k < max && (r >> (40 + k)) & 1)
		k++;
	return k;
}

enum mixcls { MX_FREE, MX_CACHE, MX_USER, MX_KERNEL, MX_N };

/* The class an object of type t counts in at level 31 (hugetlb: user). */
static enum mixcls mix_class(enum otype t)
{
	switch (t) {
	case O_BUDDY: case O_BUDDY_STALE: case O_HUGETLB_FREE: case O_UNACCEPTED:
		return MX_FREE;
	case O_CACHE: case O_CACHE_PRIV: case O_SHMEM: case O_SWAPCACHE_FILE: case O_BIG_CACHE:
		return MX_CACHE;
	case O_ANON: case O_ANON_THP: case O_ANON_SWAPCACHE: case O_KSM: case O_WAITERS_ANON:
	case O_HUGETLB: case O_HUGETLB_1G:
		return MX_USER;
	default:
		return MX_KERNEL;
	}
}

/* The reference's mix, in ppm of pfns (see above). */
static const struct mix mix_ref = {
	.on = 1, .free = 896884, .cache = 25979, .user = 25921, .kernel = 51216, .kzero = 320442,
};

/* A run of kernel objects (slab of order 0..3, reserved pages) from p,
 * 32..480 pages while the pfns are free: the run is non-zero or zero as a
 * whole. Kernel content comes in runs, as in a real machine's copy (the
 * 6 GiB reference's non-zero pages lie in 430 extents): single pages
 * scattered among holes would cost a file extent each, and on this
 * machine's discard-mounted disk deleting 2 million extents takes an
 * hour. Returns the pages placed. */
static uint64_t kernel_run(struct mm *m, uint64_t p, uint64_t hi, double zero_ppm)
{
	uint64_t r = rnd(m), want = 32 + (r >> 40) % 449, at = p;
	int zero = (double)(r % PPM) < zero_ppm;

	while (at - p < want && at < hi) {
		uint64_t x = rnd(m);
		enum otype t = (x >> 32) % 2 ? O_SLAB : O_KERNEL;
		int k = fit_order(m, at, hi, t == O_SLAB ? geo_order(x, 3) : 0);
		if (k < 0)
			break;
		put_obj(m, at, (unsigned)k, t);
		if (!zero)
			for (uint64_t q = at; q < at + (1ull << k); q++)
				m->kdata[q / 8] |= (uint8_t)(1u << (q % 8));
		at += 1ull << k;
	}
	return at - p;
}

/* Fills the free pfns so that each class ends with its share of all RAM
 * pfns. A class is drawn with weight (pages it still needs) / (its mean
 * object size so far): every class then runs out at the same rate, so
 * the mix is the same everywhere in memory, not front-loaded. */
static void fill_mix_ref(struct mm *m)
{
	const struct mix *x = &m->o->mix;
	const uint32_t share[MX_N] = { x->free, x->cache, x->user, x->kernel };
	double want[MX_N], got[MX_N] = { 0 }, size[MX_N] = { 0 }, objs[MX_N] = { 0 };
	double ram = 0, zero_ppm, prior[MX_N] = { 1024, 1.5, 1.5, 256 };

	for (size_t si = 0; si < m->L->nram; si++)
		ram += (double)(m->L->load[si].filesz / PAGE_SIZE);
	for (int c = 0; c < MX_N; c++)
		want[c] = ram * share[c] / PPM;
	/* what is placed already (the region, the catalogue) counts in its
	 * class, and its zero kernel pages (zero region pages; catalogue
	 * pages, which get no content) count against the kernel's zero share */
	double zeros = 0, region = 0;
	for (size_t i = 0; i < m->nobj; i++) {
		const struct mobj *ob = &m->obj[i];
		uint64_t n = 0;
		for (uint64_t p = ob->pfn; p < ob->pfn + ob->npfn; p++)
			n += (uint64_t)in_ram(m, p);
		got[mix_class(ob->type)] += (double)n;
	}
	for (uint64_t pa = m->rbase; pa < m->rend; pa += PAGE_SIZE, region += 1) {
		const uint64_t *w = (const uint64_t *)(const void *)(m->img + (pa - m->rbase));
		size_t j = 0;
		while (j < PAGE_SIZE / 8 && !w[j])
			j++;
		zeros += j == PAGE_SIZE / 8;
	}
	zeros += got[MX_KERNEL] - region;
	zero_ppm = want[MX_KERNEL] > got[MX_KERNEL] ?
		((double)x->kzero * want[MX_KERNEL] - zeros * PPM) / (want[MX_KERNEL] - got[MX_KERNEL]) : 0;
	if (zero_ppm < 0)
		zero_ppm = 0;
	if (zero_ppm > PPM)
		zero_ppm = PPM;

	for (size_t si = 0; si < m->L->nram; si++) {
		const struct seg *s = &m->L->load[si];
		uint64_t lo = s->paddr / PAGE_SIZE, hi = (s->paddr + s->filesz) / PAGE_SIZE;

		for (uint64_t p = lo; p < hi; p++) {
			if (!pfn_free(m, p))
				continue;
			uint64_t r = rnd(m);
			double w[MX_N], tw = 0, pick;
			int c, k;
			enum otype t;

			for (c = 0; c < MX_N; c++) {
				double mean = objs[c] ? size[c] / objs[c] : prior[c];
				w[c] = want[c] > got[c] ? (want[c] - got[c]) / mean : 0;
				tw += w[c];
			}
			if (tw <= 0) {
				c = MX_FREE;
			} else {
				pick = (double)(r & 0xffffffffu) / 4294967296.0 * tw;
				for (c = 0; c < MX_N - 1 && pick >= w[c]; c++)
					pick -= w[c];
			}
			if (c == MX_KERNEL) {
				uint64_t n = kernel_run(m, p, hi, zero_ppm);
				got[c] += (double)n;
				size[c] += (double)n;
				objs[c] += 1;
				if (n)
					p += n - 1;
				continue;
			}
			switch (c) {
			case MX_FREE:
				t = O_BUDDY;
				k = (r >> 32) % 16 ? 10 : geo_order(r, 9);
				break;
			case MX_CACHE:
				t = (r >> 32) % 1000 < 6 ? O_CACHE_PRIV : O_CACHE;
				k = geo_order(r, 2);
				break;
			case MX_USER:
				t = (r >> 32) % 100 < 5 ? O_ANON_THP : O_ANON;
				k = t == O_ANON_THP ? 9 : 0;
				break;
			default:
				continue;
			}
			if (t == O_ANON_THP && fit_order(m, p, hi, 9) != 9) {
				t = O_ANON;
				k = 0;
			}
			k = fit_order(m, p, hi, k);
			if (k < 0)
				continue;
			put_obj(m, p, (unsigned)k, t);
			got[c] += (double)(1ull << k);
			size[c] += (double)(1ull << k);
			objs[c] += 1;
			p += (1ull << k) - 1;
		}
	}
	fprintf(stderr, "%s: mix placed (%% of %.0f RAM pfns): free %.2f, cache %.2f, user %.2f, "
		"kernel %.2f (zero share of the mix's kernel pages %.1f %%)\n", prog, ram,
		100 * got[MX_FREE] / ram, 100 * got[MX_CACHE] / ram, 100 * got[MX_USER] / ram,
		100 * got[MX_KERNEL] / ram, zero_ppm / 1e4);
}

static int parse_pct(const char *s, uint32_t *ppm);

/* --mix ref, or free=P,cache=P,user=P,kernel=P[,kzero=P] in percent
 * (the four summing to 100; kzero: the zero share of kernel pages). */
static int parse_mix(const char *s, struct mix *x)
{
	char buf[256], *save = NULL, *tok;

	if (!strcmp(s, "ref")) {
		*x = mix_ref;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*x = (struct mix){ .on = 1 };
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint32_t *f;
		if (!eq)
			return -1;
		*eq = 0;
		if (!strcmp(tok, "free")) f = &x->free;
		else if (!strcmp(tok, "cache")) f = &x->cache;
		else if (!strcmp(tok, "user")) f = &x->user;
		else if (!strcmp(tok, "kernel")) f = &x->kernel;
		else if (!strcmp(tok, "kzero")) f = &x->kzero;
		else return -1;
		if (parse_pct(eq + 1, f))
			return -1;
	}
	uint64_t sum = (uint64_t)x->free + x->cache + x->user + x->kernel;
	return sum + 100 < PPM || sum > PPM + 100 ? -1 : 0;
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s -o FILE [--arch x86_64|arm64 [--va-bits 39|48|52] [--cpu-va-bits 48]]\n"
		"       [--mem SIZE] [--segments N] [--zero-pct P] [--seed S]\n"
		"       [--osrelease STR] [--crashtime T] [--cpus N] [--text-alias]\n"
		"       [--sparse-gap SIZE] [--bad MODE] [--ram START:SIZE,...]\n"
		"       [--mm LAYOUT [--levels 4|5] [--leaf 4k|2m|1g] [--ms-size 16|32]\n"
		"        [--kernel-at ADDR] [--sme-bit N] [--corrupt MODE]\n"
		"        [--mix ref|LIST] [--no-expect]]\n"
		"  --arch ARCH       x86_64 (default) or arm64: an EM_AARCH64 vmcore as Debian's\n"
		"                    arm64 kernels leave it (RAM from 0x40000000, the image's\n"
		"                    PT_LOAD at kimage_voffset, the linear map; with --mm,\n"
		"                    4 KiB-granule tables from swapper_pg_dir, init_uts_ns\n"
		"                    and a printk ring; --levels and --sme-bit do not apply)\n"
		"  --va-bits N       arm64: CONFIG_ARM64_VA_BITS, 39, 48 or 52 (48): 3, 4 or 5\n"
		"                    levels (52: LPA2 descriptors, a 16-entry top table)\n"
		"  --cpu-va-bits 48  arm64: a 52-bit kernel on a CPU without LPA2 (4 levels,\n"
		"                    TCR_EL1_T1SZ 16, PHYS_OFFSET moved down as the kernel does)\n"
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
		"                    filesz-lt-memsz\n"
		"  --ram LIST        explicit RAM ranges START:SIZE, comma-separated, sorted\n"
		"                    (replaces --mem, --segments and --sparse-gap)\n"
		"  --mm LAYOUT       build page tables, mem_section and struct pages as\n"
		"                    kernel LAYOUT would (6.1, 6.12, 6.16, 7.1) and write\n"
		"                    FILE.expect, the pfns each dump level must exclude\n"
		"  --levels N        page-table levels, 4 or 5 (4)\n"
		"  --leaf SIZE       largest leaf of the direct map and vmemmap (2m)\n"
		"  --ms-size N       SIZE(mem_section), 16 or 32 (32)\n"
		"  --kernel-at ADDR  physical load address of the kernel, 2 MiB aligned\n"
		"                    (16M): phys_base = ADDR - 16M\n"
		"  --sme-bit N       AMD SME: set address bit N (47..51) in every page-table\n"
		"                    entry and export it as NUMBER(sme_mask)\n"
		"  --corrupt MODE    none vmemmap-pgd vmemmap-pud pmd-outside pte-hole\n"
		"                    section-garbage section-absent root-zero buddy-order\n"
		"                    order-misaligned head-511 random-bytes\n"
		"  --straddle        (--mm) runs across the capture's block and span\n"
		"                    boundaries (place_straddle)\n"
		"  --ring-zero-pages (--arch arm64 --mm) a 16 KiB printk text ring whose\n"
		"                    last three pages are unused (zero)\n"
		"  --memmap-edges    (--mm) pages of struct pages that describe kept and\n"
		"                    free pages, on each side of span and section\n"
		"                    boundaries (place_memmap_edges)\n"
		"  --mix ref|LIST    fill memory with the class mix of a real 6 GiB guest\n"
		"                    (ref), or free=P,cache=P,user=P,kernel=P[,kzero=P] in\n"
		"                    percent of pfns (kzero: zero share of kernel pages);\n"
		"                    only kernel pages have content, the rest are holes\n"
		"  --no-expect       do not write FILE.expect (minutes at 64 GiB and more)\n"
		"  (with either, struct pages are written through a shared mapping of\n"
		"   FILE: host memory stays small whatever --mem describes)\n",
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

/* START:SIZE[,START:SIZE...], page multiples, sorted, not overlapping */
static int parse_ram(const char *s, struct opts *o)
{
	char buf[4096], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	o->nram = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t a, n;

		if (!colon || o->nram == MAX_RAM_RANGES)
			return -1;
		*colon = 0;
		if (parse_size(tok, &a) || parse_size(colon + 1, &n) || !n ||
		    a % PAGE_SIZE || n % PAGE_SIZE || a + n > MAX_MEM || a + n < a)
			return -1;
		if (o->nram && a < o->ram_lo[o->nram - 1] + o->ram_len[o->nram - 1])
			return -1;
		o->ram_lo[o->nram] = a;
		o->ram_len[o->nram++] = n;
	}
	return o->nram ? 0 : -1;
}

static int parse_mm(const char *s, struct opts *o)
{
	if (!strcmp(s, "6.1"))
		o->mm = &kv61;
	else if (!strcmp(s, "6.12"))
		o->mm = &kv612;
	else if (!strcmp(s, "6.16"))
		o->mm = &kv616;
	else if (!strcmp(s, "7.1"))
		o->mm = &kv71;
	else
		return -1;
	return 0;
}

static int parse_corrupt(const char *s, enum corrupt *c)
{
	for (int i = 0; i < CX_COUNT; i++)
		if (!strcmp(s, corrupt_names[i])) {
			*c = (enum corrupt)i;
			return 0;
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
	else if (!o->nram && (!o->segments || o->segments > MAX_SEGMENTS ||
			      o->segments > o->mem / PAGE_SIZE))
		why = "--segments must be 1..1048576 and at most one per page";
	else if (o->cpus > MAX_CPUS)
		why = "--cpus must be at most 8192";
	else if (strlen(o->osrelease) > 64)
		why = "--osrelease is at most 64 bytes (utsname)";
	else if (o->mm && o->bad != BAD_NONE)
		why = "--mm cannot be combined with --bad";
	else if (o->mm && o->mm_levels != 4 && o->mm_levels != 5)
		why = "--levels must be 4 or 5";
	else if (o->mm && o->ms_size != 16 && o->mm && o->ms_size != 32)
		why = "--ms-size must be 16 or 32";
	else if (o->mm && o->kernel_at % (2u << 20))
		why = "--kernel-at must be 2 MiB aligned";
	else if (!o->mm && o->corrupt != CX_NONE)
		why = "--corrupt needs --mm";
	else if (!o->mm && scale_mode(o))
		why = "--mix and --no-expect need --mm";
	else if (o->arm64 && (o->sme_bit || o->mm_levels != 4))
		why = "--sme-bit and --levels are x86_64's (arm64: --va-bits)";
	else if (o->arm64 && o->va_bits != 39 && o->va_bits != 48 && o->va_bits != 52)
		why = "--va-bits must be 39, 48 or 52";
	else if (o->arm64 && o->cpu_va_bits != o->va_bits && !(o->va_bits == 52 && o->cpu_va_bits == 48))
		why = "--cpu-va-bits differs from --va-bits only as 48 under 52";
	else if (!o->arm64 && (o->va_bits || o->cpu_va_bits))
		why = "--va-bits and --cpu-va-bits need --arch arm64";
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
		{ "ram", required_argument, NULL, 'R' },
		{ "mm", required_argument, NULL, 'M' },
		{ "levels", required_argument, NULL, 'L' },
		{ "leaf", required_argument, NULL, 'F' },
		{ "ms-size", required_argument, NULL, 'Z' },
		{ "kernel-at", required_argument, NULL, 'K' },
		{ "corrupt", required_argument, NULL, 'C' },
		{ "sme-bit", required_argument, NULL, 'E' },
		{ "straddle", no_argument, NULL, 'X' },
		{ "memmap-edges", no_argument, NULL, 'Y' },
		{ "ring-zero-pages", no_argument, NULL, 'W' },
		{ "mix", required_argument, NULL, 'Q' },
		{ "no-expect", no_argument, NULL, 'N' },
		{ "arch", required_argument, NULL, 'A' },
		{ "va-bits", required_argument, NULL, 'V' },
		{ "cpu-va-bits", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t t;
	int c, idx = 0, kernel_at_given = 0;

	while ((c = getopt_long(argc, argv, "o:h", longopts, &idx)) != -1) {
		const char *name = longopts[idx].name; /* only read for long options */

		switch (c) {
		case 'o': o->out = optarg; break;
		case 'a': o->text_alias = 1; break;
		case 'X': o->straddle = 1; break;
		case 'Y': o->memmap_edges = 1; break;
		case 'W': o->ring_zero = 1; break;
		case 'N': o->no_expect = 1; break;
		case 'Q': if (parse_mix(optarg, &o->mix)) return bad_arg(name, optarg); break;
		case 'r': o->osrelease = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'm': if (parse_size(optarg, &o->mem)) return bad_arg(name, optarg); break;
		case 'g': if (parse_size(optarg, &o->gap)) return bad_arg(name, optarg); break;
		case 's': if (parse_u64(optarg, &o->segments)) return bad_arg(name, optarg); break;
		case 'c': if (parse_u64(optarg, &o->cpus)) return bad_arg(name, optarg); break;
		case 'S': if (parse_u64(optarg, &o->seed)) return bad_arg(name, optarg); break;
		case 'z': if (parse_pct(optarg, &o->zero_ppm)) return bad_arg(name, optarg); break;
		case 'b': if (parse_bad(optarg, &o->bad)) return bad_arg(name, optarg); break;
		case 'R': if (parse_ram(optarg, o)) return bad_arg(name, optarg); break;
		case 'M': if (parse_mm(optarg, o)) return bad_arg(name, optarg); break;
		case 'C': if (parse_corrupt(optarg, &o->corrupt)) return bad_arg(name, optarg); break;
		case 'K':
			if (parse_size(optarg, &o->kernel_at))
				return bad_arg(name, optarg);
			kernel_at_given = 1;
			break;
		case 'A':
			if (!strcmp(optarg, "arm64")) o->arm64 = 1;
			else if (!strcmp(optarg, "x86_64")) o->arm64 = 0;
			else return bad_arg(name, optarg);
			break;
		case 'V':
			if (parse_u64(optarg, &t) || t > 64)
				return bad_arg(name, optarg);
			o->va_bits = (unsigned)t;
			break;
		case 'U':
			if (parse_u64(optarg, &t) || t > 64)
				return bad_arg(name, optarg);
			o->cpu_va_bits = (unsigned)t;
			break;
		case 'L':
			if (parse_u64(optarg, &t) || (t != 4 && t != 5))
				return bad_arg(name, optarg);
			o->mm_levels = (unsigned)t;
			break;
		case 'E':
			if (parse_u64(optarg, &t) || t < 47 || t > 51)
				return bad_arg(name, optarg);
			o->sme_bit = (unsigned)t;
			break;
		case 'Z':
			if (parse_u64(optarg, &t) || (t != 16 && t != 32))
				return bad_arg(name, optarg);
			o->ms_size = (unsigned)t;
			break;
		case 'F':
			if (!strcmp(optarg, "4k")) o->leaf = 12;
			else if (!strcmp(optarg, "2m")) o->leaf = 21;
			else if (!strcmp(optarg, "1g")) o->leaf = 30;
			else return bad_arg(name, optarg);
			break;
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
	if (o->arm64) {
		/* what Debian's arm64 vmcores have: the image's own PT_LOAD,
		 * the kernel 2 MiB above the start of RAM */
		if (!o->va_bits)
			o->va_bits = 48;
		if (!o->cpu_va_bits)
			o->cpu_va_bits = o->va_bits;
		o->text_alias = 1;
		if (!kernel_at_given)
			o->kernel_at = A64_KERNEL_AT;
		if (o->mm == &kv61)
			o->mm = &kv61_a64;
	}
	if (!o->osrelease)
		o->osrelease = o->mm ? o->mm->release : o->arm64 ? "6.1.0-mkvmcore-arm64" : "6.1.0-mkvmcore";
	return check_opts(o);
}

static uint64_t ram_total(const struct opts *o)
{
	uint64_t t = 0;

	for (size_t i = 0; i < o->nram; i++)
		t += o->ram_len[i];
	return t;
}

static int make_layout(struct layout *L, const struct opts *o, struct blob *notes)
{
	int err;

	L->nram = o->nram ? o->nram : (size_t)o->segments;
	L->nload = L->nram + (o->text_alias ? 1 : 0);
	L->phnum = 1 + L->nload;
	L->load = calloc(L->nload, sizeof(*L->load));
	if (!L->load)
		return -ENOMEM;
	plan_ram(L, o);
	plan_alias(L, o);
	if (o->mm) {
		static struct mm mm;

		g_mm = &mm;
		mm_build(&mm, o, L);
		mm_corrupt(&mm);
	}
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
		.seed = 1, .osrelease = NULL, .crashtime = 1700000000,
		.cpus = 2, .gap = 1ull << 20,
		.mm_levels = 4, .leaf = 21, .ms_size = 32, .kernel_at = KTEXT_PADDR,
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
	if (o.mm && !o.no_expect)
		write_expect(&o, g_mm);
	if (o.mm && o.arm64)
		write_ring_text(&o);
	printf("%s: %zu PT_LOAD, %" PRIu64 " bytes of memory, %" PRIu64
	       " non-zero pages written, file size %" PRIu64 "\n",
	       o.out, L.nload, o.nram ? ram_total(&o) : o.mem, written, size);
	free(L.load);
	free(notes.p);
	free(hdr.p);
	return 0;
}
