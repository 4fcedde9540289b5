/* A sliding view of the vmcore file: an mmap window of many MiB, or, when
 * mmap is unavailable, a pread buffer. Never maps page by page: on
 * /proc/vmcore each mmap builds page tables for the whole window at once,
 * which is what makes it fast (and costs ~2 MB of page tables per GB). */
#ifndef KDI_WINDOW_H
#define KDI_WINDOW_H

#include <stddef.h>
#include <stdint.h>

struct window {
	int fd;
	uint64_t file_size;
	uint64_t size;		/* window length to map */
	int use_pread;		/* mmap failed once, or was not wanted */
	uint8_t *map;		/* mapping or pread buffer */
	uint64_t off, len;	/* file range currently held */
	int map_errno;		/* why mmap was given up, for one message */
	uint64_t dropped;	/* window bytes already unmapped behind us */
	int no_trail;		/* the mapping refuses MADV_DONTNEED */
	uint64_t mask;		/* the running kernel's page size - 1 */
};

void window_init(struct window *w, int fd, uint64_t file_size, uint64_t size, int no_mmap);
/* Pointer to file bytes [off, off+len), len <= page size; NULL with -errno
 * in *e when they cannot be read. */
const uint8_t *window_get(struct window *w, uint64_t off, size_t len, int *e);
/* Drop the mapping and read with pread from now on (after a SIGBUS). */
void window_force_pread(struct window *w);
void window_fini(struct window *w);

#endif
