/* Unit tests for config/firmware.c: SMBIOS Type 11 and fw_cfg credentials,
 * the device tree's kdumpinit,conf, the caps, and the precedence of every
 * source (config.c's rank) with the per-key source record. Each case
 * builds a fake /sys and /proc under a temporary root. */
#define CHECK_PREFIX "firmware"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../config/config.h"
#include "../../config/firmware.h"

#define DMI "/sys/firmware/dmi/entries"
#define FWCFG "/sys/firmware/qemu_fw_cfg/by_name/opt/io.systemd.credentials"
#define DT "/proc/device-tree/chosen/kdumpinit,conf"

static char root[4096];

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				die(path);
			*s = '/';
		}
}

/* root + rel, with its directories, holding len bytes of data. */
static void put(const char *rel, const void *data, size_t len)
{
	char path[8192];
	snprintf(path, sizeof path, "%s%s", root, rel);
	mkdirs(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	if (len && write(fd, data, len) != (ssize_t)len)
		die("write");
	close(fd);
}

static void put_str(const char *rel, const char *s)
{
	put(rel, s, strlen(s));
}

/* A fresh empty root for one case. */
static void new_root(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/kdi-fw-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(root))
		die("mkdtemp");
}

static void rm_root(void)
{
	char cmd[8300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

/* An SMBIOS Type 11 structure: header with count, the strings, the final
 * NUL (final = 0 leaves it off). Returns its length. */
static size_t smb(uint8_t *out, unsigned count, const char *const *s, int n, int final)
{
	size_t o = 5;
	out[0] = 11;
	out[1] = 5;
	out[2] = 0x34;
	out[3] = 0x12;
	out[4] = count;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(s[i]);
		memcpy(out + o, s[i], l + 1);
		o += l + 1;
	}
	if (n == 0)
		out[o++] = 0;	/* no strings: the area is two NULs */
	if (final)
		out[o++] = 0;
	return o;
}

static void put_smb(int entry, unsigned count, const char *const *s, int n, int final)
{
	static uint8_t buf[300000];
	char rel[64];
	snprintf(rel, sizeof rel, DMI "/11-%d/raw", entry);
	put(rel, buf, smb(buf, count, s, n, final));
}

/* A fw_cfg file: size holds sizetext, raw holds data. */
static void put_fwcfg(const char *name, const char *sizetext, const void *data, size_t len)
{
	char rel[512];
	snprintf(rel, sizeof rel, FWCFG "/%s/size", name);
	put_str(rel, sizetext);
	snprintf(rel, sizeof rel, FWCFG "/%s/raw", name);
	put(rel, data, len);
}

static void put_fwcfg_str(const char *name, const char *value)
{
	char size[32];
	snprintf(size, sizeof size, "%zu\n", strlen(value));
	put_fwcfg(name, size, value, strlen(value));
}

static int warned(const struct config *c, const char *a, const char *b)
{
	for (int i = 0; i < c->nwarn; i++)
		if (check_mentions(c->warn[i], a) && (!b || check_mentions(c->warn[i], b)))
			return 1;
	return 0;
}

static const char *warns(const struct config *c)
{
	static char all[CONFIG_MAX_WARN * 170];
	size_t o = 0;
	all[0] = 0;
	for (int i = 0; i < c->nwarn && o < sizeof all - 1; i++)
		o += snprintf(all + o, sizeof all - o, "[%s] ", c->warn[i]);
	return all;
}

static int load(struct config *c, unsigned mask)
{
	config_defaults(c);
	return config_load_firmware(c, root, mask);
}

static void smbios_strings(void)
{
	struct config c;
	const char *e0[] = {
		"Vendor asset tag 42",
		"io.systemd.credential:kdumpinit.level=3",
		"io.systemd.credential:passwd.hashed-password.root=xyz",
		"io.systemd.credential:kdumpinit.dev=SERIAL=abc,/dev/vdb",
	};
	const char *e1[] = { "io.systemd.credential:kdumpinit.threads=2" };
	const char *e3[] = { "io.systemd.credential:kdumpinit.wait=9" };

	new_root();
	put_smb(0, 4, e0, 4, 1);
	put_smb(1, 1, e1, 1, 1);
	put_smb(3, 1, e3, 1, 1);	/* after the missing 11-2: never read */
	CHECK_INT(load(&c, FW_SRC_ALL), 3);
	CHECK_INT(c.level, 3);
	CHECK_STR(c.dev, "SERIAL=abc,/dev/vdb");
	CHECK_INT(c.threads, 2);
	CHECK_INT(c.wait_s, 300);
	CHECK_INT(c.src[CFG_LEVEL], CFG_SRC_SMBIOS);
	CHECK_INT(c.src[CFG_DEV], CFG_SRC_SMBIOS);
	CHECK_INT(c.src[CFG_WAIT], CFG_SRC_DEFAULT);
	CHECK(c.nwarn == 0, "warnings: %s", warns(&c));
	/* Not asked for: nothing read. */
	CHECK_INT(load(&c, FW_SRC_FWCFG | FW_SRC_DT), 0);
	CHECK_INT(c.level, 31);
	rm_root();
}

static void smbios_binary(void)
{
	struct config c;
	/* "halt\n" and "SERIAL=é" (UTF-8) */
	const char *e0[] = {
		"io.systemd.credential.binary:kdumpinit.final=aGFsdAo=",
		"io.systemd.credential.binary:kdumpinit.dev=U0VSSUFMPcOp",
	};

	new_root();
	put_smb(0, 2, e0, 2, 1);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 2);
	CHECK_INT(c.final, FINAL_HALT);
	CHECK_STR(c.dev, "SERIAL=\xc3\xa9");
	CHECK(c.nwarn == 0, "warnings: %s", warns(&c));
	rm_root();
}

static void smbios_bad_base64(void)
{
	struct config c;
	const char *e0[] = {
		"io.systemd.credential.binary:kdumpinit.level=Mw",	/* no padding */
		"io.systemd.credential.binary:kdumpinit.threads=M w=",	/* a space */
		"io.systemd.credential.binary:kdumpinit.wait=OQ==",	/* "9": fine */
		"io.systemd.credential.binary:kdumpinit.stall=AAA=",	/* NULs: not text */
		"io.systemd.credential.binary:other.thing=!!!",		/* not ours: silent */
	};

	new_root();
	put_smb(0, 5, e0, 5, 1);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 1);
	CHECK_INT(c.level, 31);
	CHECK_INT(c.threads, 0);
	CHECK_INT(c.wait_s, 9);
	CHECK_INT(c.stall_s, 300);
	CHECK_INT(c.nwarn, 3);
	CHECK(warned(&c, "kdumpinit.level", "base64"), "no base64 warning for level: %s", warns(&c));
	CHECK(warned(&c, "kdumpinit.threads", "base64"), "no base64 warning for threads: %s",
	      warns(&c));
	CHECK(warned(&c, "kdumpinit.stall", "not text"), "no text warning: %s", warns(&c));
	rm_root();
}

static void base64_strict(void)
{
	uint8_t out[8];
	static const struct { const char *in; ssize_t want; const char *out; } t[] = {
		{ "", 0, "" }, { "QQ==", 1, "A" }, { "QUI=", 2, "AB" }, { "QUJD", 3, "ABC" },
		{ "QUJDRA==", 4, "ABCD" }, { "+/+/", 3, "\xfb\xff\xbf" },
		{ "QR==", -EINVAL, NULL },	/* unused bits set */
		{ "QUJ=", -EINVAL, NULL },	/* unused bits set */
		{ "Q===", -EINVAL, NULL }, { "QQ=A", -EINVAL, NULL }, { "QQ==QQ==", -EINVAL, NULL },
		{ "QQ", -EINVAL, NULL }, { "QU\nJD", -EINVAL, NULL }, { "QU-D", -EINVAL, NULL },
		{ "QUJDRUZHSElK", -E2BIG, NULL },	/* 9 bytes into 8 */
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		memset(out, 0, sizeof out);
		ssize_t r = fw_base64_decode(t[i].in, strlen(t[i].in), out, sizeof out);
		CHECK(r == t[i].want, "\"%s\": %zd, want %zd", t[i].in, r, t[i].want);
		if (r > 0 && t[i].out)
			CHECK(!memcmp(out, t[i].out, r), "\"%s\": wrong bytes", t[i].in);
	}
}

static void smbios_truncated(void)
{
	struct config c;
	const char *e0[] = {
		"io.systemd.credential:kdumpinit.level=4",
		"io.systemd.credential:kdumpinit.threads=5",
	};
	uint8_t raw[256];

	new_root();
	/* The last string loses its NUL and the final NUL: cut mid-string. */
	size_t n = smb(raw, 2, e0, 2, 0) - 1;
	put(DMI "/11-0/raw", raw, n);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 1);
	CHECK_INT(c.level, 4);
	CHECK_INT(c.threads, 0);
	CHECK(warned(&c, "11-0", "cut short"), "no truncation warning: %s", warns(&c));
	CHECK_INT(c.nwarn, 1);
	/* All strings whole, only the final NUL missing: kept, but warned. */
	put_smb(0, 2, e0, 2, 0);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 2);
	CHECK_INT(c.threads, 5);
	CHECK(warned(&c, "11-0", "cut short"), "no warning for a missing final NUL: %s",
	      warns(&c));
	rm_root();
}

static void smbios_count_mismatch(void)
{
	struct config c;
	const char *e0[] = {
		"io.systemd.credential:kdumpinit.level=6",
		"io.systemd.credential:kdumpinit.verbose=2",
	};

	new_root();
	put_smb(0, 5, e0, 2, 1);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 2);
	CHECK_INT(c.level, 6);
	CHECK_INT(c.verbose, 2);
	CHECK_INT(c.nwarn, 1);
	CHECK(warned(&c, "says 5", "holds 2"), "no count warning: %s", warns(&c));
	rm_root();
}

static void smbios_bad_header(void)
{
	struct config c;
	const char *e0[] = { "io.systemd.credential:kdumpinit.level=6" };
	uint8_t raw[128];

	new_root();
	size_t n = smb(raw, 1, e0, 1, 1);
	raw[1] = 200;	/* formatted area past the end */
	put(DMI "/11-0/raw", raw, n);
	raw[1] = 5;
	raw[0] = 1;	/* not type 11 */
	put(DMI "/11-1/raw", raw, n);
	raw[0] = 11;
	raw[1] = 4;	/* shorter than the header */
	put(DMI "/11-2/raw", raw, n);
	put(DMI "/11-3/raw", raw, 3);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 0);
	CHECK_INT(c.level, 31);
	CHECK_INT(c.nwarn, 4);
	CHECK(warned(&c, "11-0", "not a Type 11"), "11-0: %s", warns(&c));
	CHECK(warned(&c, "11-3", "not a Type 11"), "11-3: %s", warns(&c));
	rm_root();
}

/* smbios11_parse directly: what each string is, and the problem bits. */
static int nseen;
static char seen_s[8][32];
static void collect(void *ctx, const char *s, size_t n)
{
	if (nseen < 8)
		snprintf(seen_s[nseen], sizeof seen_s[0], "%.*s", (int)n, s);
	nseen++;
}

static void smbios_parse_direct(void)
{
	uint8_t raw[32] = { 11, 9, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 'a', 0, 'b', 'c', 0, 0 };
	unsigned problems = 99;

	nseen = 0;
	CHECK_INT(smbios11_parse(raw, 15, collect, NULL, &problems), 2);
	CHECK_INT(problems, 0);
	CHECK_STR(seen_s[0], "a");
	CHECK_STR(seen_s[1], "bc");
	/* No strings: two NULs. */
	uint8_t empty[7] = { 11, 5, 0, 0, 0, 0, 0 };
	nseen = 0;
	CHECK_INT(smbios11_parse(empty, 7, collect, NULL, &problems), 0);
	CHECK_INT(problems, 0);
	CHECK_INT(smbios11_parse(empty, 6, collect, NULL, &problems), 0);
	CHECK_INT(problems, FW_SMB_TRUNCATED);
	CHECK_INT(smbios11_parse(empty, 5, collect, NULL, &problems), 0);
	CHECK_INT(problems, FW_SMB_TRUNCATED);
	CHECK_INT(smbios11_parse(empty, 4, collect, NULL, &problems), -EBADMSG);
	CHECK_INT(nseen, 0);
}

static void smbios_duplicates(void)
{
	struct config c;
	const char *e0[] = {
		"io.systemd.credential:kdumpinit.level=7",
		"io.systemd.credential:kdumpinit.level=8",
		"io.systemd.credential:kdumpinit.conf=level = 9",
	};
	const char *e1[] = { "io.systemd.credential:kdumpinit.level=10" };

	new_root();
	put_smb(0, 3, e0, 3, 1);
	put_smb(1, 1, e1, 1, 1);	/* the same source, one structure later */
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 1);
	CHECK_INT(c.level, 7);
	CHECK_INT(c.nwarn, 3);
	CHECK(warned(&c, "kdumpinit.level", "given again"), "no duplicate warning: %s",
	      warns(&c));
	rm_root();
}

static void fwcfg_sizes(void)
{
	struct config c;

	new_root();
	put_fwcfg("kdumpinit.level", "4\n", "3999", 4);		/* whole */
	put_fwcfg("kdumpinit.threads", "8\n", "12", 2);		/* raw shorter than size */
	put_fwcfg("kdumpinit.wait", "12x\n", "12", 2);		/* garbage size */
	put_fwcfg("kdumpinit.stall", "2\n", "77777777", 8);	/* raw longer: size counts */
	put_fwcfg("kdumpinit.verbose", "", "1", 1);		/* empty size */
	put_fwcfg("kdumpinit.final", "-1\n", "halt", 4);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 1);	/* level 3999 is bad too */
	CHECK_INT(c.level, 31);
	CHECK(warned(&c, "fw_cfg kdumpinit.level", "3999"), "level: %s", warns(&c));
	CHECK_INT(c.threads, 0);
	CHECK(warned(&c, "kdumpinit.threads", "2 of its 8"), "threads: %s", warns(&c));
	CHECK_INT(c.wait_s, 300);
	CHECK(warned(&c, "kdumpinit.wait", "not a number"), "wait: %s", warns(&c));
	CHECK(warned(&c, "kdumpinit.verbose", "not a number"), "verbose: %s", warns(&c));
	CHECK(warned(&c, "kdumpinit.final", "not a number"), "final: %s", warns(&c));
	CHECK_INT(c.stall_s, 77);
	CHECK(c.nwarn == 5, "%d warnings: %s", c.nwarn, warns(&c));

	put_fwcfg("kdumpinit.level", "2\n", "5\n", 2);	/* a trailing newline is dropped */
	put_fwcfg("kdumpinit.threads", "3\n", "3\r\n", 3);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 3);
	CHECK_INT(c.level, 5);
	CHECK_INT(c.threads, 3);
	CHECK_INT(c.src[CFG_STALL], CFG_SRC_FWCFG);
	rm_root();
}

static void names(void)
{
	struct config c;
	char n255[300], n256[300];
	const char *e0[] = {
		"io.systemd.credential:kdumpinit/level=3",
		"io.systemd.credential:=3",
		"io.systemd.credential:kdumpinit.wait",		/* no '=' */
		"io.systemd.credential:kdumpinit.stall=\x01",	/* control character */
		"io.systemd.credential:kdumpinit.threads=4",
	};

	memset(n255, 'a', 255);
	n255[255] = 0;
	memset(n256, 'a', 256);
	n256[256] = 0;
	CHECK_INT(fw_cred_name_ok(n255, 255), 1);
	CHECK_INT(fw_cred_name_ok(n256, 256), 0);
	CHECK_INT(fw_cred_name_ok("", 0), 0);
	CHECK_INT(fw_cred_name_ok("kdumpinit.level", 15), 1);
	CHECK_INT(fw_cred_name_ok("a:b", 3), 0);
	CHECK_INT(fw_cred_name_ok("a/b", 3), 0);
	CHECK_INT(fw_cred_name_ok("a\x7f", 2), 0);
	CHECK_INT(fw_cred_name_ok("a\tb", 3), 0);
	CHECK_INT(fw_cred_name_ok("..", 2), 0);
	CHECK_INT(fw_cred_name_ok("a\xc3\xa9", 3), 0);

	new_root();
	put_smb(0, 5, e0, 5, 1);
	put_fwcfg_str("kdumpinit:level", "2");
	CHECK_INT(load(&c, FW_SRC_SMBIOS | FW_SRC_FWCFG), 1);
	CHECK_INT(c.threads, 4);
	CHECK_INT(c.level, 31);
	CHECK_INT(c.wait_s, 300);
	CHECK_INT(c.stall_s, 300);
	CHECK(warned(&c, "smbios", "kdumpinit/level"), "smbios name: %s", warns(&c));
	CHECK(warned(&c, "fw_cfg", "kdumpinit:level"), "fw_cfg name: %s", warns(&c));
	CHECK(warned(&c, "kdumpinit.wait", "no '='"), "no '=': %s", warns(&c));
	CHECK(warned(&c, "kdumpinit.stall", "not text"), "control: %s", warns(&c));
	CHECK(c.nwarn == 5, "%d warnings: %s", c.nwarn, warns(&c));
	rm_root();
}

static void text_rules(void)
{
	static const struct { const char *s; size_t n; int ok; } t[] = {
		{ "plain text\n\twith\r\n", 18, 1 }, { "caf\xc3\xa9", 5, 1 },
		{ "\xe2\x82\xac \xf0\x9f\x98\x80", 8, 1 }, { "\xf4\x8f\xbf\xbf", 4, 1 },
		{ "a\0b", 3, 0 }, { "\x01", 1, 0 }, { "\x1b[0m", 4, 0 }, { "\x7f", 1, 0 },
		{ "\xc2\x85", 2, 0 },			/* C1 control (NEL) */
		{ "\xc0\xaf", 2, 0 }, { "\xe0\x80\xaf", 3, 0 },	/* overlong */
		{ "\xed\xa0\x80", 3, 0 },		/* surrogate */
		{ "\xf4\x90\x80\x80", 4, 0 },		/* past U+10FFFF */
		{ "\xc3", 1, 0 }, { "\xe2\x82", 2, 0 }, { "\xff", 1, 0 }, { "\x80", 1, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		CHECK(fw_cred_text_ok((const uint8_t *)t[i].s, t[i].n) == t[i].ok,
		      "case %zu: want %d", i, t[i].ok);
}

static void value_over_64k(void)
{
	struct config c;
	static char big[FW_CRED_MAX + 2];

	new_root();
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = i % 64 == 63 ? '\n' : '#';
	put_fwcfg("kdumpinit.conf", "65537\n", big, FW_CRED_MAX + 1);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 0);
	CHECK_INT(c.nwarn, 1);
	CHECK(warned(&c, "kdumpinit.conf", "64 KiB"), "fw_cfg: %s", warns(&c));
	/* Exactly 64 KiB is fine. */
	memcpy(big + FW_CRED_MAX - 10, "\nlevel=1\n\n", 10);
	put_fwcfg("kdumpinit.conf", "65536\n", big, FW_CRED_MAX);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 1);
	CHECK_INT(c.level, 1);
	CHECK(c.nwarn == 0, "warnings: %s", warns(&c));

	/* SMBIOS text and binary over the cap. */
	static char s[FW_CRED_MAX + 100];
	const char *e0[] = { s };
	int o = snprintf(s, sizeof s, "io.systemd.credential:kdumpinit.conf=");
	memset(s + o, '#', FW_CRED_MAX + 1);
	s[o + FW_CRED_MAX + 1] = 0;
	put_smb(0, 1, e0, 1, 1);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 0);
	CHECK(warned(&c, "kdumpinit.conf", "64 KiB"), "smbios text: %s", warns(&c));
	static char b[FW_CRED_MAX * 2];
	const char *e1[] = { b };
	o = snprintf(b, sizeof b, "io.systemd.credential.binary:kdumpinit.conf=");
	for (size_t i = 0; i < (FW_CRED_MAX + 3) / 3 * 4; i++)
		b[o + i] = 'I';		/* 65538 bytes: too many, whatever they are */
	b[o + (FW_CRED_MAX + 3) / 3 * 4] = 0;
	put_smb(0, 1, e1, 1, 1);
	CHECK_INT(load(&c, FW_SRC_SMBIOS), 0);
	CHECK(warned(&c, "kdumpinit.conf", "64 KiB"), "smbios binary: %s", warns(&c));
	CHECK_INT(c.nwarn, 1);
	rm_root();
}

static void total_over_1m(void)
{
	struct config c;
	struct fw_pass p;
	size_t total = 0;
	static uint8_t pad[FW_CRED_MAX];

	config_defaults(&c);
	fw_pass_init(&p, &c, CFG_SRC_FWCFG, "fw_cfg", &total);
	for (size_t i = 0; i < sizeof pad; i++)
		pad[i] = i % 64 == 63 ? '\n' : '#';
	for (int i = 0; i < 15; i++)
		fw_credential(&p, "kdumpinit.conf", 14, pad, sizeof pad);
	memcpy(pad, "threads = 2\n", 12);	/* the 16th: exactly 1 MiB in all */
	fw_credential(&p, "kdumpinit.conf", 14, pad, sizeof pad);
	CHECK_INT(total, FW_TOTAL_MAX);
	CHECK_INT(c.threads, 2);
	CHECK_INT(c.nwarn, 0);
	fw_credential(&p, "kdumpinit.level", 15, (const uint8_t *)"5", 1);
	CHECK_INT(c.level, 31);
	CHECK_INT(c.nwarn, 1);
	CHECK(warned(&c, "kdumpinit.level", "in all"), "no total warning: %s", warns(&c));
	/* Others' credentials are not ours to count. */
	fw_credential(&p, "passwd.plaintext-password.root", 30, (const uint8_t *)"x", 1);
	CHECK_INT(c.nwarn, 1);
	CHECK_INT(total, FW_TOTAL_MAX);
}

static void device_tree(void)
{
	struct config c;
	static const char dt[] = "level = 4\0dev = LABEL=d#x\0# comment\0final = poweroff";

	new_root();
	put(DT, dt, sizeof dt);		/* ends in a NUL, as a DT string does */
	CHECK_INT(load(&c, FW_SRC_DT), 3);
	CHECK_INT(c.level, 4);
	CHECK_STR(c.dev, "LABEL=d");
	CHECK_INT(c.final, FINAL_POWEROFF);
	CHECK_INT(c.src[CFG_DEV], CFG_SRC_DT);
	CHECK(c.nwarn == 0, "warnings: %s", warns(&c));
	put_str(DT, "level = 4\nlevel = 5\n");
	CHECK_INT(load(&c, FW_SRC_DT), 1);
	CHECK_INT(c.level, 4);
	CHECK(warned(&c, "dt kdumpinit,conf:2", "given again"), "dt repeat: %s", warns(&c));
	put_str(DT, "level = 4\x01\n");
	CHECK_INT(load(&c, FW_SRC_DT), 0);
	CHECK(warned(&c, "dt", "not text"), "dt text: %s", warns(&c));
	rm_root();
}

static void conf_credential_typo(void)
{
	struct config c;

	new_root();
	put_fwcfg_str("kdumpinit.conf", "levle = 3\nlevel = 2\n\nfinal = halt  # why\nbogus\n");
	put_fwcfg_str("kdumpinit.level", "9");	/* after .conf by name: a repeat */
	put_fwcfg_str("kdumpinit.leve", "9");	/* unknown */
	put_fwcfg_str("io.systemd.whatever", "9");
	CHECK_INT(load(&c, FW_SRC_FWCFG), 2);
	CHECK_INT(c.level, 2);
	CHECK_INT(c.final, FINAL_HALT);
	CHECK(warned(&c, "fw_cfg kdumpinit.conf:1", "levle"), "typo: %s", warns(&c));
	CHECK(warned(&c, "fw_cfg kdumpinit.conf:5", "key = value"), "bogus: %s", warns(&c));
	CHECK(warned(&c, "fw_cfg kdumpinit.level", "given again"), "repeat: %s", warns(&c));
	CHECK(warned(&c, "fw_cfg kdumpinit.leve", "unknown"), "unknown: %s", warns(&c));
	CHECK(c.nwarn == 4, "%d warnings: %s", c.nwarn, warns(&c));
	rm_root();
}

/* Every source sets the keys the ones above it leave: each key shows
 * which source wins, in either loading order. */
static void precedence_all_sources(void)
{
	struct config a, b;
	char conf[4200];
	const char *e0[] = {
		"io.systemd.credential:kdumpinit.level=3",
		"io.systemd.credential:kdumpinit.threads=3",
		"io.systemd.credential:kdumpinit.wait=3",
	};

	new_root();
	put_str(DT, "level = 4\nthreads = 4\nwait = 4\nstall = 4\n");
	put_smb(0, 3, e0, 3, 1);
	put_fwcfg_str("kdumpinit.conf", "level = 2\nthreads = 2\n");
	snprintf(conf, sizeof conf, "%s/kdumpinit.conf", root);
	put_str("/kdumpinit.conf",
		"dev = /dev/file\nlevel = 5\nthreads = 5\nwait = 5\nstall = 5\n"
		"final = halt\nverbose = 5\n");
	const char *cmdline = "quiet kdumpinit.level=1";

	config_defaults(&a);
	CHECK_INT(config_load_file(&a, conf), 0);
	CHECK_INT(config_load_firmware(&a, root, FW_SRC_ALL), 4);
	config_load_cmdline(&a, cmdline);

	config_defaults(&b);
	config_load_cmdline(&b, cmdline);
	CHECK_INT(config_load_firmware(&b, root, FW_SRC_ALL), 3);
	CHECK_INT(config_load_file(&b, conf), 0);

	const struct config *cs[] = { &a, &b };
	for (int i = 0; i < 2; i++) {
		const struct config *c = cs[i];
		CHECK_INT(c->level, 1);
		CHECK_INT(c->threads, 2);
		CHECK_INT(c->wait_s, 3);
		CHECK_INT(c->stall_s, 4);
		CHECK_INT(c->final, FINAL_HALT);
		CHECK_INT(c->verbose, 5);
		CHECK_STR(c->dev, "/dev/file");
		CHECK_INT(c->src[CFG_LEVEL], CFG_SRC_CMDLINE);
		CHECK_INT(c->src[CFG_THREADS], CFG_SRC_FWCFG);
		CHECK_INT(c->src[CFG_WAIT], CFG_SRC_SMBIOS);
		CHECK_INT(c->src[CFG_STALL], CFG_SRC_DT);
		CHECK_INT(c->src[CFG_FINAL], CFG_SRC_FILE);
		CHECK(c->nwarn == 0, "warnings: %s", warns(c));
		char line[512];
		int n = config_format_sources(c, line, sizeof line);
		CHECK_STR(line, "dev=/dev/file (file), level=1 (cmdline), threads=2 (fw_cfg), "
			  "wait=3 (smbios), stall=4 (dt), final=halt (file), verbose=5 (file)");
		CHECK_INT(n, strlen(line));
	}
	/* A bad command-line value keeps the firmware's, and says whose. */
	config_load_cmdline(&a, "kdumpinit.threads=x");
	CHECK_INT(a.threads, 2);
	CHECK(warned(&a, "threads=x", "from fw_cfg"), "bad cmdline value: %s", warns(&a));
	rm_root();
}

static void format_sources(void)
{
	struct config c;
	char buf[64];

	config_defaults(&c);
	memset(buf, 'x', sizeof buf);
	CHECK_INT(config_format_sources(&c, buf, sizeof buf), 0);
	CHECK_STR(buf, "");
	/* A default value set explicitly is still shown: its source is not. */
	config_set_src(&c, "level", "31", "t", CFG_SRC_FWCFG, NULL);
	config_set_src(&c, "dev", "SERIAL=x", "t", CFG_SRC_SMBIOS, NULL);
	config_set_src(&c, "final", "poweroff", "t", CFG_SRC_DT, NULL);
	const char *want = "dev=SERIAL=x (smbios), level=31 (fw_cfg), final=poweroff (dt)";
	CHECK_INT(config_format_sources(&c, buf, sizeof buf), strlen(want));
	CHECK_STR(buf, want);
	char small[10];
	CHECK_INT(config_format_sources(&c, small, sizeof small), strlen(want));
	CHECK_STR(small, "dev=SERIA");
	CHECK_INT(config_format_sources(&c, NULL, 0), strlen(want));
	/* Lower ranks are ignored but still checked. */
	CHECK_INT(config_set_src(&c, "level", "3", "t", CFG_SRC_SMBIOS, NULL), 0);
	CHECK_INT(c.level, 31);
	CHECK_INT(config_set_src(&c, "level", "99", "low", CFG_SRC_FILE, NULL), -EINVAL);
	CHECK(warned(&c, "low", "level=99"), "outranked bad value not warned: %s", warns(&c));
	CHECK_STR(config_src_name(CFG_SRC_CMDLINE), "cmdline");
	CHECK_STR(config_src_name(CFG_SRC_EFI), "efi");
	CHECK_STR(config_src_name(CFG_SRC_N), "?");
}

#define EFIVAR "/sys/firmware/efi/efivars/KdumpinitConf-4a1e5f3c-6b7d-4e2a-9c1f-0b8d7e6a5c4d"

static void efi_and_empty_root(void)
{
	struct config c;

	new_root();
	CHECK_INT(load(&c, FW_SRC_ALL), 0);
	CHECK_INT(c.nwarn, 0);
	CHECK_INT(c.level, 31);
	/* Only our own variable is read. */
	put("/sys/firmware/efi/efivars/kdumpinit-conf", "\x07\0\0\0level = 1\n", 14);
	CHECK_INT(load(&c, FW_SRC_EFI), 0);
	CHECK_INT(c.level, 31);
	CHECK_INT(c.nwarn, 0);
	rm_root();
}

static void efi_variable(void)
{
	static const char var[] = "\x07\0\0\0level = 7\nwait = 9\n";
	struct config c;

	new_root();
	put(EFIVAR, var, sizeof var - 1);
	CHECK_INT(load(&c, FW_SRC_ALL), 2);
	CHECK_INT(c.level, 7);
	CHECK_INT(c.wait_s, 9);
	CHECK_INT(c.src[CFG_LEVEL], CFG_SRC_EFI);
	CHECK_INT(c.nwarn, 0);
	/* The device tree outranks EFI, key by key. */
	put_str(DT, "level = 5\n");
	CHECK_INT(load(&c, FW_SRC_ALL), 2);
	CHECK_INT(c.level, 5);
	CHECK_INT(c.src[CFG_LEVEL], CFG_SRC_DT);
	CHECK_INT(c.wait_s, 9);
	CHECK_INT(c.src[CFG_WAIT], CFG_SRC_EFI);
	/* Shorter than the attribute word, or not text: skipped, said once. */
	put(EFIVAR, "\x07\0", 2);
	CHECK_INT(load(&c, FW_SRC_EFI), 0);
	CHECK_INT(c.level, 31);
	CHECK(warned(&c, "efi", "attribute word") && c.nwarn == 1, "short variable: %s", warns(&c));
	put(EFIVAR, "\x07\0\0\0lev\x01" "el = 3\n", 15);
	CHECK_INT(load(&c, FW_SRC_EFI), 0);
	CHECK_INT(c.level, 31);
	CHECK(warned(&c, "efi", "not text"), "binary variable: %s", warns(&c));
	rm_root();
}

/* What may hold the key to seal with and cannot be read whole is a key
 * not read: config_seal says -ENOKEY (no dump at all), unless a higher
 * source gives a key; anything else not read whole costs only itself. */
#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define PUB "kdumpinit-public-key " HEX "\n"
static void seal_fails_closed(void)
{
	struct config c;
	char pub[] = PUB;

	new_root();
	put_fwcfg_str("kdumpinit.pubkey", PUB);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 1);
	CHECK_INT(config_seal(&c), 1);
	/* Cut short: size says 86, raw holds 40. */
	put_fwcfg("kdumpinit.pubkey", "86\n", PUB, 40);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 0);
	CHECK_INT(config_seal(&c), -ENOKEY);
	CHECK(check_mentions(c.seal_why, "40 of its 86"), "why: %s", c.seal_why);
	CHECK(warned(&c, "kdumpinit.pubkey", "no dump will be written"), "%s", warns(&c));
	/* The command line's key stands over it, loaded before or after. */
	config_load_cmdline(&c, "kdumpinit.pubkey=" HEX);
	CHECK_INT(config_seal(&c), 1);
	config_defaults(&c);
	config_load_cmdline(&c, "kdumpinit.pubkey=" HEX);
	config_load_firmware(&c, root, FW_SRC_FWCFG);
	CHECK_INT(config_seal(&c), 1);
	/* A byte gone bad: not text. No size file. */
	pub[30] = (char)0xff;
	put_fwcfg("kdumpinit.pubkey", "86\n", pub, 86);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 0);
	CHECK_INT(config_seal(&c), -ENOKEY);
	CHECK(check_mentions(c.seal_why, "not text"), "why: %s", c.seal_why);
	rm_root();
	new_root();
	put_str(FWCFG "/kdumpinit.pubkey/raw", PUB);
	load(&c, FW_SRC_FWCFG);
	CHECK(config_seal(&c) == -ENOKEY && check_mentions(c.seal_why, "no size"), "why: %s",
	      c.seal_why);
	/* A whole config cut short: it may have held the key, and the first
	 * of a source wins, so the key credential after it (in name order)
	 * does not stand. */
	put_fwcfg_str("kdumpinit.pubkey", PUB);
	put_fwcfg("kdumpinit.conf", "100\n", "level = 3\n", 10);
	load(&c, FW_SRC_FWCFG);
	CHECK_INT(config_seal(&c), -ENOKEY);
	CHECK(check_mentions(c.seal_why, "kdumpinit.conf"), "why: %s", c.seal_why);
	/* Another setting cut short costs only itself. */
	rm_root();
	new_root();
	put_fwcfg("kdumpinit.level", "4\n", "3", 1);
	CHECK_INT(load(&c, FW_SRC_FWCFG), 0);
	CHECK_INT(config_seal(&c), 0);
	/* A lower source not read stands under a higher one's key. */
	put_fwcfg_str("kdumpinit.pubkey", PUB);
	put(DT, "level = 4\x01", 10);
	CHECK_INT(load(&c, FW_SRC_FWCFG | FW_SRC_DT), 1);
	CHECK_INT(config_seal(&c), 1);
	CHECK_INT(c.src[CFG_PUBKEY], CFG_SRC_FWCFG);
	CHECK_INT(load(&c, FW_SRC_DT), 0);
	CHECK_INT(config_seal(&c), -ENOKEY);
	rm_root();

	/* SMBIOS: bad base64 in our key, a string cut short inside our key
	 * (and, costing nothing, inside a vendor's). */
	new_root();
	const char *e0[] = { "io.systemd.credential.binary:kdumpinit.pubkey=AAA" };
	put_smb(0, 1, e0, 1, 1);
	load(&c, FW_SRC_SMBIOS);
	CHECK(config_seal(&c) == -ENOKEY && check_mentions(c.seal_why, "base64"), "why: %s",
	      c.seal_why);
	uint8_t raw[256];
	const char *e1[] = { "io.systemd.credential:kdumpinit.level=4",
			     "io.systemd.credential:kdumpinit.pubkey=" PUB };
	const char *e2[] = { "io.systemd.credential:kdumpinit.level=4", "vendor string" };
	for (int k = 0; k < 2; k++) {
		size_t n = smb(raw, 2, k ? e2 : e1, 2, 0) - 4;	/* the last string cut */
		put(DMI "/11-0/raw", raw, n);
		load(&c, FW_SRC_SMBIOS);
		CHECK_INT(c.level, 4);
		CHECK_INT(config_seal(&c), k ? 0 : -ENOKEY);
	}
	rm_root();
}

int main(void)
{
	RUN(smbios_strings);
	RUN(smbios_binary);
	RUN(smbios_bad_base64);
	RUN(base64_strict);
	RUN(smbios_truncated);
	RUN(smbios_count_mismatch);
	RUN(smbios_bad_header);
	RUN(smbios_parse_direct);
	RUN(smbios_duplicates);
	RUN(fwcfg_sizes);
	RUN(names);
	RUN(text_rules);
	RUN(value_over_64k);
	RUN(total_over_1m);
	RUN(device_tree);
	RUN(conf_credential_typo);
	RUN(precedence_all_sources);
	RUN(format_sources);
	RUN(efi_and_empty_root);
	RUN(efi_variable);
	RUN(seal_fails_closed);
	return check_done();
}
