/* The capture pipeline: vmcore PT_LOAD windows -> per-page decisions ->
 * LZ4 -> ordered chunk stream on the target. Same code for PID-1 mode and
 * `kdumpinit capture`. */
#ifndef KDI_PIPELINE_H
#define KDI_PIPELINE_H

#include <stdint.h>

#include "../dump/format.h"
#include "../kernel/memmap.h"
#include "../kernel/vmcore.h"

struct capture_opts {
	uint32_t level;			/* makedumpfile dump-level bits */
	unsigned threads;		/* compression workers, >= 1 */
	uint64_t window;		/* mmap window bytes */
	uint32_t write_buf;		/* bytes per write buffer (0: 1 MiB) */
	unsigned write_bufs;		/* how many (0: 2) */
	/* How pages are read. AUTO: mmap windows on /proc/vmcore, whose
	 * mappings are built whole at mmap time; pread straight into the
	 * compression stage on a file, where mmap would fault in every page
	 * and pread is one copy. */
	enum { READ_AUTO, READ_MMAP, READ_PREAD } read_mode;
	int no_direct;			/* never O_DIRECT on the target */
	int grow_file;			/* a regular file: allocate ahead */
	int trim_file;			/* ... one we created: trim at the end */
	uint8_t sb_uuid[16];
	/* Bumped after every block so a watchdog can tell progress from a
	 * stall. May be NULL. */
	volatile uint64_t *heartbeat;
	/* Set by someone else to stop early (stall, signal). May be NULL. */
	volatile int *abort_flag;
	int progress;			/* print progress lines */
	/* Page filter for levels beyond zero pages, or NULL. Called in pfn
	 * order by whoever takes the next block. */
	struct memmap *filter;
	/* The crashed kernel's log, written before the pages, or NULL. */
	const char *dmesg;
	size_t dmesg_len;
};

struct capture_result {
	struct kdi_end end;		/* what the END record says */
	uint64_t dump_id;
	double seconds;
	int write_error;		/* -errno of the write that failed, or 0 */
	int direct;			/* the dump went out with O_DIRECT */
	int fs_full;			/* the filesystem under the file filled up */
};

/* Sizes the run to the memory there is: threads (at most o->threads),
 * mmap window and queue depth, so that everything fits MemAvailable with
 * a margin, and settles the read path for vc. Fills o and describes the
 * plan in one line. mem_avail 0 means unknown (keep the request). */
void capture_plan(struct capture_opts *o, const struct vmcore *vc, uint64_t mem_avail,
		  char *line, size_t linesz);

/* Writes one dump at [base, limit) of out_fd. Returns 0 when an END record
 * was written (the dump may still be marked incomplete: see
 * res->end.status), or -errno when not even that was possible. */
int capture_run(struct vmcore *vc, int out_fd, uint64_t base, uint64_t limit,
		const struct capture_opts *o, struct capture_result *res);

#endif
