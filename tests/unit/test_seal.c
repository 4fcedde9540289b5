/* Unit tests for dump/seal.c, with each scheme (AEGIS-256, which captures
 * seal with, and XChaCha20-Poly1305, which dumps of format 5 and 6 hold):
 * round trips, a wrong key, every byte of a sealed chunk and of its tag flipped (each refused),
 * a chunk read at another seq, in another dump or as another type
 * (refused), a truncated chunk (refused), a dump of one key read with
 * another (-ENOKEY), and the key file parser's edges. */
#define CHECK_PREFIX "seal"
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include "../../dump/format.h"
#include "../../dump/seal.h"

static uint8_t pk[32], sk[32], pk2[32], sk2[32];
static unsigned scheme;	/* the scheme the tests run with */
static size_t tb;	/* its tag's length */

/* A capture's dump key, sealing with `scheme` (a capture seals with
 * AEGIS-256; the older scheme is set here to make dumps of 5 and 6). */
static int begin(struct seal_dump *w, const uint8_t *k)
{
	int r = seal_begin(w, k);
	w->scheme = scheme;
	return r;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7);
}

static void round_trip(void)
{
	struct seal_dump w, r;
	uint8_t buf[4096], orig[4096], tag[SEAL_TAG_MAX];
	struct seal_where at = { 0x1122334455667788ull, 7, 5, sizeof buf };

	CHECK(begin(&w, pk) == 0, "seal_begin");
	fill(orig, sizeof orig, 1);
	memcpy(buf, orig, sizeof buf);
	seal_chunk(&w, &at, buf, tag);
	CHECK(memcmp(buf, orig, sizeof buf) != 0, "the sealed chunk equals the plaintext");
	CHECK(seal_open_begin(&r, scheme, sk, w.eph_pk, w.key_id) == 0, "seal_open_begin");
	CHECK(seal_open_chunk(&r, &at, buf, tag) == 0, "open");
	CHECK(memcmp(buf, orig, sizeof buf) == 0, "the opened chunk differs from the plaintext");
	seal_end(&w);
	seal_end(&r);
}

static void every_byte_flipped(void)
{
	struct seal_dump w, r;
	uint8_t buf[256], sealed[256], tag[SEAL_TAG_MAX], t2[SEAL_TAG_MAX];
	struct seal_where at = { 1, 3, 5, sizeof buf };
	int refused = 0;

	begin(&w, pk);
	seal_open_begin(&r, scheme, sk, w.eph_pk, w.key_id);
	fill(buf, sizeof buf, 2);
	seal_chunk(&w, &at, buf, tag);
	memcpy(sealed, buf, sizeof buf);
	for (size_t i = 0; i < sizeof buf + tb; i++) {
		memcpy(buf, sealed, sizeof buf);
		memcpy(t2, tag, tb);
		if (i < sizeof buf)
			buf[i] ^= 0x01;
		else
			t2[i - sizeof buf] ^= 0x80;
		if (seal_open_chunk(&r, &at, buf, t2) == -EBADMSG)
			refused++;
		/* refused: nothing unauthenticated is left in the buffer */
		static const uint8_t zero[sizeof buf];
		CHECK(!memcmp(buf, zero, sizeof buf), "a refused open left bytes in the buffer at flip %zu", i);
	}
	CHECK(refused == (int)(sizeof buf + tb), "%d of %zu flips refused", refused, sizeof buf + tb);
}

static void moved_replayed_retyped_cut(void)
{
	struct seal_dump w, r;
	uint8_t buf[512], sealed[512], tag[SEAL_TAG_MAX];
	struct seal_where at = { 42, 10, 5, sizeof buf }, x;

	begin(&w, pk);
	seal_open_begin(&r, scheme, sk, w.eph_pk, w.key_id);
	fill(buf, sizeof buf, 3);
	seal_chunk(&w, &at, buf, tag);
	memcpy(sealed, buf, sizeof buf);
	/* Each refusal zeroes what it was given: start from the sealed copy. */
	x = at, x.seq = 11;
	CHECK(seal_open_chunk(&r, &x, buf, tag) == -EBADMSG, "read at another seq");
	memcpy(buf, sealed, sizeof buf), x = at, x.dump_id = 43;
	CHECK(seal_open_chunk(&r, &x, buf, tag) == -EBADMSG, "read in another dump");
	memcpy(buf, sealed, sizeof buf), x = at, x.type = 6;
	CHECK(seal_open_chunk(&r, &x, buf, tag) == -EBADMSG, "read as another type");
	memcpy(buf, sealed, sizeof buf), x = at, x.len = sizeof buf - 1;
	CHECK(seal_open_chunk(&r, &x, buf, tag) == -EBADMSG, "read cut one byte short");
	memcpy(buf, sealed, sizeof buf), x = at, x.len = 0;
	CHECK(seal_open_chunk(&r, &x, buf, tag) == -EBADMSG, "read cut to nothing");
	memcpy(buf, sealed, sizeof buf);
	CHECK(seal_open_chunk(&r, &at, buf, tag) == 0, "the chunk at its place opens");
}

static void other_key(void)
{
	struct seal_dump w, r;

	begin(&w, pk);
	CHECK(seal_open_begin(&r, scheme, sk2, w.eph_pk, w.key_id) == -ENOKEY, "another key's dump: -ENOKEY");
	/* A forged key id that names key 2: the key derived differs, so the
	 * chunk still does not open. */
	uint8_t id2[8], buf[64] = { 0 }, tag[SEAL_TAG_MAX];
	struct seal_where at = { 1, 1, 5, sizeof buf };
	seal_chunk(&w, &at, buf, tag);
	seal_key_id(pk2, id2);
	CHECK(seal_open_begin(&r, scheme, sk2, w.eph_pk, id2) == 0, "open_begin with key 2's id");
	CHECK(seal_open_chunk(&r, &at, buf, tag) == -EBADMSG, "key 2 opens key 1's chunk");
}

static void two_dumps_two_keys(void)
{
	struct seal_dump a, b;

	begin(&a, pk);
	begin(&b, pk);
	CHECK(memcmp(a.eph_pk, b.eph_pk, 32) && memcmp(a.key, b.key, 32),
	      "two captures for one recipient share an ephemeral key or a dump key");
}

static void key_files(void)
{
	uint8_t k[32];
	const char *why = "";
	char line[200];
	static const char hex[] = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

	snprintf(line, sizeof line, "kdumpinit-public-key %s\n", hex);
	CHECK(seal_parse_key(line, strlen(line), 0, k, &why) == 0 && k[0] == 0 && k[1] == 0x11 &&
	      k[31] == 0xff, "a public key line: %s", why);
	CHECK(seal_parse_key(line, strlen(line), 1, k, &why) == -EINVAL && strstr(why, "secret"),
	      "a public key taken as secret");
	snprintf(line, sizeof line, "kdumpinit-public-key %.63s", hex);
	CHECK(seal_parse_key(line, strlen(line), 0, k, &why) == -EINVAL && strstr(why, "64 hex"), "63 digits");
	snprintf(line, sizeof line, "kdumpinit-public-key %sab", hex);
	CHECK(seal_parse_key(line, strlen(line), 0, k, &why) == -EINVAL, "66 digits");
	snprintf(line, sizeof line, "kdumpinit-public-key %s", hex);
	line[30] = 'g';
	CHECK(seal_parse_key(line, strlen(line), 0, k, &why) == -EINVAL && strstr(why, "hex digit"), "a g");
	CHECK(seal_parse_key("", 0, 0, k, &why) == -EINVAL, "empty");
	snprintf(line, sizeof line, "kdumpinit-public-key %s\n\n", hex);
	CHECK(seal_parse_key(line, strlen(line), 0, k, &why) == -EINVAL, "two newlines");
}

/* The AUTH tags (SEAL, END): clear bytes, vouched for. Every byte of the
 * bytes and of the tag matters, and so do the place and the prefix (for
 * SEAL, START and CHAIN); a reader with another key cannot make one. */
static void auth_tags(void)
{
	struct seal_dump w, r, r2;
	uint8_t pre[112], rec[128], tag[SEAL_TAG_MAX];
	struct seal_where at = { .dump_id = 7, .seq = 2, .type = 13, .len = sizeof rec };

	fill(pre, sizeof pre, 3);
	fill(rec, sizeof rec, 4);
	CHECK_INT(begin(&w, pk), 0);
	CHECK_INT(seal_open_begin(&r, scheme, sk, w.eph_pk, w.key_id), 0);
	seal_auth(&w, &at, pre, sizeof pre, rec, sizeof rec, tag);
	CHECK_INT(seal_check_auth(&r, &at, pre, sizeof pre, rec, sizeof rec, tag), 0);
	int missed = 0;
	for (size_t i = 0; i < sizeof pre + sizeof rec + tb; i++) {
		uint8_t *b = i < sizeof pre ? pre + i : i < sizeof pre + sizeof rec ?
			     rec + i - sizeof pre : tag + i - sizeof pre - sizeof rec;
		*b ^= 0x01;
		missed += seal_check_auth(&r, &at, pre, sizeof pre, rec, sizeof rec, tag) == 0;
		*b ^= 0x01;
	}
	CHECK(missed == 0, "%d flipped bytes still authenticated", missed);
	struct seal_where moved = at;
	moved.seq = 3;
	CHECK_INT(seal_check_auth(&r, &moved, pre, sizeof pre, rec, sizeof rec, tag), -EBADMSG);
	/* Without the prefix, or with it moved into the record: refused. */
	CHECK_INT(seal_check_auth(&r, &at, NULL, 0, rec, sizeof rec, tag), -EBADMSG);
	/* Past SEAL_AUTH_MAX: refused, never a buffer overrun. */
	static uint8_t big[SEAL_AUTH_MAX + 1];
	CHECK_INT(seal_check_auth(&r, &at, big, sizeof big, NULL, 0, tag), -EBADMSG);
	/* Another key opens nothing. */
	CHECK_INT(seal_open_begin(&r2, scheme, sk2, w.eph_pk, w.key_id), -ENOKEY);
	seal_end(&w);
	seal_end(&r);
}

/* The schemes' tags, and what one scheme's chunk is to the other: a
 * dump's SEAL record names its scheme, and a chunk sealed with one does
 * not open as the other's. A scheme not known here is refused. */
static void schemes(void)
{
	struct seal_dump w, r;
	uint8_t buf[300], tag[SEAL_TAG_MAX];
	struct seal_where at = { 9, 4, 5, sizeof buf };

	CHECK_INT(seal_tag_bytes(SEAL_AEGIS256), 32);
	CHECK_INT(seal_tag_bytes(SEAL_XCHACHA), 16);
	CHECK_INT(seal_tag_bytes(0), 0);
	CHECK_INT(seal_tag_bytes(3), 0);
	CHECK_INT(seal_begin(&w, pk), 0);
	CHECK_INT(w.scheme, SEAL_AEGIS256);
	CHECK_INT(seal_open_begin(&r, 3, sk, w.eph_pk, w.key_id), -EINVAL);
	fill(buf, sizeof buf, 5);
	seal_chunk(&w, &at, buf, tag);
	CHECK_INT(seal_open_begin(&r, SEAL_XCHACHA, sk, w.eph_pk, w.key_id), 0);
	CHECK_INT(seal_open_chunk(&r, &at, buf, tag), -EBADMSG);
	seal_end(&w);
	seal_end(&r);
}

/* A PAGES payload of version 7 in its three parts: the index opens
 * without the pages, the pages after it; a byte changed in the pages
 * leaves the index opening and fails the pages only; in the index, it
 * fails the index. The parts' tags are not interchangeable. */
static void pages_parts(void)
{
	struct seal_dump w, r;
	enum { COUNT = 64, NSTORED = 10, DATA = 700 };
	size_t hl = pages_hdr_len(COUNT, NSTORED, 0), len = hl + DATA;
	uint8_t clear[2048], buf[2048 + 3 * SEAL_TAG_MAX];
	struct kdi_pages ph = { .pfn = 4096, .count = COUNT, .nstored = NSTORED };
	struct seal_where at = { 77, 12, KDI_CH_PAGES, (uint32_t)len };

	fill(clear, sizeof clear, 9);
	memcpy(clear, &ph, sizeof ph);
	CHECK_INT(seal_begin(&w, pk), 0);
	CHECK_INT(seal_open_begin(&r, SEAL_AEGIS256, sk, w.eph_pk, w.key_id), 0);
	memcpy(buf, clear, len);
	CHECK_INT(pages_seal(&w, &at, buf), 0);
	uint8_t sealed[sizeof buf];
	memcpy(sealed, buf, sizeof buf);
	CHECK(memcmp(buf, clear, sizeof ph) && memcmp(buf + hl, clear + hl, DATA), "a part left clear");
	CHECK_INT(pages_open_index(&r, &at, buf), (long)hl);
	CHECK(!memcmp(buf, clear, hl), "the index opened differs");
	CHECK(memcmp(buf + hl, clear + hl, DATA) != 0, "the pages opened with the index");
	CHECK_INT(pages_open_data(&r, &at, buf, hl), 0);
	CHECK(!memcmp(buf, clear, len), "the pages opened differ");
	/* a byte of the pages changed: the index still opens, the pages not */
	memcpy(buf, sealed, sizeof buf);
	buf[hl + DATA / 2] ^= 1;
	CHECK_INT(pages_open_index(&r, &at, buf), (long)hl);
	CHECK_INT(pages_open_data(&r, &at, buf, hl), -EBADMSG);
	/* a byte of each index part, and of each tag: the index fails */
	size_t idx[] = { 3, sizeof ph + 5, len + 1, len + SEAL_TAG_MAX + 1 };
	for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++) {
		memcpy(buf, sealed, sizeof buf);
		buf[idx[i]] ^= 0x10;
		CHECK_INT(pages_open_index(&r, &at, buf), -EBADMSG);
	}
	/* the data's tag swapped with the index's: both fail */
	memcpy(buf, sealed, sizeof buf);
	memcpy(buf + len + SEAL_TAG_MAX, sealed + len + 2 * SEAL_TAG_MAX, SEAL_TAG_MAX);
	CHECK_INT(pages_open_index(&r, &at, buf), -EBADMSG);
	/* a head that does not describe the payload is not sealed */
	struct seal_where shorter = at;
	shorter.len = (uint32_t)hl - 1;
	memcpy(buf, clear, len);
	CHECK_INT(pages_seal(&w, &shorter, buf), -EINVAL);
	seal_end(&w);
	seal_end(&r);
}

/* The cases that run with each scheme: XChaCha20-Poly1305's named so. */
#define RUN_SCHEME(fn) check_run(scheme == SEAL_XCHACHA ? #fn "_xchacha" : #fn, fn)

int main(void)
{
	static const unsigned all[] = { SEAL_AEGIS256, SEAL_XCHACHA };

	if (seal_keypair(pk, sk) || seal_keypair(pk2, sk2)) {
		puts("FAIL seal.setup: keypair");
		return 1;
	}
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		scheme = all[i];
		tb = seal_tag_bytes(scheme);
		RUN_SCHEME(round_trip);
		RUN_SCHEME(every_byte_flipped);
		RUN_SCHEME(moved_replayed_retyped_cut);
		RUN_SCHEME(other_key);
		RUN_SCHEME(two_dumps_two_keys);
		RUN_SCHEME(auth_tags);
	}
	RUN(key_files);
	RUN(schemes);
	RUN(pages_parts);
	return check_done();
}
