#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/util.h"
#include "gpt.h"

static const struct {
	const char *prefix;
	enum sel_type type;
} sel_names[] = {
	{ "SERIAL=", SEL_SERIAL }, { "LABEL=", SEL_LABEL }, { "UUID=", SEL_UUID },
	{ "PARTUUID=", SEL_PARTUUID }, { "PARTLABEL=", SEL_PARTLABEL }, { "WWN=", SEL_WWN },
};

int selector_text_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\'' || s[i] == '\\')
			return 0;
	return 1;
}

const char *selector_name(enum sel_type t)
{
	for (size_t i = 0; i < ARRAY_SIZE(sel_names); i++)
		if (sel_names[i].type == t)
			return sel_names[i].prefix;
	return "";
}

int selectors_parse(const char *list, struct selector *out, int max, char *bad, size_t badsz)
{
	int n = 0;
	const char *p = list;

	if (!list || !*list) {
		snprintf(bad, badsz, "(empty)");
		return -EINVAL;
	}
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char word[192];
		if (len == 0 || len >= sizeof word || n >= max) {
			snprintf(bad, badsz, "%.*s", (int)MIN(len, 60), p);
			return -EINVAL;
		}
		memcpy(word, p, len);
		word[len] = 0;
		struct selector *s = &out[n];
		int ok = 0;
		if (!strncmp(word, "/dev/", 5) && !strstr(word, "/../")) {
			s->type = SEL_PATH;
			ok = strlen(word) < sizeof s->value;
			if (ok)
				memcpy(s->value, word, strlen(word) + 1);
		}
		for (size_t i = 0; !ok && i < ARRAY_SIZE(sel_names); i++) {
			size_t pl = strlen(sel_names[i].prefix);
			if (!strncmp(word, sel_names[i].prefix, pl) && word[pl] &&
			    strlen(word + pl) < sizeof s->value) {
				s->type = sel_names[i].type;
				memcpy(s->value, word + pl, strlen(word + pl) + 1);
				ok = 1;
			}
		}
		if (!ok) {
			snprintf(bad, badsz, "%s", word);
			return -EINVAL;
		}
		n++;
		p += len;
		if (*p == ',')
			p++;
	}
	return n;
}

static int read_attr(const struct sysroot *r, const char *name, const char *attr,
		     char *buf, size_t sz)
{
	char path[512];

	snprintf(path, sizeof path, "%s/class/block/%s/%s", r->sys, name, attr);
	return read_text_file(path, buf, sz) < 0 ? -ENOENT : 0;
}

/* A SCSI disk (and a SATA one, through libata's translation) has no
 * serial attribute: its serial is the Unit Serial Number VPD page (0x80),
 * which the kernel keeps raw in device/vpd_pg80, as udev's
 * ID_SERIAL_SHORT reads it. SPC layout: byte 1 the page code, bytes 2-3
 * the length, then ASCII (ATA's 20 bytes come padded with spaces). */
static int read_vpd_serial(const struct sysroot *r, const char *name, char *v, size_t sz)
{
	char path[512];
	uint8_t page[4 + 255];

	snprintf(path, sizeof path, "%s/class/block/%s/device/vpd_pg80", r->sys, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	ssize_t n = read_full_at(fd, page, sizeof page, 0);
	close(fd);
	if (n < 4 || page[1] != 0x80)
		return -ENOENT;
	size_t len = MIN((size_t)(page[2] << 8 | page[3]), (size_t)n - 4);
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < sz && page[4 + i]; i++)
		v[k++] = (char)page[4 + i];
	while (k > 0 && v[k - 1] == ' ')
		k--;
	v[k] = 0;
	return k ? 0 : -ENOENT;
}

/* A USB disk's serial is its USB device's iSerialNumber (the device's
 * serial attribute), which udev's ID_SERIAL_SHORT reads: usb-storage
 * has sd skip the VPD pages (bridges hang on them), so there is no
 * vpd_pg80. The USB device is the first node above the disk on the usb
 * bus with an idVendor (the interface under it has none); its root hub's
 * serial is the controller's PCI name, never the disk's. */
static int read_usb_serial(const struct sysroot *r, const char *name, char *v, size_t sz)
{
	char path[PATH_MAX + 32], dir[PATH_MAX], top[PATH_MAX], sub[PATH_MAX];

	snprintf(path, sizeof path, "%s/class/block/%s/device", r->sys, name);
	if (!realpath(path, dir))
		return -ENOENT;
	snprintf(path, sizeof path, "%s/devices", r->sys);
	if (!realpath(path, top))
		return -ENOENT;
	size_t tl = strlen(top);
	while (strlen(dir) > tl && !strncmp(dir, top, tl) && dir[tl] == '/') {
		snprintf(path, sizeof path, "%s/subsystem", dir);
		ssize_t n = readlink(path, sub, sizeof sub - 1);
		if (n > 0) {
			sub[n] = 0;
			const char *b = strrchr(sub, '/');
			snprintf(path, sizeof path, "%s/idVendor", dir);
			if (!strcmp(b ? b + 1 : sub, "usb") && access(path, F_OK) == 0) {
				snprintf(path, sizeof path, "%s/serial", dir);
				return read_text_file(path, v, sz) > 0 ? 0 : -ENOENT;
			}
		}
		*strrchr(dir, '/') = 0;
	}
	return -ENOENT;
}

/* Serial numbers: virtio-blk has block/X/serial, NVMe device/serial (the
 * controller's, or the subsystem's under multipath), SCSI and SATA disks
 * VPD page 0x80, USB disks their USB device's. Vendors pad with spaces,
 * so compare trimmed. */
int block_serial(const struct sysroot *r, const char *name, char *v, size_t sz)
{
	if (read_attr(r, name, "serial", v, sz) && read_attr(r, name, "device/serial", v, sz) &&
	    read_vpd_serial(r, name, v, sz) && read_usb_serial(r, name, v, sz))
		return -ENOENT;
	size_t skip = strspn(v, " ");
	memmove(v, v + skip, strlen(v + skip) + 1);
	return v[0] ? 0 : -ENOENT;
}

static int match_serial(const struct sysroot *r, const char *name, const char *want)
{
	char v[256];

	return block_serial(r, name, v, sizeof v) == 0 && !strcmp(v, want);
}

/* A WWN in one spelling: sysfs writes a SCSI disk's designator as
 * "naa.HEX" or "eui.HEX" (device/wwid; an NVMe namespace's wwid the same
 * way), multipath and scsi_id as the designator type's digit and the hex
 * ("3HEX", "2HEX": /sys/block/dm-N/dm/uuid is "mpath-" and that). Lower
 * case, trailing spaces dropped. */
static void wwn_norm(const char *in, char *out, size_t sz)
{
	static const struct { const char *pre; char digit; } kinds[] = { { "naa.", '3' }, { "eui.", '2' } };
	size_t k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strncasecmp(in, kinds[i].pre, 4) && sz > 1) {
			out[k++] = kinds[i].digit;
			in += 4;
			break;
		}
	for (; *in && k + 1 < sz; in++)
		out[k++] = (char)(*in >= 'A' && *in <= 'Z' ? *in - 'A' + 'a' : *in);
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = 0;
}

/* Any path of a multipath disk matches: the crash kernel has no
 * dm-multipath, and each path is the whole disk. */
int block_wwid(const struct sysroot *r, const char *name, char *v, size_t sz)
{
	char raw[256];

	if (read_attr(r, name, "wwid", raw, sizeof raw) && read_attr(r, name, "device/wwid", raw, sizeof raw))
		return -ENOENT;
	wwn_norm(raw, v, sz);
	return v[0] ? 0 : -ENOENT;
}

static int match_wwn(const struct sysroot *r, const char *name, const char *want)
{
	char a[256], b[256];

	if (block_wwid(r, name, a, sizeof a) < 0)
		return 0;
	wwn_norm(want, b, sizeof b);
	return a[0] && !strcmp(a, b);
}

static int match_claim(const struct sysroot *r, const char *name, const struct selector *sel)
{
	char path[300];
	uint8_t head[KDI_SB_AREA];
	struct kdi_super sb;

	snprintf(path, sizeof path, "%s/%s", r->dev, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ssize_t n = read_full_at(fd, head, sizeof head, 0);
	close(fd);
	if (n < (ssize_t)sizeof sb || super_decode(head, n, &sb) < 0)
		return 0;
	if (sel->type == SEL_LABEL)
		return !strcmp(sb.label, sel->value);
	uint8_t want[16];
	return uuid_parse(sel->value, want) == 0 && !memcmp(want, sb.uuid, 16);
}

static int match_part(const struct sysroot *r, const char *name, const struct selector *sel)
{
	char v[64], parent[300], link[512];
	uint64_t partno;
	struct gpt_part gp;

	if (read_attr(r, name, "partition", v, sizeof v) || parse_u64(v, 10, &partno) < 0)
		return 0;
	/* The parent disk is the directory above the partition in sysfs. */
	snprintf(link, sizeof link, "%s/class/block/%s", r->sys, name);
	char *real = realpath(link, NULL);
	if (!real)
		return 0;
	char *slash = strrchr(real, '/');
	if (slash)
		*slash = 0;
	slash = strrchr(real, '/');
	snprintf(parent, sizeof parent, "%s/%s", r->dev, slash ? slash + 1 : real);
	free(real);
	if (gpt_lookup(parent, (unsigned)partno, &gp) < 0)
		return 0;
	if (sel->type == SEL_PARTUUID)
		return !strcasecmp(gp.uuid, sel->value);
	return gp.has_name && !strcmp(gp.name, sel->value);
}

int selector_matches(const struct sysroot *r, const struct selector *s, const char *name)
{
	switch (s->type) {
	case SEL_SERIAL: return match_serial(r, name, s->value);
	case SEL_LABEL:
	case SEL_UUID: return match_claim(r, name, s);
	case SEL_PARTUUID:
	case SEL_PARTLABEL: return match_part(r, name, s);
	case SEL_WWN: return match_wwn(r, name, s->value);
	case SEL_PATH: break;
	}
	return 0;
}

int selector_find(const struct sysroot *r, const struct selector *s, char *path, size_t sz)
{
	if (s->type == SEL_PATH) {
		struct stat st;
		if (stat(s->value, &st) < 0)
			return -ENOENT;
		snprintf(path, sz, "%s", s->value);
		return 0;
	}
	char dir[300];
	snprintf(dir, sizeof dir, "%s/class/block", r->sys);
	DIR *d = opendir(dir);
	if (!d)
		return -ENOENT;
	int found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		found = selector_matches(r, s, de->d_name);
		if (found)
			snprintf(path, sz, "%s/%s", r->dev, de->d_name);
	}
	closedir(d);
	return found ? 0 : -ENOENT;
}

/* ---- opening ---- */

static int refuse(enum target_refusal *why, enum target_refusal w, char *msg, size_t sz,
		  const char *fmt, const char *a, const char *b)
{
	*why = w;
	snprintf(msg, sz, fmt, a, b);
	return -EPERM;
}

static int check(struct target *t, enum target_refusal *why, char *msg, size_t msgsz)
{
	struct probe p;
	int r = probe_fd(&p, t->fd, t->size);

	if (r < 0)
		return r;
	if (p.foreign)
		return refuse(why, TGT_FOREIGN, msg, msgsz,
			      "%s holds %s: it is not a dump device, nothing written", t->path, p.foreign);
	if (p.claim_damaged)
		return refuse(why, TGT_DAMAGED, msg, msgsz,
			      "%s has %s: run 'kdumpinit format' on it again if it is yours", t->path,
			      probe_describe(&p));
	if (!p.claimed)
		return refuse(why, TGT_UNCLAIMED, msg, msgsz,
			      "%s holds %s: claim it first with 'kdumpinit format' (nothing written)",
			      t->path, probe_describe(&p));
	if (p.nonzero) {
		char at[120];
		snprintf(at, sizeof at, "a non-zero byte at offset %llu, where format left zeros,",
			 (unsigned long long)p.nonzero_at);
		return refuse(why, TGT_OVERWRITTEN, msg, msgsz,
			      "%s carries a kdumpinit claim, but %s shows that something else has "
			      "written to it since: refusing to write (format it again if it is yours)",
			      t->path, at);
	}
	t->sb = p.sb;
	t->base = p.sb.data_offset;
	t->limit = t->size;
	t->grows = !t->is_blockdev && !p.sb.dev_size;
	if (t->grows)
		t->limit = TARGET_NO_END;	/* as when it was made */
	if (t->limit < t->base + (64u << 10))
		return refuse(why, TGT_TOO_SMALL, msg, msgsz, "%s is too small for a dump%s",
			      t->path, "");
	return 0;
}

int target_open(struct target *t, const char *path, int may_create,
		enum target_refusal *why, char *msg, size_t msgsz)
{
	memset(t, 0, sizeof *t);
	*why = TGT_OK;
	msg[0] = 0;
	snprintf(t->path, sizeof t->path, "%s", path);
	/* O_EXCL on a block device fails with EBUSY while it is mounted or
	 * held by anyone: a dump never goes to a device in use. */
	mode_t kind;
	t->fd = open_file_or_blockdev(path, O_RDWR | O_CLOEXEC | O_EXCL, 0, &kind);
	if (t->fd == -ENOENT && may_create) {
		/* A new file is ours by construction: claim it now, so that the
		 * same reader handles files and devices. */
		t->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (t->fd < 0)
			return -errno;
		uint8_t area[KDI_SB_AREA];
		super_init(&t->sb, 0, NULL);
		super_encode(&t->sb, area);
		int r = write_full_at(t->fd, area, sizeof area, 0);
		/* Zero (sparse) up to data_offset, as format leaves a claim: a
		 * capture that writes nothing still leaves a valid, empty one. */
		if (!r && ftruncate(t->fd, t->sb.data_offset) < 0)
			r = -errno;
		if (r < 0) {
			close(t->fd);
			unlink(path);
			return r;
		}
		t->created = t->grows = 1;
		t->base = t->sb.data_offset;
		t->limit = TARGET_NO_END;	/* the filesystem says when it is full */
		return 0;
	}
	if (t->fd == -EISDIR || t->fd == -ENOTBLK) {
		int r = refuse(why, TGT_NOT_TARGET, msg, msgsz,
			       "%s is %s, not a regular file or block device", path,
			       file_kind_name(t->fd == -EISDIR ? S_IFDIR : kind));
		t->fd = -1;
		return r;
	}
	if (t->fd < 0) {
		int r = t->fd;
		t->fd = -1;
		return r;
	}
	int64_t sz = fd_size(t->fd, &t->is_blockdev);
	if (sz < 0) {
		close(t->fd);
		t->fd = -1;
		return (int)sz;
	}
	t->size = sz;
	int r = check(t, why, msg, msgsz);
	if (r < 0) {
		close(t->fd);
		t->fd = -1;
	}
	return r;
}

int source_open(struct target *t, const char *path, enum target_refusal *why,
		char *msg, size_t msgsz)
{
	struct probe p;

	memset(t, 0, sizeof *t);
	*why = TGT_OK;
	msg[0] = 0;
	snprintf(t->path, sizeof t->path, "%s", path);
	mode_t kind;
	t->fd = open_file_or_blockdev(path, O_RDONLY | O_CLOEXEC, 0, &kind);
	if (t->fd == -ENOTBLK) {
		*why = TGT_NOT_TARGET;
		snprintf(msg, msgsz, "%s is %s, not a regular file or block device", path, file_kind_name(kind));
		t->fd = -1;
		return -ENOENT;
	}
	if (t->fd < 0) {
		int r = t->fd;
		t->fd = -1;
		return r;
	}
	int64_t sz = fd_size(t->fd, &t->is_blockdev);
	int r = sz < 0 ? (int)sz : probe_fd(&p, t->fd, sz);
	if (r < 0)
		goto fail;
	t->size = sz;
	if (!p.claimed) {
		*why = p.claim_damaged ? TGT_DAMAGED : p.foreign ? TGT_FOREIGN : TGT_UNCLAIMED;
		snprintf(msg, msgsz, "%s holds %s, not a kdumpinit dump device", path, probe_describe(&p));
		r = -ENOENT;
		goto fail;
	}
	t->sb = p.sb;
	t->base = p.sb.data_offset;
	t->limit = t->size;	/* for reading: what is there */
	t->grows = !t->is_blockdev && !p.sb.dev_size;
	return 0;
fail:
	close(t->fd);
	t->fd = -1;
	return r;
}

void target_close(struct target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}
