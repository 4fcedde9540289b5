/* A dump read back from a device or file: every chunk validated once, the
 * metadata kept, and an index of PAGES chunks so pages can be fetched by
 * pfn. Used by save and info. Everything here came from a device and is
 * untrusted: a chunk that does not check out is left out and recorded as
 * a hole, and the loader goes on at the next intact chunk of the dump
 * (dump/format.h, reader_resync), so damage costs only what it touched. */
#ifndef KDI_DUMPFILE_H
#define KDI_DUMPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct page_block {
	uint64_t pfn;
	uint32_t count, nstored;
	uint64_t payload_off;		/* device offset of the payload */
	uint32_t payload_len;
	uint64_t payload_hash;		/* as loaded: a reread must match it */
	uint8_t *bitmap;		/* copy, count bits */
	uint8_t *zbitmap;		/* zero pages left out, or NULL */
	uint64_t seq;			/* its chunk's: a sealed one is opened with it */
	int sealed;			/* payload_len counts the tag */
};

struct seal_dump;

struct dumpfile {
	int fd;
	uint64_t base, limit;
	struct kdi_start start;
	uint64_t dump_id;
	uint8_t *notes;
	size_t notes_len;
	char *vmcoreinfo;		/* NUL-terminated */
	char *dmesg;			/* the crashed kernel's log, or NULL */
	char *settings;			/* SETTINGS text, NUL-terminated, or NULL */
	struct kdi_chain_rec chain;	/* where it sits on the device (have_chain) */
	int have_chain;
	/* Set by the host's loader (host/source.c), 0 otherwise: its place
	 * among the dumps on the device, 1..ndumps oldest first, and whether
	 * the claim records it or a later one as saved (dumps are saved
	 * oldest first). */
	unsigned position, ndumps;
	int saved;
	size_t dmesg_len;
	struct kdi_segment *seg;
	uint32_t nr_seg;
	/* PAGES chunks in stream order: blocks[0, nearly) the EARLY pass
	 * (the debugger's pages; its startup tier [0, nstartup)), [nearly,
	 * nfirst) the first pass, the rest the LATER pass; each part in
	 * strictly increasing pfn order, and no pfn stored (or zero) in two
	 * of them. */
	struct page_block *blocks;
	size_t nblocks, nstartup, nearly, nfirst;
	/* What the EARLY pass was to cover (a DEBUGGER chunk), if said. */
	struct kdi_debugger dbg;
	int have_dbg;
	/* What ran between the log and the pages (a STEPS chunk), if said;
	 * its text NUL-terminated, or NULL. */
	struct kdi_steps steps;
	int have_steps;
	char *steps_text;
	uint64_t pages_stored;		/* counted from the blocks */
	uint64_t pages_zero;		/* pages recorded as all zero */
	uint64_t bytes_stored;		/* payload bytes of PAGES chunks */
	int have_end;
	int end_disagrees;		/* an END was read, but its counts are not the stream's (why) */
	struct kdi_end end;
	uint64_t stream_end;		/* offset after the last good chunk */
	uint64_t nr_chunks;		/* good chunks read, START and END included */
	/* pfns past this are not vouched for: the segments describe more
	 * memory than the capture can be shown to have scanned (END's
	 * pages_total). UINT64_MAX when END and the segments agree. */
	uint64_t pfn_limit;
	char why[200];			/* why the stream stopped early */
	/* Parts lost: the stream broke and went on, at a GAP chunk after a
	 * failed write (FORMAT.md), or past bytes the source could not read.
	 * Such a dump is incomplete. */
	uint32_t gaps;
	uint32_t read_gaps;		/* of them, where the source could not be read */
	uint64_t gap_bytes;		/* stream bytes they lost, all gaps */
	uint64_t gap_chunks;		/* chunks they lost */
	char gap_why[200];		/* the first: where, and what broke */
	uint32_t damaged;		/* of them, chunks that did not check out (not
					 * a write error's GAP, not unreadable) */
	/* Each part lost, in stream order (the first DUMP_HOLES_MAX). */
	struct dump_hole {
		uint64_t seq_from, seq_to;	/* chunks [seq_from, seq_to) lost */
		uint64_t at, bytes;		/* device offset of the break, bytes lost */
		size_t block;			/* blocks[] index of the first PAGES block after */
		int kind;			/* KDI_RESUME_* (dump/format.h) */
	} holes[16];
	uint32_t nholes;
	/* START did not check out: the stream was opened at the first intact
	 * chunk after it (reader_recover), and START's facts taken from what
	 * follows (page size, machine, segments); dump level, start time and
	 * claim are unknown. Such a dump is never complete. */
	int start_lost;
	char start_why[200];
	/* A sealed dump (format version 5, SEAL read). With the secret key
	 * (dumpfile_load_key) every sealed chunk was opened, and START,
	 * CHAIN, SEAL and END's tags checked: nothing unauthenticated is
	 * kept. Without it, or with another key, the dump is `locked`: only
	 * what stays in the clear is known (START, SEAL, END unverified), no
	 * notes, segments or pages. */
	int sealed, locked;
	int wrong_key;			/* a key was given: not this dump's */
	struct kdi_seal seal;		/* SEAL as read; release NUL-terminated */
	struct seal_dump *key;		/* the dump's key, or NULL */
	uint64_t sealed_chunks;		/* chunks left sealed (locked) */
	uint64_t sealed_pages_bytes;	/* their PAGES payload bytes */
	int end_unverified;		/* END read without its tag checked */
};

/* One block loaded for its pages. */
struct dump_slot {
	const struct page_block *cur;
	const struct page_block *stale;		/* changed since loading: refused */
	int stale_err;				/* -ESTALE, or -EKEYREJECTED: tag failed */
	uint8_t *payload;
	size_t payload_cap;
	uint32_t page_off[KDI_BLOCK_MAX];	/* per bit index: data offset */
	uint32_t page_word[KDI_BLOCK_MAX];	/* per bit index: size word */
	const uint8_t *cur_data;
	uint8_t *decoded;			/* a linked chunk's pages, decoded */
	size_t decoded_cap;
};

/* One reader of pages: each thread of `save` has its own, so the loaded
 * dump itself stays read-only and shared. Holds one block's payload per
 * pass: readers go in pfn order, and the passes interleave there, so one
 * block for all would be loaded again at every switch. */
#define DUMP_PASSES 4
struct dump_cursor {
	const struct dumpfile *d;
	struct dump_slot s[DUMP_PASSES];
};

/* 0: loaded (complete or not: see have_end/why). -ENOENT: no dump in the
 * stream (empty). -EBADMSG: not even the metadata is intact. */
int dumpfile_load(struct dumpfile *d, int fd, uint64_t base, uint64_t limit);
/* The same with the secret key SK (32 bytes, or NULL) for a sealed dump.
 * A chunk whose tag fails stops the stream there, like a checksum. */
int dumpfile_load_key(struct dumpfile *d, int fd, uint64_t base, uint64_t limit,
		      const uint8_t *sk);
/* The same, HOW DUMPFILE_DEFER_PAGES: a sealed dump's pages are opened
 * when read, not when loaded (save reads each chunk's pages once); a
 * chunk whose pages fail their tag then shows only there. */
#define DUMPFILE_DEFER_PAGES 0x1u
int dumpfile_load_how(struct dumpfile *d, int fd, uint64_t base, uint64_t limit,
		      const uint8_t *sk, unsigned how);
void dumpfile_free(struct dumpfile *d);
/* Complete = END seen, nothing stopped early, END says complete, and
 * END's counts (chunks, stream bytes, pages stored, pfns scanned) are
 * those of the stream read; a disagreement is in why. */
int dumpfile_complete(const struct dumpfile *d);
/* How far the capture got, pass by pass: what `info` says of a dump cut
 * short. Percentages are of the pfns the segments describe, up to the
 * end of the pass's last chunk read; -1 where the pass was not reached
 * (or the dump has none). */
struct dump_progress {
	int startup;		/* -1 no startup tier, 0 cut inside it, 1 whole */
	int early;		/* -1 no EARLY pass, 0 cut inside it, 1 whole */
	uint64_t early_last;	/* pfn after its last chunk read */
	int first_pct, later_pct;
};
void dumpfile_progress(const struct dumpfile *d, struct dump_progress *p);
/* Is pfn stored? Returns the block or NULL; *idx is its bit index. */
const struct page_block *dumpfile_find(const struct dumpfile *d, uint64_t pfn, uint32_t *idx);
/* The first stored pfn >= pfn, or UINT64_MAX. */
uint64_t dumpfile_next_stored(const struct dumpfile *d, uint64_t pfn);
/* Was pfn left out for being all zero (level bit 1)? */
int dumpfile_is_zero(const struct dumpfile *d, uint64_t pfn);
void cursor_init(struct dump_cursor *c, const struct dumpfile *d);
void cursor_fini(struct dump_cursor *c);
/* Decodes the stored page pfn into out (page_size bytes). 0, -ENOENT if
 * not stored, -EBADMSG if its data does not decode, -ESTALE if its chunk
 * on the device is no longer the one loaded (a device does not stay
 * still: every page of that chunk is then refused), -EIO, -ENOMEM. */
int dumpfile_page(struct dump_cursor *c, uint64_t pfn, uint8_t *out);

#endif
