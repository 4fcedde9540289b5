/* A file's SHA-256, for `status` to tell by content whether the armed
 * image still packs what the system would pack now (the manifest
 * kdumpinit-mkinitramfs writes holds sha256sum's digests). The hash is
 * libsodium's crypto_hash_sha256. */
#ifndef KDI_SHA256_H
#define KDI_SHA256_H

/* The digest of a file's bytes as 64 lowercase hex digits and a NUL.
 * 0 or -errno. */
int sha256_file(const char *path, char hex[65]);

#endif
