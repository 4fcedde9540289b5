/* An initramfs read as the kernel unpacks one (init/initramfs.c,
 * unpack_to_rootfs), only as far as finding one file in it. Its bytes may
 * be anyone's: every field is checked against what is left, and nothing
 * grows past INITRD_MAX. */
#include "initrd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>
#include <zlib.h>

#include "io.h"
#include "util.h"

#define LZ4_LEGACY_MAGIC 0x184c2102u
#define LZ4_LEGACY_BLOCK (8u << 20)	/* what one block unpacks to, at most */

struct find {
	const char *name;
	char *buf;
	size_t cap, len;
	int found, reg;
};

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* One newc entry at *off: "070701" (070702 only adds a checksum the kernel
 * does not check), 13 fields of 8 hex digits, the name (namesize counts
 * its NUL) and the data, each padded to 4 bytes. */
static int entry(const uint8_t *p, size_t n, size_t *off, struct find *f)
{
	size_t o = *off, nm = o + 110;
	uint8_t h[52];

	if (n - o < 110 || memcmp(p + o, "07070", 5) || (p[o + 5] != '1' && p[o + 5] != '2') ||
	    hex_decode((const char *)p + o + 6, 104, h, sizeof h) < 0)
		return -EBADMSG;
	uint32_t mode = be32(h + 4), size = be32(h + 24), nsz = be32(h + 44);
	size_t data = (nm + nsz + 3) & ~(size_t)3;
	if (!nsz || nsz > n - nm || p[nm + nsz - 1] || data > n || size > n - data)
		return -EBADMSG;
	/* The kernel creates names relative to the root it unpacks into. */
	const char *s = (const char *)p + nm;
	while (*s == '/' || (s[0] == '.' && s[1] == '/'))
		s++;
	if (!strcmp(s, f->name)) {
		f->found = 1;
		f->reg = S_ISREG(mode);
		f->len = size;
		memcpy(f->buf, p + data, MIN(size, f->cap));
	}
	*off = MIN((data + size + 3) & ~(size_t)3, n);
	return 0;
}

/* *b grown to hold *cap + step bytes: 0, -EFBIG past INITRD_MAX, -ENOMEM
 * (*b is the caller's to free either way). */
static int grow(uint8_t **b, size_t *cap, size_t step)
{
	uint8_t *nb = *cap + step > INITRD_MAX ? NULL : realloc(*b, *cap + step);

	if (!nb)
		return *cap + step > INITRD_MAX ? -EFBIG : -ENOMEM;
	*b = nb;
	*cap += step;
	return 0;
}

/* The compressed archive at p: what it unpacks to into *out (malloc'd),
 * how many bytes of p it took into *used. gzip ends with its trailer;
 * lz4's legacy frame has no end and takes the rest, as in the kernel. */
static int unpack(const uint8_t *p, size_t n, uint8_t **out, size_t *outn, size_t *used)
{
	size_t cap = 0, o = 4;
	int r = 0;

	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		z_stream z;
		int zr = Z_OK;
		memset(&z, 0, sizeof z);
		z.next_in = (Bytef *)(uintptr_t)p;
		z.avail_in = (uInt)n;
		if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
			return -ENOMEM;
		while (zr == Z_OK && !(r = z.total_out < cap ? 0 : grow(out, &cap, LZ4_LEGACY_BLOCK))) {
			z.next_out = *out + z.total_out;
			z.avail_out = (uInt)(cap - z.total_out);
			zr = inflate(&z, Z_NO_FLUSH);
		}
		*outn = z.total_out;
		*used = z.total_in;
		inflateEnd(&z);
		return r ? r : zr == Z_STREAM_END ? 0 : -EBADMSG;
	}
	if (n < 4 || load_le32(p) != LZ4_LEGACY_MAGIC)
		return -EBADMSG;
	while (!r && o < n) {
		uint32_t c = n - o < 4 ? 0 : load_le32(p + o);
		o += 4;
		if (c == LZ4_LEGACY_MAGIC)
			continue;
		cap = *outn;
		if (!c || o > n || c > n - o || (r = grow(out, &cap, LZ4_LEGACY_BLOCK)))
			return r ? r : -EBADMSG;
		int k = LZ4_decompress_safe((const char *)p + o, (char *)*out + *outn, (int)c,
					    (int)LZ4_LEGACY_BLOCK);
		r = k < 0 ? -EBADMSG : 0;
		*outn += (size_t)(k < 0 ? 0 : k);
		o += c;
	}
	*used = n;
	return r;
}

/* Archives, NUL padding between them; at the top, compressed ones too
 * (whose output holds only archives and padding). */
static int walk(const uint8_t *p, size_t n, struct find *f, int top)
{
	size_t o = 0;
	int r = 0;

	while (!r && o < n) {
		if (!p[o]) {
			o++;
		} else if (p[o] == '0' && !(o & 3)) {
			r = entry(p, n, &o, f);
		} else if (!top) {
			r = -EBADMSG;
		} else {
			uint8_t *b = NULL;
			size_t bn = 0, used = 0;
			r = unpack(p + o, n - o, &b, &bn, &used);
			if (!r)
				r = walk(b, bn, f, 0);
			free(b);
			o += used;
		}
	}
	return r;
}

int initrd_file(const char *path, const char *name, char *buf, size_t cap, size_t *len,
		const char **why)
{
	struct find f = { name, buf, cap, 0, 0, 0 };
	int fd = open_file_or_blockdev(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0, NULL);

	*why = fd == -ELOOP || fd == -ENOTBLK ? "a symbolic link or not a regular file: not read" : NULL;
	if (fd < 0)
		return fd;
	int64_t sz = fd_size(fd, NULL);
	uint8_t *p = sz < 0 || sz > INITRD_MAX ? NULL : malloc((size_t)sz + 1);
	ssize_t n = p ? read_full_at(fd, p, (size_t)sz, 0) : sz < 0 ? sz : sz > INITRD_MAX ? -EFBIG : -ENOMEM;
	close(fd);
	int r = n < 0 ? (int)n : walk(p, (size_t)n, &f, 1);
	free(p);
	*len = f.len;
	if (r == -EBADMSG)
		*why = "not a whole newc archive, as it is or gzip or lz4 -l compressed";
	else if (!r && !f.found)
		r = -ENOENT;
	else if (!r && !f.reg)
		r = -EBADMSG, *why = "its entry is not a regular file";
	return r;
}
