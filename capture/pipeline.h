/* The capture pipeline: vmcore PT_LOAD windows -> per-page decisions ->
 * LZ4 -> ordered chunk stream on the target. Same code for PID-1 mode and
 * `kdumpinit capture`. */
#ifndef KDI_PIPELINE_H
#define KDI_PIPELINE_H

#include <stdint.h>

#include "../dump/chain.h"
#include "../dump/format.h"
#include "../kernel/dbgpages.h"
#include "../kernel/memmap.h"
#include "../kernel/vmcore.h"
#include "../kernel/vmemmap.h"

/* MEMMAP_AUTO leaves out unneeded struct pages from this much memory map. */
#define MEMMAP_AUTO_BYTES (1ull << 30)

/* What the user asked for. */
struct seal_dump;

struct capture_req {
	uint32_t level;			/* makedumpfile dump-level bits */
	unsigned threads;		/* at most this many workers (0: 1) */
	/* The CPUs this process may run on (0: no cap). Workers beyond them
	 * only take turns on the same CPUs, with more memory and more
	 * hand-offs, so the plan runs no more than that: a kdumpinit.threads
	 * set too high must not slow the dump. */
	unsigned cpus;
	uint64_t window;		/* mmap window bytes (0: 64 MiB) */
	/* How pages are read. AUTO: mmap windows on /proc/vmcore, whose
	 * mappings are built whole at mmap time; pread straight into the
	 * compression stage on a file, where mmap would fault in every page
	 * and pread is one copy. */
	enum read_mode { READ_AUTO, READ_MMAP, READ_PREAD } read_mode;
	/* The settings that are not defaults and their sources ("dev=... (smbios),
	 * level=31 (fw_cfg)"), recorded in the dump for `info`; or NULL. */
	const char *settings;
	/* A device holding unsaved dumps with no room after them
	 * (kdumpinit.full=): keep them and write nothing, or overwrite. */
	enum chain_full full;
	/* The pages of struct pages that describe only pages left out
	 * (kdumpinit.memmap=): left out when the memory map is 1 GiB or
	 * more (AUTO, the default: 64 GiB of memory with 4 KiB pages),
	 * always, or never. */
	enum memmap_mode { MEMMAP_AUTO, MEMMAP_EXCLUDE, MEMMAP_KEEP } memmap;
	/* Seal the dump to this X25519 public key (32 bytes; dump/seal.h),
	 * or NULL. A key asked for and not read whole never gets here: the
	 * caller writes nothing (config_seal). */
	const uint8_t *pubkey;
	/* A second attempt, after the first stalled before its pages (PID
	 * 1): no optional step runs, and the first attempt's dump, which
	 * holds at most its log, is written over rather than kept as one
	 * more dump to save (replace_dump_id: 0 when it wrote nothing). */
	int retry;
	uint64_t replace_dump_id;
};

/* The optional steps, run by capture_dump once START, the settings and
 * the log are on the device and before any page: they may set ->early
 * and ->memmap of the copy of capture_in they are given, and say what
 * they did in *st, which the dump records (STEPS). */
struct capture_steps_out {
	uint32_t flags;			/* KDI_STEPS_* */
	uint32_t attempt;
	char text[KDI_STEPS_TEXT_MAX];
	size_t len;
};
struct capture_in;
typedef void capture_steps_fn(void *arg, struct capture_in *in, struct capture_steps_out *st);

/* Where the dump goes, and what else it is made of: facts about the
 * target, and inputs the caller owns for the length of the run. */
struct capture_in {
	int fd;
	uint64_t base, limit;		/* the dump's room on fd */
	uint8_t sb_uuid[16];		/* the target's claim */
	int no_direct;			/* never O_DIRECT on the target */
	int grow_file;			/* a regular file: allocate ahead */
	int trim_file;			/* ... one we created: trim at the end */
	/* Page filter for levels beyond zero pages, or NULL. Read-only
	 * during the run (each worker has its own cursor); its unreadable
	 * count grows by the run's. */
	struct memmap *filter;
	/* The same memory at level 31 (with filter's other bits), or NULL.
	 * With it the pages it keeps, what crash and drgn need to open the
	 * dump, are written first, and the rest that filter keeps follow in
	 * a LATER pass (FORMAT.md): a dump cut short anywhere after the first
	 * pass still opens. NULL when filter drops all that level 31 does. */
	struct memmap *kernel;
	/* The pages a debugger reads to open the kernel (kernel/dbgpages.h),
	 * or NULL. With it those the filter keeps go first, in an EARLY pass
	 * before every other: a dump cut short anywhere after it still opens
	 * in crash and drgn, whatever the level. Only the order changes: the
	 * dump holds the same pages. */
	const struct dbg_pages *early;
	/* The memory map's own pages (kernel/vmemmap.h), or NULL. With it,
	 * and a filter, a page of struct pages that describe only pages the
	 * filter leaves out is left out too: those pages wait for the LATER
	 * pass, when every pfn has been judged. Its need bits are filled in
	 * by the run. */
	struct vmemmap *memmap;
	/* Where the dump sits among those on the device (dump/chain.h),
	 * written right after START. */
	struct kdi_chain_rec chain;
	/* The crashed kernel's log, written before the pages, or NULL. */
	const char *dmesg;
	size_t dmesg_len;
	/* A sealed dump: the dump's key (made from rq->pubkey), and the
	 * crashed kernel's release, which SEAL keeps in the clear. */
	const struct seal_dump *seal;
	const char *release;
	/* The optional steps (above), or NULL; and their argument. The
	 * attempt they record is 1 unless steps_attempt says. */
	capture_steps_fn *steps;
	void *steps_arg;
	uint32_t steps_attempt;
};

/* What capture_plan decided from the request, the vmcore, the target and
 * the memory free. */
struct capture_plan {
	unsigned threads;		/* compression workers, >= 1 */
	uint64_t window;		/* mmap window bytes */
	uint32_t write_buf;		/* bytes per write buffer */
	unsigned write_bufs;		/* how many */
	int pread;			/* read with pread, not mmap windows */
};

/* How far a run has got, for a watchdog: in this process, or in another
 * one that shares the memory (PID 1 runs the capture in a child). The run
 * alone writes it; a count or a state, ordering nothing, so relaxed on
 * both sides. */
enum capture_stage {
	CAPTURE_READING,	/* the vmcore, the filter, the log: nothing written */
	CAPTURE_LOG_WRITTEN,	/* START, the settings and the log are on the device */
	CAPTURE_STEP_DEBUGGER,	/* ... and the debugger's pages are being found */
	CAPTURE_STEP_MEMMAP,	/* ... and the memory map's pages */
	CAPTURE_PAGES,		/* pages are being written */
	CAPTURE_ENDED,		/* END written (or the run gave up) */
};
struct capture_live {
	_Atomic uint64_t heartbeat;	/* moves with every step and every block */
	_Atomic int stage;		/* enum capture_stage */
	_Atomic uint64_t pages;		/* pages in the chunks put out so far */
	_Atomic uint64_t flushed;	/* stream bytes handed to the device */
	_Atomic uint64_t dump_id;	/* this run's, known before its first write */
};
/* Moves the run to stage s, and beats. */
void capture_live_stage(struct capture_live *l, enum capture_stage s);

/* What the run tells others while it goes; all optional. */
struct capture_hooks {
	struct capture_live *live;	/* NULL: nobody watches */
	int progress;			/* print progress lines */
};

struct capture_result {
	struct kdi_end end;		/* what the END record says */
	uint64_t dump_id;
	double seconds;
	int write_error;		/* -errno of the write that failed, or 0 */
	int direct;			/* the dump went out with O_DIRECT */
	int fs_full;			/* the filesystem under the file filled up */
	unsigned gaps;			/* failed writes gone around (GAP chunks) */
	uint64_t gap_bytes;		/* stream bytes they lost */
};

/* Sizes the run to the memory there is: threads (at most rq->threads),
 * mmap window and queue depth, so that everything fits MemAvailable with
 * a margin, and settles the read path for vc. Fills pl and describes the
 * plan in one line. mem_avail 0 means unknown (keep the request). */
void capture_plan(const struct capture_req *rq, const struct vmcore *vc,
		  const struct capture_in *in, uint64_t mem_avail, struct capture_plan *pl,
		  char *line, size_t linesz);

/* Writes one dump of vc as planned to [in->base, in->limit) of in->fd; hk
 * may be NULL. Returns 0 when an END record was written (the dump may
 * still be marked incomplete: see res->end.status), or -errno when not
 * even that was possible. */
int capture_dump(struct vmcore *vc, const struct capture_req *rq, const struct capture_plan *pl,
		 const struct capture_in *in, const struct capture_hooks *hk,
		 struct capture_result *res);

#endif
