#define _GNU_SOURCE	/* O_DIRECT under glibc (the sanitizer build) */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/io.h"

/* O_DIRECT wants aligned buffers, offsets and lengths. A piece that is not
 * (the last write of a stream) goes through the page cache instead. */
static int write_piece(struct sink *s, const uint8_t *p, size_t len, uint64_t off)
{
	if (s->direct && (len % SINK_ALIGN || off % SINK_ALIGN)) {
		int fl = fcntl(s->fd, F_GETFL);
		if (fl >= 0 && fcntl(s->fd, F_SETFL, fl & ~O_DIRECT) == 0)
			s->direct = 0;
	}
	int r = write_full_at(s->fd, p, len, off);
	if (r == -EINVAL && s->direct) {
		/* The filesystem took the flag but refuses the I/O (some do):
		 * fall back for good. */
		int fl = fcntl(s->fd, F_GETFL);
		if (fl >= 0 && fcntl(s->fd, F_SETFL, fl & ~O_DIRECT) == 0) {
			s->direct = 0;
			r = write_full_at(s->fd, p, len, off);
		}
	}
	return r;
}

/* Buffered writes start their writeback at once, so that the disk works
 * while we compress instead of all at the final fdatasync; and what was
 * written SINK_LAG bytes ago is waited for and dropped from the page
 * cache, so dirty pages stay bounded (a small reservation has no room
 * for them). Hints only: errors surface at fdatasync. */
#define SINK_LAG (8u << 20)

static void writeback(struct sink *s, uint64_t off, size_t len)
{
	if (s->direct || s->no_writeback)
		return;
	if (sync_file_range(s->fd, off, len, SYNC_FILE_RANGE_WRITE) < 0) {
		s->no_writeback = 1;	/* not a file or device that can */
		return;
	}
	uint64_t end = off + len;
	if (end < s->settled + 2 * SINK_LAG)
		return;
	uint64_t to = end - SINK_LAG;
	if (sync_file_range(s->fd, s->settled, to - s->settled, SYNC_FILE_RANGE_WAIT_BEFORE |
			    SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0)
		posix_fadvise(s->fd, s->settled, to - s->settled, POSIX_FADV_DONTNEED);
	s->settled = to;
}

static void *io_main(void *arg)
{
	struct sink *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->busy && !s->quit)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->busy && s->quit)
			break;
		const uint8_t *p = s->wbuf;
		size_t len = s->wlen;
		uint64_t off = s->woff;
		pthread_mutex_unlock(&s->lock);
		int r = write_piece(s, p, len, off);
		if (r == 0)
			writeback(s, off, len);
		pthread_mutex_lock(&s->lock);
		if (r < 0 && !s->err)
			s->err = r;
		s->busy = 0;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int sink_open(struct sink *s, int fd, size_t cap, int no_direct)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->cap = cap;
	for (int i = 0; i < 2; i++)
		if (posix_memalign((void **)&s->buf[i], SINK_ALIGN, cap)) {
			sink_close(s);
			return -ENOMEM;
		}
	if (!no_direct) {
		int fl = fcntl(fd, F_GETFL);
		s->direct = fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	/* Without a thread the writes just happen inline. */
	s->started = pthread_create(&s->io, NULL, io_main, s) == 0;
	return 0;
}

uint8_t *sink_buf(struct sink *s)
{
	return s->buf[s->cur];
}

int sink_submit(struct sink *s, size_t len, uint64_t off)
{
	if (!len)
		return s->err;
	if (!s->started) {
		int r = write_piece(s, s->buf[s->cur], len, off);
		if (r == 0)
			writeback(s, off, len);
		if (r < 0 && !s->err)
			s->err = r;
		return s->err;
	}
	pthread_mutex_lock(&s->lock);
	while (s->busy)
		pthread_cond_wait(&s->cond, &s->lock);
	s->wbuf = s->buf[s->cur];
	s->wlen = len;
	s->woff = off;
	s->busy = 1;
	pthread_cond_broadcast(&s->cond);
	int err = s->err;
	pthread_mutex_unlock(&s->lock);
	s->cur ^= 1;
	return err;
}

int sink_drain(struct sink *s)
{
	if (!s->started)
		return s->err;
	pthread_mutex_lock(&s->lock);
	while (s->busy)
		pthread_cond_wait(&s->cond, &s->lock);
	int err = s->err;
	pthread_mutex_unlock(&s->lock);
	return err;
}

void sink_close(struct sink *s)
{
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->quit = 1;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->io, NULL);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		s->started = 0;
	}
	free(s->buf[0]);
	free(s->buf[1]);
	s->buf[0] = s->buf[1] = NULL;
}
