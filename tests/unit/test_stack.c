/* Unit tests for config/stack.c on a fake sysfs: the tables recorded for
 * an LVM volume (linear, striped) and an md RAID1 array (its mirror), and
 * the stacked devices refused, each with what it is and what to use. */
#define CHECK_PREFIX "stack"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "../../config/stack.h"

#include "fakesys.h"

static void mkroot(void)
{
	const char *d = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/kdi-stack-XXXXXX", d && *d ? d : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(sys, sizeof sys, "%s/sys", root);
	snprintf(dev, sizeof dev, "%s/dev", root);
}

/* A block device at sys/devices/PATH (its last component its name), with
 * its class/block and dev/block links and a /dev node (a regular file). */
static void blk(const char *path, const char *majmin)
{
	char p[512], l[512];
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	snprintf(p, sizeof p, "sys/devices/%s", path);
	mkdirs(p);
	snprintf(l, sizeof l, "sys/class/block/%s", name);
	put_link(p, l);
	snprintf(l, sizeof l, "sys/dev/block/%s", majmin);
	put_link(p, l);
	snprintf(l, sizeof l, "dev/%s", name);
	put_text(l, "");
}

/* dev/NAME: a GPT disk whose partition k (1, 2) has GUID bytes 0x10*k+i. */
static void gpt_disk(const char *name)
{
	static uint8_t d[64 * 1024];
	char rel[200];

	memset(d, 0, sizeof d);
	memcpy(d + 512, "EFI PART", 8);
	d[512 + 72] = 2;
	d[512 + 80] = 128;
	d[512 + 84] = 128;
	for (int k = 0; k < 2; k++) {
		uint8_t *e = d + 1024 + 128 * k;
		e[0] = 0x11;
		for (int i = 0; i < 16; i++)
			e[16 + i] = (uint8_t)(0x10 * (k + 1) + i);
	}
	snprintf(rel, sizeof rel, "dev/%s", name);
	put_bin(rel, d, sizeof d);
}

#define SDA1 "13121110-1514-1716-1819-1a1b1c1d1e1f"
#define SDA2 "23222120-2524-2726-2829-2a2b2c2d2e2f"

static void dm(const char *name, const char *majmin, const char *uuid, const char *dmname)
{
	char p[300], rel[400];

	snprintf(p, sizeof p, "virtual/block/%s", name);
	blk(p, majmin);
	snprintf(rel, sizeof rel, "sys/devices/virtual/block/%s/dm/uuid", name);
	put_text(rel, uuid);
	snprintf(rel, sizeof rel, "sys/devices/virtual/block/%s/dm/name", name);
	put_text(rel, dmname);
}

static void tree(void)
{
	blk("pci/sda", "8:0");
	blk("pci/sda/sda1", "8:1");
	blk("pci/sda/sda2", "8:2");
	put_text("sys/devices/pci/sda/sda1/partition", "1");
	put_text("sys/devices/pci/sda/sda2/partition", "2");
	gpt_disk("sda");
	blk("pci/vdb", "252:16");
	put_text("sys/devices/pci/vdb/serial", "dumpdisk");
	blk("pci/vdc", "252:32");	/* no serial */
	blk("pci/vdd", "252:48");
	put_text("sys/devices/pci/vdd/serial", "has space");
	dm("dm-0", "253:0", "LVM-abc", "vg-dump");
	dm("dm-1", "253:1", "LVM-def", "vg-stripes");
	dm("dm-2", "253:2", "LVM-ghi", "vg-thin");
	dm("dm-3", "253:3", "CRYPT-LUKS2-00-x", "dump_crypt");
	dm("dm-4", "253:4", "mpath-3600140512345", "mpatha");
	dm("dm-5", "253:5", "LVM-jkl", "vg-onmd");
	dm("dm-6", "253:6", "LVM-mno", "vg-noserial");
	dm("dm-7", "253:7", "LVM-pqr", "vg-badserial");
	dm("dm-8", "253:8", "LVM-stu", "vg-snap");
	dm("dm-9", "253:9", "LVM-vwx", "vg-wwn");
	blk("pci/vde", "252:64");	/* a WWN and a serial: the WWN names it */
	put_text("sys/devices/pci/vde/device/wwid", "naa.600A0B80001234\n");
	put_text("sys/devices/pci/vde/serial", "shared-serial");
	/* md0: RAID1 over sda1 (slot 0, write-mostly) and vdb (slot 1) */
	blk("virtual/block/md0", "9:0");
	put_text("sys/devices/virtual/block/md0/size", "204800");
	put_text("sys/devices/virtual/block/md0/md/level", "raid1");
	put_text("sys/devices/virtual/block/md0/md/metadata_version", "1.2");
	put_text("sys/devices/virtual/block/md0/md/raid_disks", "2");
	put_text("sys/devices/virtual/block/md0/md/dev-sda1/state", "in_sync,write_mostly");
	put_text("sys/devices/virtual/block/md0/md/dev-sda1/offset", "2048");
	put_text("sys/devices/virtual/block/md0/md/dev-vdb/state", "in_sync");
	put_text("sys/devices/virtual/block/md0/md/dev-vdb/offset", "264192");
	put_link("sys/devices/virtual/block/md0/md/dev-sda1", "sys/devices/virtual/block/md0/md/rd0");
	put_link("sys/devices/virtual/block/md0/md/dev-vdb", "sys/devices/virtual/block/md0/md/rd1");
	blk("virtual/block/md0/md0p1", "259:0");
	put_text("sys/devices/virtual/block/md0/md0p1/partition", "1");
	blk("virtual/block/md1", "9:1");
	put_text("sys/devices/virtual/block/md1/size", "204800");
	put_text("sys/devices/virtual/block/md1/md/level", "raid5");
	blk("virtual/block/md2", "9:2");
	put_text("sys/devices/virtual/block/md2/size", "204800");
	put_text("sys/devices/virtual/block/md2/md/level", "raid1");
	put_text("sys/devices/virtual/block/md2/md/metadata_version", "external:/md127/0");
	/* md3: RAID1 whose only mirror is faulty */
	blk("virtual/block/md3", "9:3");
	put_text("sys/devices/virtual/block/md3/size", "204800");
	put_text("sys/devices/virtual/block/md3/md/level", "raid1");
	put_text("sys/devices/virtual/block/md3/md/metadata_version", "0.90");
	put_text("sys/devices/virtual/block/md3/md/raid_disks", "1");
	put_text("sys/devices/virtual/block/md3/md/dev-sda2/state", "faulty");
	put_text("sys/devices/virtual/block/md3/md/dev-sda2/offset", "0");
	put_link("sys/devices/virtual/block/md3/md/dev-sda2", "sys/devices/virtual/block/md3/md/rd0");
}

/* The kernel's tables, as DM_TABLE_STATUS gives them. */
static int fake_table(const char *name, struct dmctl_target *out, int max)
{
	static const struct { const char *dm; uint64_t start, len; const char *type, *params; } t[] = {
		{ "vg-dump", 0, 20480, "linear", "8:2 2048" },
		{ "vg-dump", 20480, 8192, "linear", "252:16 10240" },
		{ "vg-stripes", 0, 4096, "striped", "2 128 8:1 2048 252:16 2048" },
		{ "vg-thin", 0, 4096, "thin", "253:9 1" },
		{ "vg-onmd", 0, 4096, "linear", "9:0 2048" },
		{ "vg-noserial", 0, 4096, "linear", "252:32 2048" },
		{ "vg-badserial", 0, 4096, "linear", "252:48 2048" },
		{ "vg-snap", 0, 4096, "linear", "8:1 0" },
		{ "vg-snap", 4096, 4096, "snapshot-origin", "253:10" },
		{ "vg-wwn", 0, 4096, "linear", "252:64 2048" },
	};
	int n = 0;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		if (strcmp(t[i].dm, name))
			continue;
		if (n == max)
			return -E2BIG;
		out[n].start = t[i].start;
		out[n].len = t[i].len;
		snprintf(out[n].type, sizeof out[n].type, "%s", t[i].type);
		snprintf(out[n].params, sizeof out[n].params, "%s", t[i].params);
		n++;
	}
	return n ? n : -ENXIO;
}

static void recorded(void)
{
	static const struct { unsigned maj, min; const char *word, *what; } c[] = {
		{ 253, 0, "20480:linear:PARTUUID=" SDA2 "+2048,8192:linear:SERIAL=dumpdisk+10240",
		  "an LVM logical volume (vg-dump), 2 segments over 2 devices" },
		{ 253, 1, "4096:striped:128:PARTUUID=" SDA1 "+2048:SERIAL=dumpdisk+2048",
		  "an LVM logical volume (vg-stripes), 1 segment over 2 devices" },
		/* slot 0 is write-mostly: the mirror in slot 1 */
		{ 9, 0, "204800:linear:SERIAL=dumpdisk+264192", "an md RAID array (md0, raid1), its mirror vdb (slot 1)" },
		{ 253, 9, "4096:linear:WWN=3600a0b80001234+2048", "an LVM logical volume (vg-wwn), 1 segment over 1 device" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct dm_table t;
		char what[400] = "", word[DMT_WORD_MAX + 1] = "", why[200];
		int r = stack_record(&sr, fake_table, c[i].maj, c[i].min, &t, what, sizeof what);
		CHECK(r == STACK_TABLE, "%u:%u: %d (%s)", c[i].maj, c[i].min, r, what);
		CHECK_STR(what, c[i].what);
		if (r == STACK_TABLE)
			CHECK_INT(dmtable_format(&t, word, sizeof word, why, sizeof why), 0);
		CHECK_STR(word, c[i].word);
	}
}

static void refused(void)
{
	static const struct { unsigned maj, min; int want; const char *says; } c[] = {
		{ 253, 2, -EOPNOTSUPP, "a thin target" },
		{ 253, 3, -EOPNOTSUPP, "no key" },
		{ 253, 5, -EOPNOTSUPP, "itself a stacked device" },
		{ 253, 6, -EOPNOTSUPP, "no WWN or serial number" },
		{ 253, 7, -EOPNOTSUPP, "not printable, or with space" },
		{ 253, 8, -EOPNOTSUPP, "a snapshot-origin target" },
		{ 9, 1, -EOPNOTSUPP, "only a RAID1 mirror" },
		{ 9, 2, -EOPNOTSUPP, "metadata 'external" },
		{ 9, 3, -EOPNOTSUPP, "no mirror in sync" },
		{ 259, 0, -EOPNOTSUPP, "a partition of an md array" },
		{ 253, 99, STACK_PLAIN, "" },	/* sysfs does not know it */
		{ 253, 4, STACK_PLAIN, "any of its paths, by LABEL=, UUID= or WWN=3600140512345" },
		{ 8, 2, STACK_PLAIN, "" },
		{ 252, 16, STACK_PLAIN, "" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct dm_table t;
		char what[400] = "";
		int r = stack_record(&sr, fake_table, c[i].maj, c[i].min, &t, what, sizeof what);
		CHECK(r == c[i].want, "%u:%u: %d, want %d (%s)", c[i].maj, c[i].min, r, c[i].want, what);
		CHECK(*c[i].says ? check_mentions(what, c[i].says) : !what[0], "%u:%u said '%s', want '%s'", c[i].maj, c[i].min,
		      what, c[i].says);
		/* every refusal says what to use instead */
		CHECK(r != -EOPNOTSUPP || check_mentions(what, "plain partition"), "%u:%u: '%s'",
		      c[i].maj, c[i].min, what);
	}
	/* a table that cannot be read is said, not taken as plain */
	struct dm_table t;
	char what[400];
	CHECK_INT(stack_record(&sr, NULL, 253, 0, &t, what, sizeof what) < 0, 1);
	CHECK(check_mentions(what, "cannot be read"), "said '%s'", what);
}

/* In the crash kernel: a missing device waits; with all of them here the
 * mapping is asked of the control node (a plain file here: the kernel's
 * answer is ENOTTY). */
static void assemble(void)
{
	struct dm_table t;
	char why[200], d[64], what[300];

	CHECK_INT(dmtable_parse("8:linear:SERIAL=nothere+0,8:linear:PARTUUID=" SDA1 "+0", &t, why,
				sizeof why), 0);
	CHECK_INT(stack_assemble(&sr, path_of("control"), &t, STACK_DM_NAME, d, sizeof d, what,
				 sizeof what), -ENOENT);
	CHECK_STR(what, "SERIAL=nothere");
	put_text("control", "");
	CHECK_INT(dmtable_parse("8:linear:PARTUUID=" SDA1 "+0,8:linear:SERIAL=dumpdisk+0", &t, why,
				sizeof why), 0);
	/* the fake /dev holds regular files, not block devices */
	CHECK_INT(stack_assemble(&sr, path_of("control"), &t, STACK_DM_NAME, d, sizeof d, what,
				 sizeof what), -ENOTBLK);
}

int main(void)
{
	mkroot();
	tree();
	RUN(recorded);
	RUN(refused);
	RUN(assemble);
	return check_done();
}
