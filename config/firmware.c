#include "firmware.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/util.h"

#define CRED_PREFIX "io.systemd.credential:"
#define CRED_BIN_PREFIX "io.systemd.credential.binary:"
#define OUR_PREFIX "kdumpinit."
#define CONF_NAME "kdumpinit.conf"
#define PUBKEY_NAME "kdumpinit.pubkey"

#define FWCFG_DIR "/sys/firmware/qemu_fw_cfg/by_name/opt/io.systemd.credentials"
#define DMI_DIR "/sys/firmware/dmi/entries"
#define DT_CONF "/proc/device-tree/chosen/kdumpinit,conf"
/* kdumpinit's vendor GUID for its EFI variable (made for this project). */
#define EFI_VAR_NAME "KdumpinitConf-4a1e5f3c-6b7d-4e2a-9c1f-0b8d7e6a5c4d"
#define EFI_CONF "/sys/firmware/efi/efivars/" EFI_VAR_NAME

/* QEMU packs every -smbios type=11 into 11-0; real firmware may have a few. */
#define SMB_MAX_ENTRIES 64
/* Base64 makes 4 bytes of 3: room for FW_TOTAL_MAX of binary credentials. */
#define SMB_RAW_MAX (2u * 1024 * 1024)
#define FWCFG_MAX_FILES 64

/* A name as a warning may show it: at most 40 bytes, non-printables '?'. */
static const char *shown(const char *s, size_t n, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < n && i < 40 && i + 1 < size; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

int fw_cred_name_ok(const char *name, size_t n)
{
	if (n < 1 || n > FW_NAME_MAX)
		return 0;
	if ((n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
		return 0;	/* fw_cfg and systemd make files of them */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = name[i];
		if (ch < 0x20 || ch > 0x7e || ch == ':' || ch == '/')
			return 0;
	}
	return 1;
}

/* UTF-8 per RFC 3629 (no overlongs, surrogates or past U+10FFFF), and no
 * control character (C0, DEL, C1) but tab, newline and carriage return. */
int fw_cred_text_ok(const uint8_t *v, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t b = v[i];
		if (b < 0x80) {
			if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f)
				return 0;
			i++;
			continue;
		}
		size_t len;
		uint8_t lo = 0x80, hi = 0xbf;
		if (b >= 0xc2 && b <= 0xdf)
			len = 2;
		else if (b >= 0xe0 && b <= 0xef)
			len = 3;
		else if (b >= 0xf0 && b <= 0xf4)
			len = 4;
		else
			return 0;
		if (b == 0xe0)
			lo = 0xa0;
		else if (b == 0xed)
			hi = 0x9f;
		else if (b == 0xf0)
			lo = 0x90;
		else if (b == 0xf4)
			hi = 0x8f;
		if (n - i < len || v[i + 1] < lo || v[i + 1] > hi)
			return 0;
		for (size_t k = 2; k < len; k++)
			if (v[i + k] < 0x80 || v[i + k] > 0xbf)
				return 0;
		if (b == 0xc2 && v[i + 1] <= 0x9f)
			return 0;	/* U+0080..U+009F: C1 controls */
		i += len;
	}
	return 1;
}

static int b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

ssize_t fw_base64_decode(const char *in, size_t n, uint8_t *out, size_t size)
{
	size_t o = 0;

	if (n % 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 4) {
		int last = i + 4 == n;
		int pad = (in[i + 3] == '=') + (in[i + 2] == '=');
		if (pad && !last)
			return -EINVAL;
		if (in[i + 2] == '=' && in[i + 3] != '=')
			return -EINVAL;
		int a = b64_value(in[i]), b = b64_value(in[i + 1]);
		int c = pad == 2 ? 0 : b64_value(in[i + 2]);
		int d = pad ? 0 : b64_value(in[i + 3]);
		if (a < 0 || b < 0 || c < 0 || d < 0)
			return -EINVAL;
		/* Bits the padding leaves unused must be zero: one text per
		 * value, so "QQ==" and "QR==" are not both "A". */
		if ((pad == 2 && (b & 0x0f)) || (pad == 1 && (c & 0x03)))
			return -EINVAL;
		uint32_t w = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		size_t k = 3 - (size_t)pad;
		if (size - o < k)
			return -E2BIG;
		out[o++] = w >> 16;
		if (k > 1)
			out[o++] = w >> 8;
		if (k > 2)
			out[o++] = w;
	}
	return (ssize_t)o;
}

int smbios11_parse(const uint8_t *raw, size_t len,
		   void (*fn)(void *ctx, const char *s, size_t n), void *ctx, unsigned *problems)
{
	*problems = 0;
	if (len < 5 || raw[0] != 11 || raw[1] < 5 || raw[1] > len)
		return -EBADMSG;
	unsigned count = raw[4];
	size_t i = raw[1];
	int nstr = 0;

	for (;;) {
		const uint8_t *nul = memchr(raw + i, 0, len - i);
		if (!nul) {
			*problems |= FW_SMB_TRUNCATED;	/* a string runs off the end */
			break;
		}
		size_t n = (size_t)(nul - (raw + i));
		if (n == 0) {
			/* The final NUL; with no strings at all the area is two. */
			if (nstr == 0 && (i + 1 >= len || raw[i + 1] != 0))
				*problems |= FW_SMB_TRUNCATED;
			break;
		}
		fn(ctx, (const char *)raw + i, n);
		nstr++;
		i += n + 1;
		if (i >= len) {
			*problems |= FW_SMB_TRUNCATED;	/* no final NUL */
			break;
		}
	}
	if ((unsigned)nstr != count)
		*problems |= FW_SMB_COUNT;
	return nstr;
}

/* 1 if a credential of this name holds, or may hold, a key to seal
 * with: kdumpinit.pubkey, or a whole config (kdumpinit.conf). */
static int may_seal(const char *name, size_t n)
{
	return (n == strlen(CONF_NAME) && !memcmp(name, CONF_NAME, n)) ||
	       (n == strlen(PUBKEY_NAME) && !memcmp(name, PUBKEY_NAME, n));
}

/* A credential that could not be read whole was skipped with a warning:
 * one that may hold the key also counts as a key not read
 * (config_seal_unreadable), so that a cut one never leaves the dump in
 * the clear. */
static void skipped(struct fw_pass *p, const char *name, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void skipped(struct fw_pass *p, const char *name, size_t n, const char *fmt, ...)
{
	char why[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (may_seal(name, n))
		config_seal_unreadable(p->c, p->src, &p->seen, why);
	else
		config_warn(p->c, "%s; skipped", why);
}

void fw_pass_init(struct fw_pass *p, struct config *c, enum config_src src, const char *what,
		  size_t *total)
{
	memset(p, 0, sizeof *p);
	p->c = c;
	p->src = src;
	p->what = what;
	p->total = total;
}

void fw_credential(struct fw_pass *p, const char *name, size_t nlen, const uint8_t *v, size_t vlen)
{
	struct config *c = p->c;
	char nm[FW_NAME_MAX + 1], sh[48], origin[FW_NAME_MAX + 32];

	if (!fw_cred_name_ok(name, nlen)) {
		config_warn(c, "%s: credential name \"%s\" (%zu bytes) is not 1..255 printable "
			    "characters without ':' or '/'; skipped", p->what,
			    shown(name, nlen, sh, sizeof sh), nlen);
		return;
	}
	memcpy(nm, name, nlen);
	nm[nlen] = 0;
	if (strncmp(nm, OUR_PREFIX, strlen(OUR_PREFIX)))
		return;		/* another program's credential */
	snprintf(origin, sizeof origin, "%s %s", p->what, nm);
	if (vlen > FW_CRED_MAX) {
		skipped(p, nm, nlen, "%s: %zu bytes, over the %u KiB a credential may hold", origin,
			vlen, FW_CRED_MAX / 1024);
		return;
	}
	if (*p->total + vlen > FW_TOTAL_MAX) {
		skipped(p, nm, nlen, "%s: over %u KiB of credentials in all", origin,
			FW_TOTAL_MAX / 1024);
		return;
	}
	*p->total += vlen;
	if (!fw_cred_text_ok(v, vlen)) {
		skipped(p, nm, nlen, "%s: not text (UTF-8 without control characters)", origin);
		return;
	}
	if (!strcmp(nm, CONF_NAME)) {
		config_load_text(c, (const char *)v, vlen, origin, p->src, &p->seen);
		return;
	}
	/* One setting: "echo 3 > file" is how a value file is made. */
	char val[1024];
	if (vlen && v[vlen - 1] == '\n')
		vlen--;
	if (vlen && v[vlen - 1] == '\r')
		vlen--;
	if (vlen >= sizeof val) {
		skipped(p, nm, nlen, "%s: a %zu-byte value is too long for one setting", origin,
			vlen);
		return;
	}
	memcpy(val, v, vlen);
	val[vlen] = 0;
	config_set_src(c, nm, val, origin, p->src, &p->seen);
}

void fw_smbios_string(struct fw_pass *p, const char *s, size_t n)
{
	static uint8_t bin[FW_CRED_MAX];
	size_t pl;
	int binary;

	if (n >= (pl = strlen(CRED_BIN_PREFIX)) && !memcmp(s, CRED_BIN_PREFIX, pl))
		binary = 1;
	else if (n >= (pl = strlen(CRED_PREFIX)) && !memcmp(s, CRED_PREFIX, pl))
		binary = 0;
	else
		return;		/* an OEM string of the vendor's */
	s += pl;
	n -= pl;
	const char *eq = memchr(s, '=', n);
	char sh[48];
	if (!eq) {
		config_warn(p->c, "%s: credential \"%s\" has no '='; skipped", p->what,
			    shown(s, n, sh, sizeof sh));
		return;
	}
	size_t nlen = (size_t)(eq - s);
	const char *v = eq + 1;
	size_t vlen = n - nlen - 1;
	/* Only our binary credentials are decoded: fw_credential warns
	 * about a bad name and skips another program's without a look. */
	int ours = nlen >= strlen(OUR_PREFIX) && !memcmp(s, OUR_PREFIX, strlen(OUR_PREFIX));
	if (!binary || !ours || !fw_cred_name_ok(s, nlen)) {
		fw_credential(p, s, nlen, (const uint8_t *)v, vlen);
		return;
	}
	ssize_t d = fw_base64_decode(v, vlen, bin, sizeof bin);
	if (d == -E2BIG) {
		skipped(p, s, nlen, "%s %s: over the %u KiB a credential may hold", p->what,
			shown(s, nlen, sh, sizeof sh), FW_CRED_MAX / 1024);
		return;
	}
	if (d < 0) {
		skipped(p, s, nlen, "%s %s: not valid base64", p->what,
			shown(s, nlen, sh, sizeof sh));
		return;
	}
	fw_credential(p, s, nlen, bin, (size_t)d);
}

static void smbios_cb(void *ctx, const char *s, size_t n)
{
	fw_smbios_string(ctx, s, n);
}

/* Up to size bytes of a file; -errno. */
static ssize_t read_file(const char *path, void *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read_full_at(fd, buf, size, 0);
	close(fd);
	return n;
}

/* 1 if the string an entry cut short ends in (smbios11_parse's
 * FW_SMB_TRUNCATED: no NUL before the end) is, as far as it goes, one of
 * our credentials that may hold the key. */
static int cut_may_seal(const uint8_t *raw, size_t len)
{
	static const char *const pre[] = { CRED_PREFIX, CRED_BIN_PREFIX };
	size_t i = raw[1];
	const uint8_t *nul;

	while (i < len && (nul = memchr(raw + i, 0, len - i)))
		i = (size_t)(nul - raw) + 1;
	const char *s = (const char *)raw + i;
	size_t n = len - i;
	for (int k = 0; k < 2; k++) {
		size_t pl = strlen(pre[k]);
		if (n <= pl || memcmp(s, pre[k], pl))
			continue;
		/* The name, up to '=' or the cut: a prefix of one of ours
		 * counts, a cut may fall inside the name. */
		const char *eq = memchr(s + pl, '=', n - pl);
		size_t nl = eq ? (size_t)(eq - s - pl) : n - pl;
		if ((nl <= strlen(CONF_NAME) && !memcmp(s + pl, CONF_NAME, nl)) ||
		    (nl <= strlen(PUBKEY_NAME) && !memcmp(s + pl, PUBKEY_NAME, nl)))
			return 1;
	}
	return 0;
}

static void load_smbios(struct config *c, const char *root, size_t *total)
{
	struct fw_pass p;
	char path[4096];
	uint8_t *raw = NULL;

	fw_pass_init(&p, c, CFG_SRC_SMBIOS, "smbios", total);
	for (int i = 0; i < SMB_MAX_ENTRIES; i++) {
		if ((size_t)snprintf(path, sizeof path, "%s" DMI_DIR "/11-%d/raw", root, i) >=
		    sizeof path)
			break;
		if (access(path, F_OK) < 0)
			break;	/* systemd's rule too: 11-0, 11-1, ... until one is missing */
		/* An entry not read whole may have held the key. */
		char why[160];
		if (!raw && !(raw = malloc(SMB_RAW_MAX))) {
			config_seal_unreadable(c, CFG_SRC_SMBIOS, &p.seen,
					       "smbios: no memory for the OEM strings");
			return;
		}
		ssize_t n = read_file(path, raw, SMB_RAW_MAX);
		if (n < 0) {
			snprintf(why, sizeof why, "smbios: entry 11-%d: %s", i, strerror((int)-n));
			config_seal_unreadable(c, CFG_SRC_SMBIOS, &p.seen, why);
			continue;
		}
		unsigned problems;
		int r = smbios11_parse(raw, (size_t)n, smbios_cb, &p, &problems);
		if (r < 0) {
			snprintf(why, sizeof why, "smbios: entry 11-%d: not a Type 11 structure", i);
			config_seal_unreadable(c, CFG_SRC_SMBIOS, &p.seen, why);
		} else if ((problems & FW_SMB_TRUNCATED) && cut_may_seal(raw, (size_t)n)) {
			snprintf(why, sizeof why, "smbios: entry 11-%d is cut short in our "
				 "credential", i);
			config_seal_unreadable(c, CFG_SRC_SMBIOS, &p.seen, why);
		} else if (problems & FW_SMB_TRUNCATED)
			config_warn(c, "smbios: entry 11-%d is cut short; its last string skipped", i);
		else if (problems & FW_SMB_COUNT)
			config_warn(c, "smbios: entry 11-%d says %u strings and holds %d", i,
				    (unsigned)raw[4], r);
	}
	free(raw);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void load_fwcfg_one(struct fw_pass *p, const char *dir, const char *name)
{
	static uint8_t buf[FW_CRED_MAX];
	char path[4096], text[32];
	size_t nlen = strlen(name);
	uint64_t size;

	if (!fw_cred_name_ok(name, nlen) || strncmp(name, OUR_PREFIX, strlen(OUR_PREFIX))) {
		fw_credential(p, name, nlen, NULL, 0);	/* warns, or skips another's */
		return;
	}
	/* raw's st_size is 0: size says how much there is. */
	if ((size_t)snprintf(path, sizeof path, "%s/%s/size", dir, name) >= sizeof path)
		return;
	ssize_t r = read_text_file(path, text, sizeof text);
	if (r < 0) {
		skipped(p, name, nlen, "fw_cfg %s: no size: %s", name, strerror((int)-r));
		return;
	}
	if (parse_u64(text, 10, &size) < 0) {
		skipped(p, name, nlen, "fw_cfg %s: size \"%.20s\" is not a number", name, text);
		return;
	}
	if (size > FW_CRED_MAX) {
		skipped(p, name, nlen, "fw_cfg %s: %llu bytes, over the %u KiB a credential may hold",
			name, (unsigned long long)size, FW_CRED_MAX / 1024);
		return;
	}
	if ((size_t)snprintf(path, sizeof path, "%s/%s/raw", dir, name) >= sizeof path)
		return;
	r = read_file(path, buf, (size_t)size);
	if (r < 0) {
		skipped(p, name, nlen, "fw_cfg %s: %s", name, strerror((int)-r));
		return;
	}
	if ((uint64_t)r < size) {
		skipped(p, name, nlen, "fw_cfg %s: raw holds %zd of its %llu bytes", name, r,
			(unsigned long long)size);
		return;
	}
	fw_credential(p, name, nlen, buf, (size_t)size);
}

static void load_fwcfg(struct config *c, const char *root, size_t *total)
{
	static char names[FWCFG_MAX_FILES][FW_NAME_MAX + 2];
	char dir[4096];
	int n = 0;

	struct fw_pass p;

	if ((size_t)snprintf(dir, sizeof dir, "%s" FWCFG_DIR, root) >= sizeof dir)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	fw_pass_init(&p, c, CFG_SRC_FWCFG, "fw_cfg", total);
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == FWCFG_MAX_FILES) {
			/* Which are left is readdir's choice: the key may
			 * be among them. */
			char why[96];
			snprintf(why, sizeof why, "fw_cfg: more than %d credentials, the rest not "
				 "read", FWCFG_MAX_FILES);
			config_seal_unreadable(c, CFG_SRC_FWCFG, &p.seen, why);
			break;
		}
		/* A longer name is invalid: kept cut, so that it warns. */
		snprintf(names[n++], sizeof names[0], "%s", e->d_name);
	}
	closedir(d);
	/* Name order, so that "first wins" does not depend on readdir. */
	qsort(names, n, sizeof names[0], cmp_names);
	for (int i = 0; i < n; i++)
		load_fwcfg_one(&p, dir, names[i]);
}

static void load_dt(struct config *c, const char *root)
{
	static uint8_t buf[FW_CRED_MAX + 1];
	char path[4096];
	unsigned seen = 0;

	if ((size_t)snprintf(path, sizeof path, "%s" DT_CONF, root) >= sizeof path)
		return;
	ssize_t n = read_file(path, buf, sizeof buf);
	if (n == -ENOENT)
		return;
	char why[160];
	if (n < 0) {
		snprintf(why, sizeof why, "dt: kdumpinit,conf: %s", strerror((int)-n));
		config_seal_unreadable(c, CFG_SRC_DT, &seen, why);
		return;
	}
	if ((size_t)n > FW_CRED_MAX) {
		snprintf(why, sizeof why, "dt: kdumpinit,conf is over %u KiB", FW_CRED_MAX / 1024);
		config_seal_unreadable(c, CFG_SRC_DT, &seen, why);
		return;
	}
	/* A DT string ends in a NUL; a string list has one after each. */
	while (n && buf[n - 1] == 0)
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = '\n';
	if (!fw_cred_text_ok(buf, (size_t)n)) {
		config_seal_unreadable(c, CFG_SRC_DT, &seen, "dt: kdumpinit,conf is not text");
		return;
	}
	config_load_text(c, (const char *)buf, (size_t)n, "dt kdumpinit,conf", CFG_SRC_DT, &seen);
}

/* EFI variables. systemd reads no credentials from them, but firmware
 * setup screens and `efivar` can set one where nothing else can. Measured
 * under QEMU with OVMF and Debian's 6.1: a variable the first kernel wrote
 * is readable through efivarfs in the crash kernel (kexec_file_load
 * passes the EFI runtime map). The file is a 4-byte attribute word, then
 * the data: here a whole config file, as the kdumpinit.conf credential. */
static int load_efi(struct config *c, const char *root)
{
	static uint8_t buf[FW_CRED_MAX + 4 + 1];
	char path[4096];
	unsigned seen = 0;

	if ((size_t)snprintf(path, sizeof path, "%s" EFI_CONF, root) >= sizeof path)
		return -ENAMETOOLONG;
	ssize_t n = read_file(path, buf, sizeof buf);
	if (n == -ENOENT)
		return 0;
	char why[192];
	if (n < 0) {
		snprintf(why, sizeof why, "efi: %s: %s", EFI_VAR_NAME, strerror((int)-n));
		config_seal_unreadable(c, CFG_SRC_EFI, &seen, why);
		return (int)n;
	}
	if (n < 4 || (size_t)n > FW_CRED_MAX + 4) {
		snprintf(why, sizeof why, "efi: %s is %s", EFI_VAR_NAME,
			 n < 4 ? "shorter than its attribute word" : "over 64 KiB");
		config_seal_unreadable(c, CFG_SRC_EFI, &seen, why);
		return -EINVAL;
	}
	n -= 4;
	while (n && buf[4 + n - 1] == 0)
		n--;
	if (!fw_cred_text_ok(buf + 4, (size_t)n)) {
		config_seal_unreadable(c, CFG_SRC_EFI, &seen, "efi: " EFI_VAR_NAME " is not text");
		return -EINVAL;
	}
	config_load_text(c, (const char *)buf + 4, (size_t)n, "efi " EFI_VAR_NAME, CFG_SRC_EFI, &seen);
	return 0;
}

int config_load_firmware(struct config *c, const char *root, unsigned mask)
{
	size_t total = 0;

	if (!root || !strcmp(root, "/"))
		root = "";
	/* Rank, not this order, decides (config_set_src); the order only
	 * decides which credentials the 1 MiB total admits: the higher
	 * source first, as systemd does. */
	if (mask & FW_SRC_FWCFG)
		load_fwcfg(c, root, &total);
	if (mask & FW_SRC_SMBIOS)
		load_smbios(c, root, &total);
	if (mask & FW_SRC_DT)
		load_dt(c, root);
	if (mask & FW_SRC_EFI)
		(void)load_efi(c, root);
	int n = 0;
	for (int k = 0; k < CFG_NKEYS; k++)
		if (c->src[k] >= CFG_SRC_EFI && c->src[k] <= CFG_SRC_FWCFG &&
		    (k != CFG_PUBKEY || c->have_pubkey))
			n++;	/* a key not read whole was not applied */
	return n;
}
