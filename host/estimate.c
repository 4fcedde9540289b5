/* kdumpinit estimate: what a dump of this machine would be at each dump
 * level, were it to crash now. Every page of RAM is classed from the
 * running kernel's own flags (/proc/kpageflags) by the rules the capture
 * applies to the crashed kernel's struct pages (docs/FILTERING.md 3.4);
 * a sample of whole PAGES blocks is read through /proc/kcore and
 * compressed exactly as the capture compresses (capture/lz4page.h). The
 * sample's bytes per kept page, times the exact count of kept pages, is
 * the size. It only reads. */
#include "estimate.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include "json.h"
#include "../arm/reserve.h"
#include "../arm/root.h"
#include "../capture/lz4page.h"
#include "../capture/passes.h"
#include "../capture/zero.h"
#include "../dump/format.h"
#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h). */
#define KPF_LRU		5
#define KPF_BUDDY	10
#define KPF_ANON	12
#define KPF_SWAPCACHE	13
#define KPF_SWAPBACKED	14
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_HUGE	17
#define KPF_HWPOISON	19
#define KPF_NOPAGE	20
#define KPF_OFFLINE	23
#define KPF_PRIVATE	35
#define BIT(f, b)	(((f) >> (b)) & 1)

/* The classes the levels tell apart, and the level bit that drops each. */
enum { EC_KERNEL, EC_CACHE, EC_CACHE_PRIV, EC_USER, EC_FREE, EC_GONE, EC_N };
static const char *const class_name[EC_N] = {
	"kernel", "cache", "cache_private", "user", "free", "poisoned_or_offline",
};

/* Dropped at level: cache without private by 2 or 4, with private by 4,
 * user by 8, free by 16; hwpoisoned and offline pages at every level. */
static int class_dropped(int c, unsigned level)
{
	switch (c) {
	case EC_CACHE: return (level & 6) != 0;
	case EC_CACHE_PRIV: return (level & 4) != 0;
	case EC_USER: return (level & 8) != 0;
	case EC_FREE: return (level & 16) != 0;
	case EC_GONE: return 1;
	default: return 0;
	}
}

/* A page's class from its flags, in the capture's order: free, then page
 * cache not anonymous, then anonymous or hugetlb. A compound page's tail
 * takes its head's class (*head), as the capture judges a compound unit by
 * its head; the kernel reports some flags on the head only. */
static int classify(uint64_t f, int *head)
{
	int c = EC_KERNEL;

	if (BIT(f, KPF_COMPOUND_TAIL) && *head >= 0)
		return *head;
	if (BIT(f, KPF_BUDDY))
		c = EC_FREE;
	else if ((BIT(f, KPF_LRU) || (BIT(f, KPF_SWAPCACHE) && BIT(f, KPF_SWAPBACKED))) &&
		 !BIT(f, KPF_ANON))
		c = BIT(f, KPF_PRIVATE) ? EC_CACHE_PRIV : EC_CACHE;
	else if (BIT(f, KPF_ANON) || BIT(f, KPF_HUGE))
		c = EC_USER;
	else if (BIT(f, KPF_HWPOISON) || BIT(f, KPF_OFFLINE))
		c = EC_GONE;
	*head = BIT(f, KPF_COMPOUND_HEAD) ? c : -1;
	return c;
}

#define RANGES_MAX 1024
#define LEVELS_MAX 32

struct range {
	uint64_t lo, hi;	/* pfns, [lo, hi) */
};

struct seg {			/* a /proc/kcore PT_LOAD with its physical address */
	uint64_t paddr, len, off;
};

struct est {
	const char *root;
	uint32_t ps;
	int flags_fd, core_fd;
	struct range ram[RANGES_MAX];
	unsigned nram;
	struct seg *seg;
	unsigned nseg;
	uint64_t pages, classes[EC_N];
	unsigned nlevels, levels[LEVELS_MAX];
	/* The sample, per level: picks, and the sums over them of bytes
	 * and CPU seconds per kept page of the block picked. */
	uint64_t s_blocks, s_pages, s_picks[LEVELS_MAX];
	double s_per[LEVELS_MAX], s_cpu[LEVELS_MAX];
	/* The BLOCK_PAGES-aligned blocks that hold RAM, in pfn order, and
	 * their pages per class (at most BLOCK_PAGES each). */
	uint64_t blocks, *bid;
	uint16_t *bcnt;		/* blocks * EC_N */
	size_t bcap;
};

/* "START-END : System RAM" at the top level of /proc/iomem, less any
 * "Crash kernel" inside: the memory /proc/vmcore will hold. */
static int read_ram(struct est *e)
{
	char path[512];
	size_t len;
	char *text = read_all_file(root_path(e->root, "/proc/iomem", path, sizeof path), 1, &len);
	struct range crash[16];
	unsigned ncrash = 0;

	if (!text)
		return -errno;
	text[len] = 0;
	for (char *l = text, *nl; l && *l; l = nl) {
		nl = strchr(l, '\n');
		if (nl)
			*nl++ = 0;
		int top = l[0] != ' ';
		char *p = l + strspn(l, " "), *dash = strchr(p, '-'), *colon = strstr(p, " : ");
		if (!dash || !colon || dash > colon)
			continue;
		*dash = 0;
		*colon = 0;
		uint64_t a, b;
		if (parse_u64(p, 16, &a) < 0 || parse_u64(dash + 1, 16, &b) < 0 || b < a)
			continue;
		/* Root sees addresses; anyone else sees zeros. */
		if (a == 0 && b == 0)
			continue;
		struct range r = { (a + e->ps - 1) / e->ps, (b + 1) / e->ps };
		if (top && !strcmp(colon + 3, "System RAM") && r.hi > r.lo && e->nram < RANGES_MAX)
			e->ram[e->nram++] = r;
		else if (!strcmp(colon + 3, "Crash kernel") && ncrash < 16)
			crash[ncrash++] = (struct range){ a / e->ps, (b + e->ps) / e->ps };
	}
	free(text);
	/* Take the reservation out (it is never in the crashed kernel's
	 * vmcore): a range it cuts in two keeps both sides. */
	for (unsigned c = 0; c < ncrash; c++)
		for (unsigned i = 0; i < e->nram; i++) {
			struct range *r = &e->ram[i];
			if (crash[c].hi <= r->lo || crash[c].lo >= r->hi)
				continue;
			struct range right = { crash[c].hi, r->hi };
			r->hi = crash[c].lo > r->lo ? crash[c].lo : r->lo;
			if (right.hi > right.lo && e->nram < RANGES_MAX)
				e->ram[e->nram++] = right;
		}
	return e->nram ? 0 : -ENODATA;
}

/* The PT_LOADs of /proc/kcore (or any ELF64 core) that say their
 * physical address: the direct map's RAM, the kernel's text. */
static int read_core(struct est *e)
{
	Elf64_Ehdr eh;

	if (read_full_at(e->core_fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM)
		return -ENOEXEC;
	size_t n = eh.e_phnum;
	Elf64_Phdr *ph = calloc(n, sizeof *ph);
	e->seg = calloc(n, sizeof *e->seg);
	if (!ph || !e->seg) {
		free(ph);
		return -ENOMEM;
	}
	if (read_full_at(e->core_fd, ph, n * sizeof *ph, eh.e_phoff) != (ssize_t)(n * sizeof *ph)) {
		free(ph);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_paddr != UINT64_MAX && ph[i].p_filesz &&
		    ph[i].p_paddr + ph[i].p_filesz > ph[i].p_paddr &&
		    ph[i].p_offset + ph[i].p_filesz > ph[i].p_offset)
			e->seg[e->nseg++] = (struct seg){ ph[i].p_paddr, ph[i].p_filesz, ph[i].p_offset };
	free(ph);
	return e->nseg ? 0 : -ENODATA;
}

/* One page's bytes from the core, or 0 when no segment holds it whole. */
static int read_page(struct est *e, uint64_t pfn, uint8_t *buf)
{
	uint64_t pa = pfn * e->ps;

	for (unsigned i = 0; i < e->nseg; i++) {
		const struct seg *s = &e->seg[i];
		if (pa >= s->paddr && pa - s->paddr <= s->len - e->ps)
			return read_full_at(e->core_fd, buf, e->ps, s->off + (pa - s->paddr)) ==
			       (ssize_t)e->ps;
	}
	return 0;
}

static int read_flags(struct est *e, uint64_t pfn, uint64_t *f, size_t n)
{
	ssize_t got = read_full_at(e->flags_fd, f, n * 8, pfn * 8);
	if (got < 0)
		return -errno;
	for (size_t i = (size_t)got / 8; i < n; i++)
		f[i] = 1ull << KPF_NOPAGE;	/* past the end: no page */
	return 0;
}

static int grow_blocks(struct est *e)
{
	size_t cap = e->bcap ? 2 * e->bcap : 4096;
	uint64_t *b = realloc(e->bid, cap * sizeof *b);
	if (!b)
		return -ENOMEM;
	e->bid = b;
	uint16_t *c = realloc(e->bcnt, cap * EC_N * sizeof *c);
	if (!c)
		return -ENOMEM;
	e->bcnt = c;
	e->bcap = cap;
	return 0;
}

/* Every RAM pfn's class; and the blocks that hold RAM. */
static int count_classes(struct est *e)
{
	enum { CH = 8192 };
	uint64_t *f = malloc(CH * 8), last_block = UINT64_MAX;
	int head = -1;

	if (!f)
		return -ENOMEM;
	for (unsigned r = 0; r < e->nram; r++)
		for (uint64_t p = e->ram[r].lo; p < e->ram[r].hi; p += CH) {
			size_t n = e->ram[r].hi - p < CH ? e->ram[r].hi - p : CH;
			int rc = read_flags(e, p, f, n);
			if (rc < 0) {
				free(f);
				return rc;
			}
			for (size_t i = 0; i < n; i++) {
				if (BIT(f[i], KPF_NOPAGE))
					continue;
				int c = classify(f[i], &head);
				e->classes[c]++;
				e->pages++;
				if ((p + i) / BLOCK_PAGES != last_block) {
					last_block = (p + i) / BLOCK_PAGES;
					if (e->blocks == e->bcap && grow_blocks(e) < 0) {
						free(f);
						return -ENOMEM;
					}
					e->bid[e->blocks] = last_block;
					memset(e->bcnt + e->blocks * EC_N, 0, EC_N * sizeof *e->bcnt);
					e->blocks++;
				}
				e->bcnt[(e->blocks - 1) * EC_N + c]++;
			}
		}
	free(f);
	return e->pages ? 0 : -ENODATA;
}

static uint64_t kept_pages(const struct est *e, unsigned level)
{
	uint64_t n = 0;
	for (int c = 0; c < EC_N; c++)
		if (!class_dropped(c, level))
			n += e->classes[c];
	return n;
}

/* A PAGES chunk of a block as the capture writes it: header, bitmaps,
 * size words, then the pages (dump/format.h), padded to 8 bytes. */
static uint64_t chunk_bytes(uint32_t nstored, uint32_t nzero, uint64_t data)
{
	if (!nstored && !nzero)
		return 0;
	uint64_t len = sizeof(struct kdi_chunk) + pages_hdr_len(BLOCK_PAGES, nstored, nzero) + data;
	return (len + KDI_CHUNK_ALIGN - 1) / KDI_CHUNK_ALIGN * KDI_CHUNK_ALIGN;
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A block of the sample as it is now: each page's class (-1: not RAM)
 * and bytes, read once for every level that picks it. */
struct blk {
	uint64_t id;
	signed char cls[BLOCK_PAGES];
	unsigned char have[BLOCK_PAGES];
	uint8_t *pages;
};

static int read_block(struct est *e, uint64_t block, struct blk *b)
{
	uint64_t f[BLOCK_PAGES], pfn0 = block * BLOCK_PAGES;
	int head = -1;
	unsigned n = 0;

	b->id = UINT64_MAX;	/* until it is read whole */
	if (read_flags(e, pfn0, f, BLOCK_PAGES) < 0)
		return -EIO;
	for (unsigned i = 0; i < BLOCK_PAGES; i++) {
		uint64_t pfn = pfn0 + i;
		int in = 0;
		for (unsigned r = 0; r < e->nram && !in; r++)
			in = pfn >= e->ram[r].lo && pfn < e->ram[r].hi;
		b->cls[i] = -1;
		b->have[i] = 0;
		if (!in || BIT(f[i], KPF_NOPAGE))
			continue;
		b->cls[i] = (signed char)classify(f[i], &head);
		b->have[i] = (unsigned char)read_page(e, pfn, b->pages + (size_t)i * e->ps);
		n++;
	}
	b->id = block;
	e->s_blocks++;
	e->s_pages += n;
	return 0;
}

/* The block's PAGES chunk at level as the capture writes it: its bytes,
 * and how many of its pages the level keeps. */
static uint64_t block_bytes(const struct est *e, const struct blk *b, unsigned level,
			    uint8_t *dst, LZ4_stream_t *lz, uint64_t *kept)
{
	uint32_t nstored = 0, nzero = 0;
	uint64_t data = 0;

	*kept = 0;
	LZ4_initStream(lz, sizeof *lz);
	for (unsigned i = 0; i < BLOCK_PAGES; i++) {
		if (b->cls[i] < 0 || class_dropped(b->cls[i], level))
			continue;
		++*kept;
		const uint8_t *pg = b->pages + (size_t)i * e->ps;
		if (!b->have[i])
			continue;	/* the capture reads what kcore would not */
		if ((level & 1) && page_is_zero(pg, e->ps)) {
			nzero++;
			continue;
		}
		int raw;
		data += lz4_page(lz, pg, dst, e->ps, &raw);
		nstored++;
	}
	return chunk_bytes(nstored, nzero, data);
}

static uint64_t rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned block_kept(const struct est *e, size_t b, unsigned level)
{
	unsigned k = 0;
	for (int c = 0; c < EC_N; c++)
		if (!class_dropped(c, level))
			k += e->bcnt[b * EC_N + c];
	return k;
}

/* Per level, want picks spread evenly over the level's kept pages in
 * pfn order (one random offset, then a pick every kept/want pages), each
 * the block that page is in: the kept pages are sampled, not the blocks,
 * so a level whose pages crowd in few blocks (level 31: the kernel's)
 * is sampled as finely as one that keeps everything. The mean of the
 * picks' bytes per kept page is the level's. */
static int sample(struct est *e, uint64_t want, uint64_t seed)
{
	struct blk *b = calloc(1, sizeof *b);
	uint8_t *dst = malloc(LZ4_COMPRESSBOUND(e->ps));
	LZ4_stream_t *lz = LZ4_createStream();
	int rc = 0;

	if (!b || !dst || !lz || !(b->pages = malloc((size_t)BLOCK_PAGES * e->ps))) {
		rc = -ENOMEM;
		goto out;
	}
	b->id = UINT64_MAX;
	for (unsigned l = 0; l < e->nlevels; l++) {
		unsigned level = e->levels[l];
		uint64_t total = kept_pages(e, level);
		if (!total)
			continue;
		uint64_t picks = want < total ? want : total;
		double step = (double)total / (double)picks;
		/* Each level its own draw from the seed: a level's picks do
		 * not depend on which others were asked. */
		uint64_t ls = seed ^ (0x9e37u * (level + 1));
		double at = step * ((double)(rnd_next(&ls) >> 11) / 9007199254740992.0);
		uint64_t before = 0;	/* kept pages in the blocks before bi */
		size_t bi = 0, last = SIZE_MAX;
		uint64_t bytes = 0, kept = 0;
		double t = 0;
		for (uint64_t k = 0; k < picks; k++, at += step) {
			for (unsigned bk; bi < e->blocks && before + (bk = block_kept(e, bi, level)) <= (uint64_t)at; bi++)
				before += bk;
			if (bi >= e->blocks)
				break;
			/* A dense block is picked again and again: once is enough. */
			if (bi != last) {
				if (b->id != e->bid[bi] && read_block(e, e->bid[bi], b) < 0)
					continue;
				double t0 = cpu_now();
				bytes = block_bytes(e, b, level, dst, lz, &kept);
				t = cpu_now() - t0;
				last = bi;
			}
			if (!kept)
				continue;	/* the flags moved since the count */
			e->s_per[l] += (double)bytes / (double)kept;
			e->s_cpu[l] += t / (double)kept;
			e->s_picks[l]++;
		}
	}
out:
	if (b)
		free(b->pages);
	free(b);
	free(dst);
	if (lz)
		LZ4_freeStream(lz);
	return rc;
}

static int parse_levels(const char *s, struct est *e)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	e->nlevels = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (parse_u64(t, 10, &v) < 0 || v > 31 || e->nlevels >= LEVELS_MAX)
			return -1;
		e->levels[e->nlevels++] = (unsigned)v;
	}
	return e->nlevels ? 0 : -1;
}

/* The estimate of one level. */
struct level_est {
	uint64_t kept, bytes, device;
	double cpu_s, write_s;
};

/* The dump's records other than pages (header, VMCOREINFO, notes, the
 * settings, the log, END): measured at 60-200 KiB on 6.1-7.3 dumps; the
 * claim's header and slack on the device: 1 MiB. */
#define OTHER_RECORDS	(256ull << 10)
#define DEVICE_SLACK	(1ull << 20)
/* The error the estimate allows for: the goal, checked against
 * real captures (tests/e2e, estimate cases). */
#define DEVICE_MARGIN_PCT 15

static void level_estimate(const struct est *e, unsigned l, double write_mibs,
			   struct level_est *o)
{
	o->kept = kept_pages(e, e->levels[l]);
	double per = e->s_picks[l] ? e->s_per[l] / (double)e->s_picks[l] : 0;
	o->bytes = (uint64_t)(per * (double)o->kept) + OTHER_RECORDS;
	o->device = o->bytes + o->bytes * DEVICE_MARGIN_PCT / 100 + DEVICE_SLACK;
	o->cpu_s = e->s_picks[l] ? e->s_cpu[l] / (double)e->s_picks[l] * (double)o->kept : 0;
	o->write_s = (double)o->bytes / (write_mibs * 1048576.0);
}

static const char estimate_help[] =
	"usage: kdumpinit estimate [--level LIST] [--sample MIB|all] [--write-rate MIB]\n"
	"                          [--seed N] [--json] [--root DIR]\n"
	"\n"
	"Says how large this machine's dump would be if it crashed now, at each dump\n"
	"level of LIST (default 0,1,17,31), how long the capture would take, and the\n"
	"reservation (crashkernel=) and dump device to give it. Every page of RAM is\n"
	"classed from the kernel's flags (/proc/kpageflags) as the capture classes the\n"
	"crashed kernel's; a sample of the memory (/proc/kcore) is compressed as the\n"
	"capture compresses it. Needs root. It only reads.\n"
	"  --level LIST     dump levels, comma-separated (0-31)\n"
	"  --sample MIB     how much to compress per level, in 1 MiB blocks picked evenly\n"
	"                   over the pages the level keeps (default 256); all: every one\n"
	"  --write-rate MIB the dump device's speed in MiB/s, for the time (default 100)\n"
	"  --seed N         the sample's draw (default: random); the same N, the same blocks\n"
	"  --json           one JSON object (schema kdumpinit-estimate/1, docs/CLI.md)\n"
	"  --root DIR       read DIR/proc and DIR/sys instead (tests)\n"
	"Exit: 0, 1 error (not root, no /proc/kpageflags or /proc/kcore), 2 usage.\n";

static void say_size(char *buf, size_t sz, uint64_t b)
{
	if (b >= (10ull << 30))
		snprintf(buf, sz, "%.1f GiB", (double)b / 1073741824.0);
	else
		snprintf(buf, sz, "%.1f MiB", (double)b / 1048576.0);
}

int cmd_estimate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "level", 1, 0, 'l' }, { "sample", 1, 0, 's' }, { "write-rate", 1, 0, 'w' },
		{ "seed", 1, 0, 'S' }, { "json", 0, 0, 'J' }, { "root", 1, 0, 'R' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct est e = { .root = "", .flags_fd = -1, .core_fd = -1 };
	uint64_t want = 256, seed = 0, rate = 100;
	int c, js = 0, all = 0, seeded = 0, rc = EXIT_SYSTEM;
	char path[512];

	parse_levels("0,1,17,31", &e);
	while ((c = cli_next("estimate", argc, argv, "l:s:w:S:JR:h", opts)) != -1) {
		switch (c) {
		case 'l':
			if (parse_levels(optarg, &e) < 0)
				return cli_bad_value("estimate", "--level", optarg,
						     "a comma-separated list of levels 0-31");
			break;
		case 's':
			if (!strcmp(optarg, "all"))
				all = 1;
			else if (parse_u64(optarg, 10, &want) < 0 || want == 0 || want > (1ull << 32))
				return cli_bad_value("estimate", "--sample", optarg,
						     "a number of MiB (1 and up) or 'all'");
			break;
		case 'w':
			if (parse_u64(optarg, 10, &rate) < 0 || rate == 0 || rate > 1000000)
				return cli_bad_value("estimate", "--write-rate", optarg,
						     "MiB/s, 1 to 1000000");
			break;
		case 'S':
			if (parse_u64(optarg, 0, &seed) < 0)
				return cli_bad_value("estimate", "--seed", optarg, "a number");
			seeded = 1;
			break;
		case 'J': js = 1; break;
		case 'R': e.root = optarg; break;
		case 'h': fputs(estimate_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (cli_operands("estimate", argc, argv, 0, ""))
		return EXIT_USAGE;
	if (!seeded && getrandom(&seed, sizeof seed, 0) != sizeof seed)
		seed = (uint64_t)time(NULL);
	long ps = sysconf(_SC_PAGESIZE);
	e.ps = ps > 0 ? (uint32_t)ps : 4096;

	int r = read_ram(&e);
	if (r < 0) {
		err("%s: %s", root_path(e.root, "/proc/iomem", path, sizeof path),
		    r == -ENODATA ? "no System RAM with its addresses (they are shown to root only)" :
				    strerror(-r));
		goto out;
	}
	e.flags_fd = open(root_path(e.root, "/proc/kpageflags", path, sizeof path), O_RDONLY | O_CLOEXEC);
	if (e.flags_fd < 0) {
		r = -errno;
		err("cannot open %s: %s%s", path, strerror(-r),
		    r == -EACCES ? " (run as root)" :
		    r == -ENOENT ? " (a kernel without CONFIG_PROC_PAGE_MONITOR)" : "");
		goto out;
	}
	e.core_fd = open(root_path(e.root, "/proc/kcore", path, sizeof path), O_RDONLY | O_CLOEXEC);
	if (e.core_fd < 0) {
		r = -errno;
		err("cannot open %s: %s%s", path, strerror(-r),
		    r == -EACCES || r == -EPERM ? " (run as root; lockdown also closes it)" :
		    r == -ENOENT ? " (a kernel without CONFIG_PROC_KCORE)" : "");
		goto out;
	}
	if ((r = read_core(&e)) < 0) {
		err("%s: %s", path, r == -ENODATA ? "no segment with a physical address" :
			       r == -ENOMEM ? strerror(ENOMEM) : "not an ELF64 core");
		goto out;
	}
	if ((r = count_classes(&e)) < 0) {
		err("%s: %s", root_path(e.root, "/proc/kpageflags", path, sizeof path),
		    r == -ENODATA ? "no flags for any page of RAM" : strerror(-r));
		goto out;
	}
	/* all: a pick on every kept page, which makes the sample the whole. */
	uint64_t blocks = want * 1048576 / ((uint64_t)BLOCK_PAGES * e.ps);
	if ((r = sample(&e, all ? UINT64_MAX : blocks ? blocks : 1, seed)) < 0) {
		err("estimate: %s", strerror(-r));
		goto out;
	}
	if (!e.s_blocks) {
		err("%s: no page of the sample could be read", root_path(e.root, "/proc/kcore", path, sizeof path));
		goto out;
	}

	unsigned cpus = reserve_cpus_online(e.root);
	unsigned fast = cpus < RESERVE_CPUS_MAX ? cpus : RESERVE_CPUS_MAX;
	uint64_t r1 = reserve_floor(1, 0), rn = reserve_floor(fast, 0);
	uint64_t d1 = reserve_floor(1, 1), dn = reserve_floor(fast, 1);
	double sampled = (double)e.s_pages / (double)e.pages * 100.0;
	char a[32], b[32], d[32];

	if (js) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_str(&j, "schema", "kdumpinit-estimate/1");
		json_u64(&j, "page_size", e.ps);
		json_u64(&j, "pages", e.pages);
		json_obj(&j, "classes");
		for (int k = 0; k < EC_N; k++)
			json_u64(&j, class_name[k], e.classes[k]);
		json_end(&j, '}');
		json_obj(&j, "sample");
		json_u64(&j, "blocks", e.s_blocks);
		json_u64(&j, "pages", e.s_pages);
		json_u64(&j, "seed", seed);
		json_end(&j, '}');
		json_arr(&j, "levels");
		for (unsigned l = 0; l < e.nlevels; l++) {
			struct level_est o;
			level_estimate(&e, l, (double)rate, &o);
			json_obj(&j, NULL);
			json_u64(&j, "level", e.levels[l]);
			json_u64(&j, "kept_pages", o.kept);
			json_u64(&j, "dump_bytes", o.bytes);
			json_u64(&j, "device_bytes", o.device);
			json_u64(&j, "cpu_ms", (uint64_t)(o.cpu_s * 1000));
			json_u64(&j, "write_ms", (uint64_t)(o.write_s * 1000));
			json_end(&j, '}');
		}
		json_end(&j, ']');
		json_obj(&j, "reservation");
		json_u64(&j, "cpus_online", cpus);
		json_u64(&j, "stock_1cpu", r1);
		json_u64(&j, "stock_cpus", fast);
		json_u64(&j, "stock", rn);
		json_u64(&j, "dedicated_1cpu", d1);
		json_u64(&j, "dedicated", dn);
		json_end(&j, '}');
		json_u64(&j, "write_rate_mib", rate);
		json_u64(&j, "error_pct", DEVICE_MARGIN_PCT);
		json_end(&j, '}');
		rc = EXIT_OK;
		goto out;
	}
	say_size(a, sizeof a, e.pages * e.ps);
	printf("memory: %s in %" PRIu64 " pages of %u bytes:", a, e.pages, e.ps);
	for (int k = 0; k < EC_N; k++)
		printf(" %s %.1f%%", class_name[k], (double)e.classes[k] * 100.0 / (double)e.pages);
	printf("\nsample: %" PRIu64 " blocks of 1 MiB read (%.1f%% of the pages), picked over each "
	       "level's kept pages and compressed as the capture does\n", e.s_blocks, sampled);
	printf("level  kept pages      dump   device  capture on 1 CPU  writing at %" PRIu64 " MiB/s\n", rate);
	for (unsigned l = 0; l < e.nlevels; l++) {
		struct level_est o;
		level_estimate(&e, l, (double)rate, &o);
		say_size(b, sizeof b, o.bytes);
		say_size(d, sizeof d, o.device);
		printf("%5u %11" PRIu64 " %10s %9s %14.1f s %14.1f s\n", e.levels[l], o.kept, b, d,
		       o.cpu_s, o.write_s);
	}
	printf("reservation: crashkernel=%" PRIu64 "M for the stock crash kernel on 1 CPU, %" PRIu64
	       "M on %u (the capture's workers); %" PRIu64 "M and %" PRIu64 "M for kdumpinit's "
	       "dedicated kernel\n",
	       r1 >> 20, rn >> 20, fast, d1 >> 20, dn >> 20);
	printf("assumes: the memory in use as now; sizes within %d%% (the device column adds that "
	       "and 1 MiB for the claim); the capture's CPU time as this CPU compresses now; the "
	       "device writing at %" PRIu64 " MiB/s (--write-rate); the reservation by arm's "
	       "measured rule (docs/CLI.md), which does not grow with the machine's memory\n",
	       DEVICE_MARGIN_PCT, rate);
	rc = EXIT_OK;
out:
	if (e.flags_fd >= 0)
		close(e.flags_fd);
	if (e.core_fd >= 0)
		close(e.core_fd);
	free(e.seg);
	free(e.bid);
	free(e.bcnt);
	return rc;
}
