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

void probe_buffer(struct probe *p, const uint8_t *head, size_t head_len,
		  const uint8_t *tail, size_t tail_len, uint64_t size)
{
	memset(p, 0, sizeof *p);
	p->size = size;
	int r = super_decode(head, head_len, &p->sb);
	p->claimed = r == 0;
	p->claim_damaged = r == -EBADMSG || r == -EPROTONOSUPPORT;

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++) {
		const struct sig *s = &sigs[i];
		if (!s->what || s->off + s->len > head_len)
			continue;
		if (!memcmp(head + s->off, s->magic, s->len)) {
			p->foreign = s->what;
			break;
		}
	}
	/* A GPT's backup header sits in the last sector. */
	if (!p->foreign && tail && tail_len >= 512 &&
	    !memcmp(tail + tail_len - 512, "EFI PART", 8))
		p->foreign = "a GPT partition table (backup header)";

	/* Bytes we cannot name still belong to someone. Ours are the
	 * superblock area; the rest of the head must be zero. */
	size_t from = (p->claimed || p->claim_damaged) ? KDI_SB_AREA : 0;
	for (size_t i = from; i < head_len; i++)
		if (head[i]) {
			p->nonzero = 1;
			break;
		}
}

int probe_fd(struct probe *p, int fd, uint64_t size)
{
	size_t hl = size < PROBE_HEAD ? size : PROBE_HEAD;
	uint8_t *head = calloc(1, PROBE_HEAD);
	uint8_t tail[4096];
	size_t tl = 0;
	int r = 0;

	if (!head)
		return -ENOMEM;
	ssize_t n = read_full_at(fd, head, hl, 0);
	if (n < 0)
		r = (int)n;
	if (!r && size >= 2 * sizeof tail) {
		ssize_t m = read_full_at(fd, tail, sizeof tail, size - sizeof tail);
		if (m < 0)
			r = (int)m;
		else
			tl = m;
	}
	if (!r)
		probe_buffer(p, head, n, tl ? tail : NULL, tl, size);
	free(head);
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
