/* Unit tests for the claim superblock (dump/format.c: super_*, uuid_*) and
 * the signature probe (config/probe.c) on hand-built buffers. */
#define CHECK_PREFIX "probe"
#include "check.h"

#include <errno.h>
#include <stdint.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../../config/probe.h"
#include "../../dump/format.h"

#define HEAD PROBE_HEAD

static uint8_t head[HEAD], tail[4096], big_tail[PROBE_TAIL];

/* A valid encoded claim in head (rest zero); *sb is what was encoded. */
static void claimed_head(struct kdi_super *sb, const char *label)
{
	memset(head, 0, sizeof head);
	super_init(sb, 64u << 20, label);
	super_encode(sb, head);
}

/* Re-checksums a superblock edited in place in the buffer, by FORMAT.md:
 * XXH64 (seed 0) of the 448 bytes with the checksum field zero. */
static void rehash(uint8_t *buf)
{
	uint64_t zero = 0, h;

	memcpy(buf + 440, &zero, 8);
	h = XXH64(buf, 448, 0);
	memcpy(buf + 440, &h, 8);
}

static void super_layout(void)
{
	struct kdi_super sb, out;

	claimed_head(&sb, "dumpdisk");
	/* Field offsets from docs/FORMAT.md, read from the encoded bytes. */
	CHECK(!memcmp(head, "KDUMPINT", 8), "magic not at offset 0");
	uint32_t v;
	uint64_t q;
	memcpy(&v, head + 8, 4);
	CHECK_INT(v, 1);
	memcpy(&v, head + 12, 4);
	CHECK_INT(v, 448);
	CHECK(!memcmp(head + 16, sb.uuid, 16), "uuid not at 16");
	CHECK_STR((const char *)head + 32, "dumpdisk");
	memcpy(&q, head + 96, 8);
	CHECK_INT(q, 64u << 20);
	memcpy(&q, head + 104, 8);
	CHECK_INT(q, 1u << 20);
	/* UUID is RFC 4122 version 4. */
	CHECK((head[16 + 6] >> 4) == 4 && (head[16 + 8] & 0xc0) == 0x80, "uuid is not v4");
	/* The checksum is what FORMAT.md says it is. */
	uint64_t stored, want;
	memcpy(&stored, head + 440, 8);
	uint8_t copy[448];
	memcpy(copy, head, 448);
	memset(copy + 440, 0, 8);
	want = XXH64(copy, 448, 0);
	CHECK(stored == want, "checksum %016llx, XXH64 says %016llx",
	      (unsigned long long)stored, (unsigned long long)want);
	/* Nothing past the struct in the 4 KiB area. */
	int nz = 0;
	for (size_t i = 448; i < KDI_SB_AREA; i++)
		nz |= head[i];
	CHECK(!nz, "bytes after the superblock are not zero");
	CHECK_INT(super_decode(head, KDI_SB_AREA, &out), 0);
	CHECK(!memcmp(out.uuid, sb.uuid, 16) && !strcmp(out.label, "dumpdisk") &&
	      out.data_offset == (1u << 20), "decoded superblock differs");
	/* Two claims get different UUIDs. */
	struct kdi_super sb2;
	super_init(&sb2, 0, NULL);
	CHECK(memcmp(sb.uuid, sb2.uuid, 16), "two super_init calls gave the same uuid");
}

static void super_corruptions(void)
{
	struct kdi_super sb, out;

	claimed_head(&sb, "x");
	CHECK_INT(super_decode(head, 447, &out), -ENOENT);	/* too short */
	CHECK_INT(super_decode(head, 448, &out), 0);

	head[3] ^= 1;					/* magic */
	CHECK_INT(super_decode(head, 448, &out), -ENOENT);
	head[3] ^= 1;

	/* Any flipped bit outside the magic breaks the checksum. */
	static const int at[] = { 8, 12, 17, 33, 95, 96, 104, 112, 120, 128, 136, 300, 439, 440, 447 };
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		head[at[i]] ^= 0x10;
		int r = super_decode(head, 448, &out);
		CHECK(r == -EBADMSG, "bit flipped at %d: super_decode %d, want -EBADMSG", at[i], r);
		head[at[i]] ^= 0x10;
	}
	CHECK_INT(super_decode(head, 448, &out), 0);

	/* Checksummed but invalid fields. */
	uint8_t save[448];
	memcpy(save, head, 448);
	uint32_t v = 2;
	memcpy(head + 8, &v, 4);
	rehash(head);
	CHECK_INT(super_decode(head, 448, &out), -EPROTONOSUPPORT);	/* newer */
	memcpy(head, save, 448);

	v = 447;
	memcpy(head + 12, &v, 4);
	rehash(head);
	CHECK_INT(super_decode(head, 448, &out), -EBADMSG);		/* sb_size */
	memcpy(head, save, 448);

	/* FORMAT.md: a multiple of 4096, at least 128 KiB (the head the
	 * claim gate keeps zero), within the device. */
	static const uint64_t bad_off[] = { 0, 2048, 4096, 4097, 65536, (128u << 10) - 4096,
					    (1u << 20) + 512, 1ull << 41, UINT64_MAX & ~4095ull };
	for (size_t i = 0; i < sizeof bad_off / sizeof bad_off[0]; i++) {
		memcpy(head + 104, &bad_off[i], 8);
		rehash(head);
		int r = super_decode(head, 448, &out);
		CHECK(r == -EBADMSG, "data_offset %llu: super_decode %d, want -EBADMSG",
		      (unsigned long long)bad_off[i], r);
		memcpy(head, save, 448);
	}
	uint64_t ok_off = 128u << 10;
	memcpy(head + 104, &ok_off, 8);
	rehash(head);
	CHECK_INT(super_decode(head, 448, &out), 0);
	memcpy(head, save, 448);

	/* Against the device's size: the stream starts inside it. */
	uint64_t big = 64u << 20;
	memcpy(head + 104, &big, 8);
	rehash(head);
	CHECK_INT(super_read(head, 448, 0, &out), 0);			/* size unknown */
	CHECK_INT(super_read(head, 448, 64u << 20, &out), 0);
	CHECK_INT(super_read(head, 448, 1u << 30, &out), 0);
	CHECK_INT(super_read(head, 448, (64u << 20) - 4096, &out), -EBADMSG);
	CHECK_INT(super_read(head, 448, 8u << 20, &out), -EBADMSG);
	/* ... and the probe, which knows the size, calls it damaged. */
	struct probe p;
	probe_buffer(&p, head, HEAD, NULL, 0, 8u << 20);
	CHECK(!p.claimed && p.claim_damaged, "data_offset past the end: claimed %d damaged %d",
	      p.claimed, p.claim_damaged);
	memcpy(head, save, 448);

	memset(head + 32, 'L', 64);					/* label, no NUL */
	rehash(head);
	CHECK_INT(super_decode(head, 448, &out), -EBADMSG);
	memcpy(head, save, 448);
}

static void uuid_text(void)
{
	uint8_t u[16], w[16];
	char s[37];

	for (int i = 0; i < 16; i++)
		u[i] = (uint8_t)(i * 17 + 3);
	uuid_format(u, s);
	CHECK_STR(s, "03142536-4758-697a-8b9c-adbecfe0f102");
	CHECK_INT(uuid_parse(s, w), 0);
	CHECK(!memcmp(u, w, 16), "uuid round trip");
	CHECK_INT(uuid_parse("03142536-4758-697A-8B9C-ADBECFE0F102", w), 0);	/* upper case */
	CHECK(!memcmp(u, w, 16), "upper-case uuid differs");
	CHECK_INT(uuid_parse("0314253647586 97a8b9cadbecfe0f102", w), -EINVAL);
	CHECK_INT(uuid_parse("03142536-4758-697a-8b9c-adbecfe0f10", w), -EINVAL);	/* short */
	CHECK_INT(uuid_parse("03142536-4758-697a-8b9c-adbecfe0f1023", w), -EINVAL);	/* long */
	CHECK_INT(uuid_parse("g3142536-4758-697a-8b9c-adbecfe0f102", w), -EINVAL);
	CHECK_INT(uuid_parse("", w), -EINVAL);
}

static void probe_blank_and_claimed(void)
{
	struct probe p;
	struct kdi_super sb;

	memset(head, 0, sizeof head);
	probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
	CHECK(!p.claimed && !p.claim_damaged && !p.foreign && !p.nonzero, "blank head misjudged");
	CHECK_INT(p.size, 1u << 30);
	CHECK(check_mentions(probe_describe(&p), "blank"), "describe: %s", probe_describe(&p));

	claimed_head(&sb, "lbl");
	probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
	CHECK(p.claimed && !p.claim_damaged && !p.foreign && !p.nonzero, "claim misjudged");
	CHECK(!memcmp(p.sb.uuid, sb.uuid, 16) && !strcmp(p.sb.label, "lbl"), "claim not decoded");

	/* Our claim, then someone wrote after the 448-byte superblock: in
	 * the rest of its 4 KiB (a filesystem with its superblock at 1 KiB
	 * that has no signature here: nilfs2, minix, HFS+) or beyond. */
	static const size_t at[] = { 448, 1024, 1030, 1040, 4095, 4096, 8191, 65536, HEAD - 1 };
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		claimed_head(&sb, NULL);
		head[at[i]] = 0x01;
		probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
		CHECK(p.claimed && p.nonzero && p.nonzero_at == at[i],
		      "claim + byte at %zu: claimed %d nonzero %d at %llu", at[i],
		      p.claimed, p.nonzero, (unsigned long long)p.nonzero_at);
	}
	/* The same for a damaged claim: it is still our area. */
	claimed_head(&sb, NULL);
	head[40] ^= 1;
	head[2000] = 1;
	probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
	CHECK(p.claim_damaged && p.nonzero && p.nonzero_at == 2000, "damaged claim + byte at 2000");

	/* Damaged claims. */
	claimed_head(&sb, NULL);
	head[40] ^= 1;
	probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
	CHECK(!p.claimed && p.claim_damaged, "bad checksum not seen as damaged claim");
	CHECK(check_mentions(probe_describe(&p), "damaged"), "describe: %s", probe_describe(&p));
	claimed_head(&sb, NULL);
	uint32_t v = 7;
	memcpy(head + 8, &v, 4);
	rehash(head);
	probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
	CHECK(!p.claimed && p.claim_damaged, "newer version not seen as damaged claim");

	/* Unrecognised bytes anywhere in the head, no claim. */
	static const size_t raw[] = { 0, 100, 447, 4095, 70000, HEAD - 1 };
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
		memset(head, 0, sizeof head);
		head[raw[i]] = 0x80;
		probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
		CHECK(!p.claimed && !p.foreign && p.nonzero, "byte at %zu: nonzero %d foreign %s",
		      raw[i], p.nonzero, p.foreign ? p.foreign : "-");
	}
	CHECK(check_mentions(probe_describe(&p), "unrecognised"), "describe: %s", probe_describe(&p));
}

/* Every signature docs/CLI.md promises to refuse, at its real offset. */
static void probe_signatures(void)
{
	static const struct { size_t off; const char *magic; size_t len; const char *word; } s[] = {
		{ 1080, "\x53\xef", 2, "ext2/3/4" },
		{ 0, "XFSB", 4, "xfs" },
		{ 65600, "_BHRfS_M", 8, "btrfs" },
		{ 4086, "SWAPSPACE2", 10, "swap" },
		{ 4086, "SWAP-SPACE", 10, "swap" },
		{ 65526, "SWAPSPACE2", 10, "swap" },
		{ 0, "LUKS\xba\xbe", 6, "luks" },
		{ 0, "SKUL\xba\xbe", 6, "luks" },
		{ 512, "EFI PART", 8, "gpt" },
		{ 4096, "EFI PART", 8, "gpt" },
		{ 510, "\x55\xaa", 2, "mbr" },
		{ 536, "LVM2 001", 8, "lvm" },
		{ 4096, "\xfc\x4e\x2b\xa9", 4, "raid" },
		{ 1024, "\x10\x20\xf5\xf2", 4, "f2fs" },
		{ 0, "hsqs", 4, "squashfs" },
		{ 3, "NTFS    ", 8, "ntfs" },
		{ 82, "FAT32", 5, "fat" },
		{ 32769, "CD001", 5, "iso" },
	};
	struct probe p;
	struct kdi_super sb;

	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		memset(head, 0, sizeof head);
		memcpy(head + s[i].off, s[i].magic, s[i].len);
		probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
		CHECK(p.foreign && check_mentions(p.foreign, s[i].word),
		      "%s at %zu: foreign \"%s\"", s[i].word, s[i].off, p.foreign ? p.foreign : "(none)");
		CHECK(!p.claimed, "%s: claimed", s[i].word);
		CHECK(p.foreign && !strcmp(probe_describe(&p), p.foreign), "describe does not say foreign");
		/* The same signature written over a claim is still foreign
		 * (ours sits in bytes 0..447 only). */
		if (s[i].off >= 448) {
			claimed_head(&sb, NULL);
			memcpy(head + s[i].off, s[i].magic, s[i].len);
			probe_buffer(&p, head, sizeof head, NULL, 0, 1u << 30);
			CHECK(p.foreign && check_mentions(p.foreign, s[i].word),
			      "%s over a claim not seen", s[i].word);
		}
	}
}

/* Short heads (small devices) must not be read past their length, and a
 * signature that does not fit is not reported. */
static void probe_short_head(void)
{
	struct probe p;
	uint8_t *small = malloc(1024);

	memset(small, 0, 1024);
	probe_buffer(&p, small, 1024, NULL, 0, 1024);
	CHECK(!p.foreign && !p.nonzero && !p.claimed, "1 KiB blank head misjudged");
	memcpy(small + 510, "\x55\xaa", 2);
	probe_buffer(&p, small, 1024, NULL, 0, 1024);
	CHECK(p.foreign && check_mentions(p.foreign, "mbr"), "MBR in a 1 KiB head not seen");
	probe_buffer(&p, small, 0, NULL, 0, 0);
	CHECK(!p.foreign && !p.claimed, "empty head misjudged");
	/* ext magic would sit at 1080..1081: a 1081-byte head cannot hold it. */
	uint8_t *h2 = calloc(1, 1081);
	h2[1080] = 0x53;
	probe_buffer(&p, h2, 1081, NULL, 0, 1081);
	CHECK(!p.foreign, "half an ext magic reported as %s", p.foreign);
	CHECK(p.nonzero, "the byte at 1080 was not seen");
	free(h2);
	free(small);
}

static void probe_gpt_backup_in_tail(void)
{
	struct probe p;

	memset(head, 0, sizeof head);
	memset(tail, 0, sizeof tail);
	memcpy(tail + sizeof tail - 512, "EFI PART", 8);
	probe_buffer(&p, head, sizeof head, tail, sizeof tail, 1u << 30);
	CHECK(p.foreign && check_mentions(p.foreign, "gpt") && check_mentions(p.foreign, "backup"),
	      "backup GPT header: foreign \"%s\"", p.foreign ? p.foreign : "(none)");
	/* Elsewhere in the tail it is not a GPT backup header. */
	memset(tail, 0, sizeof tail);
	memcpy(tail + 100, "EFI PART", 8);
	probe_buffer(&p, head, sizeof head, tail, sizeof tail, 1u << 30);
	CHECK(!p.foreign, "EFI PART at tail+100 taken for a backup header");
}

/* End-of-device signatures, placed as md_p.h, SNIA DDF, Intel IMSM and
 * UEFI put them, for device sizes that are and are not aligned. The tail
 * buffer is the device's last 256 KiB. */
static uint64_t md090_pos(uint64_t size) { return (size & ~0xffffull) - 0x10000; }
static uint64_t md10_pos(uint64_t size) { return ((size / 512 - 16) & ~7ull) * 512; }

static void put_tail(uint64_t size, uint64_t at, const void *m, size_t len)
{
	uint64_t start = size - sizeof big_tail;
	memcpy(big_tail + (at - start), m, len);
}

static void probe_end_signatures(void)
{
	static const uint64_t sizes[] = { 300u << 20, (300u << 20) + 512, (300u << 20) + 61 * 512,
					  (300u << 20) + 65024, (1ull << 30) - 4096 };
	static const char md090le[] = "\xfc\x4e\x2b\xa9\0\0\0\0";
	static const char md090be[] = "\xa9\x2b\x4e\xfc\0\0\0\0";
	static const char md10[] = "\xfc\x4e\x2b\xa9\x01\0\0\0";
	struct probe p;
	struct kdi_super sb;

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		uint64_t sz = sizes[i];
		const struct { uint64_t at; const char *m; size_t len; const char *word; } c[] = {
			{ md090_pos(sz), md090le, 8, "0.90" },
			{ md090_pos(sz), md090be, 8, "0.90" },
			{ md10_pos(sz), md10, 8, "1.0" },
			{ (sz / 512 - 1) * 512, "\xde\x11\xde\x11", 4, "DDF" },
			{ (sz / 512 - 257) * 512, "\xde\x11\xde\x11", 4, "DDF" },
			{ (sz / 512 - 2) * 512, "Intel Raid ISM Cfg Sig. ", 24, "IMSM" },
			{ (sz / 512 - 1) * 512, "EFI PART", 8, "backup" },
			{ (sz / 512 - 8) * 512, "EFI PART", 8, "backup" },
		};
		for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
			if (k == 7 && sz % 4096)
				continue;	/* a 4K-sector disk is a multiple of 4K */
			claimed_head(&sb, NULL);
			memset(big_tail, 0, sizeof big_tail);
			put_tail(sz, c[k].at, c[k].m, c[k].len);
			probe_buffer(&p, head, sizeof head, big_tail, sizeof big_tail, sz);
			CHECK(p.foreign && check_mentions(p.foreign, c[k].word),
			      "size %llu, %s at %llu: foreign \"%s\"", (unsigned long long)sz, c[k].word,
			      (unsigned long long)c[k].at, p.foreign ? p.foreign : "(none)");
			/* One sector off is not where it is looked for. */
			memset(big_tail, 0, sizeof big_tail);
			put_tail(sz, c[k].at - 512, c[k].m, c[k].len);
			probe_buffer(&p, head, sizeof head, big_tail, sizeof big_tail, sz);
			CHECK(!p.foreign, "size %llu, %s 512 bytes early taken for %s",
			      (unsigned long long)sz, c[k].word, p.foreign);
		}
		/* MD magic without its major version is not a superblock. */
		claimed_head(&sb, NULL);
		memset(big_tail, 0, sizeof big_tail);
		put_tail(sz, md10_pos(sz), "\xfc\x4e\x2b\xa9\x07", 5);
		put_tail(sz, md090_pos(sz), "\xfc\x4e\x2b\xa9\x07", 5);
		probe_buffer(&p, head, sizeof head, big_tail, sizeof big_tail, sz);
		CHECK(!p.foreign, "MD magic with major version 7 taken for %s", p.foreign);
		CHECK(p.claimed, "claim lost");
	}
	/* A tail shorter than the signature's distance from the end: not
	 * read past (the 0.90 superblock lies up to 128 KiB back). */
	memset(big_tail, 0, sizeof big_tail);
	claimed_head(&sb, NULL);
	probe_buffer(&p, head, sizeof head, big_tail + sizeof big_tail - 4096, 4096, 300u << 20);
	CHECK(!p.foreign && p.claimed, "short tail misjudged");
	/* Small devices: head and tail overlap, no underflow. */
	static uint8_t small[8192];
	memset(small, 0, sizeof small);
	probe_buffer(&p, small, sizeof small, small, sizeof small, sizeof small);
	CHECK(!p.foreign && !p.nonzero, "8 KiB blank device: foreign %s", p.foreign ? p.foreign : "-");
}

int main(void)
{
	RUN(super_layout);
	RUN(super_corruptions);
	RUN(uuid_text);
	RUN(probe_blank_and_claimed);
	RUN(probe_signatures);
	RUN(probe_short_head);
	RUN(probe_gpt_backup_in_tail);
	RUN(probe_end_signatures);
	return check_done();
}
