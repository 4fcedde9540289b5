/* Writing a loaded dump back out for debuggers. ELF now; kdump-compressed
 * joins here. */
#ifndef KDI_SAVE_H
#define KDI_SAVE_H

#include <stdint.h>

#include "dumpfile.h"

struct save_result {
	uint64_t phnum;			/* PT_LOADs written */
	uint64_t pages;			/* pages written */
	uint64_t bad_pages;		/* stored but undecodable: written as zero */
	uint64_t stale_pages;		/* of those, in chunks changed since loading */
	uint64_t bytes;			/* file size */
};

/* ELF vmcore: PT_NOTE copied; each PT_LOAD of the original split where
 * pages were excluded, the excluded tail as p_filesz < p_memsz. Writes
 * sequentially from offset 0 of out_fd. 0 or -errno. */
int save_elf(struct dumpfile *d, int out_fd, struct save_result *res);

/* One warning for the pages refused as stale (dumpfile_page -ESTALE). */
void save_warn_stale(const struct save_result *res);

struct save_opts {
	int zlib;			/* compress pages with zlib (else raw) */
	unsigned threads;		/* compression threads, >= 1 */
};

/* kdump-compressed (makedumpfile's diskdump, header version 6): bitmaps,
 * one page descriptor per dumped pfn, zero pages sharing one block, the
 * INCOMPLETE status when the dump is. 0 or -errno. */
int save_kdump(struct dumpfile *d, int out_fd, const struct save_opts *so,
	       struct save_result *res);

#endif
