/* Shared helpers for the libFuzzer targets in tests/fuzz/. Every target
 * compiles the project's .c files directly (see fuzz.mk); nothing here is
 * part of kdumpinit itself. */
#ifndef KDI_FUZZ_COMMON_H
#define KDI_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* One memfd per name, created on first use and reused for every input:
 * truncated to zero, then filled. Aborts on failure (a harness bug, not
 * a finding). */
static inline int fz_memfd(int *fd, const char *name)
{
	if (*fd < 0) {
		*fd = memfd_create(name, MFD_CLOEXEC);
		if (*fd < 0) {
			perror("memfd_create");
			abort();
		}
	}
	if (ftruncate(*fd, 0) < 0) {
		perror("ftruncate");
		abort();
	}
	return *fd;
}

static inline void fz_pwrite(int fd, const void *p, size_t len, uint64_t off)
{
	const uint8_t *b = p;

	while (len) {
		ssize_t n = pwrite(fd, b, len, (off_t)off);
		if (n <= 0) {
			perror("pwrite");
			abort();
		}
		b += n;
		len -= n;
		off += n;
	}
}

/* Path through which open() reaches the memfd, as the tool opens devices. */
static inline const char *fz_fdpath(int fd)
{
	static char path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return path;
}

/* Little-endian readers over the fuzz input that never run past its end
 * (missing bytes read as zero). */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fz_take(struct fz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		uint64_t b = 0;
		if (in->n) {
			b = *in->p++;
			in->n--;
		}
		v |= b << (8 * i);
	}
	return v;
}

/* A NUL-terminated heap copy of [p, p+n). */
static inline char *fz_strndup(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

#endif
