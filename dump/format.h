/* The on-device format (docs/FORMAT.md): a claim superblock, then one dump
 * as a sequence of self-describing, checksummed chunks. This module knows
 * the bytes and nothing else; capture appends, save/info read back.
 * All fields are little-endian on the device. */
#ifndef KDI_FORMAT_H
#define KDI_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "../kernel/memory.h"

#define KDI_SB_MAGIC	"KDUMPINT"
#define KDI_SB_VERSION	1
#define KDI_SB_AREA	4096u			/* bytes reserved for the superblock */
#define KDI_DATA_OFFSET	(1u << 20)		/* dump stream starts here */
/* The lowest data_offset a superblock may give: the claim gate
 * (config/probe.c) checks that the first KDI_DATA_MIN bytes hold our
 * superblock and zeros only, so no stream may start inside them. */
#define KDI_DATA_MIN	(128u << 10)
_Static_assert(KDI_DATA_OFFSET >= KDI_DATA_MIN, "format's data_offset inside the checked head");
#define KDI_MIN_DEVICE	(KDI_DATA_OFFSET + (1u << 20))
#define KDI_LABEL_MAX	64

struct kdi_super {
	char magic[8];
	uint32_t version;
	uint32_t sb_size;
	uint8_t uuid[16];
	char label[KDI_LABEL_MAX];	/* NUL-terminated */
	uint64_t dev_size;		/* at format time, informational */
	uint64_t data_offset;
	uint64_t created;		/* unix seconds */
	uint64_t saved_dump_id;		/* the dump "save" took, 0 = none */
	uint64_t saved_time;
	uint8_t reserved[304];
	uint64_t checksum;		/* XXH64 of this struct, field zeroed */
};
_Static_assert(sizeof(struct kdi_super) == 448, "superblock layout");

#define KDI_CHUNK_MAGIC	"KDCK"
#define KDI_CHUNK_ALIGN	8u
#define KDI_CHUNK_MAX	(64u << 20)		/* largest payload a reader accepts */
_Static_assert(KDI_NOTES_MAX <= KDI_CHUNK_MAX, "the notes fit one chunk");

enum kdi_chunk_type {
	KDI_CH_START = 1,	/* struct kdi_start */
	KDI_CH_NOTES = 2,	/* raw PT_NOTE bytes of the vmcore */
	KDI_CH_VMCOREINFO = 3,	/* VMCOREINFO text */
	KDI_CH_SEGMENTS = 4,	/* struct kdi_segment[] */
	KDI_CH_PAGES = 5,	/* struct kdi_pages + bitmap + sizes + data */
	KDI_CH_DMESG = 6,	/* the crashed kernel's log, before the pages */
	KDI_CH_END = 7,		/* struct kdi_end, written last */
	KDI_CH_PAD = 8,		/* filler, ignored */
	KDI_CH_SETTINGS = 9,	/* text: the capture's settings and where each came from */
	KDI_CH_GAP = 10,	/* struct kdi_gap: the stream resumes here after a write error */
	KDI_CH_CHAIN = 11,	/* struct kdi_chain_rec: where this dump sits among those on the device */
	KDI_CH_DEBUGGER = 12,	/* struct kdi_debugger: what the EARLY pass covers */
	KDI_CH_SEAL = 13,	/* struct kdi_seal: the dump is sealed to a key (version 5) */
	KDI_CH_STEPS = 14,	/* struct kdi_steps + text: what ran between the log and the pages */
};

struct kdi_chunk {
	char magic[4];
	uint16_t type;
	uint16_t hdr_size;		/* sizeof(struct kdi_chunk) */
	uint32_t len;			/* payload bytes, not padded */
	uint32_t flags;			/* KDI_CHUNK_*: 0 before version 5 */
	uint64_t dump_id;		/* same in every chunk of one dump */
	uint64_t seq;			/* 0 for START, +1 per chunk */
	uint64_t payload_hash;		/* XXH64 of the payload */
	uint64_t hdr_hash;		/* XXH64 of this header, field zeroed */
};
_Static_assert(sizeof(struct kdi_chunk) == 48, "chunk header layout");

/* A sealed dump (version 5, docs/FORMAT.md "Sealed dumps"). SEALED: the
 * payload is the chunk's content encrypted, then its tag (len counts
 * both; chunk_tag_bytes). AUTH: the payload is in the clear, then a tag over it,
 * so that a reader without the key can still read it and one with the
 * key can trust it. payload_hash is always of the bytes on the device,
 * so the framing (and a reader without the key) works as before. */
#define KDI_CHUNK_SEALED	0x1u
#define KDI_CHUNK_AUTH		0x2u
#define KDI_TAG_BYTES		32u	/* the tags this writer writes (version 7) */
#define KDI_TAG_BYTES_V5	16u	/* versions 5 and 6 */

/* Version 2 added the LATER pass (KDI_PAGES_LATER), version 3 the EARLY
 * pass (KDI_PAGES_EARLY), version 4 the memory map's exclusion
 * (KDI_START_MEMMAP_EXCLUDED, and its count in END, which grew by 8
 * bytes); a dump of an older version is a newer one without those, so
 * all are read. */
#define KDI_FORMAT_VERSION 9
#define KDI_FORMAT_MIN 1
/* Version 5 is version 4 with sealing (KDI_CH_SEAL, KDI_CHUNK_*): a dump
 * written without a key stays version 4, so that readers from before
 * sealing still read it. */
#define KDI_FORMAT_PLAIN 4
#define KDI_FORMAT_SEALED 5
/* Version 6 is version 5 with PAD and GAP tagged too (KDI_CHUNK_AUTH):
 * every chunk past SEAL is then sealed or tagged, and START and CHAIN
 * are covered by SEAL's tag, so the key's holder authenticates the whole
 * stream, chunk by chunk (FORMAT.md "Sealed dumps"). */
#define KDI_FORMAT_SEALED_ALL 6
/* Version 7 is version 6 sealed with AEGIS-256 (KDI_SEAL_AEGIS256) where
 * 5 and 6 use XChaCha20-Poly1305: its tags are 32 bytes, not 16. Sealed
 * dumps are written as version 7; versions 5 and 6 are still read. */
#define KDI_FORMAT_AEGIS 7
/* Versions 8 and 9 are 4 and 7 with the EARLY pass in two tiers
 * (KDI_PAGES_STARTUP). A capture writes them always: START is on the
 * device before the step that finds the tiers runs. */
#define KDI_FORMAT_TIERS 8
#define KDI_FORMAT_TIERS_SEALED 9

/* What a version has: sealing (5, 6, 7, 9), every chunk past SEAL sealed
 * or tagged (6, 7, 9), AEGIS-256 and PAGES sealed in parts (7, 9), the
 * startup tier (8, 9). */
static inline int kdi_version_sealed(uint32_t v)
{
	return v >= KDI_FORMAT_SEALED && v != KDI_FORMAT_TIERS;
}
static inline int kdi_version_auth_all(uint32_t v)
{
	return kdi_version_sealed(v) && v != KDI_FORMAT_SEALED;
}
static inline int kdi_version_aegis(uint32_t v)
{
	return v == KDI_FORMAT_AEGIS || v == KDI_FORMAT_TIERS_SEALED;
}
static inline int kdi_version_tiers(uint32_t v)
{
	return v >= KDI_FORMAT_TIERS;
}
/* Version 7 also seals a PAGES chunk in three parts: its struct
 * kdi_pages, the rest of its index (bitmaps, sizes), its data; the three
 * tags follow the payload, in that order. A reader indexes the chunk
 * opening the first two, and opens the pages once, when it reads them
 * (pages_seal, pages_open_index, pages_open_data). */
#define KDI_PAGES_PARTS 3

struct kdi_start {
	uint32_t format_version;
	uint32_t page_size;
	uint16_t e_machine;
	uint8_t ei_class;
	uint8_t ei_data;
	uint32_t dump_level;
	uint64_t start_time;		/* unix seconds at capture start */
	uint32_t nr_segments;
	uint32_t flags;			/* KDI_START_* */
	uint8_t sb_uuid[16];		/* the claim this dump was written to */
	char tool[32];			/* "kdumpinit VERSION", NUL-terminated */
};
_Static_assert(sizeof(struct kdi_start) == 80, "start layout");
/* The capture leaves out the pages of struct pages that describe only
 * pages it leaves out (kernel/vmemmap.h), counted in END's excluded[
 * KDI_EX_MEMMAP]. They are written in the LATER pass, at any level: their
 * decision waits for every pfn they describe (format version 4). */
#define KDI_START_MEMMAP_EXCLUDED 0x1u

#define KDI_BLOCK_MAX		4096u	/* pfns one PAGES chunk may cover */

/* PAGES payload: this header, then a bitmap of `count` bits (bit i set =
 * pfn+i stored, LSB first) padded to 4 bytes, then when nzero > 0 a second
 * such bitmap of the pages left out for being all zero (level bit 1: save
 * writes them back as zero pages, as makedumpfile does), then `nstored`
 * little-endian u32 size words, then the page data back to back. */
struct kdi_pages {
	uint64_t pfn;
	uint32_t count;
	uint32_t nstored;
	uint32_t nzero;
	uint32_t flags;			/* KDI_PAGES_* */
};
_Static_assert(sizeof(struct kdi_pages) == 24, "pages layout");

/* The chunk's LZ4 blocks are one stream: each may copy from the (decoded)
 * pages stored before it in the same chunk, up to 64 KiB back, so a
 * reader decodes the chunk's pages in order. Page-sized LZ4 blocks alone
 * cannot see the redundancy between pages, and LZ4 must then also clear
 * its 16 KiB table for each. Such a chunk decodes to at most
 * KDI_LINKED_MAX bytes. */
#define KDI_PAGES_LINKED	0x1u
#define KDI_LINKED_MAX		(16u << 20)
/* The chunk belongs to the second pass (format version 2). A capture
 * writes first what crash and drgn need to open the dump (the pages dump
 * level 31 keeps), then the rest its level keeps, so that a dump cut
 * short anywhere after the first pass still opens. Each pass is in
 * strictly increasing pfn order; a LATER chunk stores no pfn that a
 * first-pass chunk stored or recorded as zero. */
#define KDI_PAGES_LATER		0x2u
/* The chunk belongs to the debugger pass (format version 3), written
 * before every other PAGES chunk: the pages a debugger reads to open the
 * kernel (page tables, mem_section, the log, the CPUs' stacks and per-CPU
 * areas, module memory, the image, the tasks), in strictly increasing pfn
 * order. No later chunk stores or records as zero a pfn an EARLY chunk
 * did. Never with LATER. */
#define KDI_PAGES_EARLY		0x4u
/* With EARLY (format versions 8 and 9): the chunk belongs to the EARLY
 * pass's first tier, the startup set (what crash and drgn read to open
 * the dump and show the panic), written before every other EARLY chunk.
 * Each tier is in strictly increasing pfn order; no chunk after a
 * STARTUP chunk stores or records as zero a pfn it did. */
#define KDI_PAGES_STARTUP	0x8u

/* DEBUGGER payload: what the EARLY pass was to cover, so that `info` can
 * say how far a cut dump got. Written before the pages. */
/* What the capture did between the log and the first page: the optional
 * steps (the debugger's pages first, the memory map's exclusion), which
 * run only once START, the settings and the log are on the device, and
 * whether each held. Text follows: one line a step, as the console said
 * it (under 4 KiB in all). Readers from before it skip it (an unknown
 * type), and lose only the memory map's flag, which START used to carry
 * and cannot now: START is written before that step is decided. */
struct kdi_steps {
	uint32_t flags;			/* KDI_STEPS_* */
	uint32_t attempt;		/* 1; 2 after a stall before the pages */
};
_Static_assert(sizeof(struct kdi_steps) == 8, "steps layout");
#define KDI_STEPS_MEMMAP_EXCLUDED 0x1u	/* as KDI_START_MEMMAP_EXCLUDED */
#define KDI_STEPS_EARLY		0x2u	/* the debugger's pages go first (DEBUGGER follows) */
#define KDI_STEPS_DROPPED	0x4u	/* an optional step failed or ran past its budget */
#define KDI_STEPS_NONE		0x8u	/* none ran: a second attempt, after a stall */
#define KDI_STEPS_TEXT_MAX	4000u

struct kdi_debugger {
	uint64_t pfns;			/* pfns of the set (each once) */
	uint64_t last_pfn;		/* its highest pfn */
	uint32_t parts;			/* KDI_DBG_* found */
	uint32_t ranges;		/* runs of pfns */
	/* From versions 8 and 9 (a 40-byte record): the startup tier's. */
	uint64_t startup_pfns;
	uint32_t startup_ranges;
	uint32_t pad;
};
_Static_assert(sizeof(struct kdi_debugger) == 40, "debugger layout");
#define KDI_DEBUGGER_V3_SIZE 24u	/* the record without the startup tier */
enum {
	KDI_DBG_PGTABLES = 1u << 0,	/* the kernel's page-table pages */
	KDI_DBG_MEMSECTION = 1u << 1,	/* mem_section root and arrays */
	KDI_DBG_LOG = 1u << 2,		/* the printk ring */
	KDI_DBG_STACKS = 1u << 3,	/* the crashing CPUs' stacks */
	KDI_DBG_PERCPU = 1u << 4,	/* the per-CPU areas */
	KDI_DBG_MODULES = 1u << 5,	/* module memory */
	KDI_DBG_IMAGE = 1u << 6,	/* the kernel image */
	KDI_DBG_UTS = 1u << 7,		/* init_uts_ns */
	KDI_DBG_TASKS = 1u << 8,	/* the task_structs, from init_task's lists */
	KDI_DBG_DATA = 1u << 9,		/* the image's data, bss, brk, ro_after_init */
	KDI_DBG_MODDATA = 1u << 10,	/* module memory that is not code */
	KDI_DBG_TSTACKS = 1u << 11,	/* every task's stack */
};

#define KDI_PAGE_LZ4	0x80000000u	/* size word: data is one LZ4 block */
#define KDI_PAGE_SIZEMASK 0x00ffffffu


enum kdi_status {
	KDI_ST_INCOMPLETE = 1u << 0,	/* not every page that should be is in */
	KDI_ST_DEVICE_FULL = 1u << 1,	/* stopped: the target was too small */
	KDI_ST_READ_ERRORS = 1u << 2,	/* some pages could not be read */
	KDI_ST_INPUT_TRUNCATED = 1u << 3, /* vmcore shorter than its headers say */
	KDI_ST_ABORTED = 1u << 4,	/* stopped by an error or a stall */
	KDI_ST_WRITE_ERRORS = 1u << 5,	/* parts of the stream were lost to write errors (GAP) */
};

struct kdi_end {
	uint32_t status;
	uint32_t pad;
	uint64_t end_time;
	uint64_t pages_total;		/* pfns with file data that were scanned */
	uint64_t pages_stored;
	uint64_t bytes_in;		/* page bytes stored, uncompressed */
	uint64_t bytes_out;		/* bytes of the stream incl. headers */
	uint64_t nr_chunks;		/* including this one */
	uint64_t excluded[KDI_EX_NCLASSES];
};
_Static_assert(sizeof(struct kdi_end) == 56 + 8 * KDI_EX_NCLASSES, "end layout");
/* END before version 4: without excluded[KDI_EX_MEMMAP]. */
#define KDI_END_V3_SIZE (sizeof(struct kdi_end) - 8)

/* SEAL payload (version 5): how the dump's key is found, and what stays
 * in the clear for info and status. Written right after CHAIN, before any
 * sealed chunk, with KDI_CHUNK_AUTH: its tag also covers START's and
 * CHAIN's payloads, so a reader with the key trusts those too. */
struct kdi_seal {
	uint32_t scheme;		/* KDI_SEAL_*: the format version's */
	uint32_t flags;			/* 0 */
	uint8_t eph_pk[32];		/* the capture's one-time X25519 public key */
	uint8_t key_id[8];		/* names the recipient's key (dump/seal.h) */
	char release[72];		/* the crashed kernel's release, NUL-terminated */
};
_Static_assert(sizeof(struct kdi_seal) == 120, "seal layout");
/* X25519 with a one-time key, BLAKE2b-256, then per chunk
 * XChaCha20-Poly1305 (versions 5 and 6) or AEGIS-256 (version 7). The
 * values are dump/seal.h's enum seal_scheme. */
#define KDI_SEAL_XCHACHA 1u
#define KDI_SEAL_AEGIS256 2u
#define KDI_SEAL_SCHEME KDI_SEAL_AEGIS256	/* what this writer writes */

/* A write that failed loses the stream from where it began: the writer
 * resumes at the next KDI_GAP_ALIGN boundary with a GAP chunk, and a
 * reader that finds the stream broken at P probes the boundaries in
 * (P, P + KDI_GAP_SCAN] for one (format version 2). Offsets are stream
 * offsets (from data_offset). */
#define KDI_GAP_ALIGN	(1u << 20)
#define KDI_GAP_SCAN	(64u << 20)

struct kdi_gap {
	uint64_t lost_from;		/* where the failed write began */
	uint64_t lost_to;		/* this chunk's own offset */
	int32_t error;			/* -errno of the first failed write */
	uint32_t writes;		/* failed writes this gap covers */
};
_Static_assert(sizeof(struct kdi_gap) == 24, "gap layout");

/* A device holds several dumps one after another (dump/chain.h): a
 * capture that finds dumps not yet saved writes after them instead of
 * over them. Every dump's second chunk (seq 1) says which dump it
 * follows and where it itself starts, so that a stale dump left further
 * on from an earlier round is never taken for one that follows. */
struct kdi_chain_rec {
	uint64_t prev_dump_id;		/* the dump this one follows, 0 for the first */
	uint64_t prev_at;		/* that dump's START, device offset (0 for the first) */
	uint64_t self_at;		/* this dump's START, device offset */
	uint32_t index;			/* 1 for the dump at data_offset, then +1 */
	uint32_t flags;			/* KDI_CHAIN_*: why it sits where it does */
};
_Static_assert(sizeof(struct kdi_chain_rec) == 32, "chain record layout");
/* It went back to data_offset over dumps not yet saved (kdumpinit.full=
 * overwrite, no room after them). */
#define KDI_CHAIN_OVERWROTE	0x1u

/* ---- superblock ---- */
void super_init(struct kdi_super *sb, uint64_t dev_size, const char *label);
/* 0 when buf holds a valid claim for a device of dev_size bytes (0:
 * size unknown); -ENOENT when no magic, -EBADMSG when the magic is there
 * but the rest is damaged or does not fit the device, -EPROTONOSUPPORT
 * for a newer version. On success *sb is the decoded (host-order)
 * superblock. */
int super_read(const void *buf, size_t len, uint64_t dev_size, struct kdi_super *sb);
/* super_read with the device size unknown. */
int super_decode(const void *buf, size_t len, struct kdi_super *sb);
void super_encode(const struct kdi_super *sb, void *area /* KDI_SB_AREA */);
void uuid_format(const uint8_t uuid[16], char out[37]);
int uuid_parse(const char *s, uint8_t uuid[16]);

/* ---- chunks ---- */
/* Bytes a chunk with this payload occupies on the device. */
size_t chunk_span(size_t payload_len);
/* How a chunk of this type is written in a sealed dump of this version:
 * KDI_CHUNK_SEALED (the memory's contents and layout), KDI_CHUNK_AUTH
 * (SEAL, END, and from version 6 GAP and PAD: clear but tagged), or 0
 * (START, CHAIN: clear, covered by SEAL's tag; GAP and PAD before
 * version 6). A reader refuses any other. */
uint32_t chunk_seal_mode(uint16_t type, uint32_t version);
/* The length of a sealed or tagged chunk's tag in a dump of this version
 * (from 5 on), and the sealing scheme of that version. */
uint32_t chunk_tag_bytes(uint32_t version);
uint32_t seal_scheme_of(uint32_t version);
/* Whether a sealed chunk of this type and version is sealed in its parts
 * (a PAGES chunk of version 7), and the bytes of tags after its payload:
 * a tag, or KDI_PAGES_PARTS of them. */
int chunk_in_parts(uint16_t type, uint32_t version);
uint32_t chunk_tags_len(uint16_t type, uint32_t version);
/* XXH64 of a payload given in up to three pieces (any may be NULL/0). */
uint64_t payload_hash(const void *p1, size_t l1, const void *p2, size_t l2,
		      const void *p3, size_t l3);
/* Random bytes for UUIDs and dump ids (time and pid without entropy). */
void random_bytes(void *p, size_t n);

/* ---- reader ---- */
struct kdi_reader {
	int fd;
	uint64_t base, limit;
	uint64_t pos;		/* offset of the next chunk header */
	uint64_t dump_id, next_seq;
	int done;
	/* Headers only: payloads are neither read nor hashed. For finding
	 * where each dump on a device ends (dump/chain.c) without reading
	 * gigabytes; the crash kernel and the host place and find dumps by
	 * the same walk. */
	int skim;
	int read_error;		/* it stopped because the source could not be read */
	int resumed;		/* KDI_RESUME_*: how reader_resync went on */
	int recovered;		/* opened by reader_recover: the version is not known,
				 * so a chunk's flags say whether it is sealed */
	uint32_t version;	/* START's format_version, once read */
	char why[160];		/* why reading stopped, when it stopped early */
};

/* Reads and validates START. -ENOENT: no dump here (empty). */
int reader_open(struct kdi_reader *r, int fd, uint64_t base, uint64_t limit,
		struct kdi_start *start);
/* Next chunk: header into *h, payload into *buf (grown with realloc as
 * needed, never beyond KDI_CHUNK_MAX). Returns 1 for a chunk (END
 * included; the call after END returns 0), or -EBADMSG when the stream
 * stops at a damaged, foreign or missing chunk (r->why says which); what
 * was read before is the intact prefix. -ENOMEM is returned as such. */
int reader_next(struct kdi_reader *r, struct kdi_chunk *h, uint8_t **buf, size_t *cap);
/* After reader_next stopped at a broken chunk: looks for where the
 * stream goes on. First, in version 2 and later, the GAP chunk the
 * writer put after a failed write (KDI_GAP_ALIGN boundaries within
 * KDI_GAP_SCAN past the break); else the next intact chunk of this dump
 * at any 8-byte offset within KDI_RESYNC_SCAN past the break, its header
 * checksummed, its dump id this one's and its seq later than the
 * break's: damage (a bad sector, bytes overwritten, a chunk whose
 * payload does not check out) costs only the chunks it touched. 1 when
 * found: the next reader_next returns that chunk, r->why is cleared
 * (keep it first to say what broke) and r->resumed says how. 0 when
 * there is none: the stream ends. */
#define KDI_RESYNC_SCAN	(256u << 20)
enum { KDI_RESUME_NONE, KDI_RESUME_GAP, KDI_RESUME_UNREADABLE, KDI_RESUME_DAMAGE };
int reader_resync(struct kdi_reader *r, uint32_t format_version);
/* START did not check out (reader_open failed): the dump may still be
 * there. Finds the first intact chunk after base, within KDI_START_SCAN,
 * and opens the stream there with its dump id (a dump is written in one
 * run from base, so the first intact chunk past it is that dump's),
 * taking chunk flags of any version. 0, or -ENOENT (nothing: empty). START's
 * other facts are the caller's to recover from what follows. */
#define KDI_START_SCAN	(16u << 20)
int reader_recover(struct kdi_reader *r, int fd, uint64_t base, uint64_t limit);
/* Offset (device) of the payload of the chunk just returned. */
uint64_t reader_payload_offset(const struct kdi_reader *r, const struct kdi_chunk *h);

/* Sealing a PAGES payload of version 7 in its parts (KDI_PAGES_PARTS),
 * in place; W binds the chunk (w->len: the payload's clear length), the
 * tags at P + w->len. pages_seal: 0, or -EINVAL when the payload's head
 * does not describe it. pages_open_index: the index's length
 * (pages_hdr_len) with P's index in the clear, or -EBADMSG; the data
 * stays sealed until pages_open_data (0 or -EBADMSG). */
struct seal_dump;
struct seal_where;
int pages_seal(const struct seal_dump *d, const struct seal_where *w, uint8_t *p);
long pages_open_index(const struct seal_dump *d, const struct seal_where *w, uint8_t *p);
int pages_open_data(const struct seal_dump *d, const struct seal_where *w, uint8_t *p, size_t hl);
/* A SEALED chunk of this version whole, in place, its tags (after
 * w->len clear bytes) as chunk_tags_len says: one AEAD, or a PAGES
 * chunk of version 7 in its parts. chunk_seal: 0, or pages_seal's
 * -EINVAL; chunk_open: 0, or -EBADMSG. */
int chunk_seal(const struct seal_dump *d, const struct seal_where *w, uint32_t version, uint8_t *p);
int chunk_open(const struct seal_dump *d, const struct seal_where *w, uint32_t version, uint8_t *p);

/* PAGES payload helpers (validating). */
struct kdi_pages_view {
	uint64_t pfn;
	uint32_t count, nstored;
	uint32_t flags;
	const uint8_t *bitmap;
	const uint8_t *zbitmap;	/* NULL when nzero == 0 */
	uint32_t nzero;
	const uint32_t *sizes;	/* little-endian words */
	const uint8_t *data;
	size_t data_len;
};
size_t pages_hdr_len(uint32_t count, uint32_t nstored, uint32_t nzero);
size_t pages_bitmap_len(uint32_t count);
int pages_parse(const void *payload, size_t len, uint32_t page_size,
		struct kdi_pages_view *v);

#endif
