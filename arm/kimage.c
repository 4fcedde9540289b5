/* Kernel images as arm and status see them. Everything here reads a file
 * the administrator named, so every offset is checked against its size. */
#define _GNU_SOURCE
#include "kimage.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/io.h"
#include "root.h"

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) { return le16(p) | (uint32_t)le16(p + 2) << 16; }

/* The first word of TEXT (up to a space or NUL), as the release. */
static void take_release(struct kimage_info *ki, const char *text, size_t n)
{
	size_t i = 0;

	while (i < n && i < sizeof ki->release - 1 && text[i] > ' ' && text[i] < 127)
		i++;
	memcpy(ki->release, text, i);
	ki->release[i] = 0;
}

/* x86 boot protocol (Documentation/arch/x86/boot.rst): "HdrS" at 0x202,
 * kernel_version (a pointer to the version string, less 0x200) at 0x20e.
 * The setup header is read whole (through init_size, 0x260): a file too
 * short for it is no bzImage. */
static void x86_header(int fd, uint64_t size, struct kimage_info *ki)
{
	unsigned char h[0x270];
	char v[128];

	if (size < sizeof h || read_full_at(fd, h, sizeof h, 0) != (ssize_t)sizeof h ||
	    memcmp(h + 0x202, "HdrS", 4))
		return;
	uint16_t kv = le16(h + 0x20e);
	if (kv && (uint64_t)kv + 0x200 < size) {
		ssize_t n = read_full_at(fd, v, sizeof v, kv + 0x200u);
		if (n > 0)
			take_release(ki, v, (size_t)n);
	}
}

/* An uncompressed image (arm64's Image) holds linux_banner, "Linux
 * version RELEASE (...". Scanned in blocks that overlap by the length
 * of what is sought. */
static void banner(int fd, uint64_t size, struct kimage_info *ki)
{
	static const char key[] = "Linux version ";
	enum { BLK = 65536, KEY = sizeof key - 1, TAIL = KEY + 64 };
	static char b[BLK + TAIL];

	for (uint64_t off = 0; off < size; off += BLK) {
		ssize_t n = read_full_at(fd, b, sizeof b, off);
		if (n <= 0)
			return;
		for (char *p = b; (p = memmem(p, (size_t)n - (size_t)(p - b), key, KEY)); p++) {
			size_t left = (size_t)n - (size_t)(p - b) - KEY;
			if (left && p[KEY] >= '0' && p[KEY] <= '9') {
				take_release(ki, p + KEY, left);
				return;
			}
		}
	}
}

/* PE/COFF (both architectures' EFI stub): the certificate table is data
 * directory 4 of the optional header; an Authenticode signature lives
 * there. Offsets are file offsets, checked against the size. */
static int pe_signature(int fd, uint64_t size)
{
	unsigned char mz[0x40], pe[24 + 112 + 8 * 16];

	if (size < sizeof mz || read_full_at(fd, mz, sizeof mz, 0) != (ssize_t)sizeof mz ||
	    memcmp(mz, "MZ", 2))
		return KIMAGE_NOT_PE;
	uint32_t at = le32(mz + 0x3c);
	if (at >= size || size - at < sizeof pe ||
	    read_full_at(fd, pe, sizeof pe, at) != (ssize_t)sizeof pe || memcmp(pe, "PE\0\0", 4))
		return KIMAGE_NOT_PE;
	const unsigned char *opt = pe + 24;
	uint16_t optsize = le16(pe + 20), magic = le16(opt);
	unsigned dirs_at = magic == 0x20b ? 112 : magic == 0x10b ? 96 : 0;
	if (!dirs_at || optsize < dirs_at + 5 * 8 || le32(opt + dirs_at - 4) < 5)
		return KIMAGE_UNSIGNED;
	uint32_t cert = le32(opt + dirs_at + 4 * 8), len = le32(opt + dirs_at + 4 * 8 + 4);
	return len >= 8 && cert < size && len <= size - cert ? KIMAGE_SIGNED : KIMAGE_UNSIGNED;
}

int kimage_inspect(int fd, struct kimage_info *ki)
{
	struct stat st;

	memset(ki, 0, sizeof *ki);
	if (fstat(fd, &st) < 0)
		return -errno;
	uint64_t size = (uint64_t)st.st_size;
	x86_header(fd, size, ki);
	if (!ki->release[0])
		banner(fd, size, ki);
	ki->sig = pe_signature(fd, size);
	size_t rl = strlen(ki->release), sl = strlen(KIMAGE_DEDICATED_SUFFIX);
	ki->dedicated = rl > sl && !strcmp(ki->release + rl - sl, KIMAGE_DEDICATED_SUFFIX);
	return 0;
}

/* securityfs shows every mode and brackets the one in force:
 * "none [integrity] confidentiality". */
int kimage_lockdown(const char *root)
{
	char path[512], v[128];

	if (read_text_file(root_path(root, "/sys/kernel/security/lockdown", path, sizeof path), v,
			   sizeof v) < 0)
		return LOCKDOWN_UNKNOWN;
	if (strstr(v, "[integrity]"))
		return LOCKDOWN_INTEGRITY;
	if (strstr(v, "[confidentiality]"))
		return LOCKDOWN_CONFIDENTIALITY;
	if (strstr(v, "[none]"))
		return LOCKDOWN_NONE;
	return LOCKDOWN_UNKNOWN;
}

const char *kimage_lockdown_name(int mode)
{
	switch (mode) {
	case LOCKDOWN_NONE: return "none";
	case LOCKDOWN_INTEGRITY: return "integrity";
	case LOCKDOWN_CONFIDENTIALITY: return "confidentiality";
	default: return "unknown";
	}
}
