/* The capture's chunk writer (capture/writer.c): appends the chunks of
 * dump/format.h to the device, through a staging buffer or the sink. */
#ifndef KDI_WRITER_H
#define KDI_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../dump/format.h"

struct sink;
struct seal_dump;

struct kdi_writer {
	int fd;
	uint64_t base;		/* device offset of the stream (data_offset) */
	uint64_t limit;		/* device offset nothing is written at or past */
	uint64_t pos;		/* stream bytes committed to buf or the device */
	uint64_t flushed;	/* stream bytes on the device */
	uint8_t *buf;		/* caller-owned staging buffer */
	size_t buf_size, buf_used;
	uint64_t dump_id, seq;
	struct sink *sink;	/* async, maybe O_DIRECT; NULL: plain pwrite */
	size_t align;		/* flush boundary the sink needs */
	int ended;		/* END appended */
	int grow;		/* a file: allocate ahead (writer_grow_file) */
	int trim;		/* ... and give back the rest at the end */
	int fs_full;		/* the filesystem, not limit, stopped the stream */
	uint64_t alloc_end;	/* device offset allocated up to */
	/* Write errors gone around (FORMAT.md, GAP): each failed write loses
	 * the stream from where it began to the next KDI_GAP_ALIGN boundary,
	 * where a GAP chunk resumes it. */
	unsigned gaps;
	uint64_t gap_bytes;	/* stream bytes lost */
	int gap_err;		/* the first failed write's -errno */
	int in_gap;		/* writing a GAP chunk now */
	uint64_t bad_lo, bad_hi;	/* failed inline writes (no sink) */
	int bad_err;
	unsigned bad_n;
	struct kdi_end end;	/* END as put, to put again past a gap */
	/* A sealed dump (writer_seal): each chunk is sealed or tagged as
	 * chunk_seal_mode says, with its final seq, in sbuf; START's and
	 * CHAIN's payloads are kept for SEAL's tag. */
	const struct seal_dump *seal;
	uint8_t *sbuf;
	size_t scap;
	uint8_t authpre[sizeof(struct kdi_start) + sizeof(struct kdi_chain_rec)];
	size_t authpre_len;
	int presealed;			/* writer_put_sealed's chunk being put */
	uint64_t presealed_seq;
	uint8_t *presealed_buf;		/* ... its payload, the caller's */
};

/* Gaps a capture may go around before it gives up (-EIO): a disk that
 * fails this often is failing everywhere. */
#define WRITER_MAX_GAPS 16u

/* For a regular file (one the capture created, or a claimed one that
 * format made sparse): the filesystem, not the file's size, may say when
 * it is full, and it says so only when a write fails, which leaves no
 * room for END. So the file is allocated ahead of the stream (fallocate,
 * 4 MiB at a time, less near the end, never past limit), always with
 * the END reserve beyond it: a full filesystem then shows as -ENOSPC at
 * append time like a full device (fs_full says which), and END still
 * fits. A filesystem without fallocate keeps the old behaviour. With
 * trim (a file the capture created), writer_trim() gives back what was
 * allocated past the stream; a claimed file keeps its size. */
void writer_grow_file(struct kdi_writer *w, int trim);
int writer_trim(struct kdi_writer *w);
/* Room an END chunk needs; the writer always keeps it free. */
size_t writer_end_reserve(void);
void writer_init(struct kdi_writer *w, int fd, uint64_t base, uint64_t limit,
		 void *buf, size_t buf_size, uint64_t dump_id);
/* Appends one chunk from up to three payload pieces (any may be NULL/0).
 * -ENOSPC when it would eat the END reserve (nothing appended). */
int writer_put(struct kdi_writer *w, uint16_t type,
	       const void *p1, size_t l1, const void *p2, size_t l2,
	       const void *p3, size_t l3);
/* The same with the payload's XXH64 already computed (payload_hash() of
 * the same pieces): the capture's workers hash their own blocks, in
 * parallel, instead of whichever one emits them. */
int writer_put_hashed(struct kdi_writer *w, uint16_t type, const uint64_t *hash,
		      const void *p1, size_t l1, const void *p2, size_t l2,
		      const void *p3, size_t l3);
/* END is the one chunk allowed into the reserve. With gaps, its status
 * says INCOMPLETE and WRITE_ERRORS. */
int writer_put_end(struct kdi_writer *w, const struct kdi_end *end);
/* Writes out all that is appended (padded to the sink's alignment) and
 * waits for it. A write that failed is gone around with a GAP (also an
 * END already put is put again after it); -EIO when that is no longer
 * possible. */
int writer_flush(struct kdi_writer *w);
/* Seal every chunk from now on with sd (kept by the caller; set before
 * START). Sealing happens as each chunk is put, so that its tag binds
 * the seq it really gets, even after a GAP. */
void writer_seal(struct kdi_writer *w, const struct seal_dump *sd);
/* A chunk the caller sealed itself (the capture's workers, in parallel):
 * PAYLOAD is LEN bytes with its tag, sealed under SEQ, HASH its XXH64.
 * Written as it is when SEQ is the chunk's; else (a GAP took seqs since)
 * opened and sealed again under the right one, in PAYLOAD. */
int writer_put_sealed(struct kdi_writer *w, uint16_t type, uint8_t *payload, size_t len,
		      uint64_t hash, uint64_t seq);
/* Frees what sealing took (its buffer is wiped). */
void writer_fini(struct kdi_writer *w);
/* Route the writer through s (its buffers replace the caller's). */
void writer_use_sink(struct kdi_writer *w, struct sink *s);

#endif
