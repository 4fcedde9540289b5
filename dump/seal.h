/* Sealed dumps: a public key in the capture image,
 * the private key only where dumps are read.
 *
 * Per dump, the capture makes an ephemeral X25519 key pair, derives the
 * dump's key from the shared secret with the recipient's public key (and
 * both public keys), and forgets the ephemeral secret. Each chunk payload
 * is then sealed with an AEAD (AEGIS-256; XChaCha20-Poly1305 in dumps of
 * format 5 and 6) with a nonce made of the chunk's seq, dump_id and type,
 * and the chunk header as associated data: a chunk moved, replayed into
 * another dump or retyped fails its tag. Everything here is libsodium's;
 * no primitive is written here. */
#ifndef KDI_SEAL_H
#define KDI_SEAL_H

#include <stddef.h>
#include <stdint.h>

#define SEAL_KEY_BYTES 32	/* X25519 public and secret keys */
#define SEAL_KEYID_BYTES 8	/* names the recipient key: BLAKE2b of its public key */

/* The AEAD a dump's chunks are sealed with (its SEAL record says which). */
enum seal_scheme {
	SEAL_XCHACHA = 1,	/* XChaCha20-Poly1305, 16-byte tags (format 5, 6) */
	SEAL_AEGIS256 = 2,	/* AEGIS-256, 32-byte tags (format 7): 6x faster */
};
#define SEAL_TAG_MAX 32
/* The tag's length in SCHEME, 0 for a scheme not known here. */
unsigned seal_tag_bytes(unsigned scheme);

/* The dump's key, and what a reader needs to find it again. */
struct seal_dump {
	unsigned scheme;			/* enum seal_scheme */
	uint8_t key[32];
	uint8_t eph_pk[SEAL_KEY_BYTES];		/* written in START, in the clear */
	uint8_t key_id[SEAL_KEYID_BYTES];	/* likewise */
};

/* What binds a chunk to its place: the fields of its header that say
 * where it is and what it holds. */
struct seal_where {
	uint64_t dump_id, seq;
	uint16_t type;
	uint32_t len;		/* plaintext length */
};

/* A new key pair (kdumpinit keygen). 0 or -errno. */
int seal_keypair(uint8_t pk[SEAL_KEY_BYTES], uint8_t sk[SEAL_KEY_BYTES]);
/* The public key of secret key SK: 0, or -EINVAL. */
int seal_public_key(const uint8_t sk[SEAL_KEY_BYTES], uint8_t pk[SEAL_KEY_BYTES]);
/* The key id of a public key. */
void seal_key_id(const uint8_t pk[SEAL_KEY_BYTES], uint8_t id[SEAL_KEYID_BYTES]);
/* Capture: the dump's key for recipient PK (a fresh ephemeral key),
 * sealing with AEGIS-256. 0, or -EINVAL for a public key X25519 refuses
 * (a low-order point). */
int seal_begin(struct seal_dump *d, const uint8_t pk[SEAL_KEY_BYTES]);
/* Reading: the dump's key from the secret key and the SEAL record's
 * scheme, eph_pk and key_id. 0, -ENOKEY when key_id is another key's,
 * -EINVAL (a scheme not known here too). */
int seal_open_begin(struct seal_dump *d, unsigned scheme, const uint8_t sk[SEAL_KEY_BYTES],
		    const uint8_t eph_pk[SEAL_KEY_BYTES], const uint8_t key_id[SEAL_KEYID_BYTES]);
/* Seals BUF (w->len bytes) in place and writes its tag, of
 * seal_tag_bytes(d->scheme) bytes, at TAG. */
void seal_chunk(const struct seal_dump *d, const struct seal_where *w, uint8_t *buf,
		uint8_t *tag);
/* Opens BUF in place: 0, or -EBADMSG when the tag does not verify (BUF is
 * then zeroed by libsodium: nothing unauthenticated is left in it). */
int seal_open_chunk(const struct seal_dump *d, const struct seal_where *w, uint8_t *buf,
		    const uint8_t *tag);
/* A chunk sealed in parts, each with its own tag (format 7's PAGES,
 * whose index a reader opens without its pages: dump/format.h). W binds
 * the whole chunk (w->len: its whole plaintext); the part's number (1,
 * 2, ...) and length are bound too, so parts cannot be swapped, moved or
 * resized. Opening: 0, or -EBADMSG (BUF zeroed, as seal_open_chunk). */
void seal_part(const struct seal_dump *d, const struct seal_where *w, unsigned part, uint8_t *buf,
	       size_t len, uint8_t *tag);
int seal_open_part(const struct seal_dump *d, const struct seal_where *w, unsigned part,
		   uint8_t *buf, size_t len, const uint8_t *tag);
/* A tag over clear bytes (KDI_CHUNK_AUTH chunks: SEAL and END): the
 * same binding, with A then B (B may be NULL) as further associated data
 * and nothing encrypted. alen + blen <= SEAL_AUTH_MAX. */
#define SEAL_AUTH_MAX 512u
void seal_auth(const struct seal_dump *d, const struct seal_where *w, const void *a, size_t alen,
	       const void *b, size_t blen, uint8_t *tag);
/* 0 when TAG is that tag, -EBADMSG when not (or too long). */
int seal_check_auth(const struct seal_dump *d, const struct seal_where *w, const void *a,
		    size_t alen, const void *b, size_t blen, const uint8_t *tag);
/* Zeroes the dump's key. */
void seal_end(struct seal_dump *d);

/* Key files: one line, "kdumpinit-public-key HEX64" or
 * "kdumpinit-secret-key HEX64", a trailing newline allowed, nothing else.
 * 0, or -EINVAL with why (a static string) naming what is wrong. */
int seal_parse_key(const char *text, size_t len, int secret, uint8_t key[SEAL_KEY_BYTES],
		   const char **why);

#endif
