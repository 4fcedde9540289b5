/* Unit tests for config/target.c: selector lists, finding a device in a
 * fake sysfs/dev tree, and the claim gate on regular files. */
#define CHECK_PREFIX "target"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../config/target.h"
#include "../../dump/format.h"

#include "fakesys.h"

static void mkroot(void)
{
	const char *dir = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/kdi-target-XXXXXX", dir && *dir ? dir : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
}

static void put_file(const char *rel, const void *data, size_t len, uint64_t size)
{
	int fd = open(path_of(rel), O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (len && pwrite(fd, data, len, 0) != (ssize_t)len) ||
	    (size && ftruncate(fd, size) < 0)) {
		perror(rel);
		exit(2);
	}
	close(fd);
}


/* A claimed image file: superblock at 0, zero up to `size`. */
static void put_claim(const char *rel, uint64_t size, const char *label, struct kdi_super *sb)
{
	uint8_t area[KDI_SB_AREA];
	super_init(sb, size, label);
	super_encode(sb, area);
	put_file(rel, area, sizeof area, size);
}

/* The same with the superblock's data_offset set to off. */
static void put_claim_at(const char *rel, uint64_t size, uint64_t off, struct kdi_super *sb)
{
	uint8_t area[KDI_SB_AREA];
	super_init(sb, size, NULL);
	sb->data_offset = off;
	super_encode(sb, area);
	put_file(rel, area, sizeof area, size);
}

static void put_bytes(const char *rel, uint64_t off, const void *p, size_t len)
{
	int fd = open(path_of(rel), O_RDWR);
	if (fd < 0 || pwrite(fd, p, len, off) != (ssize_t)len) {
		perror(rel);
		exit(2);
	}
	close(fd);
}

/* ---- selectors_parse ---- */

static void selectors_valid(void)
{
	struct selector s[SEL_MAX];
	char bad[80] = "";
	int n = selectors_parse("SERIAL=abc,/dev/vdb,LABEL=dump,UUID=0a0b0c0d-0000-4000-8000-000000000001,"
				"PARTUUID=1a2b3c4d-01,PARTLABEL=kdump part", s, SEL_MAX, bad, sizeof bad);
	CHECK_INT(n, 6);
	if (n != 6)
		return;
	CHECK(s[0].type == SEL_SERIAL && !strcmp(s[0].value, "abc"), "SERIAL=abc: %d %s", s[0].type, s[0].value);
	CHECK(s[1].type == SEL_PATH && !strcmp(s[1].value, "/dev/vdb"), "/dev/vdb: %d %s", s[1].type, s[1].value);
	CHECK(s[2].type == SEL_LABEL && !strcmp(s[2].value, "dump"), "LABEL=dump");
	CHECK(s[3].type == SEL_UUID && !strcmp(s[3].value, "0a0b0c0d-0000-4000-8000-000000000001"), "UUID=");
	CHECK(s[4].type == SEL_PARTUUID && !strcmp(s[4].value, "1a2b3c4d-01"), "PARTUUID=");
	CHECK(s[5].type == SEL_PARTLABEL && !strcmp(s[5].value, "kdump part"), "PARTLABEL= with a space");
	CHECK_STR(selector_name(SEL_SERIAL), "SERIAL=");
	CHECK_STR(selector_name(SEL_PARTLABEL), "PARTLABEL=");
	n = selectors_parse("/dev/disk/by-id/virtio-x", s, SEL_MAX, bad, sizeof bad);
	CHECK_INT(n, 1);
	CHECK_STR(s[0].value, "/dev/disk/by-id/virtio-x");
	/* A value may itself contain '='. */
	n = selectors_parse("LABEL=a=b", s, SEL_MAX, bad, sizeof bad);
	CHECK_INT(n, 1);
	CHECK_STR(s[0].value, "a=b");
	/* Exactly SEL_MAX selectors. */
	n = selectors_parse("LABEL=1,LABEL=2,LABEL=3,LABEL=4,LABEL=5,LABEL=6,LABEL=7,LABEL=8",
			    s, SEL_MAX, bad, sizeof bad);
	CHECK_INT(n, SEL_MAX);
	CHECK_STR(s[7].value, "8");
}

static void selectors_invalid(void)
{
	static const struct { const char *list, *bad; } t[] = {
		{ "", "(empty)" },
		{ "vdb", "vdb" },
		{ "dev/vdb", "dev/vdb" },
		{ "/dev/vdb,sdb", "sdb" },
		{ "LABEL=", "LABEL=" },
		{ "label=dump", "label=dump" },
		{ "SERIAL=a,,LABEL=b", "" },
		{ ",LABEL=b", "" },
		{ "/dev/../etc/shadow", "/dev/../etc/shadow" },
		{ "/etc/passwd", "/etc/passwd" },
		{ "LABEL=1,LABEL=2,LABEL=3,LABEL=4,LABEL=5,LABEL=6,LABEL=7,LABEL=8,LABEL=9", "LABEL=9" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct selector s[SEL_MAX];
		char bad[80] = "untouched";
		int n = selectors_parse(t[i].list, s, SEL_MAX, bad, sizeof bad);
		CHECK(n == -EINVAL, "\"%s\": selectors_parse %d, want -EINVAL", t[i].list, n);
		CHECK(!strcmp(bad, t[i].bad), "\"%s\": bad word \"%s\", want \"%s\"", t[i].list, bad, t[i].bad);
	}
	struct selector s[SEL_MAX];
	char bad[80];
	CHECK_INT(selectors_parse(NULL, s, SEL_MAX, bad, sizeof bad), -EINVAL);
	/* Values that do not fit the selector's buffer. */
	char big[400];
	memcpy(big, "LABEL=", 6);
	memset(big + 6, 'x', 127);
	big[6 + 127] = 0;
	CHECK_INT(selectors_parse(big, s, SEL_MAX, bad, sizeof bad), 1);	/* 127 fits */
	big[6 + 127] = 'x';
	big[6 + 128] = 0;
	CHECK_INT(selectors_parse(big, s, SEL_MAX, bad, sizeof bad), -EINVAL);	/* 128 does not */
	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = 0;
	CHECK_INT(selectors_parse(big, s, SEL_MAX, bad, sizeof bad), -EINVAL);
	CHECK(strlen(bad) < sizeof bad, "bad word overflowed");
	/* A small bad buffer is never overrun. */
	char tiny[4] = "zzz";
	CHECK_INT(selectors_parse("nonsense", s, SEL_MAX, tiny, sizeof tiny), -EINVAL);
	CHECK_STR(tiny, "non");
}

/* ---- selector_find on a fake /sys and /dev ---- */

static void fake_tree(struct kdi_super *sb_b, struct kdi_super *sb_c)
{
	mkdirs("sys/class/block");
	mkdirs("sys/devices/vda/vda1");
	mkdirs("sys/devices/vda/vda2");
	mkdirs("sys/devices/vdb");
	mkdirs("sys/devices/vdc");
	mkdirs("sys/devices/nvme0n1/device");
	mkdirs("dev");
	symlink("../../devices/vda", path_of("sys/class/block/vda"));
	symlink("../../devices/vda/vda1", path_of("sys/class/block/vda1"));
	symlink("../../devices/vda/vda2", path_of("sys/class/block/vda2"));
	symlink("../../devices/vdb", path_of("sys/class/block/vdb"));
	symlink("../../devices/vdc", path_of("sys/class/block/vdc"));
	symlink("../../devices/nvme0n1", path_of("sys/class/block/nvme0n1"));
	put_text("sys/devices/vda/vda1/partition", "1\n");
	put_text("sys/devices/vda/vda2/partition", "2\n");
	put_text("sys/devices/vdb/serial", "kdump-dump\n");
	put_text("sys/devices/vdc/serial", "other\n");
	put_text("sys/devices/nvme0n1/device/serial", "   S3EVNX0K123456      \n");

	/* vda: a GPT disk with two partitions. */
	size_t len = 64 * 1024;
	uint8_t *d = calloc(1, len);
	memcpy(d + 512, "EFI PART", 8);
	d[512 + 72] = 2;		/* entries at LBA 2 */
	d[512 + 80] = 128;		/* 128 entries */
	d[512 + 84] = 128;		/* of 128 bytes */
	for (int k = 0; k < 2; k++) {
		uint8_t *e = d + 1024 + 128 * k;
		e[0] = 0x11;
		for (int i = 0; i < 16; i++)
			e[16 + i] = (uint8_t)(0x10 * (k + 1) + i);
		const char *nm = k ? "swap" : "kdump";
		for (int i = 0; nm[i]; i++)
			e[56 + 2 * i] = nm[i];
	}
	put_file("dev/vda", d, len, 0);
	free(d);
	put_file("dev/vda1", "", 0, 4096);
	put_file("dev/vda2", "", 0, 4096);
	put_claim("dev/vdb", 4u << 20, "dumpdisk", sb_b);
	put_claim("dev/vdc", 4u << 20, "second", sb_c);
	put_file("dev/nvme0n1", "", 0, 4096);
}

static int find(const char *spec, char *out, size_t sz)
{
	struct selector s[SEL_MAX];
	char bad[80];
	char sys[4200], dev[4200];
	snprintf(sys, sizeof sys, "%s/sys", root);
	snprintf(dev, sizeof dev, "%s/dev", root);
	const struct sysroot r = { sys, dev };

	if (selectors_parse(spec, s, SEL_MAX, bad, sizeof bad) != 1)
		return -EINVAL;
	out[0] = 0;
	return selector_find(&r, &s[0], out, sz);
}

static void selector_find_fake_sysfs(void)
{
	struct kdi_super sb_b, sb_c;
	char out[512], u[37], spec[80];

	fake_tree(&sb_b, &sb_c);
	CHECK_INT(find("SERIAL=kdump-dump", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vdb"));
	CHECK_INT(find("SERIAL=other", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vdc"));
	/* NVMe keeps the serial in device/serial, padded with spaces (SCSI and
	 * SATA have none there: theirs is VPD page 0x80, modalias.serial_by_bus). */
	CHECK_INT(find("SERIAL=S3EVNX0K123456", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/nvme0n1"));
	CHECK_INT(find("SERIAL=kdump", out, sizeof out), -ENOENT);	/* no prefix match */
	CHECK_INT(find("LABEL=dumpdisk", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vdb"));
	CHECK_INT(find("LABEL=second", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vdc"));
	CHECK_INT(find("LABEL=dump", out, sizeof out), -ENOENT);
	uuid_format(sb_c.uuid, u);
	snprintf(spec, sizeof spec, "UUID=%s", u);
	CHECK_INT(find(spec, out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vdc"));
	CHECK_INT(find("UUID=00000000-0000-4000-8000-000000000000", out, sizeof out), -ENOENT);
	CHECK_INT(find("UUID=not-a-uuid", out, sizeof out), -ENOENT);
	/* GUID bytes 0x10..0x1f stored: first three fields little-endian. */
	CHECK_INT(find("PARTUUID=13121110-1514-1716-1819-1a1b1c1d1e1f", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vda1"));
	CHECK_INT(find("PARTUUID=23222120-2524-2726-2829-2A2B2C2D2E2F", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vda2"));		/* case-insensitive */
	CHECK_INT(find("PARTLABEL=kdump", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vda1"));
	CHECK_INT(find("PARTLABEL=swap", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/vda2"));
	CHECK_INT(find("PARTLABEL=home", out, sizeof out), -ENOENT);
	/* Paths are taken as they are (stat only). */
	snprintf(spec, sizeof spec, "/dev/null");
	CHECK_INT(find(spec, out, sizeof out), 0);
	CHECK_STR(out, "/dev/null");
	CHECK_INT(find("/dev/kdumpinit-no-such-device", out, sizeof out), -ENOENT);
}

/* ---- the claim gate on files ---- */

static void target_open_files(void)
{
	struct target t;
	enum target_refusal why;
	char msg[400];
	struct kdi_super sb;

	/* Blank file: refused as unclaimed, and told to format. */
	put_file("blank.img", "", 0, 8u << 20);
	CHECK_INT(target_open(&t, path_of("blank.img"), 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_UNCLAIMED);
	CHECK(check_mentions(msg, "format"), "unclaimed message: %s", msg);
	CHECK_INT(t.fd, -1);

	/* Claimed: opened, stream bounds from the superblock. */
	put_claim("claimed.img", 8u << 20, "c", &sb);
	int r = target_open(&t, path_of("claimed.img"), 0, &why, msg, sizeof msg);
	CHECK(r == 0, "claimed file refused: %d %s", r, msg);
	if (r == 0) {
		CHECK_INT(t.base, 1u << 20);
		CHECK_INT(t.limit, 8u << 20);
		CHECK_INT(t.size, 8u << 20);
		CHECK(!memcmp(t.sb.uuid, sb.uuid, 16), "wrong claim read");
		CHECK(t.fd >= 0, "no fd");
		target_close(&t);
		CHECK_INT(t.fd, -1);
	}

	/* Claimed, then somebody wrote into the head. */
	int fd = open(path_of("claimed.img"), O_RDWR);
	pwrite(fd, "x", 1, 70000);
	close(fd);
	CHECK_INT(target_open(&t, path_of("claimed.img"), 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_OVERWRITTEN);

	/* A foreign signature. */
	put_file("ext.img", "", 0, 8u << 20);
	fd = open(path_of("ext.img"), O_RDWR);
	pwrite(fd, "\x53\xef", 2, 1080);
	close(fd);
	CHECK_INT(target_open(&t, path_of("ext.img"), 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_FOREIGN);
	CHECK(check_mentions(msg, "ext2/3/4"), "foreign message: %s", msg);

	/* A damaged claim. */
	put_claim("damaged.img", 8u << 20, NULL, &sb);
	fd = open(path_of("damaged.img"), O_RDWR);
	pwrite(fd, "\xff", 1, 50);
	close(fd);
	CHECK_INT(target_open(&t, path_of("damaged.img"), 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_DAMAGED);

	/* Too small for a stream after the 1 MiB head. */
	put_claim("tiny.img", (1u << 20) + 4096, NULL, &sb);
	CHECK_INT(target_open(&t, path_of("tiny.img"), 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_TOO_SMALL);

	/* Not a file or block device. */
	CHECK_INT(target_open(&t, "/dev/null", 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_NOT_TARGET);

	/* Missing: created and claimed only with may_create. */
	CHECK_INT(target_open(&t, path_of("new.img"), 0, &why, msg, sizeof msg), -ENOENT);
	CHECK(access(path_of("new.img"), F_OK) != 0, "new.img created without may_create");
	r = target_open(&t, path_of("new.img"), 1, &why, msg, sizeof msg);
	CHECK(r == 0 && t.created, "may_create: %d created %d", r, t.created);
	if (r == 0)
		target_close(&t);
	/* ... and then it is a claimed file like any other. */
	struct target s;
	r = source_open(&s, path_of("new.img"), &why, msg, sizeof msg);
	CHECK(r == 0, "new file not a source: %d %s", r, msg);
	if (r == 0)
		target_close(&s);
}

static void source_open_files(void)
{
	struct target t;
	enum target_refusal why;
	char msg[400];
	struct kdi_super sb;

	put_claim("src.img", 8u << 20, "s", &sb);
	int r = source_open(&t, path_of("src.img"), &why, msg, sizeof msg);
	CHECK(r == 0, "claimed source refused: %d %s", r, msg);
	if (r == 0) {
		CHECK_INT(t.base, 1u << 20);
		CHECK_INT(t.limit, 8u << 20);
		target_close(&t);
	}
	put_file("blank2.img", "", 0, 4u << 20);
	CHECK_INT(source_open(&t, path_of("blank2.img"), &why, msg, sizeof msg), -ENOENT);
	CHECK_INT(why, TGT_UNCLAIMED);
	CHECK(msg[0] != 0, "no message");
	put_file("xfs.img", "XFSB", 4, 4u << 20);
	CHECK_INT(source_open(&t, path_of("xfs.img"), &why, msg, sizeof msg), -ENOENT);
	CHECK_INT(why, TGT_FOREIGN);
	CHECK(check_mentions(msg, "xfs"), "message: %s", msg);
	CHECK_INT(source_open(&t, path_of("nope.img"), &why, msg, sizeof msg), -ENOENT);
	CHECK_INT(why, TGT_OK);
}

/* One rule for data_offset, the same for the writer's gate and the
 * readers: what a superblock may say is exactly what the gate still
 * accepts once a stream has been written there. */
static void data_offset_one_rule(void)
{
	struct target t;
	enum target_refusal why;
	char msg[400];
	struct kdi_super sb;
	static uint8_t stream[8192];

	memset(stream, 0xa5, sizeof stream);
	static const uint64_t good[] = { 128u << 10, (128u << 10) + 4096, 1u << 20, 4u << 20 };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		put_claim_at("off.img", 8u << 20, good[i], &sb);
		/* A capture's stream from data_offset on. */
		put_bytes("off.img", good[i], stream, sizeof stream);
		int r = target_open(&t, path_of("off.img"), 0, &why, msg, sizeof msg);
		CHECK(r == 0, "data_offset %llu, stream written: target_open %d (%s)",
		      (unsigned long long)good[i], r, msg);
		if (r == 0) {
			CHECK_INT(t.base, good[i]);
			target_close(&t);
		}
		r = source_open(&t, path_of("off.img"), &why, msg, sizeof msg);
		CHECK(r == 0, "data_offset %llu: source_open %d (%s)", (unsigned long long)good[i], r, msg);
		if (r == 0)
			target_close(&t);
	}
	/* Refused up front, by writer and readers alike: inside the head the
	 * gate keeps zero, or past the end of the device. */
	static const uint64_t bad[] = { 4096, 65536, (128u << 10) - 4096, (8u << 20) + 4096, 64u << 20 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put_claim_at("off.img", 8u << 20, bad[i], &sb);
		int r = target_open(&t, path_of("off.img"), 0, &why, msg, sizeof msg);
		CHECK(r == -EPERM && why == TGT_DAMAGED, "data_offset %llu: target_open %d why %d",
		      (unsigned long long)bad[i], r, why);
		r = source_open(&t, path_of("off.img"), &why, msg, sizeof msg);
		CHECK(r == -ENOENT && why == TGT_DAMAGED, "data_offset %llu: source_open %d why %d",
		      (unsigned long long)bad[i], r, why);
	}
}

/* The gate reads the end of the device too: a claimed file that got an
 * MD 1.0 superblock 8 KiB from its end (4 KiB aligned) is refused. */
static void target_open_end_signature(void)
{
	struct target t;
	enum target_refusal why;
	char msg[400];
	struct kdi_super sb;
	const uint64_t size = (64u << 20) + 3 * 512;
	const uint64_t at = ((size / 512 - 16) & ~7ull) * 512;

	put_claim("endsig.img", size, NULL, &sb);
	int r = target_open(&t, path_of("endsig.img"), 0, &why, msg, sizeof msg);
	CHECK(r == 0, "claimed file refused: %s", msg);
	if (r == 0)
		target_close(&t);
	put_bytes("endsig.img", at, "\xfc\x4e\x2b\xa9\x01\0\0\0", 8);
	CHECK_INT(target_open(&t, path_of("endsig.img"), 0, &why, msg, sizeof msg), -EPERM);
	CHECK_INT(why, TGT_FOREIGN);
	CHECK(check_mentions(msg, "MD RAID") && check_mentions(msg, "1.0"), "message: %s", msg);
}

/* WWN=: a multipath disk by its WWN through any path, in the spelling
 * sysfs has (naa./eui.) or multipath's (3.../2...), case and trailing
 * spaces aside; never a partition, never a prefix. */
static void wwn_selector(void)
{
	struct kdi_super sb_b, sb_c;
	char out[512];

	fake_tree(&sb_b, &sb_c);
	mkdirs("sys/devices/sdp/device");
	symlink("../../devices/sdp", path_of("sys/class/block/sdp"));
	put_text("sys/devices/sdp/device/wwid", "naa.6001405ABCDEF0123456789   \n");
	put_text("sys/devices/nvme0n1/wwid", "eui.0025388b91b1e3e4\n");
	put_file("dev/sdp", "", 0, 4096);
	CHECK_INT(find("WWN=36001405abcdef0123456789", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/sdp"));
	CHECK_INT(find("WWN=naa.6001405abcdef0123456789", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/sdp"));
	CHECK_INT(find("WWN=20025388B91B1E3E4", out, sizeof out), 0);
	CHECK_STR(out, path_of("dev/nvme0n1"));
	CHECK_INT(find("WWN=36001405abcdef", out, sizeof out), -ENOENT);	/* no prefix match */
	CHECK_INT(find("WWN=6001405abcdef0123456789", out, sizeof out), -ENOENT);	/* the type digit counts */
	struct selector s[SEL_MAX];
	char bad[80];
	CHECK_INT(selectors_parse("WWN=", s, SEL_MAX, bad, sizeof bad), -EINVAL);
	CHECK_INT(selectors_parse("WWN=3600a,LABEL=x", s, SEL_MAX, bad, sizeof bad), 2);
	CHECK(s[0].type == SEL_WWN && !strcmp(s[0].value, "3600a"), "WWN= parsed");
	CHECK_STR(selector_name(SEL_WWN), "WWN=");
}

int main(void)
{
	mkroot();
	RUN(selectors_valid);
	RUN(selectors_invalid);
	RUN(selector_find_fake_sysfs);
	RUN(target_open_files);
	RUN(source_open_files);
	RUN(data_offset_one_rule);
	RUN(target_open_end_signature);
	RUN(wwn_selector);
	return check_done();
}
