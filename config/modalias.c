#include "modalias.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/util.h"

/* snprintf that says when it cut: paths cut short then fail to open, and
 * a reason cut short is still a reason. */
__attribute__((format(printf, 3, 4)))
static int fmt(char *out, size_t sz, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	int n = vsnprintf(out, sz, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}

/* ---- the module tree ---- */

static int slurp(const char *dir, const char *file, char **out, size_t *len, int required)
{
	char path[PATH_MAX];
	struct stat st;

	fmt(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !required) {
			*out = NULL;
			return 0;
		}
		return -errno;
	}
	if (fstat(fd, &st) < 0 || st.st_size > (64 << 20)) {
		int e = st.st_size > (64 << 20) ? -EFBIG : -errno;
		close(fd);
		return e;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	ssize_t n = read_full_at(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	buf[n] = 0;
	*out = buf;
	if (len)
		*len = (size_t)n;
	return 0;
}

static char empty[1];

int modtree_load(struct modtree *t, const char *dir)
{
	int r;

	memset(t, 0, sizeof *t);
	if ((r = slurp(dir, "modules.dep", &t->dep, NULL, 1)) < 0 ||
	    (r = slurp(dir, "modules.alias", &t->alias, NULL, 0)) < 0 ||
	    (r = slurp(dir, "modules.softdep", &t->softdep, NULL, 0)) < 0 ||
	    (r = slurp(dir, "modules.builtin", &t->builtin, NULL, 0)) < 0 ||
	    (r = slurp(dir, "modules.builtin.modinfo", &t->binfo, &t->binfo_len, 0)) < 0) {
		modtree_free(t);
		return r;
	}
	if (!t->alias)
		t->alias = empty;
	if (!t->softdep)
		t->softdep = empty;
	if (!t->builtin)
		t->builtin = empty;
	return 0;
}

void modtree_free(struct modtree *t)
{
	char **p[] = { &t->dep, &t->alias, &t->softdep, &t->builtin, &t->binfo };

	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		if (*p[i] != empty)
			free(*p[i]);
		*p[i] = NULL;
	}
}

/* ---- matching ---- */

static int match_set(const char **pp, char c)
{
	const char *p = *pp;
	int neg = 0, hit = 0;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	/* A ']' first is a member, as in fnmatch. */
	for (int first = 1; *p && (first || *p != ']'); first = 0) {
		char lo = *p++;
		if (*p == '-' && p[1] && p[1] != ']') {
			char hi = p[1];
			p += 2;
			hit |= c >= lo && c <= hi;
		} else {
			hit |= c == lo;
		}
	}
	if (*p != ']')
		return -1;	/* unterminated: the '[' is literal */
	*pp = p + 1;
	return hit != neg;
}

int alias_match(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;

	for (;;) {
		if (*p == '*') {
			star = ++p;
			resume = s;
			continue;
		}
		if (!*p && !*s)
			return 1;
		if (*s) {
			int ok;
			const char *np = p + 1;
			if (*p == '?') {
				ok = 1;
			} else if (*p == '[') {
				const char *q = p + 1;
				int m = match_set(&q, *s);
				ok = m < 0 ? *s == '[' : m;
				if (m >= 0)
					np = q;
			} else {
				ok = *p && *p == *s;
			}
			if (ok) {
				p = np;
				s++;
				continue;
			}
		}
		if (!star || !*resume)
			return 0;
		p = star;
		s = ++resume;
	}
}

/* ---- names ---- */

/* "kernel/drivers/scsi/sd_mod.ko.xz" or "crc-t10dif" -> "crc_t10dif".
 * Stops at end, whitespace, ':' or len. */
static void modname(const char *s, size_t len, char *out, size_t sz)
{
	const char *base = s, *e = s;

	while ((size_t)(e - s) < len && *e && *e != ' ' && *e != '\t' && *e != '\n' && *e != ':') {
		if (*e == '/')
			base = e + 1;
		e++;
	}
	const char *ko = base;
	while (ko < e && strncmp(ko, ".ko", 3))
		ko++;
	size_t n = 0;
	for (const char *c = base; c < ko && n + 1 < sz; c++)
		out[n++] = *c == '-' ? '_' : *c;
	out[n] = 0;
}

/* The line of modules.dep (or modules.builtin) for module name; NULL. */
static const char *find_line(const char *text, const char *name)
{
	char n[64];

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		modname(l, SIZE_MAX, n, sizeof n);
		if (!strcmp(n, name))
			return l;
	}
	return NULL;
}

/* Aliases compare with '-' as '_' outside [sets], as kmod normalises them. */
static void alias_norm(const char *s, size_t len, char *out, size_t sz)
{
	size_t n = 0;
	int inset = 0;

	for (size_t i = 0; i < len && s[i] && n + 1 < sz; i++) {
		char c = s[i];
		if (c == '[')
			inset = 1;
		else if (c == ']')
			inset = 0;
		out[n++] = c == '-' && !inset ? '_' : c;
	}
	out[n] = 0;
}

int modinfo_alias(const char *binfo, size_t len, const char *alias, char *mod, size_t sz)
{
	char pat[256], s[256];

	if (!*alias)
		return 0;
	alias_norm(alias, strlen(alias), s, sizeof s);
	for (size_t i = 0; binfo && i < len; i += strlen(binfo + i) + 1) {
		const char *rec = binfo + i, *dot = strchr(rec, '.');
		if (!dot || strncmp(dot, ".alias=", 7))
			continue;
		alias_norm(dot + 7, strlen(dot + 7), pat, sizeof pat);
		if (alias_match(pat, s)) {
			if (mod)
				modname(rec, (size_t)(dot - rec), mod, sz);
			return 1;
		}
	}
	return 0;
}

int modules_builtin_has(const char *builtin, const char *name)
{
	return builtin && find_line(builtin, name) != NULL;
}

/* ---- the list ---- */

static int listed(const struct modlist *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (l->e[i].kind != MOD_NOTE && !strcmp(l->e[i].name, name))
			return 1;
	for (int i = 0; i < l->nbusy; i++)
		if (!strcmp(l->busy[i], name))
			return 1;
	return 0;
}

static int append(struct modlist *l, enum mod_kind kind, const char *name, const char *why)
{
	if (l->n >= MODS_MAX)
		return -ENOSPC;
	struct modentry *e = &l->e[l->n++];
	e->kind = kind;
	fmt(e->name, sizeof e->name, "%s", name);
	fmt(e->reason, sizeof e->reason, "%s", why);
	return 0;
}

static int add_name(const struct modtree *t, const char *name, const char *why, struct modlist *out);

/* A name or an alias (softdeps may use either, e.g. "crct10dif"): every
 * loadable module it matches, as modprobe loads them all. */
static int add_any(const struct modtree *t, const char *name, const char *why, struct modlist *out,
		   int *found)
{
	char n[64], s[256], pat[256], mod[64];
	int r;

	modname(name, SIZE_MAX, n, sizeof n);
	if (find_line(t->dep, n) || find_line(t->builtin, n)) {
		*found = 1;
		return add_name(t, n, why, out);
	}
	alias_norm(name, strlen(name), s, sizeof s);
	for (const char *l = t->alias; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "alias ", 6))
			continue;
		const char *p = l + 6, *sp = strchr(p, ' '), *nl = strchr(p, '\n');
		if (!sp || (nl && sp > nl))
			continue;
		alias_norm(p, (size_t)(sp - p), pat, sizeof pat);
		if (!alias_match(pat, s))
			continue;
		modname(sp + 1, nl ? (size_t)(nl - sp - 1) : SIZE_MAX, mod, sizeof mod);
		if (!find_line(t->dep, mod))
			continue;
		*found = 1;
		if ((r = add_name(t, mod, why, out)) < 0)
			return r;
	}
	if (!*found && modinfo_alias(t->binfo, t->binfo_len, s, mod, sizeof mod)) {
		*found = 1;
		if (!listed(out, mod))
			return append(out, MOD_BUILTIN, mod, why);
	}
	return 0;
}

/* modules.softdep: "softdep MOD pre: A B post: C". */
static int add_softdeps(const struct modtree *t, const char *name, int post, struct modlist *out)
{
	char why[128], n[64], word[64];
	int r;

	fmt(why, sizeof why, "softdep of %s", name);
	for (const char *l = t->softdep; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "softdep ", 8))
			continue;
		modname(l + 8, SIZE_MAX, n, sizeof n);
		if (strcmp(n, name))
			continue;
		const char *p = l + 8 + strcspn(l + 8, " \t\n");
		int mode = 0;	/* 1 pre, 2 post */
		while (*p && *p != '\n') {
			p += strspn(p, " \t");
			size_t len = strcspn(p, " \t\n");
			if (!len)
				break;
			fmt(word, sizeof word, "%.*s", (int)MIN(len, sizeof word - 1), p);
			p += len;
			if (!strcmp(word, "pre:")) {
				mode = 1;
			} else if (!strcmp(word, "post:")) {
				mode = 2;
			} else if (mode == (post ? 2 : 1)) {
				int found = 0;
				if ((r = add_any(t, word, why, out, &found)) < 0)
					return r;
			}
		}
	}
	return 0;
}

/* kmod's probe order: the dependencies (modules.dep lists them so that
 * the last is loaded first), the pre softdeps, the module, the post ones. */
static int add_name(const struct modtree *t, const char *name, const char *why, struct modlist *out)
{
	char deps[64][64], needed[96];
	int nd = 0, r;

	if (listed(out, name))
		return 0;
	if (find_line(t->builtin, name))
		return append(out, MOD_BUILTIN, name, why);
	const char *l = find_line(t->dep, name);
	if (!l)
		return 0;
	if (out->nbusy >= (int)ARRAY_SIZE(out->busy))
		return -ENOSPC;
	fmt(out->busy[out->nbusy++], sizeof out->busy[0], "%s", name);
	const char *p = strchr(l, ':');
	const char *nl = strchr(l, '\n');
	for (p = p ? p + 1 : l; p && *p && (!nl || p < nl);) {
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t\n");
		if (!len)
			break;
		if (nd >= (int)ARRAY_SIZE(deps)) {
			r = -ENOSPC;
			goto out;
		}
		modname(p, len, deps[nd++], sizeof deps[0]);
		p += len;
	}
	fmt(needed, sizeof needed, "needed by %s", name);
	for (int i = nd - 1; i >= 0; i--)
		if ((r = add_name(t, deps[i], needed, out)) < 0)
			goto out;
	if ((r = add_softdeps(t, name, 0, out)) < 0)
		goto out;
	out->nbusy--;
	if ((r = append(out, MOD_LOAD, name, why)) < 0)
		return r;
	return add_softdeps(t, name, 1, out);
out:
	out->nbusy--;
	return r;
}

int modules_add(const struct modtree *t, const char *name, const char *why, struct modlist *out)
{
	int found = 0;

	return add_any(t, name, why, out, &found);
}

/* ---- sysfs ---- */

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* basename of the target of symlink dir/name, or -ENOENT. */
static int link_base(const char *dir, const char *name, char *out, size_t sz)
{
	char path[PATH_MAX], target[PATH_MAX];

	fmt(path, sizeof path, "%s/%s", dir, name);
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n < 0)
		return -ENOENT;
	target[n] = 0;
	fmt(out, sz, "%s", base_of(target));
	return 0;
}

static int exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	fmt(path, sizeof path, "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

int uevent_modalias(const char *dir, char *out, size_t sz)
{
	char path[PATH_MAX], buf[1024];

	fmt(path, sizeof path, "%s/uevent", dir);
	if (read_text_file(path, buf, sizeof buf) <= 0)
		return -ENOENT;
	for (char *l = buf; l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(l, "MODALIAS=", 9) && l[9])
			return fmt(out, sz, "%s", l + 9);
		l = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

/* One node of the chain: its driver's module, else what its modalias
 * (attribute, or uevent's MODALIAS=) resolves to in the target kernel. */
static int node_modules(const struct modtree *t, const char *dir, const char *tag, struct modlist *out)
{
	char drv[128], mod[64], subsys[64] = "?", why[192], alias[512], n[64];
	int r, found = 0;

	if (link_base(dir, "driver", drv, sizeof drv) < 0)
		return 0;
	link_base(dir, "subsystem", subsys, sizeof subsys);
	fmt(why, sizeof why, "driver of %s (%s)%s%s", base_of(dir), subsys,
		 strcmp(tag, base_of(dir)) ? ", for " : "", strcmp(tag, base_of(dir)) ? tag : "");
	/* The module link exists for a driver loaded as a module (and for some
	 * built-in ones); otherwise the driver's name is often the module's
	 * ("virtio-pci"), though not always ("sd" is sd_mod: the modalias
	 * finds it). */
	if (link_base(dir, "driver/module", mod, sizeof mod) < 0)
		fmt(mod, sizeof mod, "%s", drv);
	modname(mod, SIZE_MAX, n, sizeof n);
	if (find_line(t->dep, n) || find_line(t->builtin, n))
		return add_name(t, n, why, out);
	char path[PATH_MAX];
	fmt(path, sizeof path, "%s/modalias", dir);
	if (read_text_file(path, alias, sizeof alias) > 0 || uevent_modalias(dir, alias, sizeof alias) == 0) {
		fmt(why, sizeof why, "modalias of %s (%s, driver %s)%s%s", base_of(dir), subsys, drv,
			 strcmp(tag, base_of(dir)) ? ", for " : "", strcmp(tag, base_of(dir)) ? tag : "");
		if ((r = add_any(t, alias, why, out, &found)) < 0 || found)
			return r;
	}
	fmt(why, sizeof why, "%s: driver of %s (%s), no module of that name or alias: assumed built in",
		 drv, base_of(dir), subsys);
	for (int i = 0; i < out->n; i++)
		if (out->e[i].kind == MOD_NOTE && !strcmp(out->e[i].reason, why))
			return 0;
	return append(out, MOD_NOTE, drv, why);
}

static int walk_dev(const struct sysroot *r, const struct modtree *t, const char *real,
		    const char *tag, struct modlist *out, int depth);

/* names[0..n) stay in strcmp order with name put in (names has room). */
static void sorted_insert(char names[][64], int n, const char *name)
{
	int at = n;
	while (at > 0 && strcmp(names[at - 1], name) > 0) {
		memcpy(names[at], names[at - 1], 64);
		at--;
	}
	fmt(names[at], 64, "%s", name);
}

/* NVMe multipath (6.1): the namespace's head disk hangs under
 * /sys/devices/virtual/nvme-subsystem/nvme-subsysN, whose nvmeX links
 * name the controllers under their PCI (or fabrics) devices. */
static int walk_links(const struct sysroot *r, const struct modtree *t, const char *dir,
		      const char *prefix, const char *tag, struct modlist *out, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return 0;
	/* readdir order is the filesystem's; sort the few names for a stable list. */
	char names[16][64];
	int n = 0;
	while ((de = readdir(d)) && n < (int)ARRAY_SIZE(names)) {
		/* Controllers are PREFIX<digits>; nvme1n1 there is the head disk. */
		size_t pl = strlen(prefix);
		if (strncmp(de->d_name, prefix, pl) || !de->d_name[pl] ||
		    strspn(de->d_name + pl, "0123456789") != strlen(de->d_name + pl))
			continue;
		if (strlen(de->d_name) >= sizeof names[0])
			continue;
		sorted_insert(names, n++, de->d_name);
	}
	closedir(d);
	for (int i = 0; i < n && rc == 0; i++) {
		char path[PATH_MAX], *real;
		fmt(path, sizeof path, "%s/%s", dir, names[i]);
		if (!(real = realpath(path, NULL)))
			continue;
		rc = walk_dev(r, t, real, tag, out, depth + 1);
		free(real);
	}
	return rc;
}

static int walk_block_real(const struct sysroot *r, const struct modtree *t, const char *real,
			   const char *tag, struct modlist *out, int depth);

/* A block device's lower devices (dm, md: slaves/; NVMe: multipath/). */
static int walk_lower(const struct sysroot *r, const struct modtree *t, const char *dir,
		      const char *sub, const char *tag, struct modlist *out, int depth)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *de;
	char names[16][64];
	int n = 0, rc = 0;

	fmt(path, sizeof path, "%s/%s", dir, sub);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d)) && n < (int)ARRAY_SIZE(names)) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof names[0])
			continue;
		sorted_insert(names, n++, de->d_name);
	}
	closedir(d);
	for (int i = 0; i < n && rc == 0; i++) {
		char p[PATH_MAX], *real;
		fmt(p, sizeof p, "%s/%s/%s", dir, sub, names[i]);
		if (!(real = realpath(p, NULL)))
			continue;
		rc = walk_block_real(r, t, real, tag, out, depth + 1);
		free(real);
	}
	return rc;
}

/* From a device directory up to /sys/devices: each node's driver. */
static int walk_dev(const struct sysroot *r, const struct modtree *t, const char *real,
		    const char *tag, struct modlist *out, int depth)
{
	char top[PATH_MAX], dir[PATH_MAX], subsys[64], *rt;
	int rc;

	if (depth > 8)
		return -ELOOP;
	fmt(top, sizeof top, "%s/devices", r->sys);
	if ((rt = realpath(top, NULL))) {
		fmt(top, sizeof top, "%s", rt);
		free(rt);
	}
	fmt(dir, sizeof dir, "%s", real);
	while (strlen(dir) > strlen(top) && !strncmp(dir, top, strlen(top))) {
		if ((rc = node_modules(t, dir, tag, out)) < 0)
			return rc;
		if (link_base(dir, "subsystem", subsys, sizeof subsys) == 0 &&
		    !strcmp(subsys, "nvme-subsystem") &&
		    (rc = walk_links(r, t, dir, "nvme", tag, out, depth)) < 0)
			return rc;
		*strrchr(dir, '/') = 0;
	}
	return 0;
}

/* dm targets that are modules of their own, by the dm uuid's prefix (the
 * table itself is not in sysfs). linear and striped are in dm_mod. */
static const struct {
	const char *prefix, *module;
} dm_uuids[] = {
	{ "CRYPT-", "dm_crypt" }, { "mpath-", "dm_multipath" },
};

static int walk_block_real(const struct sysroot *r, const struct modtree *t, const char *real,
			   const char *tag, struct modlist *out, int depth)
{
	char path[PATH_MAX], v[256], why[160];
	const char *name = base_of(real);
	int rc;

	if (depth > 8)
		return -ELOOP;
	if (exists(real, "dm")) {
		fmt(why, sizeof why, "device-mapper %s%s%s", name, strcmp(tag, name) ? ", for " : "",
			 strcmp(tag, name) ? tag : "");
		if ((rc = modules_add(t, "dm_mod", why, out)) < 0)
			return rc;
		fmt(path, sizeof path, "%s/dm/uuid", real);
		if (read_text_file(path, v, sizeof v) > 0)
			for (size_t i = 0; i < ARRAY_SIZE(dm_uuids); i++)
				if (!strncmp(v, dm_uuids[i].prefix, strlen(dm_uuids[i].prefix)) &&
				    (rc = modules_add(t, dm_uuids[i].module, why, out)) < 0)
					return rc;
	}
	/* No crash kernel assembles an md array (no mdadm): a RAID1 is
	 * rebuilt there as a device-mapper mapping over one mirror
	 * (config/stack.h), and other levels are refused at arming. */
	if (exists(real, "md")) {
		fmt(why, sizeof why, "md array %s (rebuilt with device-mapper)%s%s", name,
		    strcmp(tag, name) ? ", for " : "", strcmp(tag, name) ? tag : "");
		if ((rc = modules_add(t, "dm_mod", why, out)) < 0)
			return rc;
	}
	if ((rc = walk_dev(r, t, real, tag, out, depth)) < 0)
		return rc;
	/* A partition's slaves are its disk's; the disk is the directory above. */
	if ((rc = walk_lower(r, t, real, "slaves", tag, out, depth)) < 0 ||
	    (rc = walk_lower(r, t, real, "multipath", tag, out, depth)) < 0)
		return rc;
	if (exists(real, "partition")) {
		char disk[PATH_MAX];
		fmt(disk, sizeof disk, "%s", real);
		*strrchr(disk, '/') = 0;
		if ((rc = walk_lower(r, t, disk, "slaves", tag, out, depth)) < 0 ||
		    (rc = walk_lower(r, t, disk, "multipath", tag, out, depth)) < 0)
			return rc;
	}
	return 0;
}

int modules_for_block(const struct sysroot *r, const struct modtree *t, const char *name,
		      struct modlist *out)
{
	char path[PATH_MAX], *real;

	fmt(path, sizeof path, "%s/class/block/%s", r->sys, name);
	if (strchr(name, '/') || !(real = realpath(path, NULL)))
		return -ENOENT;
	int rc = walk_block_real(r, t, real, name, out, 0);
	free(real);
	return rc;
}

int modules_for_net(const struct sysroot *r, const struct modtree *t, const char *ifname,
		    struct modlist *out)
{
	char path[PATH_MAX], *real;

	fmt(path, sizeof path, "%s/class/net/%s/device", r->sys, ifname);
	if (strchr(ifname, '/') || ifname[0] == '.' || !(real = realpath(path, NULL)))
		return -ENOENT;
	int rc = walk_dev(r, t, real, ifname, out, 0);
	free(real);
	return rc;
}

/* Bytes of the module files in l that out does not list yet: what adding
 * l's new modules packs (modules.dep names each file under moddir). */
static long long new_bytes(const struct modtree *t, const char *moddir, const struct modlist *l,
			   const struct modlist *out)
{
	long long sum = 0;

	for (int i = 0; i < l->n; i++) {
		const char *line;
		char path[PATH_MAX];
		struct stat st;
		if (l->e[i].kind != MOD_LOAD || listed(out, l->e[i].name) ||
		    !(line = find_line(t->dep, l->e[i].name)))
			continue;
		size_t len = strcspn(line, ":\n");
		if (fmt(path, sizeof path, "%s/%.*s", moddir, (int)len, line) == 0 && stat(path, &st) == 0)
			sum += st.st_size;
	}
	return sum;
}

/* Disks that are not a storage controller's: memory, loops, the layers
 * built over disks (their members are disks too), optical and floppy. */
static int virtual_disk(const char *name)
{
	static const char *const skip[] = { "loop", "ram", "zram", "nbd", "dm-", "md", "sr", "fd", "mtdblock" };

	for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
		if (!strncmp(name, skip[i], strlen(skip[i])))
			return 1;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int modules_for_disks(const struct sysroot *r, const struct modtree *t, const char *moddir,
		      long long budget, struct modlist *out, char *left, size_t leftsz)
{
	static struct modlist one;
	char dir[PATH_MAX];
	struct dirent **de;
	long long used = 0;
	int n, rc = 0, disks = 0;

	left[0] = 0;
	fmt(dir, sizeof dir, "%s/block", r->sys);
	if ((n = scandir(dir, &de, NULL, by_name)) < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *name = de[i]->d_name;
		char dev[PATH_MAX];
		struct stat st;
		fmt(dev, sizeof dev, "%s/%s/device", dir, name);
		if (rc < 0 || name[0] == '.' || virtual_disk(name) || stat(dev, &st) != 0)
			continue;
		/* One disk at a time: its drivers join whole, or not at all
		 * when the files they add would pass the budget. */
		one = *out;
		if ((rc = modules_for_block(r, t, name, &one)) == -ENOENT) {
			rc = 0;
			continue;
		}
		if (rc < 0)
			continue;
		long long add = new_bytes(t, moddir, &one, out);
		if (used + add > budget) {
			size_t l = strlen(left);
			snprintf(left + l, leftsz - l, "%s%s (%lld KiB)", l ? ", " : "", name, (add + 1023) / 1024);
			continue;
		}
		used += add;
		*out = one;
		disks++;
	}
	for (int i = 0; i < n; i++)
		free(de[i]);
	free(de);
	return rc < 0 ? rc : disks;
}

int modules_for_watchdogs(const struct sysroot *r, const struct modtree *t, struct modlist *out)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int rc = 0;

	fmt(dir, sizeof dir, "%s/class/watchdog", r->sys);
	if (!(d = opendir(dir)))
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		char p[PATH_MAX], *real;
		if (strncmp(de->d_name, "watchdog", 8))
			continue;
		fmt(p, sizeof p, "%s/%s/device", dir, de->d_name);
		if (!(real = realpath(p, NULL)))
			continue;
		/* Only the device's own driver: its parents (PCI bus, ...) are
		 * the platform's, not the watchdog's. */
		rc = node_modules(t, real, de->d_name, out);
		free(real);
	}
	closedir(d);
	return rc;
}

int modules_block_name(const struct sysroot *r, const struct selector *s, char *name, size_t sz)
{
	char path[PATH_MAX], *real;
	struct stat st;

	if (s->type != SEL_PATH) {
		if (selector_find(r, s, path, sizeof path) < 0)
			return -ENOENT;
		fmt(name, sz, "%s", base_of(path));
		return 0;
	}
	/* /dev/NAME under r->dev, so a fake tree works like the real one. */
	fmt(path, sizeof path, "%s/%s", r->dev, s->value + 5);
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		char dev[PATH_MAX];
		fmt(dev, sizeof dev, "%s/dev/block/%u:%u", r->sys, major(st.st_rdev), minor(st.st_rdev));
		if ((real = realpath(dev, NULL))) {
			fmt(name, sz, "%s", base_of(real));
			free(real);
			return 0;
		}
	}
	/* A symlink (/dev/mapper/x, /dev/disk/by-id/...) names its node. */
	if ((real = realpath(path, NULL))) {
		fmt(name, sz, "%s", base_of(real));
		free(real);
	} else {
		fmt(name, sz, "%s", base_of(s->value));
	}
	fmt(path, sizeof path, "%s/class/block/%s", r->sys, name);
	return stat(path, &st) == 0 ? 0 : -ENOENT;
}
