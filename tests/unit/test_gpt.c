/* Unit tests for config/gpt.c on hand-built GPT and MBR tables.
 *
 *   test_gpt                     the cases
 *   test_gpt --show IMG PARTNO   prints "uuid NAME-or-(none)" for a disk
 *                                image, so run.sh can compare with sfdisk */
#define CHECK_PREFIX "gpt"
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include "../../config/gpt.h"

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* A GPT with `n` entries of `esz` bytes at LBA `lba`, header at LBA 1 of
 * `sector`-byte sectors. Fields by the UEFI spec: signature 0, entries LBA
 * 72, count 80, entry size 84; entry: type GUID 0, unique GUID 16, name 56
 * (UTF-16LE). Checksums are not filled in (gpt_parse does not read them). */
static uint8_t *make_gpt(size_t len, unsigned sector, uint64_t lba, uint32_t n, uint32_t esz)
{
	uint8_t *b = calloc(1, len);
	uint8_t *h = b + sector;

	memcpy(h, "EFI PART", 8);
	put32(h + 8, 0x00010000);
	put32(h + 12, 92);
	put64(h + 72, lba);
	put32(h + 80, n);
	put32(h + 84, esz);
	return b;
}

static void set_entry(uint8_t *b, unsigned sector, uint64_t lba, uint32_t esz, unsigned partno,
		      const uint8_t guid[16], const char *name)
{
	uint8_t *e = b + lba * sector + (size_t)(partno - 1) * esz;

	memset(e, 0, 16);
	e[0] = 0xaf;			/* type GUID: anything non-zero */
	e[15] = 0x01;
	memcpy(e + 16, guid, 16);
	for (size_t i = 0; name && name[i]; i++) {
		e[56 + 2 * i] = (uint8_t)name[i];
		e[57 + 2 * i] = 0;
	}
}

/* GUID bytes as stored: the first three fields little-endian. */
static const uint8_t g1[16] = { 0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66,
				0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
static const char g1_text[] = "00112233-4455-6677-8899-aabbccddeeff";

static void gpt_basic(void)
{
	size_t len = 64 * 1024;
	uint8_t *b = make_gpt(len, 512, 2, 128, 128);
	struct gpt_part p;

	set_entry(b, 512, 2, 128, 1, g1, "kdump");
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), 0);
	CHECK_STR(p.uuid, g1_text);
	CHECK_STR(p.name, "kdump");
	CHECK_INT(p.has_name, 1);
	/* An unused entry, an entry beyond the table, partition 0. */
	CHECK_INT(gpt_parse(b, len, 512, 2, &p), -ENOENT);
	CHECK_INT(gpt_parse(b, len, 512, 129, &p), -ENOENT);
	CHECK_INT(gpt_parse(b, len, 512, 0, &p), -ENOENT);
	/* Partition 128, the last entry. */
	set_entry(b, 512, 2, 128, 128, g1, "last");
	CHECK_INT(gpt_parse(b, len, 512, 128, &p), 0);
	CHECK_STR(p.name, "last");
	free(b);
}

static void gpt_names(void)
{
	size_t len = 64 * 1024;
	uint8_t *b = make_gpt(len, 512, 2, 4, 128);
	struct gpt_part p;

	set_entry(b, 512, 2, 128, 1, g1, NULL);
	/* Non-ASCII UTF-16 ("é", U+00E9) and a control char become '?'. */
	uint8_t *e = b + 2 * 512;
	const uint16_t name[] = { 'd', 0x00e9, 'p', 0x0007, 'x', 0 };
	for (int i = 0; name[i]; i++) {
		e[56 + 2 * i] = name[i] & 0xff;
		e[57 + 2 * i] = name[i] >> 8;
	}
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), 0);
	CHECK_STR(p.name, "d?p?x");
	/* A name filling all 36 UTF-16 units has no terminator in the entry. */
	for (int i = 0; i < 36; i++) {
		e[56 + 2 * i] = 'A' + i % 26;
		e[57 + 2 * i] = 0;
	}
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), 0);
	CHECK_INT(strlen(p.name), 36);
	CHECK(p.name[35] == 'A' + 35 % 26, "36th name char lost");
	/* Empty name: still a GPT partition (has_name, empty string). */
	memset(e + 56, 0, 72);
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), 0);
	CHECK_STR(p.name, "");
	CHECK_INT(p.has_name, 1);
	free(b);
}

static void gpt_4k_sectors(void)
{
	size_t len = 256 * 1024;
	uint8_t *b = make_gpt(len, 4096, 2, 128, 128);
	struct gpt_part p;

	set_entry(b, 4096, 2, 128, 3, g1, "four");
	CHECK_INT(gpt_parse(b, len, 4096, 3, &p), 0);
	CHECK_STR(p.uuid, g1_text);
	CHECK_STR(p.name, "four");
	/* Read with the wrong sector size, the header is not at LBA 1. */
	CHECK_INT(gpt_parse(b, len, 512, 3, &p), -ENOENT);
	free(b);
}

static void gpt_bad_headers(void)
{
	size_t len = 64 * 1024;
	struct gpt_part p;
	uint8_t *b;

	/* Entry size too small, too large, not what the table holds. */
	static const uint32_t esz[] = { 0, 64, 127, 4097, 0xffffffffu };
	for (size_t i = 0; i < sizeof esz / sizeof esz[0]; i++) {
		b = make_gpt(len, 512, 2, 4, esz[i]);
		set_entry(b, 512, 2, 128, 1, g1, "x");
		int r = gpt_parse(b, len, 512, 1, &p);
		CHECK(r == -ENOENT, "entry size %u: gpt_parse %d", esz[i], r);
		free(b);
	}
	/* Entries LBA past the buffer, or so large the offset would wrap. */
	static const uint64_t lba[] = { 128, 1ull << 40, UINT64_MAX / 512, UINT64_MAX };
	for (size_t i = 0; i < sizeof lba / sizeof lba[0]; i++) {
		b = make_gpt(len, 512, lba[i], 4, 128);
		int r = gpt_parse(b, len, 512, 1, &p);
		CHECK(r == -ENOENT, "entries at LBA %llu: gpt_parse %d", (unsigned long long)lba[i], r);
		free(b);
	}
	/* Table runs past the buffer: entry 4 of 128-byte entries at the
	 * buffer's last sector. */
	b = make_gpt(len, 512, len / 512 - 1, 8, 128);
	set_entry(b, 512, len / 512 - 1, 128, 4, g1, "ok");
	CHECK_INT(gpt_parse(b, len, 512, 4, &p), 0);	/* fits exactly */
	CHECK_INT(gpt_parse(b, len, 512, 5, &p), -ENOENT);
	free(b);
	/* A huge partition count with a fitting entry size. */
	b = make_gpt(len, 512, 2, 0xffffffffu, 128);
	CHECK_INT(gpt_parse(b, len, 512, 0xffffffffu, &p), -ENOENT);
	free(b);
	/* Buffers too small for a header, bad sector sizes. */
	b = make_gpt(len, 512, 2, 4, 128);
	set_entry(b, 512, 2, 128, 1, g1, "x");
	CHECK_INT(gpt_parse(b, 1023, 512, 1, &p), -ENOENT);
	CHECK_INT(gpt_parse(b, len, 256, 1, &p), -ENOENT);
	CHECK_INT(gpt_parse(b, 1024 + 127, 512, 1, &p), -ENOENT);       /* entry 1 cut */
	CHECK_INT(gpt_parse(b, 1024 + 128, 512, 1, &p), 0);               /* entry 1 whole */
	free(b);
}

static uint8_t *make_mbr(size_t len, uint32_t sig)
{
	uint8_t *b = calloc(1, len);

	put32(b + 440, sig);
	b[510] = 0x55;
	b[511] = 0xaa;
	return b;
}

static void mbr_entries(void)
{
	size_t len = 4096;
	uint8_t *b = make_mbr(len, 0x1a2b3c4du);
	struct gpt_part p;

	b[446 + 16 * 0 + 4] = 0x83;	/* partition 1: Linux */
	b[446 + 16 * 3 + 4] = 0x82;	/* partition 4: swap */
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), 0);
	CHECK_STR(p.uuid, "1a2b3c4d-01");
	CHECK_INT(p.has_name, 0);
	CHECK_STR(p.name, "");
	CHECK_INT(gpt_parse(b, len, 512, 4, &p), 0);
	CHECK_STR(p.uuid, "1a2b3c4d-04");
	CHECK_INT(gpt_parse(b, len, 512, 2, &p), -ENOENT);	/* type 0: unused */
	CHECK_INT(gpt_parse(b, len, 512, 5, &p), -ENOENT);	/* logical: not walked */
	CHECK_INT(gpt_parse(b, len, 512, 0, &p), -ENOENT);
	b[511] = 0xab;
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), -ENOENT);	/* no boot signature */
	free(b);
	/* All zero: nothing. */
	b = calloc(1, len);
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), -ENOENT);
	free(b);
}

/* A protective MBR in front of a GPT: the GPT is what counts. */
static void gpt_wins_over_protective_mbr(void)
{
	size_t len = 64 * 1024;
	uint8_t *b = make_gpt(len, 512, 2, 128, 128);
	struct gpt_part p;

	put32(b + 440, 0xdeadbeef);
	b[446 + 4] = 0xee;
	b[510] = 0x55;
	b[511] = 0xaa;
	set_entry(b, 512, 2, 128, 1, g1, "real");
	CHECK_INT(gpt_parse(b, len, 512, 1, &p), 0);
	CHECK_STR(p.uuid, g1_text);
	CHECK_STR(p.name, "real");
	free(b);
}

static int show(const char *img, const char *partno)
{
	struct gpt_part p;
	int r = gpt_lookup(img, (unsigned)atoi(partno), &p);

	if (r < 0) {
		printf("error %d\n", r);
		return 1;
	}
	printf("%s %s\n", p.uuid, p.has_name ? p.name : "(none)");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--show"))
		return show(argv[2], argv[3]);
	RUN(gpt_basic);
	RUN(gpt_names);
	RUN(gpt_4k_sectors);
	RUN(gpt_bad_headers);
	RUN(mbr_entries);
	RUN(gpt_wins_over_protective_mbr);
	return check_done();
}
