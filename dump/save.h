/* Writing a loaded dump back out for debuggers: as an ELF vmcore
 * (save_elf.c) or kdump-compressed (save_kdump.c). */
#ifndef KDI_SAVE_H
#define KDI_SAVE_H

#include <stdint.h>

#include "../lib/io.h"
#include "dumpfile.h"

struct save_result {
	uint64_t phnum;			/* PT_LOADs written */
	uint64_t pages;			/* pages written */
	uint64_t bad_pages;		/* stored but undecodable: written as zero */
	uint64_t stale_pages;		/* of those, in chunks changed since loading */
	uint64_t unauth_pages;		/* ... in sealed chunks whose pages fail their tag */
	uint64_t bytes;			/* file size */
};

struct save_opts {
	int zlib;			/* kdump: compress pages with zlib (else raw) */
	unsigned threads;		/* kdump: compression threads, >= 1 */
	struct room *room;		/* free space to keep on out_fd's filesystem, or NULL */
	/* Called every SAVE_PROGRESS_PAGES pages written, from the thread
	 * that writes, with the pages so far, the pages the file will hold
	 * and its bytes so far (the host's progress lines); NULL: none. */
	void (*progress)(void *arg, uint64_t pages, uint64_t total, uint64_t bytes);
	void *progress_arg;
};

#define SAVE_PROGRESS_PAGES 4096u

/* ELF vmcore: PT_NOTE copied; each PT_LOAD of the original split where
 * pages were excluded, the excluded tail as p_filesz < p_memsz. Writes
 * sequentially from offset 0 of out_fd; only so->room is used. 0 or
 * -errno (-ENOSPC with so->room->full: stopped to keep the room). */
int save_elf(struct dumpfile *d, int out_fd, const struct save_opts *so,
	     struct save_result *res);

/* One warning for the pages refused as stale (dumpfile_page -ESTALE),
 * one for those whose tag failed (-EKEYREJECTED). */
void save_warn_stale(const struct save_result *res);

/* kdump-compressed (makedumpfile's diskdump, header version 6): bitmaps,
 * one page descriptor per dumped pfn, zero pages sharing one block, the
 * INCOMPLETE status when the dump is. 0 or -errno. */
int save_kdump(struct dumpfile *d, int out_fd, const struct save_opts *so,
	       struct save_result *res);

/* The room save_elf and save_kdump need for d, for the free-space check
 * before writing; sizes come from a loaded dump, whose counts were
 * checked while loading. save_elf_bound and save_kdump_need without zlib
 * are upper bounds; save_kdump_need with zlib is an estimate (see there),
 * which is why so->room exists. */
uint64_t save_elf_bound(const struct dumpfile *d);
uint64_t save_kdump_need(const struct dumpfile *d, int zlib);

#endif
