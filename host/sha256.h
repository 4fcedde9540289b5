/* SHA-256 (FIPS 180-4), for `status` to tell by content whether the
 * armed image still packs what the system would pack now (the manifest
 * kdumpinit-mkinitramfs writes holds sha256sum's digests). */
#ifndef KDI_SHA256_H
#define KDI_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;			/* bytes hashed so far */
	uint8_t buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
void sha256_final(struct sha256 *c, uint8_t out[32]);
/* The digest of a file's bytes as 64 lowercase hex digits and a NUL.
 * 0 or -errno. */
int sha256_file(const char *path, char hex[65]);

#endif
