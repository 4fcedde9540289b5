/* Unit tests for the struct-page pass's two read paths (kernel/memmap.c,
 * kernel/physmem.c): struct pages looked at in place through a view (an
 * mmap window of the vmcore) must give the very decisions that copying
 * them with pread gives, in any order of spans; a view that faults
 * (SIGBUS: here the vmcore cut short after it was opened, as a bad page
 * of /proc/vmcore would) must fall back to pread and still give pread's
 * decisions; and the SIGBUS handler must pass the faults it does not
 * guard on to the handler it found (capture/pipeline.c has its own).
 * The vmcore is made by mkvmcore ($MKVMCORE, else build/tools/mkvmcore,
 * from the repository top, as run.sh runs us). */
#define CHECK_PREFIX "view"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../arch/arch.h"
#include "../../kernel/memmap.h"
#include "../../kernel/vmcore.h"

static char dir[] = "/tmp/kdi-view-XXXXXX";
static char vpath[200];

struct span { uint64_t lo, hi; };

/* The capture's ranges: PT_LOADs by paddr, merged, cut at MM_WINDOW. */
static uint64_t make_spans(const struct vmcore *vc, struct span *sp, uint64_t max, uint64_t *npfn)
{
	uint32_t order[64], n = vc->nr_seg < 64 ? segment_order(vc->seg, vc->nr_seg, order) : 0;
	uint64_t ns = 0, shift = 0, rlo = 0, rhi = 0;
	int have = 0;

	while ((1ull << shift) < vc->page_size)
		shift++;
	*npfn = 0;
	for (uint32_t k = 0; k <= n; k++) {
		uint64_t lo = 0, hi = 0;
		if (k < n) {
			const struct kdi_segment *s = &vc->seg[order[k]];
			lo = s->paddr >> shift;
			hi = (s->paddr + s->filesz + vc->page_size - 1) >> shift;
			if (have && lo <= rhi) {
				if (hi > rhi)
					rhi = hi;
				continue;
			}
		}
		for (uint64_t p = rlo; have && p < rhi && ns < max;) {
			uint64_t e = (p / MM_WINDOW + 1) * MM_WINDOW;
			if (e > rhi)
				e = rhi;
			sp[ns++] = (struct span){ p, e };
			*npfn += e - p;
			p = e;
		}
		rlo = lo;
		rhi = hi;
		have = 1;
	}
	return ns;
}

#define MAX_SPANS 4096
#define MAX_PFNS (MAX_SPANS * (uint64_t)MM_WINDOW)

struct result {
	uint8_t *cls, *fl;
	struct mm_carry out[MAX_SPANS];
	uint64_t unread;
};

/* Every span from no carry, as the pipeline's first pass does; backwards
 * when asked, so that the view moves both ways. */
static void classify_all(struct mm_cursor *c, const struct span *sp, uint64_t ns, int backwards,
			 struct result *r)
{
	uint64_t at = 0;
	uint64_t *start = malloc(ns * sizeof *start);

	for (uint64_t j = 0; j < ns; j++) {
		start[j] = at;
		at += sp[j].hi - sp[j].lo;
	}
	for (uint64_t i = 0; i < ns; i++) {
		uint64_t j = backwards ? ns - 1 - i : i;
		c->carry = (struct mm_carry){ 0 };
		memmap_classify(c, sp[j].lo, (uint32_t)(sp[j].hi - sp[j].lo), r->cls + start[j],
				r->fl + start[j]);
		r->out[j] = c->carry;
	}
	r->unread = 0;
	for (uint64_t k = 0; k < at; k++)
		r->unread += (r->fl[k] & MM_FL_UNREAD) != 0;
	free(start);
}

static int same(const struct result *a, const struct result *b, uint64_t npfn, uint64_t ns)
{
	if (memcmp(a->cls, b->cls, npfn) || memcmp(a->fl, b->fl, npfn))
		return 0;
	for (uint64_t j = 0; j < ns; j++)
		if (a->out[j].end != b->out[j].end || a->out[j].cls != b->out[j].cls)
			return 0;
	return 1;
}

static struct result ra, rb;
static struct span spans[MAX_SPANS];

static int setup(struct vmcore *vc, struct memmap *m, uint64_t *ns, uint64_t *npfn)
{
	enum vmcore_err why;
	uint32_t applied;
	char whyf[400];

	if (vmcore_open(vc, vpath, &why) < 0)
		return -1;
	if (memmap_init(m, vc, arch_lookup(vc->e_machine), 31, &applied, whyf, sizeof whyf) < 0 ||
	    !m->active) {
		memmap_fini(m);
		vmcore_close(vc);
		return -1;
	}
	*ns = make_spans(vc, spans, MAX_SPANS, npfn);
	return 0;
}

static void view_same_as_pread(void)
{
	struct vmcore vc;
	static struct memmap m;
	struct mm_cursor a, b, a2;
	uint64_t ns, npfn;

	CHECK(setup(&vc, &m, &ns, &npfn) == 0, "%s: no vmcore with struct pages", vpath);
	if (!ns)
		return;
	CHECK_INT(memmap_cursor_init(&a, &m), 0);
	m.no_view = 1;
	CHECK_INT(memmap_cursor_init(&b, &m), 0);
	m.no_view = 0;
	classify_all(&a, spans, ns, 0, &ra);
	classify_all(&b, spans, ns, 0, &rb);
	CHECK(a.view.maps > 0, "the view was used (%llu maps)", (unsigned long long)a.view.maps);
	CHECK_INT(a.view.faults, 0);
	CHECK_INT(b.view.maps, 0);
	CHECK(same(&ra, &rb, npfn, ns), "view and pread give the same decisions");
	uint64_t excluded = 0;
	for (uint64_t k = 0; k < npfn; k++)
		excluded += ra.cls[k] != MM_KEEP;
	CHECK(excluded > npfn / 4, "pages of several classes were judged (%llu of %llu excluded)",
	      (unsigned long long)excluded, (unsigned long long)npfn);
	/* backwards, with a fresh cursor: the view moves back */
	CHECK_INT(memmap_cursor_init(&a2, &m), 0);
	classify_all(&a2, spans, ns, 1, &ra);
	CHECK(same(&ra, &rb, npfn, ns), "the same, spans taken backwards");
	memmap_cursor_fini(&a);
	memmap_cursor_fini(&a2);
	memmap_cursor_fini(&b);
	memmap_fini(&m);
	vmcore_close(&vc);
}

static void view_fault_falls_back(void)
{
	struct vmcore vc;
	static struct memmap m;
	struct mm_cursor p, c, d;
	uint64_t ns, npfn;

	CHECK(setup(&vc, &m, &ns, &npfn) == 0, "%s: no vmcore with struct pages", vpath);
	if (ns < 4)
		return;
	/* The cut: half-way through the struct pages of a whole window
	 * half-way through the dump. A chunk boundary (pread loses 256-pfn
	 * chunks, a view faults on the first struct page it touches past
	 * the cut), so both ways lose the same pfns; mid-window, so that the
	 * view's pass has judged pfns, and maybe begun a run, before its
	 * fault, and must undo them. */
	uint64_t cut = 0;
	CHECK_INT(memmap_cursor_init(&p, &m), 0);
	for (uint64_t j = ns / 2; j < ns && !cut; j++) {
		if (spans[j].lo % MM_WINDOW || spans[j].hi - spans[j].lo != MM_WINDOW)
			continue;
		p.carry = (struct mm_carry){ 0 };
		memmap_classify(&p, spans[j].lo, (uint32_t)(spans[j].hi - spans[j].lo), ra.cls, ra.fl);
		if (p.view.base && p.wbase >= p.view.base && p.wbase < p.view.base + p.view.len)
			cut = p.view.off + (uint64_t)(p.wbase - p.view.base) +
			      MM_WINDOW / 2 * m.spage;
	}
	memmap_cursor_fini(&p);
	CHECK(cut && cut % 4096 == 0, "a page-aligned place to cut at (%llu)",
	      (unsigned long long)cut);
	if (!cut || cut % 4096)
		goto out;
	CHECK(truncate(vpath, (off_t)cut) == 0, "truncate: %s", strerror(errno));

	CHECK_INT(memmap_cursor_init(&c, &m), 0);
	m.no_view = 1;
	CHECK_INT(memmap_cursor_init(&d, &m), 0);
	m.no_view = 0;
	classify_all(&c, spans, ns, 0, &ra);
	classify_all(&d, spans, ns, 0, &rb);
	CHECK_INT(c.view.faults, 1);
	CHECK_INT(c.view.off_errno, EFAULT);
	CHECK(rb.unread > 0, "pread lost the pfns past the cut (%llu)", (unsigned long long)rb.unread);
	CHECK(same(&ra, &rb, npfn, ns), "after the fault, the view's cursor decides as pread does");
	memmap_cursor_fini(&c);
	memmap_cursor_fini(&d);
out:
	memmap_fini(&m);
	vmcore_close(&vc);
}

/* ---- the handler passes on what it does not guard ---- */

static sigjmp_buf theirs_jb;
static volatile sig_atomic_t theirs_calls;

static void theirs(int sig, siginfo_t *si, void *uc)
{
	(void)sig; (void)si; (void)uc;
	theirs_calls++;
	siglongjmp(theirs_jb, 1);
}

static void guard_chains(void)
{
	char path[240];
	long ps = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof path, "%s/short", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, ps) == 0, "a one-page file");
	/* two pages mapped, one in the file: the second raises SIGBUS */
	volatile uint8_t *map = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(map != MAP_FAILED, "mmap");
	if (fd < 0 || map == MAP_FAILED)
		return;

	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = theirs;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	CHECK_INT(physmem_guard_install(), 0);
	struct sigaction now;
	sigaction(SIGBUS, NULL, &now);
	CHECK(now.sa_sigaction != theirs, "physmem's handler is installed over ours");

	/* unguarded: ours sees it */
	volatile int ok = 0;
	if (!sigsetjmp(theirs_jb, 0))
		ok = map[ps];
	CHECK_INT(theirs_calls, 1);

	/* guarded: physmem's guard sees it, ours does not */
	sigjmp_buf jb;
	volatile int guarded = 0;
	if (sigsetjmp(jb, 0)) {
		physmem_guard(NULL);
		guarded = 1;
	} else {
		physmem_guard(&jb);
		ok += map[ps];
		physmem_guard(NULL);
	}
	CHECK_INT(guarded, 1);
	CHECK_INT(theirs_calls, 1);
	/* and again unguarded, after a guarded one */
	if (!sigsetjmp(theirs_jb, 0))
		ok += map[ps];
	CHECK_INT(theirs_calls, 2);
	(void)ok;
	sigaction(SIGBUS, &old, NULL);
	munmap((void *)map, 2 * ps);
	close(fd);
}

int main(void)
{
	char cmd[600];
	const char *mk = getenv("MKVMCORE");

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(vpath, sizeof vpath, "%s/vmcore", dir);
	ra.cls = malloc(MAX_PFNS);
	ra.fl = malloc(MAX_PFNS);
	rb.cls = malloc(MAX_PFNS);
	rb.fl = malloc(MAX_PFNS);
	/* 1 GiB described, struct pages only on disk (no page content):
	 * 64 windows of struct pages, every class, runs across spans. */
	snprintf(cmd, sizeof cmd,
		 "'%s' -o '%s' --mm 6.1 --mem 1G --zero-pct 100 --straddle --no-expect >/dev/null",
		 mk ? mk : "build/tools/mkvmcore", vpath);
	if (!ra.cls || !ra.fl || !rb.cls || !rb.fl || system(cmd) != 0) {
		printf("FAIL view.setup: %s failed\n", cmd);
		return 1;
	}
	RUN(view_same_as_pread);
	RUN(view_fault_falls_back);
	RUN(guard_chains);
	snprintf(cmd, sizeof cmd, getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_done();
}
