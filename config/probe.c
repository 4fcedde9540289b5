#include "probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/io.h"
#include "../lib/util.h"

/* Signatures at fixed offsets, as blkid knows them. Any one of these means
 * the device holds somebody's data and is never ours to write. */
static const struct sig {
	uint32_t off;
	uint8_t len;
	const char *magic;
	const char *what;
} sigs[] = {
	{ 1080, 2, "\x53\xef", "an ext2/3/4 filesystem" },
	{ 0, 4, "XFSB", "an XFS filesystem" },
	{ 65600, 8, "_BHRfS_M", "a btrfs filesystem" },
	{ 4086, 10, "SWAPSPACE2", "a swap area" },
	{ 4086, 10, "SWAP-SPACE", "a swap area" },
	{ 8182, 10, "SWAPSPACE2", "a swap area (8K pages)" },
	{ 16374, 10, "SWAPSPACE2", "a swap area (16K pages)" },
	{ 65526, 10, "SWAPSPACE2", "a swap area (64K pages)" },
	{ 0, 6, "LUKS\xba\xbe", "a LUKS encrypted volume" },
	{ 0, 6, "SKUL\xba\xbe", "a LUKS2 secondary header" },
	{ 512, 8, "EFI PART", "a GPT partition table" },
	{ 4096, 8, "EFI PART", "a GPT partition table (4K sectors)" },
	{ 536, 8, "LVM2 001", "an LVM physical volume" },
	{ 4096, 4, "\xfc\x4e\x2b\xa9", "an MD RAID member (1.2)" },
	{ 0, 4, "\xfc\x4e\x2b\xa9", "an MD RAID member (1.1)" },
	{ 1024, 4, "\x10\x20\xf5\xf2", "an F2FS filesystem" },
	{ 0, 4, "hsqs", "a squashfs image" },
	{ 3, 8, "NTFS    ", "an NTFS filesystem" },
	{ 54, 5, "FAT12", "a FAT filesystem" },
	{ 54, 5, "FAT16", "a FAT filesystem" },
	{ 82, 5, "FAT32", "a FAT filesystem" },
	{ 32769, 5, "CD001", "an ISO 9660 filesystem" },
	{ 510, 2, "\x55\xaa", "an MBR partition table or boot sector" },
};

/* Signatures kept at the end of a device, where they are placed relative
 * to its size (offsets as the kernel's md_p.h, SNIA DDF and libblkid
 * give them). NO_SIG: the device is too small to hold one. */
#define NO_SIG UINT64_MAX

/* MD 0.90: the last 64 KiB-aligned 64 KiB of the device. */
static uint64_t md090_at(uint64_t size)
{
	return size < (128u << 10) ? NO_SIG : (size & ~0xffffull) - 0x10000;
}

/* MD 1.0: 8 KiB from the end, rounded down to 4 KiB. */
static uint64_t md10_at(uint64_t size)
{
	return size < (12u << 10) ? NO_SIG : (((size >> 9) - 16) & ~7ull) << 9;
}

static uint64_t from_end(uint64_t size, uint64_t back)
{
	return size < back ? NO_SIG : (size - back) & ~511ull;
}

static uint64_t last_sector(uint64_t size) { return from_end(size, 512); }
static uint64_t second_last_sector(uint64_t size) { return from_end(size, 1024); }
static uint64_t last_4k_sector(uint64_t size) { return from_end(size, 4096); }
static uint64_t ddf_second_anchor(uint64_t size) { return from_end(size, 257 * 512); }

/* The MD magics are followed by major_version (0 for 0.90, 1 for 1.x),
 * so stray magic bytes alone do not count. 0.90 is written in the host's
 * byte order; 1.x always little-endian. */
static const struct tail_sig {
	uint64_t (*at)(uint64_t size);
	uint8_t len;
	const char *magic;
	const char *what;
} tail_sigs[] = {
	{ md090_at, 8, "\xfc\x4e\x2b\xa9\0\0\0\0", "an MD RAID member (0.90, superblock at the end)" },
	{ md090_at, 8, "\xa9\x2b\x4e\xfc\0\0\0\0", "an MD RAID member (0.90 big-endian, at the end)" },
	{ md10_at, 8, "\xfc\x4e\x2b\xa9\x01\0\0\0", "an MD RAID member (1.0, superblock at the end)" },
	{ last_sector, 4, "\xde\x11\xde\x11", "a DDF hardware RAID member (anchor in the last sector)" },
	{ ddf_second_anchor, 4, "\xde\x11\xde\x11", "a DDF hardware RAID member" },
	{ second_last_sector, 24, "Intel Raid ISM Cfg Sig. ", "an Intel (IMSM) RAID member" },
	{ last_sector, 8, "EFI PART", "a GPT partition table (backup header)" },
	{ last_4k_sector, 8, "EFI PART", "a GPT partition table (backup header, 4K sectors)" },
};

static const char *head_foreign(const uint8_t *head, size_t head_len)
{
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++) {
		const struct sig *s = &sigs[i];
		if (s->off + s->len <= head_len && !memcmp(head + s->off, s->magic, s->len))
			return s->what;
	}
	return NULL;
}

/* tail holds the device's last tail_len bytes. */
static const char *tail_foreign(const uint8_t *tail, size_t tail_len, uint64_t size)
{
	if (!tail || tail_len > size)
		return NULL;
	uint64_t start = size - tail_len;
	for (size_t i = 0; i < ARRAY_SIZE(tail_sigs); i++) {
		const struct tail_sig *s = &tail_sigs[i];
		uint64_t at = s->at(size);
		if (at != NO_SIG && at >= start && at + s->len <= size &&
		    !memcmp(tail + (at - start), s->magic, s->len))
			return s->what;
	}
	return NULL;
}

void probe_buffer(struct probe *p, const uint8_t *head, size_t head_len,
		  const uint8_t *tail, size_t tail_len, uint64_t size)
{
	memset(p, 0, sizeof *p);
	p->size = size;
	int r = super_read(head, head_len, size, &p->sb);
	p->claimed = r == 0;
	p->claim_damaged = r == -EBADMSG || r == -EPROTONOSUPPORT;

	p->foreign = head_foreign(head, head_len);
	if (!p->foreign)
		p->foreign = tail_foreign(tail, tail_len, size);

	/* Bytes we cannot name still belong to someone. Ours are the
	 * superblock's 448 bytes; format writes zeros after them (through
	 * data_offset), so a filesystem we have no signature for, with its
	 * superblock at 1 KiB (nilfs2, minix, HFS+), still shows. */
	size_t from = (p->claimed || p->claim_damaged) ? sizeof(struct kdi_super) : 0;
	for (size_t i = from; i < head_len; i++)
		if (head[i]) {
			p->nonzero = 1;
			p->nonzero_at = i;
			break;
		}
}

int probe_fd(struct probe *p, int fd, uint64_t size)
{
	size_t hl = size < PROBE_HEAD ? size : PROBE_HEAD;
	size_t tl = size < PROBE_TAIL ? size : PROBE_TAIL;
	uint8_t *head = calloc(1, PROBE_HEAD);
	uint8_t *tail = calloc(1, PROBE_TAIL);
	int r = head && tail ? 0 : -ENOMEM;
	ssize_t n = 0, m = 0;

	if (!r)
		n = read_full_at(fd, head, hl, 0);
	if (n < 0)
		r = (int)n;
	if (!r && tl)
		m = read_full_at(fd, tail, tl, size - tl);
	if (m < 0)
		r = (int)m;
	/* A short tail read (the device shrank under us) is not where the
	 * signatures are: leave it out rather than misplace it. */
	if (!r)
		probe_buffer(p, head, n, (size_t)m == tl ? tail : NULL, m, size);
	free(head);
	free(tail);
	return r;
}

const char *probe_describe(const struct probe *p)
{
	if (p->foreign)
		return p->foreign;
	if (p->claim_damaged)
		return "a damaged or newer kdumpinit superblock";
	if (p->claimed)
		return "a kdumpinit claim";
	if (p->nonzero)
		return "unrecognised data (not zeroed, no known signature)";
	return "no kdumpinit claim (blank)";
}
