/* Sealed dumps: libsodium's X25519, BLAKE2b, AEGIS-256 and
 * XChaCha20-Poly1305. */
#include "seal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../lib/util.h"

static const uint8_t base_point[SEAL_KEY_BYTES] = { 9 };

/* libsodium's own choosers of an implementation by CPU, which sodium_init
 * runs (it is not built: deps/libsodium.mk). They pick AEGIS-256 with
 * AES-NI or the ARMv8 crypto extension when the CPU has them, else its
 * constant-time software AES; ChaCha20 and Poly1305 are the reference
 * code (only read now). Once, before any key is used. */
int _sodium_runtime_get_cpu_features(void);
int _crypto_stream_chacha20_pick_best_implementation(void);
int _crypto_onetimeauth_poly1305_pick_best_implementation(void);
int _crypto_aead_aegis256_pick_best_implementation(void);

static void pick(void)
{
	_sodium_runtime_get_cpu_features();
	_crypto_stream_chacha20_pick_best_implementation();
	_crypto_onetimeauth_poly1305_pick_best_implementation();
	_crypto_aead_aegis256_pick_best_implementation();
}

unsigned seal_tag_bytes(unsigned scheme)
{
	return scheme == SEAL_AEGIS256 ? crypto_aead_aegis256_ABYTES :
	       scheme == SEAL_XCHACHA ? crypto_aead_xchacha20poly1305_ietf_ABYTES : 0;
}

static void seal_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, pick);
}

/* libsodium's core.c is not built (deps/libsodium.mk: its sodium_init
 * names every CPU variant); this is its misuse handler, which libsodium
 * calls on an impossible request (a message past the cipher's limit):
 * never reached with chunks of at most 64 MiB. */
void sodium_misuse(void);
void sodium_misuse(void)
{
	abort();
}

int seal_public_key(const uint8_t sk[SEAL_KEY_BYTES], uint8_t pk[SEAL_KEY_BYTES])
{
	seal_init();
	/* X25519(sk, 9), which the ladder computes like any product: no
	 * base-point table linked in. */
	return crypto_scalarmult(pk, sk, base_point) != 0 ? -EINVAL : 0;
}

int seal_keypair(uint8_t pk[SEAL_KEY_BYTES], uint8_t sk[SEAL_KEY_BYTES])
{
	seal_init();
	randombytes_buf(sk, SEAL_KEY_BYTES);
	return seal_public_key(sk, pk);
}

void seal_key_id(const uint8_t pk[SEAL_KEY_BYTES], uint8_t id[SEAL_KEYID_BYTES])
{
	crypto_generichash(id, SEAL_KEYID_BYTES, pk, SEAL_KEY_BYTES, (const uint8_t *)"kdumpinit-keyid", 15);
}

/* key = BLAKE2b-256(shared, key = "kdumpinit-dump-v1") over eph_pk and pk
 * too, so that the key is bound to both public keys. */
static int derive(uint8_t key[32], const uint8_t shared[32], const uint8_t eph_pk[32],
		  const uint8_t pk[32])
{
	crypto_generichash_state st;
	if (crypto_generichash_init(&st, (const uint8_t *)"kdumpinit-dump-v1", 17, 32) != 0 ||
	    crypto_generichash_update(&st, shared, 32) != 0 ||
	    crypto_generichash_update(&st, eph_pk, 32) != 0 ||
	    crypto_generichash_update(&st, pk, 32) != 0 || crypto_generichash_final(&st, key, 32) != 0)
		return -EINVAL;
	return 0;
}

int seal_begin(struct seal_dump *d, const uint8_t pk[SEAL_KEY_BYTES])
{
	uint8_t esk[32], shared[32];
	int r = -EINVAL;

	memset(d, 0, sizeof *d);
	d->scheme = SEAL_AEGIS256;
	if (seal_keypair(d->eph_pk, esk) == 0 && crypto_scalarmult(shared, esk, pk) == 0)
		r = derive(d->key, shared, d->eph_pk, pk);
	seal_key_id(pk, d->key_id);
	sodium_memzero(esk, sizeof esk);
	sodium_memzero(shared, sizeof shared);
	return r;
}

int seal_open_begin(struct seal_dump *d, unsigned scheme, const uint8_t sk[SEAL_KEY_BYTES],
		    const uint8_t eph_pk[SEAL_KEY_BYTES], const uint8_t key_id[SEAL_KEYID_BYTES])
{
	uint8_t pk[32], shared[32];
	int r = -EINVAL;

	memset(d, 0, sizeof *d);
	d->scheme = scheme;
	if (!seal_tag_bytes(scheme) || seal_public_key(sk, pk) < 0)
		return -EINVAL;
	seal_key_id(pk, d->key_id);
	if (memcmp(d->key_id, key_id, SEAL_KEYID_BYTES)) {
		r = -ENOKEY;
	} else if (crypto_scalarmult(shared, sk, eph_pk) == 0) {
		memcpy(d->eph_pk, eph_pk, 32);
		r = derive(d->key, shared, eph_pk, pk);
	}
	sodium_memzero(shared, sizeof shared);
	return r;
}

/* Nonce: seq, dump_id, type (little-endian), zeros (24 bytes for
 * XChaCha20, 32 for AEGIS-256). AD: the same 18 bytes and the plaintext
 * length, so that no header field a reader trusts can change. */
static void bind(const struct seal_where *w, uint8_t nonce[32], uint8_t ad[22])
{
	memset(nonce, 0, 32);
	for (int i = 0; i < 8; i++) {
		nonce[i] = (uint8_t)(w->seq >> (8 * i));
		nonce[8 + i] = (uint8_t)(w->dump_id >> (8 * i));
	}
	nonce[16] = (uint8_t)w->type;
	nonce[17] = (uint8_t)(w->type >> 8);
	memcpy(ad, nonce, 18);
	for (int i = 0; i < 4; i++)
		ad[18 + i] = (uint8_t)(w->len >> (8 * i));
}

/* The scheme's AEAD, detached, in place (M may be C). */
static void aead_seal(const struct seal_dump *d, uint8_t *c, uint8_t *tag, const uint8_t *m,
		      size_t mlen, const uint8_t *ad, size_t adlen, const uint8_t nonce[32])
{
	unsigned long long tl;

	if (d->scheme == SEAL_AEGIS256)
		crypto_aead_aegis256_encrypt_detached(c, tag, &tl, m, mlen, ad, adlen, NULL, nonce,
						      d->key);
	else
		crypto_aead_xchacha20poly1305_ietf_encrypt_detached(c, tag, &tl, m, mlen, ad, adlen,
								    NULL, nonce, d->key);
}

static int aead_open(const struct seal_dump *d, uint8_t *m, const uint8_t *c, size_t clen,
		     const uint8_t *tag, const uint8_t *ad, size_t adlen, const uint8_t nonce[32])
{
	if (d->scheme == SEAL_AEGIS256)
		return crypto_aead_aegis256_decrypt_detached(m, NULL, c, clen, tag, ad, adlen, nonce,
							     d->key);
	return crypto_aead_xchacha20poly1305_ietf_decrypt_detached(m, NULL, c, clen, tag, ad, adlen,
								   nonce, d->key);
}

void seal_chunk(const struct seal_dump *d, const struct seal_where *w, uint8_t *buf,
		uint8_t *tag)
{
	uint8_t nonce[32], ad[22];

	bind(w, nonce, ad);
	aead_seal(d, buf, tag, buf, w->len, ad, sizeof ad, nonce);
}

int seal_open_chunk(const struct seal_dump *d, const struct seal_where *w, uint8_t *buf,
		    const uint8_t *tag)
{
	uint8_t nonce[32], ad[22];

	bind(w, nonce, ad);
	/* libsodium verifies the tag before it writes any plaintext. */
	return aead_open(d, buf, buf, w->len, tag, ad, sizeof ad, nonce) ? -EBADMSG : 0;
}

/* A part: its number in the nonce's byte 18 (0 for a whole chunk), and
 * number and length after the binding in the AD. */
static void bind_part(const struct seal_where *w, unsigned part, size_t len, uint8_t nonce[32],
		      uint8_t ad[27])
{
	bind(w, nonce, ad);
	nonce[18] = (uint8_t)part;
	ad[22] = (uint8_t)part;
	for (int i = 0; i < 4; i++)
		ad[23 + i] = (uint8_t)((uint32_t)len >> (8 * i));
}

void seal_part(const struct seal_dump *d, const struct seal_where *w, unsigned part, uint8_t *buf,
	       size_t len, uint8_t *tag)
{
	uint8_t nonce[32], ad[27];

	bind_part(w, part, len, nonce, ad);
	aead_seal(d, buf, tag, buf, len, ad, sizeof ad, nonce);
}

int seal_open_part(const struct seal_dump *d, const struct seal_where *w, unsigned part,
		   uint8_t *buf, size_t len, const uint8_t *tag)
{
	uint8_t nonce[32], ad[27];

	bind_part(w, part, len, nonce, ad);
	return aead_open(d, buf, buf, len, tag, ad, sizeof ad, nonce) ? -EBADMSG : 0;
}

/* The clear bytes go in the associated data after the binding; the
 * message is empty, so the tag is a MAC under the dump's key. */
static int auth_ad(const struct seal_where *w, const void *a, size_t alen, const void *b,
		   size_t blen, uint8_t nonce[32], uint8_t *ad)
{
	if (alen > SEAL_AUTH_MAX || blen > SEAL_AUTH_MAX - alen)
		return -EINVAL;
	bind(w, nonce, ad);
	if (alen)
		memcpy(ad + 22, a, alen);
	if (blen)
		memcpy(ad + 22 + alen, b, blen);
	return 0;
}

void seal_auth(const struct seal_dump *d, const struct seal_where *w, const void *a, size_t alen,
	       const void *b, size_t blen, uint8_t *tag)
{
	uint8_t nonce[32], ad[22 + SEAL_AUTH_MAX], none[1] = { 0 };

	/* An empty message: `none` only for the library's non-null rule. */
	memset(tag, 0, seal_tag_bytes(d->scheme));
	if (auth_ad(w, a, alen, b, blen, nonce, ad) == 0)
		aead_seal(d, none, tag, none, 0, ad, 22 + alen + blen, nonce);
}

int seal_check_auth(const struct seal_dump *d, const struct seal_where *w, const void *a,
		    size_t alen, const void *b, size_t blen, const uint8_t *tag)
{
	uint8_t nonce[32], ad[22 + SEAL_AUTH_MAX], none[1] = { 0 };

	if (auth_ad(w, a, alen, b, blen, nonce, ad) < 0)
		return -EBADMSG;
	return aead_open(d, none, none, 0, tag, ad, 22 + alen + blen, nonce) ? -EBADMSG : 0;
}

void seal_end(struct seal_dump *d)
{
	sodium_memzero(d, sizeof *d);
}

int seal_parse_key(const char *text, size_t len, int secret, uint8_t key[SEAL_KEY_BYTES],
		   const char **why)
{
	const char *want = secret ? "kdumpinit-secret-key " : "kdumpinit-public-key ";
	size_t wl = strlen(want);

	if (len && text[len - 1] == '\n')
		len--;
	if (len < wl || memcmp(text, want, wl)) {
		*why = secret ? "not a kdumpinit secret key (no \"kdumpinit-secret-key \" at its start)" :
				"not a kdumpinit public key (no \"kdumpinit-public-key \" at its start)";
		return -EINVAL;
	}
	if (len - wl != 2 * SEAL_KEY_BYTES) {
		*why = "the key is not 64 hex digits";
		return -EINVAL;
	}
	if (hex_decode(text + wl, len - wl, key, SEAL_KEY_BYTES) < 0) {
		*why = "the key holds a character that is not a hex digit";
		return -EINVAL;
	}
	return 0;
}
