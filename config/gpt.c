#include "gpt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/util.h"

#define GPT_READ (1u << 20)	/* header + the usual 128 entries fit easily */

static void guid_text(const uint8_t *g, char *out)
{
	/* The first three fields are stored little-endian. */
	snprintf(out, 40,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9],
		 g[10], g[11], g[12], g[13], g[14], g[15]);
}

int gpt_parse(const uint8_t *buf, size_t len, unsigned sector, unsigned partno,
	      struct gpt_part *out)
{
	memset(out, 0, sizeof *out);
	if (partno == 0 || sector < 512 || len < 2 * (size_t)sector)
		return -ENOENT;
	const uint8_t *h = buf + sector;
	if (!memcmp(h, "EFI PART", 8)) {
		uint64_t lba = load_le64(h + 72);
		uint32_t n = load_le32(h + 80), esz = load_le32(h + 84);
		if (esz < 128 || esz > 4096 || partno > n || lba > len / sector)
			return -ENOENT;
		uint64_t off = lba * sector + (uint64_t)(partno - 1) * esz;
		if (off + esz > len)
			return -ENOENT;
		const uint8_t *e = buf + off;
		static const uint8_t zero[16];
		if (!memcmp(e, zero, 16))
			return -ENOENT;	/* unused entry */
		guid_text(e + 16, out->uuid);
		size_t k = 0;
		for (size_t i = 0; i < 36 && k < sizeof out->name - 1; i++) {
			uint16_t c = e[56 + 2 * i] | e[57 + 2 * i] << 8;
			if (!c)
				break;
			out->name[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		}
		out->has_name = 1;
		return 0;
	}
	/* MBR: primary partitions 1-4 only (extended chains are not walked). */
	if (buf[510] == 0x55 && buf[511] == 0xaa && partno <= 4) {
		const uint8_t *e = buf + 446 + 16 * (partno - 1);
		if (e[4] == 0)
			return -ENOENT;
		snprintf(out->uuid, sizeof out->uuid, "%08x-%02x", load_le32(buf + 440), partno);
		return 0;
	}
	return -ENOENT;
}

int gpt_lookup(const char *disk, unsigned partno, struct gpt_part *out)
{
	int fd = open(disk, O_RDONLY | O_CLOEXEC);
	int sector = 512;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKSSZGET, &sector) < 0 || sector < 512 || sector > 65536)
		sector = 512;
	uint8_t *buf = malloc(GPT_READ);
	ssize_t n = buf ? read_full_at(fd, buf, GPT_READ, 0) : -ENOMEM;
	close(fd);
	int r = n < 0 ? (int)n : gpt_parse(buf, n, sector, partno, out);
	free(buf);
	return r;
}
