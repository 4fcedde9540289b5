#include "stack.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/util.h"
#include "gpt.h"

/* The advice every refusal ends with. */
#define USE_INSTEAD "give a plain partition or disk, a linear or striped LVM volume, or an md RAID1 array"

static int refuse(char *what, size_t sz, const char *fmt, const char *a, const char *b)
{
	char head[420];

	snprintf(head, sizeof head, fmt, a, b);
	snprintf(what, sz, "%s: the crash kernel cannot rebuild it; " USE_INSTEAD, head);
	return -EOPNOTSUPP;
}

static int read_num(const char *path, uint64_t *v)
{
	char buf[40];

	return read_text_file(path, buf, sizeof buf) < 0 || parse_u64(buf, 10, v) < 0 ? -ENOENT : 0;
}

/* sysfs's directory of MAJ:MIN, resolved, and its last component. */
static int block_dir(const struct sysroot *r, unsigned maj, unsigned min, char *dir, char *name,
		     size_t namesz)
{
	char link[300];

	snprintf(link, sizeof link, "%s/dev/block/%u:%u", r->sys, maj, min);
	if (!realpath(link, dir))
		return -ENOENT;
	const char *b = strrchr(dir, '/');
	snprintf(name, namesz, "%s", b ? b + 1 : dir);
	return 0;
}

/* A member below a mapping or an array: a plain disk or partition, named
 * by what survives a reboot: a partition by its PARTUUID (GPT's GUID, or
 * the MBR signature and number), a whole disk by its serial; and that name
 * must find this very device here, first. 0, or -EOPNOTSUPP (what). */
static int member_selector(const struct sysroot *r, const char *top, const char *name,
			   struct selector *sel, char *what, size_t sz)
{
	char dir[PATH_MAX], path[PATH_MAX + 40], buf[256], found[300];
	uint64_t partno;

	snprintf(path, sizeof path, "%s/class/block/%s", r->sys, name);
	if (!realpath(path, dir))
		return refuse(what, sz, "%s is on %s, which sysfs does not show", top, name);
	snprintf(path, sizeof path, "%s/dm", dir);
	int nested = access(path, F_OK) == 0;
	snprintf(path, sizeof path, "%s/md", dir);
	nested |= access(path, F_OK) == 0;
	snprintf(path, sizeof path, "%s/partition", dir);
	int part = read_num(path, &partno) == 0;
	if (part) {
		snprintf(path, sizeof path, "%s/../dm", dir);
		nested |= access(path, F_OK) == 0;
		snprintf(path, sizeof path, "%s/../md", dir);
		nested |= access(path, F_OK) == 0;
	}
	if (nested)
		return refuse(what, sz, "%s is on %s, itself a stacked device", top, name);
	struct gpt_part gp;
	if (part) {
		char disk[PATH_MAX];
		snprintf(path, sizeof path, "%s/..", dir);
		if (!realpath(path, disk))
			return refuse(what, sz, "%s is on %s, whose disk sysfs does not show", top, name);
		const char *b = strrchr(disk, '/');
		snprintf(path, sizeof path, "%s/%s", r->dev, b ? b + 1 : disk);
		if (gpt_lookup(path, (unsigned)partno, &gp) < 0)
			return refuse(what, sz, "%s is on %s, a partition with no PARTUUID (no GPT or "
				      "MBR table read)", top, name);
		sel->type = SEL_PARTUUID;
		snprintf(sel->value, sizeof sel->value, "%s", gp.uuid);
	} else {
		/* A whole disk by its WWN where it has one the word can hold:
		 * unique per namespace, where an NVMe serial is the
		 * controller's, shared by its namespaces. */
		sel->type = SEL_WWN;
		if (block_wwid(r, name, buf, sizeof buf) < 0 || strpbrk(buf, ",:+ \"'\\")) {
			sel->type = SEL_SERIAL;
			if (block_serial(r, name, buf, sizeof buf) < 0)
				return refuse(what, sz, "%s is on the whole disk %s, which has no WWN or "
					      "serial number (put it on a partition: PARTUUID=)", top, name);
		}
		if (strlen(buf) >= sizeof sel->value)
			return refuse(what, sz, "%s is on %s, whose name is too long", top, name);
		memcpy(sel->value, buf, strlen(buf) + 1);
	}
	char why[200];
	struct dm_table one = { .ntargets = 1, .ndevs = 1, .t = { { .type = DMT_LINEAR, .len = 1,
								      .ndev = 1 } } };
	one.dev[0].sel = *sel;
	if (dmtable_check(&one, why, sizeof why) < 0) {
		snprintf(buf, sizeof buf, "%s (%s)", name, why);
		return refuse(what, sz, "%s is on %s", top, buf);
	}
	snprintf(path, sizeof path, "%s/%s", r->dev, name);
	if (selector_find(r, sel, found, sizeof found) < 0 || strcmp(found, path)) {
		snprintf(buf, sizeof buf, "%s, whose %s%.100s does not find it alone", name,
			 selector_name(sel->type), sel->value);
		return refuse(what, sz, "%s is on %s", top, buf);
	}
	return 0;
}

/* "MAJ:MIN" -> the member's selector into t->dev[t->ndevs] with offset. */
static int add_member(const struct sysroot *r, const char *top, const char *majmin,
		      const char *offset, struct dm_table *t, char *what, size_t sz)
{
	unsigned ma, mi;
	char dir[PATH_MAX], name[128], end;
	uint64_t off;

	if (sscanf(majmin, "%u:%u%c", &ma, &mi, &end) != 2 || parse_u64(offset, 10, &off) < 0) {
		snprintf(what, sz, "%s: the kernel's table names '%s %s', not MAJ:MIN OFFSET", top,
			 majmin, offset);
		return -EIO;
	}
	if (t->ndevs == DMT_MAX_DEVS)
		return refuse(what, sz, "%s spans more than %s devices", top, "16");
	if (block_dir(r, ma, mi, dir, name, sizeof name) < 0)
		return refuse(what, sz, "%s is on %s, which sysfs does not show", top, majmin);
	struct dmt_dev *d = &t->dev[t->ndevs];
	int e = member_selector(r, top, name, &d->sel, what, sz);
	if (e < 0)
		return e;
	d->offset = off;
	t->ndevs++;
	return 0;
}

/* One target of a mapping's table into t. */
static int add_target(const struct sysroot *r, const char *top, const struct dmctl_target *k,
		      struct dm_table *t, char *what, size_t sz)
{
	char p[sizeof k->params], *save = NULL;
	char *w[2 + 2 * DMT_MAX_DEVS + 1];
	int nw = 0;

	if (strcmp(k->type, "linear") && strcmp(k->type, "striped"))
		return refuse(what, sz, "%s has a %s target", top, k->type);
	if (t->ntargets == DMT_MAX_TARGETS)
		return refuse(what, sz, "%s has more than %s segments", top, "8");
	snprintf(p, sizeof p, "%s", k->params);
	for (char *s = strtok_r(p, " ", &save); s; s = strtok_r(NULL, " ", &save)) {
		if (nw == (int)ARRAY_SIZE(w))
			return refuse(what, sz, "%s spans more than %s devices", top, "16");
		w[nw++] = s;
	}
	struct dmt_target *g = &t->t[t->ntargets];
	memset(g, 0, sizeof *g);
	g->len = k->len;
	g->first = t->ndevs;
	int at = 0;
	uint64_t n = 1;
	if (!strcmp(k->type, "striped")) {
		g->type = DMT_STRIPED;
		/* "N CHUNK", then N pairs; a newer kernel may add feature words */
		if (nw < 2 || parse_u64(w[0], 10, &n) < 0 || !n || n > DMT_MAX_DEVS ||
		    parse_u64(w[1], 10, &g->chunk) < 0 || (uint64_t)nw < 2 + 2 * n) {
			snprintf(what, sz, "%s: the kernel's striped table '%s' is not understood",
				 top, k->params);
			return -EIO;
		}
		at = 2;
	} else if (nw != 2) {
		snprintf(what, sz, "%s: the kernel's linear table '%s' is not understood", top, k->params);
		return -EIO;
	}
	for (uint64_t i = 0; i < n; i++) {
		int e = add_member(r, top, w[at + 2 * i], w[at + 2 * i + 1], t, what, sz);
		if (e < 0)
			return e;
		g->ndev++;
	}
	t->ntargets++;
	return 0;
}

static int record_dm(const struct sysroot *r, const char *dir, stack_table_fn table,
		     struct dm_table *t, char *what, size_t sz)
{
	char path[PATH_MAX + 20], uuid[160], name[160], top[200];
	static struct dmctl_target k[DMCTL_MAX_TARGETS];

	snprintf(path, sizeof path, "%s/dm/uuid", dir);
	if (read_text_file(path, uuid, sizeof uuid) < 0)
		uuid[0] = 0;
	snprintf(path, sizeof path, "%s/dm/name", dir);
	if (read_text_file(path, name, sizeof name) < 0) {
		snprintf(what, sz, "a device-mapper device whose name sysfs does not show");
		return -ENOENT;
	}
	/* kpartx names a partition of a map "partN-" + the map's uuid */
	const char *u = uuid;
	if (!strncmp(u, "part", 4) && strchr(u, '-'))
		u = strchr(u, '-') + 1;
	if (!strncmp(u, "mpath-", 6)) {
		/* no dm-multipath there: each path is a plain disk showing
		 * the claim, and the whole map's WWN is every path's */
		if (u == uuid)
			snprintf(what, sz, "a multipath map (%s): the crash kernel takes any of its "
				 "paths, by LABEL=, UUID= or WWN=%s", name, u + 6);
		return STACK_PLAIN;
	}
	const int lvm = !strncmp(u, "LVM-", 4);
	snprintf(top, sizeof top, "%s (%s)", lvm ? "an LVM logical volume" :
		 !strncmp(u, "CRYPT-", 6) ? "a dm-crypt mapping" : "a device-mapper device", name);
	if (!strncmp(u, "CRYPT-", 6)) {
		snprintf(what, sz, "%s: the crash kernel has no key to open it; give a plain partition "
			 "or disk, or a linear LVM volume outside the encryption (kdumpinit keygen "
			 "seals the dump instead)", top);
		return -EOPNOTSUPP;
	}
	int n = table ? table(name, k, DMCTL_MAX_TARGETS) :
		dmctl_table(DMCTL_CONTROL, name, k, DMCTL_MAX_TARGETS);
	if (n == -E2BIG)
		return refuse(what, sz, "%s has more than %s segments", top, "8");
	if (n < 0) {
		snprintf(what, sz, "%s: its table cannot be read from %s: %s", top, DMCTL_CONTROL,
			 strerror(-n));
		return n;
	}
	if (n == 0) {
		snprintf(what, sz, "%s has no table loaded", top);
		return -EOPNOTSUPP;
	}
	uint64_t next = 0;
	for (int i = 0; i < n; i++) {
		if (k[i].start != next) {
			snprintf(what, sz, "%s: the kernel's table has a hole at sector %llu", top,
				 (unsigned long long)next);
			return -EIO;
		}
		next += k[i].len;
		int e = add_target(r, top, &k[i], t, what, sz);
		if (e < 0)
			return e;
	}
	char why[200];
	if (dmtable_check(t, why, sizeof why) < 0)
		return refuse(what, sz, "%s: %s", top, why);
	snprintf(what, sz, "%s, %u segment%s over %u device%s", top, t->ntargets,
		 t->ntargets == 1 ? "" : "s", t->ndevs, t->ndevs == 1 ? "" : "s");
	return STACK_TABLE;
}

/* md RAID1: a linear mapping over one mirror, past its data offset. */
static int record_md(const struct sysroot *r, const char *dir, const char *mdname,
		     struct dm_table *t, char *what, size_t sz)
{
	char path[PATH_MAX + 400], level[40], meta[60], top[200], link[300], state[200];
	uint64_t disks, size, off;

	snprintf(path, sizeof path, "%s/md/level", dir);
	if (read_text_file(path, level, sizeof level) < 0)
		level[0] = 0;
	snprintf(top, sizeof top, "an md RAID array (%s, %s)", mdname, level);
	if (strcmp(level, "raid1"))
		return refuse(what, sz, "%s: only a RAID1 mirror can be rebuilt%s", top, "");
	snprintf(path, sizeof path, "%s/md/metadata_version", dir);
	if (read_text_file(path, meta, sizeof meta) < 0 || !strncmp(meta, "external", 8) ||
	    !strcmp(meta, "none"))
		return refuse(what, sz, "%s has metadata '%s' (firmware RAID, or none kept by md)",
			      top, meta);
	snprintf(path, sizeof path, "%s/md/raid_disks", dir);
	int e = read_num(path, &disks);
	snprintf(path, sizeof path, "%s/size", dir);
	if (e < 0 || read_num(path, &size) < 0 || !size) {
		snprintf(what, sz, "%s: its size and disks cannot be read in sysfs", top);
		return -EIO;
	}
	/* The lowest slot in sync and not write-mostly: raid1's resync and
	 * repair copy from the first readable in-sync mirror to the others,
	 * and read_balance avoids write-mostly ones. */
	for (uint64_t s = 0; s < disks && s < 64; s++) {
		snprintf(path, sizeof path, "%s/md/rd%llu", dir, (unsigned long long)s);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		const char *dev = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
		snprintf(path, sizeof path, "%s/md/%s/state", dir, dev);
		if (strncmp(dev, "dev-", 4) || read_text_file(path, state, sizeof state) < 0 ||
		    !strstr(state, "in_sync") || strstr(state, "write_mostly") || strstr(state, "faulty"))
			continue;
		snprintf(path, sizeof path, "%s/md/%s/offset", dir, dev);
		if (read_num(path, &off) < 0)
			continue;
		memset(t, 0, sizeof *t);
		int k = member_selector(r, top, dev + 4, &t->dev[0].sel, what, sz);
		if (k < 0)
			return k;
		t->dev[0].offset = off;
		t->ndevs = t->ntargets = 1;
		t->t[0] = (struct dmt_target){ .type = DMT_LINEAR, .len = size, .first = 0, .ndev = 1 };
		char why[200];
		if (dmtable_check(t, why, sizeof why) < 0)
			return refuse(what, sz, "%s: %s", top, why);
		snprintf(what, sz, "%s, its mirror %s (slot %llu)", top, dev + 4, (unsigned long long)s);
		return STACK_TABLE;
	}
	return refuse(what, sz, "%s has no mirror in sync%s", top, "");
}

int stack_record(const struct sysroot *r, stack_table_fn table, unsigned maj, unsigned min,
		 struct dm_table *t, char *what, size_t sz)
{
	char dir[PATH_MAX], name[128], path[PATH_MAX + 20];

	memset(t, 0, sizeof *t);
	what[0] = 0;
	if (block_dir(r, maj, min, dir, name, sizeof name) < 0)
		return STACK_PLAIN;
	snprintf(path, sizeof path, "%s/dm", dir);
	if (access(path, F_OK) == 0)
		return record_dm(r, dir, table, t, what, sz);
	snprintf(path, sizeof path, "%s/md", dir);
	if (access(path, F_OK) == 0)
		return record_md(r, dir, name, t, what, sz);
	/* A partition of an array (device-mapper makes its partitions maps
	 * of their own). */
	snprintf(path, sizeof path, "%s/partition", dir);
	if (access(path, F_OK) == 0) {
		snprintf(path, sizeof path, "%s/../md", dir);
		if (access(path, F_OK) == 0)
			return refuse(what, sz, "%s is a partition of an md array%s", name, "");
	}
	return STACK_PLAIN;
}

int stack_assemble(const struct sysroot *r, const char *control, const struct dm_table *t,
		   const char *name, char *dev, size_t devsz, char *what, size_t sz)
{
	static struct dmctl_target k[DMT_MAX_TARGETS];
	char path[300];
	unsigned mm[DMT_MAX_DEVS][2];

	for (unsigned i = 0; i < t->ndevs; i++) {
		const struct selector *s = &t->dev[i].sel;
		struct stat st;
		if (selector_find(r, s, path, sizeof path) < 0) {
			snprintf(what, sz, "%s%s", selector_name(s->type), s->value);
			return -ENOENT;
		}
		if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode)) {
			snprintf(what, sz, "%s%s: %s is not a block device", selector_name(s->type),
				 s->value, path);
			return -ENOTBLK;
		}
		mm[i][0] = major(st.st_rdev);
		mm[i][1] = minor(st.st_rdev);
	}
	uint64_t start = 0;
	for (unsigned i = 0; i < t->ntargets; i++) {
		const struct dmt_target *g = &t->t[i];
		size_t len = 0;
		k[i].start = start;
		k[i].len = g->len;
		start += g->len;
		snprintf(k[i].type, sizeof k[i].type, "%s", g->type == DMT_STRIPED ? "striped" : "linear");
		if (g->type == DMT_STRIPED)
			len = (size_t)snprintf(k[i].params, sizeof k[i].params, "%u %llu ", g->ndev,
					       (unsigned long long)g->chunk);
		for (unsigned d = 0; d < g->ndev && len < sizeof k[i].params; d++) {
			const unsigned x = g->first + d;
			len += (size_t)snprintf(k[i].params + len, sizeof k[i].params - len, "%s%u:%u %llu",
						d ? " " : "", mm[x][0], mm[x][1],
						(unsigned long long)t->dev[x].offset);
		}
		if (len >= sizeof k[i].params) {
			snprintf(what, sz, "segment %u: too many devices", i + 1);
			return -E2BIG;
		}
	}
	unsigned ma, mi;
	int e = dmctl_create(control, name, k, (int)t->ntargets, &ma, &mi);
	/* Left by an earlier try that was killed half-way (a probe past its
	 * time): in the crash kernel nobody else makes this name. */
	if (e == -EBUSY && dmctl_remove(control, name) == 0)
		e = dmctl_create(control, name, k, (int)t->ntargets, &ma, &mi);
	if (e < 0) {
		snprintf(what, sz, "creating mapping %s on %s", name, control);
		return e;
	}
	char dir[PATH_MAX];
	if (block_dir(r, ma, mi, dir, dev, devsz) < 0)
		snprintf(dev, devsz, "dm-%u", mi);
	return 0;
}

int stack_top(const struct sysroot *r, const char *name, unsigned *maj, unsigned *min)
{
	char cur[256], path[600], buf[40];

	snprintf(cur, sizeof cur, "%s", name);
	for (int depth = 0; depth < 8; depth++) {
		snprintf(path, sizeof path, "%s/class/block/%s/holders", r->sys, cur);
		DIR *d = opendir(path);
		struct dirent *e = NULL;
		while (d && (e = readdir(d)) && e->d_name[0] == '.')
			;
		if (!e) {
			if (d)
				closedir(d);
			break;
		}
		snprintf(cur, sizeof cur, "%s", e->d_name);
		closedir(d);
	}
	snprintf(path, sizeof path, "%s/class/block/%s/dev", r->sys, cur);
	char end;
	if (read_text_file(path, buf, sizeof buf) < 0 || sscanf(buf, "%u:%u%c", maj, min, &end) != 2)
		return -ENOENT;
	return 0;
}

void stack_top_name(const struct sysroot *r, char *name, size_t sz)
{
	char real[PATH_MAX], top[128];
	unsigned maj, min;

	if (stack_top(r, name, &maj, &min) < 0 ||
	    block_dir(r, maj, min, real, top, sizeof top) < 0)
		return;
	snprintf(name, sz, "%s", top);
}
