/* The kernel modules a dump device needs on this machine (host-only
 * initramfs): walk the device's chain in sysfs (partition -> disk ->
 * device -> parents; dm/md slaves; NVMe multipath paths and controllers),
 * take each node's driver (or modalias), and resolve it in the target
 * kernel's module tree (modules.dep, modules.alias, modules.softdep,
 * modules.builtin, modules.builtin.modinfo), dependencies first, as
 * `modprobe --show-depends` orders them.
 *
 * Host-side: the tree is read into memory once (about 1.5 MiB for a
 * Debian kernel); the result list has a fixed cap. */
#ifndef KDI_MODALIAS_H
#define KDI_MODALIAS_H

#include <stddef.h>

#include "target.h"

/* The target kernel's module index, as text read whole. */
struct modtree {
	char *dep;		/* modules.dep (required) */
	char *alias;		/* modules.alias, or "" */
	char *softdep;		/* modules.softdep, or "" */
	char *builtin;		/* modules.builtin, or "" */
	char *binfo;		/* modules.builtin.modinfo (NUL-separated), or NULL */
	size_t binfo_len;
};

/* Reads DIR/modules.*. 0; -ENOENT without modules.dep; other -errno. */
int modtree_load(struct modtree *t, const char *dir);
void modtree_free(struct modtree *t);

#define MODS_MAX 192

enum mod_kind {
	MOD_LOAD,		/* a module to load, in list order */
	MOD_BUILTIN,		/* built into the target kernel: nothing to load */
	MOD_NOTE,		/* a driver the target kernel has no module for */
};

struct modentry {
	enum mod_kind kind;
	char name[64];		/* module name, '-' as '_' */
	char reason[192];
};

struct modlist {
	int n;
	struct modentry e[MODS_MAX];
	/* Names being resolved (cycle guard for broken modules.dep). */
	int nbusy;
	char busy[32][64];
};

/* The block device name (vda, sda1, dm-0) a selector names: /dev/NAME
 * (through symlinks; a block node by its dev_t) under r->dev, or the
 * others through selector_find. 0 or -ENOENT. */
int modules_block_name(const struct sysroot *r, const struct selector *s, char *name, size_t sz);

/* Appends, dependencies first, what block device NAME needs. 0, -ENOENT
 * (no such block device), -ENOSPC (over MODS_MAX: "too many modules"). */
int modules_for_block(const struct sysroot *r, const struct modtree *t, const char *name,
		      struct modlist *out);
/* The drivers of every disk of this machine behind a storage controller
 * (/sys/block, by name; loop, ram, zram, nbd, dm, md, sr, fd, mtdblock
 * left out), for a crash image whose dump device is not known when it is
 * built. A disk joins with all its modules or not at all: one whose new
 * module files (under moddir, as modules.dep names them) would take the
 * sum past budget bytes is left out, named in left ("sdc (812 KiB)").
 * The number of disks taken, or -errno (-ENOSPC: too many modules). */
int modules_for_disks(const struct sysroot *r, const struct modtree *t, const char *moddir,
		      long long budget, struct modlist *out, char *left, size_t leftsz);
/* What network interface IFNAME needs: the drivers of its device's chain
 * (the NIC, its buses), as for a disk. 0, -ENOENT (no such interface, or
 * one with no device: virtual), -ENOSPC. */
int modules_for_net(const struct sysroot *r, const struct modtree *t, const char *ifname,
		    struct modlist *out);
/* The drivers of /sys/class/watchdog/watchdog*'s devices. 0 or -ENOSPC. */
int modules_for_watchdogs(const struct sysroot *r, const struct modtree *t, struct modlist *out);
/* Module NAME (a name or alias) with its dependencies, for why; a name
 * the tree does not know is skipped. 0 or -ENOSPC. */
int modules_add(const struct modtree *t, const char *name, const char *why, struct modlist *out);

/* MODALIAS= of the device node DIR's uevent, for a bus with no modalias
 * attribute: mmc's "mmc:block", whose driver (mmcblk) sets no owner, so
 * it has no module link either (6.1). 0, -ENOENT, or -ENAMETOOLONG (OUT
 * cut short). */
int uevent_modalias(const char *dir, char *out, size_t sz);

/* fnmatch(3) without flags, as modprobe matches modules.alias: * ? [set]
 * [!set] [a-z]. 1 on a match. */
int alias_match(const char *pattern, const char *s);

/* Does a record of modules.builtin.modinfo (binfo: "name.alias=PATTERN"
 * records, NUL-separated, len bytes) declare an alias matching the
 * modalias alias ("" matches none), both compared as kmod does ('-' as
 * '_' outside [sets])? 1, naming the module in mod (when not NULL); 0. */
int modinfo_alias(const char *binfo, size_t len, const char *alias, char *mod, size_t sz);

/* Is module name ('-' as '_') listed in modules.builtin's text? */
int modules_builtin_has(const char *builtin, const char *name);

#endif
