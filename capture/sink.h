/* Where the chunk stream goes: a ring of aligned buffers and I/O threads,
 * so compression fills one buffer while the others are on their way to
 * the device, with O_DIRECT when the target allows it: the dump bypasses
 * the page cache, which a small crashkernel reservation has no room for.
 * Without O_DIRECT (a regular file), writeback is started as each buffer
 * is written, so the disk still works while we compress. Either way a
 * flusher thread makes what is written durable as the dump goes, so the
 * device's own cache drains while we compress too, and a capture cut off
 * part-way (power, a watchdog) leaves its start on the media. */
#ifndef KDI_SINK_H
#define KDI_SINK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define SINK_ALIGN 4096u
#define SINK_MAX_BUFS 8u

enum { SB_FREE, SB_QUEUED, SB_WRITING };	/* FREE: idle or being filled */

struct sink_buf {
	uint8_t *p;
	size_t len;		/* queued or being written: bytes, offset */
	uint64_t off;
	int state;
};

/* What the I/O and flusher threads share with the caller (the buffers'
 * state, next_io, direct once they run, quit, err and the flusher's
 * fields) is only touched under lock, writeback()'s state under wb_lock:
 * the mutexes order it, so these are plain ints, neither volatile nor
 * _Atomic. has_flusher is written under lock, and read unlocked only by
 * the caller's thread, its only writer. */
struct sink {
	int fd;
	int direct;		/* O_DIRECT in effect */
	struct sink_buf b[SINK_MAX_BUFS];
	unsigned nbuf;
	size_t cap;
	unsigned cur;		/* buffer being filled */
	unsigned next_io;	/* oldest queued buffer, the next to write */
	pthread_t io[SINK_MAX_BUFS];
	unsigned nio;		/* I/O threads started */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_mutex_t wb_lock;	/* writeback()'s state */
	int inited;
	int quit;
	int err;		/* first write error, -errno */
	int no_writeback;	/* sync_file_range refused: stop asking */
	uint64_t settled;	/* below this, written back and dropped */

	/* The flusher: fdatasync every SINK_FLUSH_STEP bytes, off the write
	 * path (see sink.c). */
	pthread_t flusher;
	int has_flusher;
	int flusher_quit;
	int flush_now;		/* flush at once, whatever was written */
	pthread_cond_t flush_cond;
	uint64_t written;	/* bytes the I/O threads have written */
	/* Writes that failed, not yet taken by the writer: their span, the
	 * first one's error and how many. A failed write is not a reason to
	 * stop: the writer can resume past it (FORMAT.md, GAP). */
	uint64_t bad_lo, bad_hi;
	int bad_err;
	unsigned bad_n;
	uint64_t flush_mark;	/* `written` when the last flush began */
};

/* nbuf buffers of cap bytes (cap a multiple of SINK_ALIGN, 2 <= nbuf <=
 * SINK_MAX_BUFS). Tries O_DIRECT unless no_direct; with it, nbuf - 1
 * writes are in flight at once, which is what a disk (or a virtual one)
 * needs to reach its speed. Through the page cache one I/O thread is
 * enough: the kernel queues the writeback. 0 or -ENOMEM. */
int sink_open(struct sink *s, int fd, size_t cap, unsigned nbuf, int no_direct);
/* The buffer to fill now (cap bytes). */
uint8_t *sink_buf(struct sink *s);
/* Hands the current buffer's first len bytes to the I/O threads for
 * offset off, and moves on to the next buffer (waiting until it is
 * written). Returns the first error that stops the sink (a failed
 * flush or writeback); failed writes are kept for sink_take_bad. */
int sink_submit(struct sink *s, size_t len, uint64_t off);
/* Failed writes since the last call, merged into one span [*lo, *hi):
 * their number (0: none), *err the first one's -errno. Call after
 * sink_drain to know of every write submitted. */
unsigned sink_take_bad(struct sink *s, uint64_t *lo, uint64_t *hi, int *err);
/* Waits until everything submitted is written. First error or 0. */
int sink_drain(struct sink *s);
/* Asks for a flush of what is written so far, without waiting for it. */
void sink_flush_soon(struct sink *s);
/* Stops the flusher and waits for it; returns the first error of any
 * write or flush. Call it before the final fdatasync: an error a flush
 * saw is reported to that flush only, never again. */
int sink_flush_stop(struct sink *s);
void sink_close(struct sink *s);

#endif
