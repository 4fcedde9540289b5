#define _GNU_SOURCE	/* O_DIRECT under glibc (the sanitizer build) */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/io.h"

/* Turns O_DIRECT off for good; called with the lock held, or before any
 * I/O thread exists. A write already in flight keeps the mode it started
 * with, and one that fails for it retries (write_piece). */
static void direct_off(struct sink *s)
{
	int fl = fcntl(s->fd, F_GETFL);
	if (fl >= 0 && fcntl(s->fd, F_SETFL, fl & ~O_DIRECT) == 0)
		s->direct = 0;
}

/* *d: O_DIRECT was on when this write was taken; on return, whether it
 * went out so. */
static int write_piece(struct sink *s, const struct sink_buf *b, int *d)
{
	int r = write_full_at(s->fd, b->p, b->len, b->off);
	if (r == -EINVAL && *d) {
		/* The filesystem took the flag but refuses the I/O (some do):
		 * fall back for good. */
		pthread_mutex_lock(&s->lock);
		if (s->direct)
			direct_off(s);
		*d = s->direct;
		pthread_mutex_unlock(&s->lock);
		if (!*d)
			r = write_full_at(s->fd, b->p, b->len, b->off);
	}
	return r;
}

/* Buffered writes start their writeback at once, so that the disk works
 * while we compress instead of all at the final fdatasync; and what was
 * written SINK_LAG bytes ago is waited for and dropped from the page
 * cache, so dirty pages stay bounded (a small reservation has no room
 * for them). Buffered writes have one I/O thread, so this runs in offset
 * order; wb_lock covers the case of several after a mid-stream fall back
 * from O_DIRECT, where a range may only settle late.
 * Returns a writeback error, -errno: waiting on a range reports its
 * error to this call and to no later fdatasync, so it must not be lost. */
#define SINK_LAG (8u << 20)

static int writeback(struct sink *s, uint64_t off, size_t len)
{
	if (s->no_writeback)
		return 0;
	if (sync_file_range(s->fd, off, len, SYNC_FILE_RANGE_WRITE) < 0) {
		/* Not a file or device that can (EINVAL, ESPIPE); anything
		 * else is left for fdatasync, which this call did not hide. */
		s->no_writeback = 1;
		return 0;
	}
	uint64_t end = off + len;
	if (end < s->settled + 2 * SINK_LAG)
		return 0;
	uint64_t to = end - SINK_LAG;
	if (to <= s->settled)
		return 0;
	int r = 0;
	if (sync_file_range(s->fd, s->settled, to - s->settled, SYNC_FILE_RANGE_WAIT_BEFORE |
			    SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0)
		posix_fadvise(s->fd, s->settled, to - s->settled, POSIX_FADV_DONTNEED);
	else
		r = -errno;
	s->settled = to;
	return r;
}

/* Notes a failed write; called with the lock held, or before any I/O
 * thread exists. */
static void note_bad(struct sink *s, const struct sink_buf *b, int err)
{
	if (!s->bad_n || b->off < s->bad_lo)
		s->bad_lo = b->off;
	if (!s->bad_n || b->off + b->len > s->bad_hi)
		s->bad_hi = b->off + b->len;
	if (!s->bad_n)
		s->bad_err = err;
	s->bad_n++;
}

unsigned sink_take_bad(struct sink *s, uint64_t *lo, uint64_t *hi, int *err)
{
	if (s->nio)
		pthread_mutex_lock(&s->lock);
	unsigned n = s->bad_n;
	*lo = s->bad_lo;
	*hi = s->bad_hi;
	*err = s->bad_err;
	s->bad_n = 0;
	if (s->nio)
		pthread_mutex_unlock(&s->lock);
	return n;
}

/* One buffer out; through the page cache, its writeback started. d: was
 * O_DIRECT on when the buffer was taken. Returns the write's error in
 * *werr (the writer can go around it) and a writeback error, which
 * covers earlier writes too and stops the sink. */
static int put_buf(struct sink *s, const struct sink_buf *b, int d, int *werr)
{
	*werr = write_piece(s, b, &d);
	int r = 0;
	if (*werr == 0 && !d) {
		pthread_mutex_lock(&s->wb_lock);
		r = writeback(s, b->off, b->len);
		pthread_mutex_unlock(&s->wb_lock);
	}
	return r;
}

/* O_DIRECT wants aligned offsets and lengths: a piece that is not (the
 * tail of a stream) goes through the page cache. */
static int unaligned(size_t len, uint64_t off)
{
	return len % SINK_ALIGN || off % SINK_ALIGN;
}

/* Flushes while the dump goes. A write that has returned may still sit
 * in a volatile cache: the disk's, or the host's page cache under a
 * virtual disk, which on this project's VM does not start writing it out
 * until asked. Left to one fdatasync at the end, that cache drains while
 * nothing else happens: 60 ms of a 0.21 s level-31 capture of a 1.5 GiB
 * guest, and 0.2-0.45 s of a level-1 one. Flushing every 8 MiB from
 * this thread, while the I/O threads go on writing, left 13-16 ms at
 * the end and took level 31 to 0.15-0.16 s, level 1 from 0.93-1.0 s to
 * 0.78-0.89 s (4 MiB: about the same; 32 MiB: 0.85-0.96 s). It also
 * bounds what a capture cut short can lose. The cost is a cache flush
 * per step, which a disk without a volatile cache makes a no-op. */
#define SINK_FLUSH_STEP (8u << 20)

static int flush_due(const struct sink *s)
{
	return s->written - s->flush_mark >= SINK_FLUSH_STEP;
}

static void *flush_main(void *arg)
{
	struct sink *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->flusher_quit && !s->flush_now && !flush_due(s))
			pthread_cond_wait(&s->flush_cond, &s->lock);
		if (s->flusher_quit)
			break;
		s->flush_now = 0;
		s->flush_mark = s->written;
		pthread_mutex_unlock(&s->lock);
		int r = fdatasync(s->fd) < 0 ? -errno : 0;
		pthread_mutex_lock(&s->lock);
		if (r < 0) {
			/* The error is this flush's alone: the final fdatasync
			 * will not see it again. Keep it, and stop asking. */
			if (!s->err)
				s->err = r;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void *io_main(void *arg)
{
	struct sink *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct sink_buf *b = &s->b[s->next_io];
		while (b->state != SB_QUEUED && !s->quit) {
			pthread_cond_wait(&s->cond, &s->lock);
			b = &s->b[s->next_io];
		}
		if (b->state != SB_QUEUED)
			break;		/* quit, and nothing left queued */
		s->next_io = (s->next_io + 1) % s->nbuf;
		b->state = SB_WRITING;
		int d = s->direct;
		pthread_mutex_unlock(&s->lock);
		int werr, r = put_buf(s, b, d, &werr);
		pthread_mutex_lock(&s->lock);
		if (werr < 0)
			note_bad(s, b, werr);
		if (r < 0 && !s->err)
			s->err = r;
		s->written += b->len;
		if (s->has_flusher && flush_due(s))
			pthread_cond_signal(&s->flush_cond);
		b->state = SB_FREE;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int sink_open(struct sink *s, int fd, size_t cap, unsigned nbuf, int no_direct)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->cap = cap;
	if (!no_direct) {
		int fl = fcntl(fd, F_GETFL);
		s->direct = fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
	}
	/* Through the page cache, two buffers are all one thread can use. */
	s->nbuf = !s->direct || nbuf < 2 ? 2 : nbuf > SINK_MAX_BUFS ? SINK_MAX_BUFS : nbuf;
	for (unsigned i = 0; i < s->nbuf; i++)
		if (posix_memalign((void **)&s->b[i].p, SINK_ALIGN, cap)) {
			if (s->direct)
				direct_off(s);	/* the caller writes plainly */
			sink_close(s);
			return -ENOMEM;
		}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->wb_lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_cond_init(&s->flush_cond, NULL);
	s->inited = 1;
	/* Without a thread the writes just happen inline. */
	unsigned want = s->direct ? s->nbuf - 1 : 1;
	while (s->nio < want && pthread_create(&s->io[s->nio], NULL, io_main, s) == 0)
		s->nio++;
	/* Without a flusher, the dump is only made durable at the end. The
	 * I/O threads already run and read has_flusher: set it locked. */
	if (s->nio) {
		pthread_mutex_lock(&s->lock);
		s->has_flusher = pthread_create(&s->flusher, NULL, flush_main, s) == 0;
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

uint8_t *sink_buf(struct sink *s)
{
	return s->b[s->cur].p;
}

static int idle(const struct sink *s)
{
	for (unsigned i = 0; i < s->nbuf; i++)
		if (s->b[i].state != SB_FREE)
			return 0;
	return 1;
}

int sink_submit(struct sink *s, size_t len, uint64_t off)
{
	struct sink_buf *b = &s->b[s->cur];

	if (!len)
		return s->err;
	if (!s->nio) {
		if (s->direct && unaligned(len, off))
			direct_off(s);
		b->len = len;
		b->off = off;
		int werr, r = put_buf(s, b, s->direct, &werr);
		if (werr < 0)
			note_bad(s, b, werr);
		if (r < 0 && !s->err)
			s->err = r;
		return s->err;
	}
	pthread_mutex_lock(&s->lock);
	/* An unaligned piece waits for every direct write before it. */
	if (s->direct && unaligned(len, off)) {
		while (!idle(s))
			pthread_cond_wait(&s->cond, &s->lock);
		direct_off(s);
	}
	b->len = len;
	b->off = off;
	b->state = SB_QUEUED;
	pthread_cond_broadcast(&s->cond);
	s->cur = (s->cur + 1) % s->nbuf;
	while (s->b[s->cur].state != SB_FREE)
		pthread_cond_wait(&s->cond, &s->lock);
	int err = s->err;
	pthread_mutex_unlock(&s->lock);
	return err;
}

int sink_drain(struct sink *s)
{
	if (!s->nio)
		return s->err;
	pthread_mutex_lock(&s->lock);
	while (!idle(s))
		pthread_cond_wait(&s->cond, &s->lock);
	int err = s->err;
	pthread_mutex_unlock(&s->lock);
	return err;
}

void sink_flush_soon(struct sink *s)
{
	if (!s->has_flusher)
		return;
	pthread_mutex_lock(&s->lock);
	s->flush_now = 1;
	pthread_cond_signal(&s->flush_cond);
	pthread_mutex_unlock(&s->lock);
}

int sink_flush_stop(struct sink *s)
{
	if (!s->inited)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->has_flusher) {
		s->flusher_quit = 1;
		pthread_cond_signal(&s->flush_cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->flusher, NULL);
		pthread_mutex_lock(&s->lock);
		s->has_flusher = 0;
	}
	int err = s->err;
	pthread_mutex_unlock(&s->lock);
	return err;
}

void sink_close(struct sink *s)
{
	sink_flush_stop(s);
	if (s->nio) {
		pthread_mutex_lock(&s->lock);
		s->quit = 1;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		for (unsigned i = 0; i < s->nio; i++)
			pthread_join(s->io[i], NULL);
		s->nio = 0;
	}
	if (s->inited) {
		pthread_cond_destroy(&s->flush_cond);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->wb_lock);
		pthread_mutex_destroy(&s->lock);
		s->inited = 0;
	}
	for (unsigned i = 0; i < SINK_MAX_BUFS; i++) {
		free(s->b[i].p);
		s->b[i].p = NULL;
	}
}
