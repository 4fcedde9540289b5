#include "dbgpages.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dmesg.h"
#include "kallsyms.h"
#include "memmap.h"

const char *const dbg_part_name[DBG_NPARTS] = {
	"page tables", "mem_section", "log", "stacks", "per-CPU", "module code", "image",
	"init_uts_ns", "tasks", "image data", "module data", "task stacks",
};

/* crash reads the image's data, bss and ro_after_init (page_offset_base,
 * __per_cpu_offset) and each module's struct and symbols at startup, and
 * text, most rodata and other tasks' stacks only for bt, dis and the
 * like (tests/debugger/README.md). */
const uint8_t dbg_part_tier[DBG_NPARTS] = {
	[DBG_MODULES] = 1, [DBG_IMAGE] = 1, [DBG_TSTACKS] = 1,
};

/* The order parts are added in, tier by tier: the order of need. */
static const uint8_t part_order[DBG_NPARTS] = {
	DBG_PGTABLES, DBG_MEMSECTION, DBG_LOG, DBG_STACKS, DBG_PERCPU, DBG_UTS, DBG_DATA,
	DBG_TASKS, DBG_MODDATA, DBG_IMAGE, DBG_MODULES, DBG_TSTACKS,
};

/* Around each page cpu_entry_area maps (the GDT, TSS, entry and
 * exception stacks: static per-CPU variables), this much of the per-CPU
 * area: what crash and drgn read there lies within 32 pages below and 64
 * above those pages on 6.1-7.3 (tests/debugger/README.md). */
#define PERCPU_BELOW 32u
#define PERCPU_ABOVE 64u
/* Bounds against a corrupt tree or ring: no real kernel comes near. */
#define MAX_TABLES (1u << 18)
#define MAX_AREA (256ull << 20)
/* Runs kept over all parts (16 bytes each): real sets are a few thousand
 * (tests/debugger/README.md); a corrupt tree of scattered leaves could
 * otherwise take the crash kernel's memory. */
#define MAX_RUNS (1u << 17)

/* Words of a task_struct its stack pointer is looked for in: it comes
 * after thread_info and the state word, in the first few. */
#define TASK_WORDS 64u

struct runs {
	struct pfn_run *r;
	size_t n, cap;
};

static int runs_add(struct runs *s, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return 0;
	if (s->n && lo >= s->r[s->n - 1].lo && lo <= s->r[s->n - 1].hi) {
		if (hi > s->r[s->n - 1].hi)
			s->r[s->n - 1].hi = hi;
		return 0;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 64;
		struct pfn_run *nr = realloc(s->r, nc * sizeof *nr);
		if (!nr)
			return -ENOMEM;
		s->r = nr;
		s->cap = nc;
	}
	s->r[s->n++] = (struct pfn_run){ lo, hi };
	return 0;
}

/* Runs sorted by lo, a merge sort: musl's qsort took 5 ms for the
 * 13,000 runs the rodata hops give, a quarter of the finder; this takes
 * a tenth of that. Stable; tmp holds n runs. */
static void runs_sort(struct pfn_run *r, struct pfn_run *tmp, size_t n)
{
	struct pfn_run *src = r, *dst = tmp;

	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, o = lo;
			while (i < mid && j < hi)
				dst[o++] = src[j].lo < src[i].lo ? src[j++] : src[i++];
			while (i < mid)
				dst[o++] = src[i++];
			while (j < hi)
				dst[o++] = src[j++];
		}
		struct pfn_run *x = src;
		src = dst;
		dst = x;
	}
	if (src != r)
		memcpy(r, src, n * sizeof *r);
}

/* Sorted, overlapping and touching runs merged; -ENOMEM. */
static int runs_norm(struct runs *s)
{
	size_t m = 0;

	if (!s->n)
		return 0;
	struct pfn_run *tmp = malloc(s->n * sizeof *tmp);
	if (!tmp)
		return -ENOMEM;
	runs_sort(s->r, tmp, s->n);
	free(tmp);
	for (size_t i = 0; i < s->n; i++) {
		if (m && s->r[i].lo <= s->r[m - 1].hi) {
			if (s->r[i].hi > s->r[m - 1].hi)
				s->r[m - 1].hi = s->r[i].hi;
		} else {
			s->r[m++] = s->r[i];
		}
	}
	s->n = m;
	return 0;
}

static uint64_t runs_pfns(const struct runs *s)
{
	uint64_t t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += s->r[i].hi - s->r[i].lo;
	return t;
}

/* out = a ∩ b, both normalised. */
static int runs_and(struct runs *out, const struct runs *a, const struct runs *b)
{
	size_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		uint64_t lo = a->r[i].lo > b->r[j].lo ? a->r[i].lo : b->r[j].lo;
		uint64_t hi = a->r[i].hi < b->r[j].hi ? a->r[i].hi : b->r[j].hi;
		if (lo < hi && runs_add(out, lo, hi) < 0)
			return -ENOMEM;
		if (a->r[i].hi < b->r[j].hi)
			i++;
		else
			j++;
	}
	return 0;
}

/* out = a ∪ b, both normalised: a merge, normalised too. */
static int runs_or(struct runs *out, const struct runs *a, const struct runs *b)
{
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		const struct pfn_run *x = j >= b->n || (i < a->n && a->r[i].lo <= b->r[j].lo) ?
			&a->r[i++] : &b->r[j++];
		if (runs_add(out, x->lo, x->hi) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* out = a minus b, both normalised. */
static int runs_sub(struct runs *out, const struct runs *a, const struct runs *b)
{
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		uint64_t lo = a->r[i].lo, hi = a->r[i].hi;
		while (j < b->n && b->r[j].hi <= lo)
			j++;
		for (size_t k = j; k < b->n && b->r[k].lo < hi && lo < hi; k++) {
			if (b->r[k].lo > lo && runs_add(out, lo, b->r[k].lo) < 0)
				return -ENOMEM;
			if (b->r[k].hi > lo)
				lo = b->r[k].hi;
		}
		if (lo < hi && runs_add(out, lo, hi) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The kernel's symbols the finder uses, looked up together: decoding the
 * kallsyms tables is most of what the finder costs (150,000 names), so
 * once. */
enum sym {
	S_STEXT, S_ETEXT, S_ROD, S_EROD, S_ROAI, S_EROAI, S_BANNER, S_KMEM_CACHE,
	S_PCPU_OFF, S_PCPU_UNIT, S_NR_CPU, S_PCPU_START, S_PCPU_END,
	S_CURRENT, S_PCPU_HOT, S_ENTRY_TASK, S_INIT_TASK, S_INIT_PID_NS, S_SDATA, S_EDATA,
	S_CODE,			/* from here: read_first[] */
};
static const char *const sym_name[S_CODE] = {
	"_stext", "_etext", "__start_rodata", "__end_rodata", "__start_ro_after_init",
	"__end_ro_after_init", "linux_banner", "kmem_cache",
	"__per_cpu_offset", "pcpu_unit_size", "nr_cpu_ids", "__per_cpu_start", "__per_cpu_end",
	"current_task", "pcpu_hot", "__entry_task", "init_task", "init_pid_ns", "_sdata", "_edata",
};
/* The functions whose code crash reads as it opens a dump: open and fork
 * (are frame pointers used?), __schedule (where a sleeping task's stack
 * returns), the interrupt and syscall entries (how their frames are
 * linked), vfs_read: without them it stops. And the tables it prints
 * flags and states with, and sizes the maple tree's nodes by. Two pages
 * from each start. */
static const char *const read_first[] = {
	"__x64_sys_open", "sys_open", "__x64_sys_fork", "sys_fork", "__schedule", "schedule",
	"do_futex", "common_interrupt", "asm_common_interrupt", "entry_SYSCALL_64",
	"ret_from_fork", "ret_from_fork_asm", "vfs_read",
	"pageflag_names", "gfpflag_names", "vmaflag_names", "task_state_array", "taint_flags",
	"mt_slots", "mt_pivots",
};
#define NSYMS (S_CODE + sizeof read_first / sizeof *read_first)

struct find {
	struct kmem *km;
	uint64_t sym[NSYMS];		/* 0: not in the table (or none) */
	unsigned shift;
	struct runs part[DBG_NPARTS];
	int err;
	/* Found from the kernel's symbols before the walk: the leaves then
	 * add only what they alone know (add_sections, add_percpu). */
	int have_sections, have_percpu;
	/* Before 6.4 crash reads each module whole at startup (its symbol
	 * table is found in a copy of all of it): then module code is read
	 * with the data, not only by dis and bt. */
	int modules_whole;
	uint64_t thread_size;
	/* The image's text and rodata (kernel virtual, [lo, hi)), with
	 * have_sections: tier 1, but ro_after_init, which is read first. */
	uint64_t text_lo, text_hi, rod_lo, rod_hi, roai_lo, roai_hi;
	/* Each CPU's per-CPU offset (add_percpu), ncpu of them. */
	uint64_t *cpu_off;
	uint32_t ncpu;
	/* The crashing CPUs' stacks (add_stacks), nstk of them. */
	uint64_t stk[16];
	unsigned nstk;
	/* The image's writable leaves, kernel virtual, merged (image_leaf):
	 * where image_xarrays looks without symbols. */
	struct pfn_run wr[64];
	unsigned nwr;
};

/* Every run the search finds goes through here: the cap on them all. */
static int part_add(struct find *f, enum dbg_part p, uint64_t lo, uint64_t hi)
{
	size_t n = 0;

	for (int k = 0; k < DBG_NPARTS; k++)
		n += f->part[k].n;
	if (n >= MAX_RUNS)
		return -E2BIG;
	return runs_add(&f->part[p], lo, hi);
}

/* A read of the crashed kernel for the finder: one past the budget
 * stops the whole search (f->err), which the caller then drops. */
static int rd(struct find *f, uint64_t va, void *buf, size_t len)
{
	int r = kmem_read(f->km, va, buf, len);
	if (r == -ETIME && !f->err)
		f->err = r;
	return r;
}

/* The pages behind kernel virtual [va, va + len), as far as they
 * translate: a hole is passed over, page by page. Counted down in bytes
 * left, never compared against an end: an area in the top page of the
 * address space (a word read from a task: ERR_PTR, -1, poison) would
 * otherwise step past 2^64 to 0 and walk the whole address space. */
static void add_area(struct find *f, enum dbg_part p, uint64_t va, uint64_t len)
{
	uint64_t ps = 1ull << f->shift;

	if (!len || len > MAX_AREA || va + len < va)
		return;
	uint64_t v = va & ~(ps - 1), left = va + len - v;
	while (left && !f->err) {
		uint64_t pa, span, step = ps;
		int r = kmem_vtop(f->km, v, &pa, &span);
		if (r == -ETIME) {
			f->err = r;
			return;
		}
		if (r == 0 && span) {
			uint64_t n = left < span ? left : span;
			if (pa + n > pa)	/* a translation that wraps is no memory */
				f->err = part_add(f, p, pa >> f->shift,
						  (pa + n + ps - 1) >> f->shift);
			step = (n + ps - 1) & ~(ps - 1);
		}
		if (step >= left)
			break;
		v += step;
		left -= step;
	}
}

/* Is [va, va + 1 page) in the image's text or rodata, not ro_after_init? */
static int image_tier1(const struct find *f, uint64_t va, unsigned prot)
{
	if (!f->have_sections)
		return (prot & ARCH_PROT_X) || !(prot & ARCH_PROT_W);
	if (va >= f->text_lo && va < f->text_hi)
		return 1;
	return va >= f->rod_lo && va < f->rod_hi && !(va < f->roai_hi && va + (1ull << f->shift) > f->roai_lo);
}

/* A leaf of the image mapping, page by page where it crosses a section:
 * text and rodata (crash reads a few of their pages, drgn none) go in
 * tier 1; everything else in tier 0: data, bss, brk, ro_after_init
 * (page_offset_base, __per_cpu_offset: crash reads it first), and the
 * init sections and alignment gaps, freed at boot and reused since, whose
 * pages hold whatever the allocator put there (crash reads slab objects
 * in them at startup). Without the section symbols, what is writable is
 * tier 0 and the rest (code, rodata: drgn reads none of it) tier 1. */
static void image_leaf(struct find *f, uint64_t va, uint64_t pa, uint64_t size, unsigned prot)
{
	uint64_t ps = 1ull << f->shift;

	if (prot & ARCH_PROT_W) {
		if (f->nwr && f->wr[f->nwr - 1].hi == va)
			f->wr[f->nwr - 1].hi = va + size;
		else if (f->nwr < sizeof f->wr / sizeof *f->wr)
			f->wr[f->nwr++] = (struct pfn_run){ va, va + size };
	}

	for (uint64_t o = 0; o < size && !f->err;) {
		int t1 = image_tier1(f, va + o, prot);
		uint64_t e = o + ps;
		while (e < size && image_tier1(f, va + e, prot) == t1)
			e += ps;
		f->err = part_add(f, t1 ? DBG_IMAGE : DBG_DATA, (pa + o) >> f->shift, (pa + e) >> f->shift);
		o = e;
	}
}

static int on_table(void *arg, uint64_t pa)
{
	struct find *f = arg;

	if (kmem_over(f->km))
		return f->err = -ETIME;
	f->err = part_add(f, DBG_PGTABLES, pa >> f->shift, (pa >> f->shift) + 1);
	return f->err;
}

static int on_leaf(void *arg, uint64_t va, uint64_t pa, uint64_t size, unsigned prot,
		   enum arch_va_kind kind)
{
	struct find *f = arg;
	uint64_t lo = pa >> f->shift, hi = (pa + size) >> f->shift;

	(void)va;
	/* A leaf is work too: tables that point at themselves give 512
	 * leaves for every table read. */
	if (kmem_spend(f->km, 1) < 0)
		return f->err = -ETIME;
	switch (kind) {
	case ARCH_VA_IMAGE:
		image_leaf(f, va, pa, size, prot);
		break;
	case ARCH_VA_MODULES:
		/* A module's struct, its symbols and data are what crash
		 * reads of it at startup; its code only for dis and bt,
		 * but before 6.4 (f->modules_whole). */
		f->err = part_add(f, prot & ARCH_PROT_X && !f->modules_whole ? DBG_MODULES : DBG_MODDATA,
				  lo, hi);
		break;
	case ARCH_VA_PCPU_CHUNKS:
		/* crash 9 reads per-CPU counters there (7.3: two pages of a
		 * chunk, one in each CPU's unit). */
		f->err = part_add(f, DBG_PERCPU, lo, hi);
		break;
	case ARCH_VA_CPU_AREA:
		/* Without the per-CPU symbols: PERCPU_BELOW pages below
		 * each page of the leaf and PERCPU_ABOVE above it, one run
		 * for the whole leaf. */
		if (hi > lo && !f->have_percpu)
			f->err = part_add(f, DBG_PERCPU, lo > PERCPU_BELOW ? lo - PERCPU_BELOW : 0,
					  hi - 1 + PERCPU_ABOVE);
		break;
	default:
		break;
	}
	return f->err;
}

/* A stack, and the text pages its return addresses lie in: crash's bt
 * reads the code before each one (the call), and its startup the text
 * of the frames it checks. */
static void stack_add(struct find *f, uint64_t base)
{
	uint64_t ts = f->thread_size, w[512];

	add_area(f, DBG_STACKS, base, ts);
	if (!f->have_sections)
		return;
	for (uint64_t o = 0; o < ts && !f->err; o += sizeof w) {
		if (rd(f, base + o, w, sizeof w) < 0)
			continue;
		for (size_t i = 0; i < sizeof w / 8; i++)
			if (w[i] > f->text_lo && w[i] <= f->text_hi)	/* the call, decoded */
				add_area(f, DBG_STACKS, w[i] - 16, 2048);	/* gdb decodes on */
	}
}

/* The stack of the task each CPU ran: crash reads them all at startup
 * (a CPU stopped by the crash's NMI has its PRSTATUS on the NMI stack).
 * The task from the per-CPU pointer to it (current_task on x86_64, in
 * pcpu_hot from 6.2 to 6.14; __entry_task on arm64), its stack the word
 * of it aligned to a stack's size (as for every task, below). */
static void add_current_stacks(struct find *f)
{
	const uint64_t *a = f->sym;
	uint64_t ts = f->thread_size, task, w[TASK_WORDS];
	const uint64_t kva_min = f->km->ac.ops->kva_min;
	uint64_t sym = a[S_CURRENT] ? a[S_CURRENT] : a[S_PCPU_HOT] ? a[S_PCPU_HOT] : a[S_ENTRY_TASK];

	if (!f->ncpu || !ts || !sym)
		return;
	for (uint32_t cpu = 0; cpu < f->ncpu && !f->err; cpu++) {
		if (rd(f, sym + f->cpu_off[cpu], &task, 8) < 0 || task < kva_min ||
		    rd(f, task, w, sizeof w) < 0)
			continue;
		for (size_t i = 0; i < TASK_WORDS; i++)
			if (w[i] >= kva_min && !(w[i] & (ts - 1)) && w[i] != task) {
				stack_add(f, w[i]);
				break;
			}
	}
}

static void add_stacks(struct find *f, const struct vmcore *vc)
{
	const struct arch_ops *ops = f->km->ac.ops;
	size_t off = 0;
	struct note n;

	if (!ops->prstatus_sp || !ops->thread_size)
		return;
	while (!f->err && note_next(vc->notes, vc->notes_len, &off, &n)) {
		uint64_t sp;
		if (n.type != NT_PRSTATUS || ops->prstatus_sp(n.desc, n.descsz, &sp) < 0 ||
		    sp < ops->kva_min)
			continue;
		stack_add(f, sp & ~(ops->thread_size - 1));
		if (f->nstk < sizeof f->stk / sizeof *f->stk)
			f->stk[f->nstk++] = sp & ~(ops->thread_size - 1);
	}
}

static void add_memsection(struct find *f, const struct memmap *mm)
{
	if (!mm || !mm->active)
		return;
	if (mm->per_root <= 1) {	/* one static array of sections */
		add_area(f, DBG_MEMSECTION, mm->roots_va, mm->nroots * mm->ms_size);
		return;
	}
	add_area(f, DBG_MEMSECTION, mm->roots_va, mm->nroots * 8);
	for (uint64_t i = 0; i < mm->nroots && !f->err; i++) {
		uint64_t rp;
		if (rd(f, mm->roots_va + i * 8, &rp, 8) == 0 && rp >= f->km->ac.ops->kva_min)
			add_area(f, DBG_MEMSECTION, rp, mm->per_root * mm->ms_size);
	}
}

/* ---- the tasks ----
 * crash reads every task_struct at startup and drgn walks them all for
 * the task list; both start at init_task. Its offsets are not in
 * VMCOREINFO, so they are found from init_task itself: the list_heads in
 * it are the words whose next and prev point back at them. Every list
 * through those heads is walked; a node whose container has valid list
 * heads at (almost) every one of init_task's offsets is a task_struct,
 * whose own lists are walked in turn (its threads, its children). */
#define TASK_HEAD 12288u	/* bytes of a task_struct searched for list heads */
#define TASK_BEFORE 4096u	/* around a task's node: its task_struct */
#define TASK_AFTER 16384u
#define TASK_HOP 2048u		/* bytes of what a task's word points to */
#define MAX_TASKS 65536u
#define MAX_HEADS 256u
/* The visited set starts small and doubles: a real kernel's walk visits
 * tens of thousands of addresses, and a set of the largest size from the
 * start was 8 MB of page faults, a third of the walk's time. */
#define SEEN_MIN (1u << 14)
#define SEEN_MAX (1u << 20)

struct tasks {
	struct find *f;
	uint64_t kva_min;
	uint32_t off[MAX_HEADS];	/* init_task's list-head offsets */
	unsigned noff;
	/* Hash set of what was visited, tagged in the low bits, which
	 * aligned addresses leave clear: a list node as it is, a task base
	 * | 1, an xarray node | 2, a page hopped to | 3. */
	uint64_t *seen;
	size_t cap, n;
	uint64_t *todo;			/* task bases whose lists are not walked yet */
	size_t ntodo;
	unsigned tasks;
};

static int kva(const struct tasks *t, uint64_t v)
{
	return v >= t->kva_min && !(v & 7);
}

static size_t seen_slot(const struct tasks *t, uint64_t v)
{
	size_t m = t->cap - 1, i = (size_t)((v * 0x9e3779b97f4a7c15ull) >> 20) & m;

	while (t->seen[i] && t->seen[i] != v)
		i = (i + 1) & m;
	return i;
}

/* The set twice as big, or 0 when it may not grow (then full). */
static int seen_grow(struct tasks *t)
{
	uint64_t *old = t->seen, *nw;
	size_t oc = t->cap;

	if (oc >= SEEN_MAX || !(nw = calloc(2 * oc, sizeof *nw)))
		return 0;
	t->seen = nw;
	t->cap = 2 * oc;
	for (size_t i = 0; i < oc; i++)
		if (old[i])
			t->seen[seen_slot(t, old[i])] = old[i];
	free(old);
	return 1;
}

/* 1 when v was not in the set (and is now). */
static int seen_add(struct tasks *t, uint64_t v)
{
	if (2 * (t->n + 1) > t->cap && !seen_grow(t))
		return 0;	/* full: treat as seen, the walk ends */
	size_t i = seen_slot(t, v);
	if (t->seen[i])
		return 0;
	t->seen[i] = v;
	t->n++;
	return 1;
}

/* A list_head at va: 1 non-empty and consistent, 0 empty, -1 neither. */
static int head_ok(struct tasks *t, uint64_t va, uint64_t *next)
{
	uint64_t np[2], back;

	if (rd(t->f, va, np, sizeof np) < 0 || !kva(t, np[0]) || !kva(t, np[1]))
		return -1;
	*next = np[0];
	if (np[0] == va && np[1] == va)
		return 0;
	if (rd(t->f, np[0] + 8, &back, 8) < 0 || back != va ||
	    rd(t->f, np[1], &back, 8) < 0 || back != va)
		return -1;
	return 1;
}

/* Is base a task_struct: valid list heads at 2 of 3 of init_task's
 * offsets? (Measured on 6.1: tasks 19 of 24, the heads past the end of
 * a task_struct being another object's; other containers 1 to 6.) */
static int is_task(struct tasks *t, uint64_t base)
{
	unsigned good = 0;
	uint64_t nx;

	for (unsigned k = 0; k < t->noff; k++)
		good += head_ok(t, base + t->off[k], &nx) >= 0;
	return good * 3 >= t->noff * 2;
}

/* A task_struct and one hop from it: the first TASK_HOP bytes at every
 * kernel address it holds (its mm_struct, signal, pid, cred, files...:
 * crash's ps reads them for every task). */
static void task_found(struct tasks *t, uint64_t base)
{
	uint64_t w[TASK_HEAD / 8];

	if (t->tasks >= MAX_TASKS || !seen_add(t, base | 1))
		return;
	t->tasks++;
	t->todo[t->ntodo++] = base;
	add_area(t->f, DBG_TASKS, base - TASK_BEFORE, TASK_BEFORE + TASK_AFTER);
	if (rd(t->f, base, w, sizeof w) < 0)
		return;
	uint64_t ts = t->f->thread_size;
	for (size_t i = 0; i < TASK_HEAD / 8 && !t->f->err; i++) {
		if (!kva(t, w[i]))
			continue;
		/* The object's first TASK_HOP bytes: an mm_struct runs
		 * into the next page (crash reads 1.3 KB of it on 6.12). */
		uint64_t pg = w[i] & ~4095ull, end = (w[i] + TASK_HOP - 1) & ~4095ull;
		if (seen_add(t, pg | 3) | (end != pg && seen_add(t, end | 3)))
			add_area(t->f, DBG_TASKS, w[i], TASK_HOP);
		/* Its stack: the one word aligned to a stack's size that
		 * is not the task itself (vmalloc'd stacks are aligned so;
		 * another such word costs a stack's pages in tier 1). */
		if (ts && !(w[i] & (ts - 1)) && w[i] != base && seen_add(t, w[i] | 4))
			add_area(t->f, DBG_TSTACKS, w[i], ts);
	}
}

/* Every list through base's heads: tasks found on them, and the page of
 * every other node (a signal_struct's thread list head, ...). */
static void walk_lists(struct tasks *t, uint64_t base)
{
	for (unsigned k = 0; k < t->noff && !t->f->err; k++) {
		uint64_t head = base + t->off[k], n;
		if (head_ok(t, head, &n) != 1 || !seen_add(t, n))
			continue;	/* empty, broken, or a list walked already */
		for (unsigned steps = 0; n != head && steps < 4 * MAX_TASKS && !t->f->err; steps++) {
			uint64_t nx;
			if (head_ok(t, n, &nx) < 0)
				break;
			if (is_task(t, n - t->off[k]))
				task_found(t, n - t->off[k]);
			else
				add_area(t->f, DBG_TASKS, n, 8);
			n = nx;
			if (n != head && !seen_add(t, n))
				break;	/* a cycle that does not come back to head */
		}
	}
}

/* The pid namespace's IDR, an xarray of struct pid: drgn's task list
 * and crash's task table go through it (init_pid_ns.idr.idr_rt.xa_head
 * at 8; an internal entry is a node pointer with low bits 2; a node's
 * slots[64] at 40, since 4.20). */
static void walk_xa(struct tasks *t, uint64_t entry, int depth)
{
	if (depth > 12 || t->f->err)
		return;
	if ((entry & 3) == 2 && entry > 4096) {
		uint64_t node = entry - 2, slots[64];
		if (!kva(t, node) || !seen_add(t, node | 2))
			return;
		add_area(t->f, DBG_TASKS, node, 40 + sizeof slots);
		if (rd(t->f, node + 40, slots, sizeof slots) < 0)
			return;
		for (int i = 0; i < 64; i++)
			if (slots[i])
				walk_xa(t, slots[i], depth + 1);
	} else if ((entry & 3) == 0 && kva(t, entry)) {
		add_area(t->f, DBG_TASKS, entry, 128);	/* a struct pid */
	}
}

/* Without init_pid_ns's symbol: every xarray whose root is in the image's
 * writable data, the pid IDR among them. A word there is the xa_head of
 * one when it is an internal entry (low bits 2) to a root node (parent
 * NULL, at 8) whose array (at 16) is the xarray holding the word (xa_head
 * is at 8 in it: after the lock and the flags), and whose shift is a
 * level's. Other words almost never pass all three. */
static void image_xarrays(struct tasks *t)
{
	struct find *f = t->f;
	uint64_t w[512], n[3];

	for (unsigned k = 0; k < f->nwr && !f->err; k++)
		for (uint64_t va = f->wr[k].lo; va < f->wr[k].hi && !f->err; va += sizeof w) {
			if (rd(f, va, w, sizeof w) < 0)
				continue;
			for (size_t i = 0; i < sizeof w / 8; i++) {
				uint64_t node = w[i] - 2, at = va + 8 * i;
				if ((w[i] & 3) != 2 || !kva(t, node) || rd(f, node, n, sizeof n) < 0 ||
				    n[1] != 0 || n[2] != at - 8 || (n[0] & 0xff) % 6 || (n[0] & 0xff) > 60)
					continue;
				add_area(f, DBG_TASKS, at - 8, 16);
				walk_xa(t, w[i], 0);
			}
		}
}

/* The rodata the image's writable data points to: the names crash prints
 * with (page flags, zones, task states, taints, the hypervisor's), each
 * read 1.5 KB at a time. One hop, from the words of the writable leaves
 * and ro_after_init (with the section symbols only: rodata is tier 1
 * then). */
#define NAME_READ 1536u

/* The rodata pages the hops land in, a bit per virtual page from rod_lo
 * (and one past rod_hi, where a name read from its last page ends):
 * thousands of pointers land in a few hundred pages, each translated
 * once, as runs, when the hops are done (hops_add). */
struct hops {
	uint64_t base;		/* rod_lo's page */
	size_t n;		/* pages */
	uint64_t *bits;
};

static void hop_mark(struct hops *h, unsigned shift, uint64_t va)
{
	for (uint64_t pg = va >> shift; pg <= (va + NAME_READ - 1) >> shift; pg++)
		if (pg - h->base < h->n)
			h->bits[(pg - h->base) / 64] |= 1ull << ((pg - h->base) % 64);
}

static void hop_words(struct find *f, struct hops *h, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] >= f->rod_lo && w[i] < f->rod_hi && !(w[i] >= f->roai_lo && w[i] < f->roai_hi)) {
			if (h->bits)
				hop_mark(h, f->shift, w[i]);
			else
				add_area(f, DBG_DATA, w[i], NAME_READ);
		}
}

/* HOP_READ bytes a read: the data sections are megabytes, and 4 KiB at a
 * time was 650 reads of the vmcore on 6.1; a piece that does not read
 * whole (a hole) is read again 4 KiB at a time. */
#define HOP_READ (64u << 10)

static void rodata_hop(struct find *f, struct hops *h, uint64_t lo, uint64_t hi)
{
	static const size_t page = 4096;
	uint64_t one[512];
	/* A name or two (the zones'): a page on the stack. */
	uint64_t *w = hi - lo <= page ? one : malloc(HOP_READ);
	uint64_t cap = w == one ? page : HOP_READ;

	if (!w) {
		f->err = -ENOMEM;
		return;
	}
	/* The words of whole 4 KiB steps from lo, as far as they reach hi. */
	for (uint64_t va = lo & ~7ull; va < hi && !f->err; va += cap) {
		uint64_t n = (hi - va + page - 1) / page * page;
		if (n > cap)
			n = cap;
		if (rd(f, va, w, n) == 0) {
			hop_words(f, h, w, n / 8);
			continue;
		}
		for (uint64_t p = va; p < va + n && !f->err; p += page)
			if (rd(f, p, w, page) == 0)
				hop_words(f, h, w, page / 8);
	}
	if (w != one)
		free(w);
}

/* The marked pages, a run of virtual pages at a time: the same pages as
 * an add_area of each name read. */
static void hops_add(struct find *f, const struct hops *h)
{
	for (size_t i = 0; i < h->n && !f->err;) {
		if (!(h->bits[i / 64] >> (i % 64) & 1)) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < h->n && (h->bits[j / 64] >> (j % 64) & 1))
			j++;
		add_area(f, DBG_DATA, (h->base + i) << f->shift, (uint64_t)(j - i) << f->shift);
		i = j;
	}
}

static void add_rodata_hops(struct find *f)
{
	if (!f->have_sections)
		return;
	struct hops h = { .base = f->rod_lo >> f->shift };
	if (f->rod_hi > f->rod_lo && f->rod_hi - f->rod_lo <= MAX_AREA) {
		h.n = ((f->rod_hi - 1) >> f->shift) - h.base + 2;
		h.bits = calloc((h.n + 63) / 64, sizeof *h.bits);	/* NULL: one add_area each */
	}
	/* From .data alone where its symbols say where it is: the bss is
	 * 17 MB on 6.1 and mostly zero, and the init sections hold whatever
	 * was allocated there since boot. Scanning them cost 20 ms and
	 * added no page crash or drgn read on 6.12 or 7.3
	 * (tests/debugger/coverage.sh). */
	const uint64_t *a = f->sym;
	if (a[S_SDATA] && a[S_EDATA] > a[S_SDATA] && a[S_EDATA] - a[S_SDATA] <= MAX_AREA) {
		rodata_hop(f, &h, a[S_SDATA], a[S_EDATA]);
	} else {
		for (unsigned k = 0; k < f->nwr && !f->err; k++)
			rodata_hop(f, &h, f->wr[k].lo, f->wr[k].hi);
	}
	rodata_hop(f, &h, f->roai_lo, f->roai_hi);
	if (h.bits) {
		hops_add(f, &h);
		free(h.bits);
	}
}

/* node_data[]: each node's pglist_data, which crash reads at startup. */
static void add_nodes(struct find *f)
{
	uint64_t va, len, size;
	struct kmem *km = f->km;

	if (vmcoreinfo_number(&km->vi, km->vi_text, "SYMBOL(node_data)", &va) < 0 ||
	    vmcoreinfo_number(&km->vi, km->vi_text, "LENGTH(node_data)", &len) < 0 ||
	    vmcoreinfo_number(&km->vi, km->vi_text, "SIZE(pglist_data)", &size) < 0 ||
	    len > 4096 || size > (1u << 20))
		return;
	struct hops nohops = { 0 };	/* a few words: added as found */

	add_area(f, DBG_MEMSECTION, va, len * 8);
	for (uint64_t i = 0; i < len && !f->err; i++) {
		uint64_t p;
		if (rd(f, va + i * 8, &p, 8) == 0 && p >= km->ac.ops->kva_min) {
			add_area(f, DBG_MEMSECTION, p, size);
			if (f->have_sections)
				rodata_hop(f, &nohops, p, p + size);	/* the zones' names */
		}
	}
}

/* The image's sections by their symbols (kallsyms): text, rodata and
 * ro_after_init for the leaves (image_leaf), and linux_banner, in
 * rodata, which crash compares with the vmlinux's first. */
static void add_sections(struct find *f)
{
	const uint64_t *a = f->sym;

	if (!a[S_STEXT] || a[S_ETEXT] <= a[S_STEXT] || !a[S_ROD] || a[S_EROD] <= a[S_ROD] ||
	    a[S_ROAI] > a[S_EROAI])
		return;
	f->have_sections = 1;
	f->text_lo = a[S_STEXT];
	f->text_hi = a[S_ETEXT];
	f->rod_lo = a[S_ROD];
	f->rod_hi = a[S_EROD];
	f->roai_lo = a[S_ROAI];
	f->roai_hi = a[S_EROAI];
	if (a[S_BANNER])
		add_area(f, DBG_DATA, a[S_BANNER], 256);
	for (size_t i = S_CODE; i < NSYMS; i++)
		if (a[i] >= f->text_lo && a[i] < f->rod_hi)
			add_area(f, DBG_DATA, a[i], 2ull << f->shift);
	/* The start of the symbol names, which crash 9 reads on 6.12: from
	 * VMCOREINFO, as kallsyms has no symbol of its own tables before
	 * 6.2. */
	uint64_t kn;
	if (vmcoreinfo_number(&f->km->vi, f->km->vi_text, "SYMBOL(kallsyms_names)", &kn) == 0)
		add_area(f, DBG_DATA, kn, 2ull << f->shift);
	/* The slab cache of caches, which crash sizes every cache by. */
	uint64_t cache;
	if (a[S_KMEM_CACHE] && rd(f, a[S_KMEM_CACHE], &cache, 8) == 0 &&
	    cache >= f->km->ac.ops->kva_min)
		add_area(f, DBG_DATA, cache, 512);
}

/* Each possible CPU's per-CPU area, from __per_cpu_offset[]: its static
 * variables and the start of the dynamic ones (the debuggers read up to
 * 2 pages past the static end on 6.12; tests/debugger/README.md). */
#define PERCPU_DYN (64u << 10)
#define MAX_CPUS 8192u

static void add_percpu(struct find *f)
{
	const uint64_t *a = f->sym;
	uint64_t off;
	uint32_t unit, nr;

	/* __per_cpu_start is 0 where per-CPU addresses are offsets (x86_64
	 * before 6.15): found, and 0, as not found reads. */
	if (!a[S_PCPU_OFF] || !a[S_PCPU_UNIT] || !a[S_NR_CPU] || a[S_PCPU_END] <= a[S_PCPU_START] ||
	    rd(f, a[S_PCPU_UNIT], &unit, 4) < 0 || rd(f, a[S_NR_CPU], &nr, 4) < 0 || !nr ||
	    nr > MAX_CPUS || unit < a[S_PCPU_END] - a[S_PCPU_START])
		return;
	uint64_t len = a[S_PCPU_END] - a[S_PCPU_START] + PERCPU_DYN;
	if (len > unit)
		len = unit;
	f->cpu_off = calloc(nr, sizeof *f->cpu_off);
	if (!f->cpu_off) {
		f->err = -ENOMEM;
		return;
	}
	for (uint32_t cpu = 0; cpu < nr && !f->err; cpu++) {
		if (rd(f, a[S_PCPU_OFF] + 8ull * cpu, &off, 8) < 0)
			return;
		f->have_percpu = 1;
		f->cpu_off[f->ncpu++] = off;
		add_area(f, DBG_PERCPU, a[S_PCPU_START] + off, len);
	}
}

/* The task whose stack a crashing CPU was on: of the kernel addresses
 * that stack holds, the one whose object's first words (a task_struct's
 * stack pointer follows thread_info and the state) hold the stack's
 * base. 0 when none does. */
static uint64_t task_of_stacks(struct find *f)
{
	uint64_t ts = f->thread_size, kva_min = f->km->ac.ops->kva_min, w[512], q[TASK_WORDS];

	for (unsigned k = 0; k < f->nstk && !f->err; k++) {
		uint64_t base = f->stk[k];
		for (uint64_t o = 0; o < ts && !f->err; o += sizeof w) {
			if (rd(f, base + o, w, sizeof w) < 0)
				continue;
			for (size_t i = 0; i < sizeof w / 8; i++) {
				if (w[i] < kva_min || (w[i] & 7) || (w[i] >= base && w[i] - base < ts) ||
				    rd(f, w[i], q, 9 * 8) < 0)
					continue;
				for (size_t j = 2; j < 9; j++)
					if (q[j] == base)
						return w[i];
			}
		}
	}
	return 0;
}

static void add_tasks(struct find *f)
{
	uint64_t sy[2] = { f->sym[S_INIT_TASK], f->sym[S_INIT_PID_NS] }, init_task;
	struct tasks t = { .f = f, .kva_min = f->km->ac.ops->kva_min, .cap = SEEN_MIN };
	uint8_t *w = malloc(TASK_HEAD);

	/* Any task leads to all of them (the lists are circular): without
	 * init_task's symbol (a kernel without KALLSYMS_ALL: Debian 12's
	 * arm64), the crashing task, from its stack. */
	if (!sy[0])
		sy[0] = task_of_stacks(f);
	if (!w || !(init_task = sy[0]) || rd(f, init_task, w, TASK_HEAD) < 0) {
		free(w);
		return;
	}
	for (uint32_t o = 0; o + 16 <= TASK_HEAD && t.noff < MAX_HEADS; o += 8) {
		uint64_t nx;
		if (head_ok(&t, init_task + o, &nx) >= 0)
			t.off[t.noff++] = o;
	}
	free(w);
	t.seen = calloc(t.cap, sizeof *t.seen);
	t.todo = calloc(MAX_TASKS, sizeof *t.todo);
	if (!t.seen || !t.todo || t.noff < 8) {
		f->err = t.seen && t.todo ? 0 : -ENOMEM;
		free(t.seen);
		free(t.todo);
		return;
	}
	task_found(&t, init_task);
	while (t.ntodo && !f->err)
		walk_lists(&t, t.todo[--t.ntodo]);
	uint64_t head;
	if (sy[1] && rd(f, sy[1] + 8, &head, 8) == 0) {
		add_area(f, DBG_TASKS, sy[1], 64);
		walk_xa(&t, head, 0);
	} else if (!sy[1]) {
		image_xarrays(&t);
	}
	free(t.seen);
	free(t.todo);
}

int dbg_pages_find(struct dbg_pages *dp, const struct vmcore *vc, const struct arch_ops *arch,
		   const struct memmap *mm, uint64_t budget, uint64_t work)
{
	struct kmem *km = calloc(1, sizeof *km);
	struct find f = { .km = km };
	struct runs all = { 0 }, mem = { 0 }, tier[DBG_TIERS] = { { 0 } };
	int r = 0;

	memset(dp, 0, sizeof *dp);
	if (!km)
		return -ENOMEM;
	if (!arch || kmem_init(km, vc, arch) < 0 || !km->ok)
		goto done;	/* no translation: an empty set */
	for (f.shift = 0; (1u << f.shift) < vc->page_size; f.shift++)
		;
	/* Lists, tables and trees read a word at a time: 256 KiB of lines
	 * take most of those reads off the file (none at all: slower, as
	 * before). */
	(void)physmem_cache(&km->pm, 64);
	(void)kmem_tlb(km);
	kmem_budget(km, work);
	f.thread_size = arch->thread_size;
	unsigned maj, min;
	f.modules_whole = vmcoreinfo_release(&km->vi, &maj, &min) == 0 &&
			  (maj < 6 || (maj == 6 && min < 4));
	const char *names[NSYMS];
	for (size_t i = 0; i < NSYMS; i++)
		names[i] = i < S_CODE ? sym_name[i] : read_first[i - S_CODE];
	if (ksyms_lookup(km, names, f.sym, NSYMS) < 0)
		memset(f.sym, 0, sizeof f.sym);
	add_sections(&f);
	add_percpu(&f);
	if (arch->walk) {
		struct arch_walk w = { .table = on_table, .leaf = on_leaf, .arg = &f,
				       .max_tables = MAX_TABLES };
		arch->walk(&km->ac, &w);	/* what it found before a stop still counts */
	}
	add_memsection(&f, mm);
	struct kva_area a[5];
	unsigned na = 0;
	if (dmesg_areas(km, a, &na) == 0)
		for (unsigned i = 0; i < na; i++)
			add_area(&f, DBG_LOG, a[i].va, a[i].len);
	add_stacks(&f, vc);
	add_current_stacks(&f);
	add_rodata_hops(&f);
	if (vi_has(&km->vi, VI_SYM_INIT_UTS_NS))
		add_area(&f, DBG_UTS, vi_u(&km->vi, VI_SYM_INIT_UTS_NS), 512);
	add_nodes(&f);
	add_tasks(&f);
	if (!f.err && kmem_over(km))
		f.err = -ETIME;	/* a read refused for it was taken for a hole */
	if (f.err) {
		r = f.err;
		goto done;
	}

	/* The memory the dump has: only those pfns can be written. */
	for (uint32_t i = 0; i < vc->nr_seg; i++) {
		const struct kdi_segment *s = &vc->seg[i];
		if (s->filesz && runs_add(&mem, s->paddr >> f.shift,
					  (s->paddr + s->filesz + vc->page_size - 1) >> f.shift) < 0) {
			r = -ENOMEM;
			goto done;
		}
	}
	if (runs_norm(&mem) < 0) {
		r = -ENOMEM;
		goto done;
	}

	/* Part by part, tier by tier, in order of need; one that would pass
	 * the budget is left out whole. A pfn of two tiers is the first's:
	 * all tier-0 parts come before any tier-1 part. */
	for (int k = 0; k < DBG_NPARTS; k++) {
		int p = part_order[k], t = dbg_part_tier[p];
		struct runs in = { 0 }, next = { 0 }, tnext = { 0 };
		if (runs_norm(&f.part[p]) < 0 || runs_and(&in, &f.part[p], &mem) < 0) {
			free(in.r);
			r = -ENOMEM;
			goto done;
		}
		if (!in.n) {
			free(in.r);
			continue;
		}
		r = runs_or(&next, &all, &in) ?: runs_or(&tnext, &tier[t], &in);
		free(in.r);
		if (r < 0) {
			free(next.r);
			free(tnext.r);
			goto done;
		}
		uint64_t before = runs_pfns(&all), after = runs_pfns(&next);
		if (after > budget) {
			dp->dropped |= 1u << p;
			free(next.r);
			free(tnext.r);
			continue;
		}
		free(all.r);
		all = next;
		free(tier[t].r);
		tier[t] = tnext;
		dp->parts |= 1u << p;
		dp->part_pfns[p] = after - before;
	}
	struct runs later = { 0 };
	if (runs_sub(&later, &tier[1], &tier[0]) < 0) {
		free(later.r);
		r = -ENOMEM;
		goto done;
	}
	free(tier[1].r);
	tier[1] = later;
	for (int t = 0; t < DBG_TIERS; t++) {
		dp->tier[t] = (struct dbg_tier){ tier[t].r, (uint32_t)tier[t].n, runs_pfns(&tier[t]) };
		tier[t].r = NULL;
	}
	dp->r = all.r;
	dp->n = (uint32_t)all.n;
	dp->pfns = runs_pfns(&all);
	all.r = NULL;
done:
	for (int p = 0; p < DBG_NPARTS; p++)
		free(f.part[p].r);
	free(f.cpu_off);
	for (int t = 0; t < DBG_TIERS; t++)
		free(tier[t].r);
	free(all.r);
	free(mem.r);
	uint64_t spent = km->work;
	kmem_fini(km);
	free(km);
	if (r < 0)
		dbg_pages_free(dp);
	dp->work = spent;
	return r;
}

void dbg_pages_free(struct dbg_pages *dp)
{
	free(dp->r);
	for (int t = 0; t < DBG_TIERS; t++)
		free(dp->tier[t].r);
	memset(dp, 0, sizeof *dp);
}

uint32_t dbg_pages_seek(const struct dbg_pages *dp, uint64_t pfn)
{
	return dbg_tier_seek(&(const struct dbg_tier){ dp->r, dp->n, dp->pfns }, pfn);
}

uint32_t dbg_tier_seek(const struct dbg_tier *dp, uint64_t pfn)
{
	uint32_t lo = 0, hi = dp->n;

	/* the first run that ends after pfn */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (dp->r[mid].hi <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
