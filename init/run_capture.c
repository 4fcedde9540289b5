#include "run_capture.h"

#include "../dump/seal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../capture/passes.h"
#include "../config/target.h"
#include "../dump/chain.h"
#include "../kernel/dbgpages.h"
#include "../kernel/dmesg.h"
#include "../kernel/vmcore.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* The log reader's budget, in kernel/kmem.h's units: a sound ring is a
 * handful of large reads, a unit per page each (a 32 MiB ring: 8 Ki). */
#define LOG_WORK (1u << 22)

/* Our peak resident memory (VmHWM), in bytes, or 0. What the reservation
 * must hold: /proc/vmcore's own mappings are of the old kernel's memory
 * (PFN maps) and are not counted; a regular vmcore file's are. */
static uint64_t peak_rss(void)
{
	return proc_kb("/proc/self/status", "VmHWM:");
}

static void summary(const struct capture_result *res, uint32_t ps)
{
	const struct kdi_end *e = &res->end;
	char ex[512];
	size_t n = 0;

	ex[0] = 0;
	for (int c = 0; c < KDI_EX_NCLASSES; c++)
		if (e->excluded[c])
			n += snprintf(ex + n, n < sizeof ex ? sizeof ex - n : 0, "%s%s %llu",
				      n ? ", " : "", kdi_class_name[c],
				      (unsigned long long)e->excluded[c]);
	double in = (double)e->pages_total * ps;
	msg("capture: %llu of %llu pages kept (excluded: %s), %.1f MiB -> %.1f MiB (ratio %.2f) "
	    "in %.1f s%s, peak memory %.1f MiB",
	    (unsigned long long)e->pages_stored, (unsigned long long)e->pages_total,
	    n ? ex : "none", in / 1048576.0, e->bytes_out / 1048576.0,
	    e->bytes_out ? in / e->bytes_out : 0.0, res->seconds,
	    res->direct ? " (direct I/O)" : "", peak_rss() / 1048576.0);
}

/* Opens the vmcore and says what it is; the exit code. */
static int open_vmcore(struct vmcore *vc, const char *vmcore)
{
	enum vmcore_err why;
	int r = vmcore_open(vc, vmcore, &why);

	if (r == -ENOENT && why == VMC_OK) {
		err("%s does not exist: nothing to capture (in a crash kernel this means it was "
		    "not booted by kexec -p after a panic)", vmcore);
		return EXIT_INPUT;
	}
	struct stat st;
	if (r < 0 && why == VMC_NOT_FILE && stat(vmcore, &st) == 0) {
		err("%s is %s, not a regular file or block device: nothing captured", vmcore,
		    file_kind_name(st.st_mode));
		return EXIT_INPUT;
	}
	if (r < 0) {
		if (why != VMC_OK)
			err("%s is %s: nothing captured", vmcore, vmcore_strerror(why));
		else
			err("cannot read %s: %s", vmcore, errstr(r));
		return why != VMC_OK || r == -EACCES ? EXIT_INPUT : EXIT_SYSTEM;
	}
	return EXIT_OK;
}

static void describe_vmcore(const struct vmcore *vc, const struct arch_ops *arch,
			    const char *vmcore)
{
	struct vmcoreinfo vi;
	uint64_t mem = 0;

	if (!arch)
		warn("no support for ELF machine %u: only zero pages can be excluded", vc->e_machine);
	vmcoreinfo_parse(&vi, vc->vmcoreinfo);
	for (uint32_t i = 0; i < vc->nr_seg; i++)
		mem += vc->seg[i].filesz;
	msg("vmcore: %s, kernel %s, %s, %u segments, %.1f MiB of memory", vmcore,
	    vi.have_osrelease ? vi.osrelease : "unknown", arch ? arch->name : "unknown machine",
	    vc->nr_seg, mem / 1048576.0);
	if (vc->truncated)
		warn("%s is shorter than its program headers say: capturing what is there, "
		     "the dump will be marked incomplete", vmcore);
}

/* The crashed kernel's log into in->dmesg, within a quarter of what is
 * free; the plan then sizes the pipeline around what it kept, so *avail
 * loses its length. Said either way; a capture goes on without it.
 * Returns the log for the caller to free, or NULL. */
static char *read_log(struct memmap *mm, struct capture_in *in, uint64_t *avail)
{
	char *log = NULL;
	size_t log_len = 0;
	struct dmesg_stat st;
	uint64_t log_budget = *avail ? *avail / 4 : 1ull << 30;
	kmem_budget(&mm->km, LOG_WORK);
	int r = dmesg_read(&mm->km, log_budget, &log, &log_len, &st);
	int over = kmem_over(&mm->km);
	kmem_budget(&mm->km, 0);
	if (r < 0 && over)
		r = -ETIME;

	if (r == 0) {
		if (st.salvaged)
			warn("kernel log: the ring's head/tail ids are not usable: %u records salvaged by "
			     "scanning its %llu descriptors (%u rejected); the saved log says so",
			     st.records, (unsigned long long)st.scanned, st.rejected);
		msg("kernel log: %u records%s (%.0f KiB), written before the pages", st.records,
		    st.salvaged ? " (salvaged)" : "", log_len / 1024.0);
		in->dmesg = log;
		in->dmesg_len = log_len;
		*avail = *avail > log_len ? *avail - log_len : 0;
	} else if (r == -ETIME) {
		warn("the crashed kernel's log: reading it went past its budget of %u reads (a "
		     "corrupt ring?); capturing without it", LOG_WORK);
	} else if (r == -EFBIG) {
		warn("the crashed kernel's log ring needs more than the %.1f MiB this capture can "
		     "spare; capturing without it (a larger crashkernel= keeps it)", log_budget / 1048576.0);
	} else {
		warn("the crashed kernel's log could not be read (%s); capturing without it",
		     r == -ENOENT ? "VMCOREINFO has no printk ring buffer" :
		     r == -ENODATA ? "the ring is damaged and no record in it could be salvaged" :
		     errstr(r));
	}
	return log;
}

/* Where on the target this dump goes: after the dumps not yet saved, so
 * that a second crash before the first dump is saved keeps the first
 * (dump/chain.h). Said on the console either way; the exit code. */
static int place_dump(const struct target *t, enum chain_full full, uint64_t replace_id,
		      struct capture_in *in)
{
	struct chain *c = malloc(sizeof *c);
	struct chain_place p;

	if (!c) {
		err("out of memory reading what %s holds", t->path);
		return EXIT_SYSTEM;
	}
	if (t->created)
		c->n = 0;	/* a file this capture made holds nothing */
	else
		chain_walk(t->fd, t->base, t->limit, c);
	/* A first attempt that stalled before its pages left at most its log:
	 * this one takes its place, not the room after it. */
	if (replace_id && c->n && c->d[c->n - 1].dump_id == replace_id)
		c->n--;
	chain_place(c, t->base, t->limit, t->sb.saved_dump_id, full, &p);
	if (p.refused && p.kept_whole) {
		err("%s holds %u dump%s not yet saved and has no room after them; "
		    "kdumpinit.full=overwrite, but a complete one of %.1f MiB would not fit again "
		    "with a quarter to spare (%.1f MiB): this crash is not captured, and they are "
		    "kept (kdumpinit save --dir saves them)", t->path, p.unsaved,
		    p.unsaved == 1 ? "" : "s", p.kept_whole / 1048576.0, (t->limit - t->base) / 1048576.0);
	} else if (p.refused) {
		err("%s holds %u dump%s not yet saved and has no room after them: this crash is "
		    "not captured, and they are kept (kdumpinit.full=overwrite writes over them; "
		    "kdumpinit save --dir saves them)", t->path, p.unsaved, p.unsaved == 1 ? "" : "s");
	} else if (p.overwritten) {
		warn("%s holds %u dump%s not yet saved and has no room after them: writing over "
		     "them (kdumpinit.full=overwrite)", t->path, p.overwritten,
		     p.overwritten == 1 ? "" : "s");
	} else if (p.unsaved && t->grows) {
		msg("%s holds %u dump%s not yet saved: this one goes after them, as dump %u (the "
		    "file grows as it needs)", t->path, p.unsaved, p.unsaved == 1 ? "" : "s",
		    p.rec.index);
	} else if (p.unsaved) {
		msg("%s holds %u dump%s not yet saved: this one goes after them, as dump %u, with "
		    "%.1f MiB of room", t->path, p.unsaved, p.unsaved == 1 ? "" : "s", p.rec.index,
		    (t->limit - p.at) / 1048576.0);
	}
	free(c);
	if (p.refused)
		return EXIT_TARGET;
	in->base = p.at;
	in->chain = p.rec;
	return EXIT_OK;
}

/* Opens the target and fills in's facts about it; the exit code. */
static int open_output(struct target *t, const char *output, int may_create,
		       enum chain_full full, uint64_t replace_id, struct capture_in *in)
{
	enum target_refusal tw;
	char tmsg[400];
	int r = target_open(t, output, may_create, &tw, tmsg, sizeof tmsg);

	if (r == -EPERM) {
		err("%s", tmsg);
		return EXIT_TARGET;
	}
	if (r < 0) {
		err("cannot open %s for writing: %s", output, errstr(r));
		return r == -ENOENT || r == -EBUSY ? EXIT_TARGET : EXIT_SYSTEM;
	}
	in->fd = t->fd;
	in->base = t->base;
	in->limit = t->limit;
	memcpy(in->sb_uuid, t->sb.uuid, 16);
	/* O_DIRECT for block devices: in a small reservation the page cache
	 * has no room for the dump, and queued direct writes are what the
	 * device is fastest with. A file goes through its filesystem's page
	 * cache (direct writes into an ext4 file, 3 in flight, measured
	 * slower here: 1.15 s against 1.0 s for a level-1 capture), with its
	 * writeback started as it goes (sink.c) and fdatasync'd at the end. */
	in->no_direct = !t->is_blockdev;
	/* A regular file may sit on a filesystem with less room than its
	 * size says (format --size makes it sparse). */
	in->grow_file = !t->is_blockdev;
	in->trim_file = t->grows;	/* what it took past this dump, given back */
	return place_dump(t, full, replace_id, in);
}

/* What the run's result says, once; the exit code. */
static int report(int r, const struct capture_result *res, const struct target *t,
		  uint32_t ps)
{
	if (r < 0) {
		err("writing the dump to %s failed: %s", t->path, errstr(r));
		return r == -ENOSPC ? EXIT_INCOMPLETE : EXIT_SYSTEM;
	}
	summary(res, ps);
	uint32_t st = res->end.status;
	if (st & KDI_ST_DEVICE_FULL)
		warn(res->fs_full || t->grows ? "the filesystem holding %s is full: the dump holds what fit "
		     "and is marked incomplete" : "%s is too small: the dump holds what fit "
		     "and is marked incomplete", t->path);
	if (st & KDI_ST_READ_ERRORS)
		warn("%llu pages could not be read from the vmcore",
		     (unsigned long long)res->end.excluded[KDI_EX_UNREADABLE]);
	if (st & KDI_ST_WRITE_ERRORS)
		warn("%u write error%s gone around on %s: %.1f MiB of the dump lost there; the dump "
		     "is marked incomplete", res->gaps, res->gaps == 1 ? "" : "s", t->path,
		     res->gap_bytes / 1048576.0);
	if (res->write_error)
		err("writing stopped: %s", errstr(res->write_error));
	if (st & KDI_ST_ABORTED)
		err("capture stopped before the end; the dump is marked incomplete");
	int code = res->write_error ? EXIT_SYSTEM : (st & KDI_ST_INCOMPLETE) ? EXIT_INCOMPLETE : EXIT_OK;
	if (code == EXIT_OK)
		msg("dump complete on %s", t->path);
	return code;
}

/* ---- the optional steps ----
 * They run once START, the settings and the log are on the device, and
 * before the pages (capture_dump calls run_steps). Each has a budget in
 * work (kernel/kmem.h's units), not only the stall watchdog's time: a
 * step past it is dropped whole, said once on the console and in the
 * dump's STEPS record, and the capture goes on without it. */

/* The finder's budget: a fixed part for the page tables, the image and
 * the ring, and a part that grows with the memory, for the tasks. The
 * finder took WORK_MEASURED on the real vmcores of tests/debugger
 * (docs/DESIGN.md, "Budgets"). */
#define FINDER_WORK_BASE (8u << 20)
#define FINDER_WORK_PER_GIB (1u << 20)

struct steps {
	const struct vmcore *vc;
	const struct arch_ops *arch;
	const struct memmap *mm;
	enum memmap_mode mode;
	struct capture_live *live;
	int spin;			/* test hook: the first step never ends */
	int no_dbg;			/* test hook: no debugger's pages first */
	uint64_t finder_work;		/* test hook: the finder's budget, else 0 */
	struct dbg_pages dbg;
	struct vmemmap vm;
};

/* One line of what a step did: on the console, and into the dump's
 * STEPS record. */
static void step_say(struct capture_steps_out *st, int warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void step_say(struct capture_steps_out *st, int warning, const char *fmt, ...)
{
	char line[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (warning)
		warn("%s", line);
	else
		msg("%s", line);
	if (st->len < sizeof st->text - 1) {
		int n = snprintf(st->text + st->len, sizeof st->text - st->len, "%s\n", line);
		st->len += n > 0 ? (size_t)n : 0;
		if (st->len >= sizeof st->text)
			st->len = sizeof st->text - 1;
	}
}

/* Whole pages of memory the vmcore's segments hold: what the sizes of
 * the debugger's set and of the memory map are judged against. */
static uint64_t vmcore_pages(const struct vmcore *vc)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < vc->nr_seg; i++)
		n += vc->seg[i].filesz / vc->page_size;
	return n;
}

static uint64_t finder_work(const struct vmcore *vc)
{
	return FINDER_WORK_BASE + (vmcore_pages(vc) * vc->page_size >> 30) * FINDER_WORK_PER_GIB;
}

/* The pages a debugger reads to open the kernel, written first: a cap
 * of 1/64 of the memory, 128 MiB to 1 GiB of pages (measured: 53-65 MiB
 * on 1 GiB guests of 6.1 to 7.3, most of it the kernel image, which
 * grows with each release; tests/debugger/README.md). Said once.
 * Without them (no translation, no memory) the capture is as before. */
static void find_debugger_pages(struct steps *sp, struct capture_steps_out *st)
{
	const struct vmcore *vc = sp->vc;
	struct dbg_pages *set = &sp->dbg;
	uint64_t pfns = vmcore_pages(vc), work = sp->finder_work ? sp->finder_work : finder_work(vc);
	uint64_t lo = (128ull << 20) / vc->page_size, hi = (1ull << 30) / vc->page_size;
	uint64_t budget = pfns / 64 < lo ? lo : pfns / 64 > hi ? hi : pfns / 64;
	int r = dbg_pages_find(set, vc, sp->arch, sp->mm, budget, work);
	if (r == -ETIME || r == -E2BIG) {
		st->flags |= KDI_STEPS_DROPPED;
		step_say(st, 1, "the debugger's pages: dropped, %s (corrupt memory?); the pages "
			 "go in pfn order", r == -ETIME ? "past the search's budget" :
			 "more pieces than a kernel has");
		return;
	}
	if (r < 0) {
		st->flags |= KDI_STEPS_DROPPED;
		step_say(st, 1, "the debugger's pages could not be found (%s): the pages go in "
			 "pfn order", errstr(r));
		return;
	}
	if (!set->n)
		return;
	/* Tier by tier, each part as it was added (its new pfns). */
	char parts[2][300];
	for (int t = 0; t < DBG_TIERS; t++) {
		size_t n = 0;
		parts[t][0] = 0;
		for (int p = 0; p < DBG_NPARTS && n < sizeof parts[t]; p++)
			if (dbg_part_tier[p] == t && (set->parts & (1u << p)))
				n += snprintf(parts[t] + n, sizeof parts[t] - n, "%s%s %llu", n ? ", " : "",
					      dbg_part_name[p], (unsigned long long)set->part_pfns[p]);
		for (int p = 0; p < DBG_NPARTS && n < sizeof parts[t]; p++)
			if (dbg_part_tier[p] == t && (set->dropped & (1u << p)))
				n += snprintf(parts[t] + n, sizeof parts[t] - n, "%s%s left for the budget",
					      n ? ", " : "", dbg_part_name[p]);
	}
	step_say(st, 0, "debugger pages first: %llu pages (%.1f MiB) in %u runs, the search took "
		 "%.1f%% of its budget", (unsigned long long)set->pfns,
		 (double)set->pfns * vc->page_size / 1048576.0, set->n, 100.0 * set->work / work);
	step_say(st, 0, "  startup set: %llu pages (%.1f MiB): %s", (unsigned long long)set->tier[0].pfns,
		 (double)set->tier[0].pfns * vc->page_size / 1048576.0, parts[0]);
	step_say(st, 0, "  then: %llu pages (%.1f MiB): %s", (unsigned long long)set->tier[1].pfns,
		 (double)set->tier[1].pfns * vc->page_size / 1048576.0, parts[1]);
}

/* The memory map's own pages, for leaving out those that describe only
 * pages the filter leaves out (kernel/vmemmap.h). Said once; without
 * them every page of struct pages is kept, as the level alone keeps it. */
static int find_memmap_pages(struct steps *sp, struct capture_steps_out *st)
{
	const struct vmcore *vc = sp->vc;
	const struct memmap *mm = sp->mm;
	struct vmemmap *vm = &sp->vm;
	char why[200];

	/* Below 1 GiB of struct pages the saving is small (2 of 34 MiB on a
	 * 1 GiB guest at level 31), and keeping them keeps what readers do
	 * with them: crash's kmem -f walks the free lists through the
	 * struct pages of free blocks, kmem -i counts shared pages, and
	 * makedumpfile can filter the saved dump again. Above, the memory
	 * map is most of a level-31 dump (docs/FILTERING.md). */
	uint64_t pfns = vmcore_pages(vc);
	if (sp->mode == MEMMAP_AUTO && pfns * mm->spage < MEMMAP_AUTO_BYTES) {
		step_say(st, 0, "memory map: kept whole (%.0f MiB of struct pages, under %u MiB: "
			 "kdumpinit.memmap=exclude leaves out what describes only pages left out)",
			 (double)pfns * mm->spage / 1048576.0, (unsigned)(MEMMAP_AUTO_BYTES >> 20));
		return 0;
	}
	int r = vmemmap_find(vm, mm, vc, CAPTURE_SPAN_PFNS, CAPTURE_SPAN_VPS, why, sizeof why);

	if (r == -ENOTSUP) {
		step_say(st, 0, "memory map: all of it kept: %s", why);
		return 0;
	}
	if (r < 0) {
		st->flags |= KDI_STEPS_DROPPED;
		step_say(st, 1, "memory map: all of it kept: %s", errstr(r));
		return 0;
	}
	step_say(st, 0, "memory map: %llu pages (%.1f MiB) in %u pieces%s; those that describe "
		 "only pages left out are left out (kdumpinit.memmap=keep keeps them)",
		 (unsigned long long)vm->pages, (double)vm->pages * vc->page_size / 1048576.0, vm->nrun,
		 vm->skipped ? ", sections with another mem_map left whole" : "");
	return 1;
}

/* capture_steps_fn: the optional steps, in order. */
static void run_steps(void *arg, struct capture_in *in, struct capture_steps_out *st)
{
	struct steps *sp = arg;

	capture_live_stage(sp->live, CAPTURE_STEP_DEBUGGER);
	/* Test hook (tests/e2e/stall.sh): the first step spins as a finder
	 * lost in corrupt memory would, so that PID 1's stall path, a second
	 * attempt without these steps, is seen end to end. */
	if (sp->spin) {
		msg("test hook: the debugger-page finder spins (KDUMPINIT_TEST_HOOK=spin-steps)");
		for (;;)
			pause();
	}
	/* Test hook (make bench, the "order" section): the pages in pfn
	 * order, as without a finder, for what the ordering costs. */
	if (!sp->no_dbg)
		find_debugger_pages(sp, st);
	if (sp->dbg.n)
		in->early = &sp->dbg;
	capture_live_stage(sp->live, CAPTURE_STEP_MEMMAP);
	if (in->filter && sp->mode != MEMMAP_KEEP && find_memmap_pages(sp, st))
		in->memmap = &sp->vm;
}

/* capture_steps_fn for a second attempt: none run, and the dump says why. */
static void no_steps(void *arg, struct capture_in *in, struct capture_steps_out *st)
{
	(void)arg;
	(void)in;
	st->flags |= KDI_STEPS_NONE;
	step_say(st, 0, "attempt %u: the first stalled before its pages; the optional steps "
		 "(the debugger's pages first, the memory map's exclusion) are left out",
		 st->attempt);
}

/* Plans and runs the capture of vc into the open target t. */
static int capture_into(struct vmcore *vc, const struct capture_req *rq,
			const struct capture_in *in, const struct capture_hooks *hk,
			const struct target *t, uint64_t avail)
{
	struct capture_plan pl;
	struct capture_result res;
	char plan[360], u[37];

	uuid_format(t->sb.uuid, u);
	msg("target: %s (claim %s%s%s), %.1f MiB available, level %u, %u thread%s",
	    t->path, u, t->sb.label[0] ? ", label " : "", t->sb.label,
	    t->grows ? 0.0 : (in->limit - in->base) / 1048576.0, rq->level, rq->threads,
	    rq->threads == 1 ? "" : "s");
	capture_plan(rq, vc, in, avail, &pl, plan, sizeof plan);
	msg("%s", plan);
	int r = capture_dump(vc, rq, &pl, in, hk, &res);
	int code = report(r, &res, t, vc->page_size);
	/* The level asked for more than zero pages and no struct page could
	 * be found: every page kept is one the filter could not classify. */
	if (r >= 0 && !in->filter && (rq->level & ~(uint32_t)DL_ZERO))
		warn("%llu pages kept unclassified: the crashed kernel's struct pages could not be found",
		     (unsigned long long)res.end.pages_stored);
	return code;
}

void sodium_misuse(void);	/* dump/seal.c's, for the hook below */

int run_capture(const char *vmcore, const char *output, int may_create,
		const struct capture_req *rq, const struct capture_hooks *hk)
{
	struct vmcore vc;
	struct seal_dump sd;

	/* Test hooks, from the environment (a crash kernel's init gets its
	 * command line's NAME=VALUE words there; more below): sodium-misuse
	 * calls libsodium's misuse handler in a sealed capture, as an
	 * impossible request would (dump/seal.c: abort). */
	const char *hook = getenv("KDUMPINIT_TEST_HOOK");
	if (rq->pubkey && hook && !strcmp(hook, "sodium-misuse"))
		sodium_misuse();
	/* Before anything is opened: a dump that was to be sealed is never
	 * written in the clear instead. */
	if (rq->pubkey && seal_begin(&sd, rq->pubkey) < 0) {
		seal_end(&sd);
		err("the public key to seal the dump with (kdumpinit.pubkey) is not a usable "
		    "X25519 key: nothing is written; the device keeps what it holds");
		return EXIT_USAGE;
	}
	int code = open_vmcore(&vc, vmcore);

	if (code != EXIT_OK) {
		if (rq->pubkey)
			seal_end(&sd);
		return code;
	}
	const struct arch_ops *arch = arch_lookup(vc.e_machine);
	describe_vmcore(&vc, arch, vmcore);
	/* Filtering beyond zero pages needs the crashed kernel's struct
	 * pages; whatever cannot be proven excludable is kept, and said once.
	 * The walker is kilobytes: allocated, not on PID 1's stack, and not
	 * a static that would outlive the run. */
	struct memmap *mm = calloc(1, sizeof *mm);
	uint32_t applied = rq->level & DL_ZERO;
	char fwhy[400];
	if (!mm || memmap_init(mm, &vc, arch, rq->level, &applied, fwhy, sizeof fwhy) < 0) {
		err("out of memory setting up page filtering");
		free(mm);
		vmcore_close(&vc);
		return EXIT_SYSTEM;
	}
	if (fwhy[0])
		warn("dump level %u: %s (applying level %u)", rq->level, fwhy, applied);
	/* --no-mmap means no mapping of the vmcore at all: the struct-page
	 * pass then reads with pread too (a way round a vmcore that faults). */
	mm->no_view = rq->read_mode == READ_PREAD;
	struct capture_in in = { .filter = mm->active ? mm : NULL };
	struct vmcoreinfo vi;
	if (rq->pubkey) {
		char id[2 * SEAL_KEYID_BYTES + 1];
		vmcoreinfo_parse(&vi, vc.vmcoreinfo);
		in.seal = &sd;
		in.release = vi.have_osrelease ? vi.osrelease : "";
		for (unsigned i = 0; i < SEAL_KEYID_BYTES; i++)
			snprintf(id + 2 * i, 3, "%02x", sd.key_id[i]);
		msg("sealing the dump to key %s: only its holder can read the memory", id);
	}
	/* The kernel's pages first: a second walker at level 31 picks them,
	 * unless the level already drops everything 31 does. */
	const uint32_t k31 = DL_CACHE | DL_CACHE_PRI | DL_USER | DL_FREE;
	struct memmap *mk = NULL;
	if (in.filter && (applied & k31) != k31) {
		uint32_t ka;
		char kwhy[400];
		mk = calloc(1, sizeof *mk);
		if (mk && memmap_init(mk, &vc, arch, rq->level | k31, &ka, kwhy, sizeof kwhy) == 0 &&
		    mk->active && (ka & k31) != (applied & k31)) {
			mk->no_view = mm->no_view;
			in.kernel = mk;
		}
	}
	uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable:");
	char *log = read_log(mm, &in, &avail);
	/* The optional steps run inside capture_dump, once the log is on
	 * the device; a second attempt runs none. */
	struct steps *sp = calloc(1, sizeof *sp);
	if (sp) {
		*sp = (struct steps){ .vc = &vc, .arch = arch, .mm = mm, .mode = rq->memmap,
				      .live = hk ? hk->live : NULL };
		/* Test hooks, from the environment (a crash kernel's init gets
		 * its command line's NAME=VALUE words there): spin-steps (the
		 * finder never ends: PID 1's stall path), finder-budget=N (the
		 * finder's budget, in kmem's units: a step past it), pfn-order
		 * (no finder: what the debugger's pages first cost). */
		sp->spin = hook && !strcmp(hook, "spin-steps");
		sp->no_dbg = hook && !strcmp(hook, "pfn-order");
		if (hook && !strncmp(hook, "finder-budget=", 14))
			sp->finder_work = strtoull(hook + 14, NULL, 10);
		in.steps = rq->retry ? no_steps : run_steps;
		in.steps_arg = sp;
		in.steps_attempt = rq->retry ? 2 : 1;
	} else {
		warn("no memory for the optional steps: the pages go in pfn order");
	}

	struct target t;
	code = open_output(&t, output, may_create, rq->full, rq->replace_dump_id, &in);
	if (code != EXIT_OK && t.fd >= 0)
		target_close(&t);
	if (code == EXIT_OK) {
		code = capture_into(&vc, rq, &in, hk, &t, avail);
		/* What the filter could not classify, and kept: the summary of
		 * a capture from damaged memory. */
		if (in.filter && mm->unreadable)
			warn("%llu pages kept because their struct page could not be read "
			     "(%llu of them in sections without a valid mem_map)",
			     (unsigned long long)mm->unreadable, (unsigned long long)mm->no_memmap);
		if (in.filter && mm->implausible)
			warn("%llu pages kept because their struct page is implausible "
			     "(a free block of an order no zone has)",
			     (unsigned long long)mm->implausible);
		target_close(&t);
	}
	memmap_fini(mm);
	free(mm);
	if (mk) {
		memmap_fini(mk);
		free(mk);
	}
	free(log);
	if (sp) {
		dbg_pages_free(&sp->dbg);
		vmemmap_free(&sp->vm);
		free(sp);
	}
	vmcore_close(&vc);
	if (rq->pubkey)
		seal_end(&sd);
	return code;
}
