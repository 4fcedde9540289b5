#include "physmem.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lib/io.h"
#include "diskdump.h"

struct seg_key {
	uint64_t paddr;
	uint32_t i;
};

static int by_paddr(const void *a, const void *b)
{
	const struct seg_key *x = a, *y = b;

	if (x->paddr != y->paddr)
		return x->paddr < y->paddr ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The zero fill's index: every segment, a data-less one too, by paddr,
 * with reach[] for a stabbing search (which segments hold an address). */
static int index_all(struct physmem *pm)
{
	const struct vmcore *vc = pm->vc;
	uint32_t n = vc->nr_seg;
	struct seg_key *key = calloc(n ? n : 1, sizeof *key);

	pm->all = calloc(n ? n : 1, sizeof *pm->all);
	pm->reach = calloc(n ? n : 1, sizeof *pm->reach);
	if (!key || !pm->all || !pm->reach) {
		free(key);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		key[i] = (struct seg_key){ vc->seg[i].paddr, i };
	qsort(key, n, sizeof *key, by_paddr);
	uint64_t top = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct kdi_segment *s = &vc->seg[key[i].i];
		pm->all[i] = key[i].i;
		top = s->paddr + s->memsz > top ? s->paddr + s->memsz : top;
		pm->reach[i] = top;
	}
	free(key);
	return 0;
}

int physmem_init(struct physmem *pm, const struct vmcore *vc)
{
	memset(pm, 0, sizeof *pm);
	pm->vc = vc;
	pm->order = calloc(vc->nr_seg ? vc->nr_seg : 1, sizeof *pm->order);
	if (!pm->order)
		return -ENOMEM;
	pm->n = segment_order(vc->seg, vc->nr_seg, pm->order);
	return vc->zero_fill ? index_all(pm) : 0;
}

int physmem_cache(struct physmem *pm, uint32_t nline)
{
	nline = nline < PM_WAYS ? PM_WAYS : nline / PM_WAYS * PM_WAYS;
	pm->tag = calloc(nline, sizeof *pm->tag);
	pm->used = calloc(nline, sizeof *pm->used);
	pm->line = malloc((size_t)nline * PM_LINE);
	if (!pm->tag || !pm->used || !pm->line) {
		free(pm->tag);
		free(pm->used);
		free(pm->line);
		pm->tag = NULL;
		pm->used = NULL;
		pm->line = NULL;
		return -ENOMEM;
	}
	pm->nline = nline;
	return 0;
}

void physmem_fini(struct physmem *pm)
{
	free(pm->tag);
	free(pm->used);
	free(pm->line);
	pm->tag = NULL;
	pm->used = NULL;
	pm->line = NULL;
	pm->nline = 0;
	free(pm->order);
	free(pm->all);
	free(pm->reach);
	pm->order = pm->all = NULL;
	pm->reach = NULL;
}

/* The index in vc->seg of a segment holding all of [paddr, paddr+len),
 * or -1. */
static long holder(const struct physmem *pm, uint64_t paddr, size_t len)
{
	const struct vmcore *vc = pm->vc;

	if (paddr + len < paddr)
		return -1;
	/* Binary search for the last segment starting at or below paddr;
	 * overlapping (aliased) segments hold the same bytes, so any one that
	 * covers the range will do: scan back a little for one that does. */
	uint32_t lo = 0, hi = pm->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (vc->seg[pm->order[mid]].paddr <= paddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t k = lo; k-- > 0;) {
		const struct kdi_segment *s = &vc->seg[pm->order[k]];
		if (paddr >= s->paddr && paddr + len <= s->paddr + s->filesz)
			return pm->order[k];
		if (lo - k > 8)
			break;
	}
	return -1;
}

int physmem_holds(const struct physmem *pm, uint64_t paddr, size_t len)
{
	if (pm->vc->dd)
		return diskdump_holds(pm->vc->dd, paddr, len);
	return holder(pm, paddr, len) >= 0;
}

/* The piece of a saved ELF dump at paddr: *n bytes of segment *k's file
 * data, or (*k -1) *n bytes of zero fill. Any segment whose data holds
 * paddr will do (aliases hold the same bytes); zero fill only where none
 * does, and only up to where the next segment starts, which may hold
 * data. 0 or -EFAULT (no segment holds it, or only the part of one cut
 * off the end of the file). */
static int piece(const struct physmem *pm, uint64_t paddr, long *k, uint64_t *n)
{
	const struct vmcore *vc = pm->vc;
	uint32_t lo = 0, hi = vc->nr_seg;
	uint64_t fill = 0;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (vc->seg[pm->all[mid]].paddr <= paddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t next = lo < vc->nr_seg ? vc->seg[pm->all[lo]].paddr : UINT64_MAX;
	for (uint32_t j = lo; j-- > 0 && pm->reach[j] > paddr;) {
		uint32_t i = pm->all[j];
		const struct kdi_segment *s = &vc->seg[i];
		uint64_t at = paddr - s->paddr;
		if (at < s->filesz) {
			*k = i;
			*n = s->filesz - at;
			return 0;
		}
		if (at >= vc->seg_fill[i] && at < s->memsz && s->memsz - at > fill)
			fill = s->memsz - at;
	}
	if (!fill)
		return -EFAULT;
	*k = -1;
	*n = next - paddr < fill ? next - paddr : fill;
	return 0;
}

static int read_pieces(struct physmem *pm, uint64_t paddr, uint8_t *out, size_t len)
{
	const struct vmcore *vc = pm->vc;

	if (paddr + len < paddr)
		return -EFAULT;
	while (len) {
		long k;
		uint64_t n;
		if (piece(pm, paddr, &k, &n) < 0)
			return -EFAULT;
		if (n > len)
			n = len;
		if (k < 0) {
			memset(out, 0, n);
		} else {
			pm->reads++;
			ssize_t got = read_full_at(vc->fd, out, n,
						   vc->seg_offset[k] + (paddr - vc->seg[k].paddr));
			if (got != (ssize_t)n)
				return -EIO;
		}
		paddr += n;
		out += n;
		len -= n;
	}
	return 0;
}

int physmem_read(struct physmem *pm, uint64_t paddr, void *buf, size_t len)
{
	const struct vmcore *vc = pm->vc;

	if (vc->dd) {
		pm->reads++;
		return diskdump_read(vc->dd, paddr, buf, len);
	}
	/* Within one line that one segment's file data holds whole: from
	 * the cache, the line read whole first. */
	uint64_t ln = paddr / PM_LINE;
	if (pm->nline && len && (paddr + len - 1) / PM_LINE == ln) {
		/* A set of PM_WAYS: a walk's lists and tables alternate
		 * between a few lines, which one line per hash evicted from
		 * each other (2433 reads by the finder on a 1.5 GiB guest,
		 * 1456 with these sets of the same 64 lines, 1110 with no eviction). */
		uint32_t set = (uint32_t)((ln * 0x9e3779b97f4a7c15ull) >> 40) % (pm->nline / PM_WAYS);
		uint32_t i = set * PM_WAYS;
		for (uint32_t w = 0; w < PM_WAYS; w++) {
			uint32_t j = set * PM_WAYS + w;
			if (pm->tag[j] == ln + 1) {
				pm->hits++;
				pm->used[j] = ++pm->clock;
				memcpy(buf, pm->line + (size_t)j * PM_LINE + paddr % PM_LINE, len);
				return 0;
			}
			if (pm->used[j] < pm->used[i])
				i = j;
		}
		uint8_t *l = pm->line + (size_t)i * PM_LINE;
		pm->used[i] = ++pm->clock;
		long h = holder(pm, ln * PM_LINE, PM_LINE);
		if (h >= 0) {
			pm->reads++;
			pm->tag[i] = 0;
			if (read_full_at(vc->fd, l, PM_LINE, vc->seg_offset[h] +
					 (ln * PM_LINE - vc->seg[h].paddr)) == PM_LINE) {
				pm->tag[i] = ln + 1;
				memcpy(buf, l + paddr % PM_LINE, len);
				return 0;
			}
			/* a bad page elsewhere in the line: the range alone */
		}
	}
	long k = holder(pm, paddr, len);
	if (k < 0 && vc->zero_fill)
		return read_pieces(pm, paddr, buf, len);
	if (k < 0)
		return -EFAULT;
	pm->reads++;
	ssize_t n = read_full_at(vc->fd, buf, len, vc->seg_offset[k] + (paddr - vc->seg[k].paddr));
	return n == (ssize_t)len ? 0 : -EIO;
}

/* ---- views ---- */

void physmem_view_init(struct pm_view *v, uint64_t size, int disabled)
{
	memset(v, 0, sizeof *v);
	/* mmap offsets are in pages of the kernel we run on (the crash
	 * kernel's), whatever the crashed kernel's page size. */
	long ps = sysconf(_SC_PAGESIZE);
	v->mask = (ps > 0 ? (uint64_t)ps : 4096) - 1;
	v->size = (size + v->mask) & ~v->mask;
	if (disabled || !size)
		v->off_errno = disabled ? EPERM : EINVAL;
}

static void view_drop(struct pm_view *v)
{
	if (v->base)
		munmap(v->base, v->len);
	v->base = NULL;
	v->len = 0;
}

void physmem_view_fini(struct pm_view *v)
{
	view_drop(v);
}

void physmem_view_off(struct pm_view *v, int err)
{
	view_drop(v);
	v->off_errno = err;
}

const uint8_t *physmem_view(const struct physmem *pm, struct pm_view *v, uint64_t paddr, size_t len)
{
	if (v->off_errno || len + v->mask > v->size)
		return NULL;
	long k = holder(pm, paddr, len);
	if (k < 0)
		return NULL;
	const struct vmcore *vc = pm->vc;
	uint64_t foff = vc->seg_offset[k] + (paddr - vc->seg[k].paddr);
	if (v->base && foff >= v->off && foff + len <= v->off + v->len)
		return v->base + (foff - v->off);
	/* Mappings aligned to their size, so that a reader moving forward
	 * maps each part of the file once; one that would not hold the range
	 * starts at its page instead. holder() kept the range inside the file
	 * (segments are cut to its size at open), so no touched byte lies
	 * past its end; a mapping ending past it is cut there, which
	 * /proc/vmcore needs. */
	uint64_t start = foff - foff % v->size;
	if (foff + len > start + v->size)
		start = foff & ~v->mask;
	uint64_t end = start + v->size, fend = (vc->file_size + v->mask) & ~v->mask;
	if (end > fend)
		end = fend;
	if (physmem_guard_install() < 0) {
		physmem_view_off(v, ENOSYS);
		return NULL;
	}
	view_drop(v);
	void *p = mmap(NULL, end - start, PROT_READ, MAP_PRIVATE, vc->fd, (off_t)start);
	if (p == MAP_FAILED) {
		v->off_errno = errno ? errno : EINVAL;
		return NULL;
	}
	v->maps++;
	v->base = p;
	v->off = start;
	v->len = end - start;
	return v->base + (foff - start);
}

/* ---- the SIGBUS guard ----
 * A signal's disposition belongs to the process, so this is the one
 * place in kernel/ with state of its own: which handler SIGBUS had before
 * ours (to pass it what we do not guard) and, per thread, where to jump
 * back to. prev is written only while our handler is not installed (under
 * the lock, before sigaction installs it), so the handler reads it as
 * settled. */
static __thread sigjmp_buf *_Atomic guard_jmp;
static struct sigaction prev;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = atomic_load_explicit(&guard_jmp, memory_order_relaxed);

	if (jb)
		siglongjmp(*jb, 1);
	if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
		prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
		prev.sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int physmem_guard_install(void)
{
	struct sigaction cur, sa;
	int r = 0;

	pthread_mutex_lock(&guard_lock);
	if (sigaction(SIGBUS, NULL, &cur) < 0) {
		r = -errno;
	} else if (!((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_bus)) {
		prev = cur;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_bus;
		/* SA_NODEFER: sigsetjmp(jb, 0) saves no mask, so the handler
		 * must not change it. */
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, NULL) < 0)
			r = -errno;
	}
	pthread_mutex_unlock(&guard_lock);
	return r;
}

/* The signal fences keep the compiler from moving the view's loads out
 * of the armed stretch (a plain store could move past loads it cannot
 * alias). A lock-free atomic is what a handler may read (C11 7.14.1.1). */
void physmem_guard(sigjmp_buf *jb)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&guard_jmp, jb, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}
