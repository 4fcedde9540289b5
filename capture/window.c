#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lib/io.h"

#define PREAD_BUF (1u << 20)

void window_init(struct window *w, int fd, uint64_t file_size, uint64_t size, int no_mmap)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->file_size = file_size;
	w->size = size < (1u << 20) ? (1u << 20) : size;
	w->use_pread = no_mmap;
	/* mmap offsets and madvise ranges are in pages of the kernel we run
	 * on (the crash kernel), whatever the crashed kernel's page size. */
	long ps = sysconf(_SC_PAGESIZE);
	w->mask = (ps > 0 ? (uint64_t)ps : 4096) - 1;
}

static void drop(struct window *w)
{
	if (w->map && !w->use_pread)
		munmap(w->map, w->len);
	w->map = NULL;
	w->len = 0;
}

static int remap(struct window *w, uint64_t off)
{
	/* Align to the window size so consecutive requests share a window. */
	uint64_t start = off - off % w->size;
	uint64_t len = w->size;

	if (start + len > w->file_size)
		len = w->file_size - start;
	len = (len + w->mask) & ~w->mask;
	drop(w);
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, w->fd, start);
	if (m == MAP_FAILED) {
		w->map_errno = errno;
		w->use_pread = 1;
		return -errno;
	}
	w->map = m;
	w->off = start;
	w->len = len;
	w->dropped = 0;
	return 0;
}

static int refill(struct window *w, uint64_t off)
{
	if (!w->map) {
		w->map = malloc(PREAD_BUF);
		if (!w->map)
			return -ENOMEM;
	}
	uint64_t start = off & ~w->mask;
	size_t want = PREAD_BUF;
	if (start + want > w->file_size)
		want = w->file_size - start;
	ssize_t n = read_full_at(w->fd, w->map, want, start);
	if (n < 0) {
		w->len = 0;
		return (int)n;
	}
	w->off = start;
	w->len = n;
	return 0;
}

/* Pages of a regular file's window (a file read with --mmap) stay
 * mapped, and resident in our RSS, until the window moves on: drop what
 * lies more than TRAIL behind the reader, so that our footprint is what
 * we hold, not 64 MiB of the input's page cache. Only the page-table entries go; the page cache
 * keeps the data. /proc/vmcore's mappings are PFN maps, which refuse this
 * (and do not count as RSS): the first refusal stops the attempts. */
#define TRAIL (4u << 20)

static void trail(struct window *w, uint64_t rel)
{
	if (w->no_trail || w->use_pread || rel < w->dropped + 2 * TRAIL)
		return;
	uint64_t to = (rel - TRAIL) & ~w->mask;
	if (madvise(w->map + w->dropped, to - w->dropped, MADV_DONTNEED) < 0)
		w->no_trail = 1;
	w->dropped = to;
}

const uint8_t *window_get(struct window *w, uint64_t off, size_t len, int *e)
{
	*e = 0;
	if (off + len > w->file_size) {
		*e = -EIO;
		return NULL;
	}
	if (w->map && off >= w->off && off + len <= w->off + w->len) {
		trail(w, off - w->off);
		return w->map + (off - w->off);
	}
	if (!w->use_pread && remap(w, off) == 0)
		return w->map + (off - w->off);
	/* pread path, also the fallback after mmap failed once */
	int r = refill(w, off);
	if (r == 0 && off + len <= w->off + w->len)
		return w->map + (off - w->off);
	/* A whole-buffer read can fail on one bad page: try just this one. */
	if (r < 0 || off + len > w->off + w->len) {
		ssize_t n = read_full_at(w->fd, w->map, len, off);
		if (n == (ssize_t)len) {
			w->off = off;
			w->len = len;
			return w->map;
		}
		w->len = 0;
		*e = n < 0 ? (int)n : -EIO;
	}
	return NULL;
}

void window_force_pread(struct window *w)
{
	if (w->use_pread)
		return;
	drop(w);
	w->use_pread = 1;
	if (!w->map_errno)
		w->map_errno = EFAULT;
}

void window_fini(struct window *w)
{
	if (w->use_pread)
		free(w->map);
	else
		drop(w);
	w->map = NULL;
}
