/* Where the chunk stream goes: two aligned buffers and an I/O thread, so
 * compression fills one buffer while the other is on its way to the
 * device (double buffering), with O_DIRECT when the target allows it: the
 * dump bypasses the page cache, which a small crashkernel reservation has
 * no room for, and the final fdatasync has nothing left to flush. Without
 * O_DIRECT (a regular file), writeback is started as each buffer is
 * written, so the disk still works while we compress. */
#ifndef KDI_SINK_H
#define KDI_SINK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define SINK_ALIGN 4096u

struct sink {
	int fd;
	int direct;		/* O_DIRECT in effect */
	uint8_t *buf[2];
	size_t cap;
	int cur;		/* buffer being filled */
	/* the buffer in flight */
	pthread_t io;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int busy, quit, started;
	const uint8_t *wbuf;
	size_t wlen;
	uint64_t woff;
	int err;		/* first write error, -errno */
	int no_writeback;	/* sync_file_range refused: stop asking */
	uint64_t settled;	/* below this, written back and dropped */
};

/* cap: bytes per buffer, a multiple of SINK_ALIGN. Tries O_DIRECT unless
 * no_direct. 0 or -ENOMEM. */
int sink_open(struct sink *s, int fd, size_t cap, int no_direct);
/* The buffer to fill now (cap bytes). */
uint8_t *sink_buf(struct sink *s);
/* Hands the current buffer's first len bytes to the I/O thread for
 * offset off, and switches buffers (waiting for the previous write).
 * Returns the first error of any earlier write. */
int sink_submit(struct sink *s, size_t len, uint64_t off);
/* Waits until everything submitted is written. First error or 0. */
int sink_drain(struct sink *s);
void sink_close(struct sink *s);

#endif
