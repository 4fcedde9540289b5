/* kdumpinit status: is this machine ready to take a crash dump? The crash
 * kernel loaded into a reservation, the image it was armed with still the
 * one for the running kernel and settings, the dump device there and
 * claimed, no dump waiting to be saved. One line each, then one exit code
 * for monitoring (docs/CLI.md, "status"). It only reads. */
#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../lib/initrd.h"
#include "../net/nbd.h"
#include "../net/netdump.h"
#include "keys.h"
#include "sha256.h"
#include "source.h"
#include "../arm/armed.h"
#include "../arm/root.h"
#include "../arm/kimage.h"
#include "../arm/reserve.h"
#include "../config/config.h"
#include "../config/firmware.h"
#include "../config/stack.h"
#include "../config/target.h"
#include "../dump/chain.h"
#include "../dump/dumpfile.h"
#include "../dump/seal.h"
#include "../lib/cli.h"
#include "json.h"
#include "testmark.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

#define DEFAULTS "/etc/default/kdumpinit"

/* KEY=VALUE from the defaults file, as both sh and systemd's
 * EnvironmentFile= read it here: one pair of surrounding quotes dropped,
 * # lines skipped. 1 found, 0 not. */
static int defaults_get(const char *text, const char *key, char *out, size_t sz)
{
	size_t kl = strlen(key);
	int found = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		while (*l == ' ' || *l == '\t')
			l++;
		if (strncmp(l, key, kl) || l[kl] != '=')
			continue;
		const char *v = l + kl + 1, *e = strchr(v, '\n');
		size_t n = e ? (size_t)(e - v) : strlen(v);
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
			n--;
		if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
			v++, n -= 2;
		snprintf(out, sz, "%.*s", (int)n, v);
		found = 1;	/* the last one wins, as in sh */
	}
	return found;
}

/* %v in a template becomes the release. */
static void expand_image(const char *tmpl, const char *release, char *out, size_t sz)
{
	size_t n = 0;

	out[0] = 0;
	for (const char *p = tmpl; *p && n + 1 < sz; p++) {
		if (p[0] == '%' && p[1] == 'v') {
			n += snprintf(out + n, sz - n, "%s", release);
			p++;
		} else {
			out[n++] = *p;
			out[n] = 0;
		}
	}
	if (n >= sz)
		out[sz - 1] = 0;
}

static const char status_help[] =
	"usage: kdumpinit status [--dev SEL] [--image FILE] [--root DIR] [--json]\n"
	"       kdumpinit status --configured [--root DIR]\n"
	"       kdumpinit status --clear-dumps [--dev SEL] [--root DIR]\n"
	"\n"
	"Says whether this machine is ready to capture a crash: the crash kernel loaded\n"
	"(/sys/kernel/kexec_crash_loaded) and the reservation (kexec_crash_size); the image\n"
	"armed (recorded by kdumpinit arm in " ARMED_STATE ") and whether it is stale:\n"
	"armed under another kernel release, changed since, older than the kernel or\n"
	"than " DEFAULTS ", built from other contents than its manifest (IMAGE.manifest:\n"
	"/init, the kernel, the modules, the device) says, armed for another device than\n"
	"the one configured, or not the image --image (KDUMPINIT_IMAGE) names; the\n"
	"crash header's CPUs and memory against the machine's now (hotplug);\n"
	"the dump device the crash kernel will look for (kdumpinit.dev= of the armed\n"
	"command line, parsed as PID 1 parses it), present and claimed; the dumps on\n"
	"it not saved yet, and the room left after them; with a public key configured\n"
	"(KDUMPINIT_PUBKEY, kdumpinit.pubkey), each of them written in the clear, and\n"
	"whether the armed crash kernel seals to that key (its command line, firmware,\n"
	"else the armed image's /etc/kdumpinit.conf, read as it reads them).\n"
	"  --dev SEL     the dump device (default: KDUMPINIT_DEVICE in " DEFAULTS ",\n"
	"                else the firmware credential kdumpinit.dev)\n"
	"  --image FILE  the image that should be armed (default: KDUMPINIT_IMAGE, %v\n"
	"                the kernel release)\n"
	"  --root DIR    read DIR/sys, DIR/run, DIR/etc instead (tests)\n"
	"  --configured  only print the configured dump device and where it came from\n"
	"                (" DEFAULTS ", else firmware); exit 4 when there is none\n"
	"  --clear-dumps only the lines on dumps in the clear; exit 8 when one waits\n"
	"  --json        the report as one JSON object (schema kdumpinit-status/1,\n"
	"                docs/CLI.md): the same lines, the exit code and its flags\n"
	"Exit: 0 ready, 1 error, 2 usage, 4 device missing or unclaimed, 6 not armed\n"
	"(no reservation or nothing loaded), 7 armed image, crash header or key stale,\n"
	"8 a dump waits to be saved; when several hold, the first of 1 6 4 7 8.\n";

struct status {
	int not_armed, no_reservation, stale, dev_bad, unsaved, error;
	const char *sealing;	/* where a public key is configured, or NULL */
	struct json *j;		/* --json: the lines go into its "lines" */
};

/* One line of the report: "LABEL  TEXT", or with --json the same two as
 * {"item": LABEL, "text": TEXT}, so that the two cannot differ. */
static void show(struct status *st, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void show(struct status *st, const char *label, const char *fmt, ...)
{
	char text[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (!st->j) {
		printf("%-13s %s\n", label, text);
		return;
	}
	json_obj(st->j, NULL);
	json_str(st->j, "item", label);
	json_str(st->j, "text", text);
	json_end(st->j, '}');
}

static void kernel_state(const char *root, struct status *st)
{
	char path[512], v[64], line[400];
	struct crash_reserve rs;

	crash_reserve_read(root, &rs);
	uint64_t size = rs.fixed;
	if (size)
		show(st, "reservation", "%s", crash_reserve_say(&rs, line, sizeof line));
	else
		show(st, "reservation", "none: boot with crashkernel=256M");
	if (crash_reserve_problem(&rs, line, sizeof line))
		show(st, "reservation", "%s", line);
	int lock = kimage_lockdown(root);
	if (lock > LOCKDOWN_NONE)
		show(st, "lockdown", "%s: only signed crash kernels load (kdumpinit's dedicated one is not "
		     "signed)", kimage_lockdown_name(lock));
	int loaded = read_text_file(root_path(root, "/sys/kernel/kexec_crash_loaded", path, sizeof path),
				    v, sizeof v) >= 0 && !strcmp(v, "1");
	show(st, "crash kernel", loaded ? "loaded" : "not loaded");
	st->not_armed = !size || !loaded;
	st->no_reservation = !size;
}

/* Why the recorded file is not what was loaded any more, or NULL. */
static const char *changed(const char *path, int64_t mtime, int64_t size, struct stat *now)
{
	if (stat(path, now) < 0)
		return "is gone";
	if (now->st_mtime != mtime || now->st_size != size)
		return "changed since it was armed";
	return NULL;
}

/* What the armed image was built from (kdumpinit-mkinitramfs --manifest,
 * beside it as IMAGE.manifest), against what is there now, by content: a
 * package upgrade keeps the release and may give files older mtimes than
 * the image (dpkg takes them from the package). Writes the first
 * difference into why; nothing when all agree or there is no manifest
 * (an image built by hand: *checked 0). */
static void manifest_check(const struct armed_state *a, const char *release, const char *cfg_dev,
			   char *why, size_t sz, int *checked)
{
	char path[300], *text;
	size_t len;

	*checked = 0;
	snprintf(path, sizeof path, "%s.manifest", a->initramfs);
	if (!(text = read_all_file(path, 0, &len)))
		return;
	*checked = 1;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l && !why[0]; l = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(l, ' ');
		if (l[0] == '#' || !v)
			continue;
		*v++ = 0;
		char *file = strchr(v, ' '), hex[65];
		if (file)
			*file++ = 0;
		if (!strcmp(l, "kver") && strcmp(v, release)) {
			snprintf(why, sz, "%s was built for %s, running %s", path, v, release);
		} else if (!strcmp(l, "device") && cfg_dev[0] && strcmp(v, cfg_dev)) {
			snprintf(why, sz, "the image was built for the device %s, %s names %s", v,
				 DEFAULTS, cfg_dev);
		} else if (file && (!strcmp(l, "init") || !strcmp(l, "module") || !strcmp(l, "config") ||
				    !strcmp(l, "firmware") || !strcmp(l, "kernel"))) {
			/* The armed kernel is what will boot, whatever path the
			 * image was built with. */
			const char *f = !strcmp(l, "kernel") ? a->kernel : file;
			int r = sha256_file(f, hex);
			if (r < 0)
				snprintf(why, sz, "%s %s the image was built with: %s", l, f, errstr(r));
			else if (strcmp(hex, v))
				snprintf(why, sz, "%s %s differs by content from the one the image was built "
					 "with%s", l, f, !strcmp(l, "init") ? " (kdumpinit upgraded?)" : "");
		}
	}
	free(text);
}

/* The dedicated kernel carries kdumpinit inside, compressed: make
 * crash-kernel writes the sha256 of the binary it embedded beside it
 * (KERNEL.manifest, "init HEX"). Against this binary (the one that runs
 * status: the installed kdumpinit), so that an upgrade of kdumpinit shows
 * the kernel built with the old one. *checked 0 when there is none. */
static void embedded_check(const struct armed_state *a, char *why, size_t sz, int *checked)
{
	char path[300], self[65], text[512];
	*checked = 0;
	snprintf(path, sizeof path, "%s.manifest", a->kernel);
	if (read_text_file(path, text, sizeof text) < 0)
		return;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *hex = l + 5;
		if (strncmp(l, "init ", 5))
			continue;
		hex[strcspn(hex, " ")] = 0;
		*checked = 1;
		int r = sha256_file("/proc/self/exe", self);
		if (r < 0)
			snprintf(why, sz, "cannot read this kdumpinit to compare with the one inside %s: %s",
				 a->kernel, errstr(r));
		else if (strcmp(hex, self))
			snprintf(why, sz, "the dedicated kernel %s carries another kdumpinit than this one "
				 "(%s says %.12s, this binary is %.12s): make crash-kernel again", a->kernel,
				 path, hex, self);
		break;
	}
}

static void image_state(const char *root, const char *want, const char *want_from,
			const char *release, const char *cfg_dev, struct status *st)
{
	struct armed_state a;
	char path[512];
	int r = armed_read(root, &a);

	if (r == -ENOENT) {
		show(st, "armed image", st->not_armed ? "none" :
		     "unknown: not armed by kdumpinit arm since boot (no " ARMED_STATE ")");
		return;
	}
	if (r < 0) {
		show(st, "armed image", "unknown: %s: %s", root_path(root, ARMED_STATE, path, sizeof path),
		     r == -EINVAL ? "not a record kdumpinit arm wrote" : errstr(r));
		return;
	}
	if (a.dedicated)
		show(st, "armed kernel", "dedicated %s (%s, kdumpinit inside%s), under %s, nr_cpus=%u%s",
		     a.crash_release, a.kernel, a.initramfs[0] ? ", and an initramfs over it" : "",
		     a.release, a.cpus, st->not_armed ? " (no longer loaded)" : "");
	else
		show(st, "armed kernel", "%s%s%s", a.crash_release[0] ? "stock " : "",
		     a.crash_release[0] ? a.crash_release : "", a.crash_release[0] ? "" : "(release not recorded)");
	if (!a.dedicated || a.initramfs[0])
		show(st, "armed image", "%s with %s, under %s, nr_cpus=%u%s", a.initramfs, a.kernel, a.release,
		     a.cpus, st->not_armed ? " (no longer loaded)" : "");
	/* Why the service armed this kernel and not another (its fall-back
	 * from the dedicated kernel under lockdown), as arm --note recorded. */
	if (a.note[0])
		show(st, "armed because", "%s", a.note);
	char why[1200] = "";
	struct stat k, i, d;
	const char *w;
	int own = a.dedicated && !a.initramfs[0], checked = 0;
	if (own) {
		/* The dedicated kernel alone: one file, for any first kernel.
		 * Only its own change makes it stale (no image, no release to
		 * match: it captures whatever runs). */
		if ((w = changed(a.kernel, a.kernel_mtime, a.kernel_size, &k)))
			snprintf(why, sizeof why, "the kernel %s %s", a.kernel, w);
		else
			embedded_check(&a, why, sizeof why, &checked);
	} else if (strcmp(a.release, release))
		snprintf(why, sizeof why, "armed under %s, running %s", a.release, release);
	else if ((w = changed(a.kernel, a.kernel_mtime, a.kernel_size, &k)))
		snprintf(why, sizeof why, "the kernel %s %s", a.kernel, w);
	else if ((w = changed(a.initramfs, a.initramfs_mtime, a.initramfs_size, &i)))
		snprintf(why, sizeof why, "the image %s %s", a.initramfs, w);
	else if (i.st_mtime < k.st_mtime)
		snprintf(why, sizeof why, "the image is older than the kernel %s", a.kernel);
	else if (stat(root_path(root, DEFAULTS, path, sizeof path), &d) == 0 && i.st_mtime < d.st_mtime)
		snprintf(why, sizeof why, "the image is older than %s", DEFAULTS);
	else if (want[0] && strcmp(want, a.initramfs))
		snprintf(why, sizeof why, "armed %s, but %s names %s", a.initramfs, want_from, want);
	if (!why[0] && !own)
		manifest_check(&a, release, cfg_dev, why, sizeof why, &checked);
	if (st->not_armed)
		return;
	st->stale = why[0] != 0;
	show(st, "image", "%s%s%s", why[0] ? "stale: " : "current", why[0] ? why : "",
	     why[0] && !own ? ": kdumpinit rebuild builds it again" :
	     !why[0] && !checked ? own ? " (no manifest beside the kernel: the kdumpinit inside not checked)" :
	     " (no manifest beside it: its contents not checked)" : "");
	/* The crash header names the machine's CPUs and memory as they were
	 * when armed: hotplug since then (without the kernel's own update)
	 * leaves CPUs or memory out of the dump. */
	struct armed_header h;
	char line[400];
	int hr = armed_header_current(root, &a, &h);
	const char *say = armed_header_say(&a, &h, hr, line, sizeof line);
	const char *pre = "crash header: ";
	show(st, "crash header", "%s", strncmp(say, pre, strlen(pre)) ? say : say + strlen(pre));
	if (hr == 0)
		st->stale = 1;
}

/* The device the crash kernel will look for: kdumpinit.dev= of the command
 * line arm recorded, parsed as PID 1 parses /proc/cmdline (quotes group,
 * white space splits), or "" when the line has none (the crash kernel then
 * reads firmware) or there is no record. */
static void armed_device(const char *root, char *dev, size_t sz, char *dm, size_t dmsz)
{
	struct armed_state a;
	static struct config c;

	dev[0] = dm[0] = 0;
	if (armed_read(root, &a) < 0)
		return;
	config_defaults(&c);
	config_load_cmdline(&c, a.cmdline);
	if (c.src[CFG_DEV] == CFG_SRC_CMDLINE)
		snprintf(dev, sz, "%s", c.dev);
	if (c.src[CFG_DM] == CFG_SRC_CMDLINE)
		snprintf(dm, dmsz, "%s", c.dm);
}

/* Where the kernel of a release is: /boot (up to Debian's 6.12), or its
 * module directory (linux-binary-KVER, from 6.16), as kdumpinit-arm looks. */
static const char *find_kernel(const char *root, const char *release, char *out, size_t sz)
{
	static const char *const where[] = { "/boot/vmlinuz-%s", "/usr/lib/modules/%s/vmlinuz",
					     "/lib/modules/%s/vmlinuz" };
	struct stat sb;

	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char rel[300];
		snprintf(rel, sizeof rel, where[i], release);
		if (stat(root_path(root, rel, out, sz), &sb) == 0 && S_ISREG(sb.st_mode))
			return out;
	}
	return NULL;
}

/* The configured device: the file's KDUMPINIT_DEVICE, else the firmware
 * credential kdumpinit.dev as the crash kernel reads it. Returns where it
 * came from, or NULL (dev "") when nothing names one. */
static const char *configured_device(const char *root, const char *text, char *dev, size_t sz)
{
	if (defaults_get(text, "KDUMPINIT_DEVICE", dev, sz) && dev[0])
		return DEFAULTS;
	dev[0] = 0;
	const char *from = firmware_device(root[0] ? root : "/", dev, sz);
	if (!from)
		dev[0] = 0;
	return from;
}

/* Whether dumps are sealed from now on: a public key in the settings
 * (KDUMPINIT_PUBKEY, which kdumpinit-arm builds into the image or puts
 * on the command line), on the armed command line (cmdline, or NULL), or
 * from the firmware, as the crash kernel reads it. Where, or NULL. */
static const char *sealing_on(const char *root, const char *text, const char *cmdline)
{
	struct config c;
	char v[300];

	if (defaults_get(text, "KDUMPINIT_PUBKEY", v, sizeof v) && v[0])
		return DEFAULTS;
	config_defaults(&c);
	config_load_firmware(&c, root[0] ? root : "/", FW_SRC_ALL);
	if (cmdline)
		config_load_cmdline(&c, cmdline);
	if (c.src[CFG_PUBKEY] == CFG_SRC_DEFAULT && !c.have_pubkey)
		return NULL;
	return c.src[CFG_PUBKEY] == CFG_SRC_CMDLINE ? "armed command line" :
	       config_src_name(c.src[CFG_PUBKEY]);
}

/* The key the armed crash kernel will seal to, found as its PID 1 finds
 * it (init/pid1.c): the command line, then firmware, then the image's
 * /etc/kdumpinit.conf, read whole (CONFIG_FILE_MAX) or not at all; against
 * the key the settings name (KDUMPINIT_PUBKEY, else firmware). Said only
 * when one is named. */
static void key_state(const char *root, const char *text, const struct armed_state *a,
		      struct status *st)
{
	static char conf[CONFIG_FILE_MAX];
	struct config c;
	uint8_t want[SEAL_KEY_BYTES], id[SEAL_KEYID_BYTES];
	char v[300], path[600], x[17], y[17], what[400];
	const char *from = DEFAULTS, *why;
	size_t len;

	config_defaults(&c);
	config_load_firmware(&c, root[0] ? root : "/", FW_SRC_ALL);
	if (defaults_get(text, "KDUMPINIT_PUBKEY", v, sizeof v) && v[0]) {
		if (keyfile_read(root_path(root, v, path, sizeof path), 0, want) < 0) {
			show(st, "sealing", "unknown: KDUMPINIT_PUBKEY=%s is not a key (above)", v);
			st->stale = 1;
			return;
		}
	} else if (c.have_pubkey) {
		memcpy(want, c.pubkey, sizeof want);
		from = config_src_name(c.src[CFG_PUBKEY]);
	} else {
		return;
	}
	seal_key_id(want, id);
	key_id_hex(id, y);
	config_load_cmdline(&c, a->cmdline);
	if (c.src[CFG_PUBKEY] == CFG_SRC_DEFAULT && a->initramfs[0]) {
		int r = initrd_file(a->initramfs, "etc/kdumpinit.conf", conf, sizeof conf, &len, &why);
		if (r < 0 && r != -ENOENT) {
			show(st, "sealing", "unknown: %s: %s", a->initramfs, why ? why : errstr(r));
			st->stale = 1;
			return;
		}
		if (!r && len > sizeof conf) {
			snprintf(what, sizeof what, "%s: /etc/kdumpinit.conf is %zu bytes, more than the "
				 "crash kernel reads (%u)", a->initramfs, len, CONFIG_FILE_MAX);
			config_seal_unreadable(&c, CFG_SRC_FILE, NULL, what);
		} else if (!r) {
			config_load_text(&c, conf, len, a->initramfs, CFG_SRC_FILE, NULL);
		}
	}
	int seal = config_seal(&c);
	seal_key_id(c.pubkey, id);
	key_id_hex(id, x);
	enum config_src k = c.src[CFG_PUBKEY];
	const char *src = k == CFG_SRC_FILE ? a->initramfs : k == CFG_SRC_CMDLINE ? "armed command line" :
			  config_src_name(k);
	if (seal < 0)
		snprintf(what, sizeof what, "no dump would be written (%s)", c.seal_why);
	else if (!seal)
		snprintf(what, sizeof what, "the armed crash kernel has no key: dumps would be in the clear");
	else if (memcmp(x, y, sizeof x))
		snprintf(what, sizeof what, "the armed crash kernel seals to key %s (%s)", x, src);
	else {
		show(st, "sealing", "sealed to key %s (%s)", x, src);
		return;
	}
	show(st, "sealing", "stale: %s, %s names key %s: run kdumpinit rebuild", what, from, y);
	st->stale = 1;
}

/* Turning sealing on does not seal what is already on the device: a dump
 * written before stays in the clear, for anyone who can read the device,
 * until it is saved or the device is claimed anew. Each one not saved is
 * said (with label, a status line; without, a bare line for
 * kdumpinit-arm), found by its START alone (a dump without a key is
 * written as format version 4). The number said. */
static unsigned clear_dumps(struct status *st, const struct target *t, const char *path,
			    const char *label)
{
	struct chain c;
	unsigned n = 0;

	if (chain_walk(t->fd, t->base, t->limit, &c) < 0)
		return 0;
	for (unsigned i = 0; i < c.n; i++) {
		struct kdi_reader r;
		struct kdi_start s;
		uint64_t end = i + 1 < c.n ? c.d[i + 1].at : t->limit;
		if (chain_saved(&c, i, t->sb.saved_dump_id) ||
		    reader_open(&r, t->fd, c.d[i].at, end, &s) < 0 || kdi_version_sealed(s.format_version))
			continue;
		char line[700];
		snprintf(line, sizeof line, "dump %u on %s is in the clear (written before sealing was "
			 "on): save it (kdumpinit save %s --dir DIR) or discard it (kdumpinit format %s "
			 "--force: all its dumps go)", i + 1, path, path, path);
		if (st)
			show(st, label, "%s", line);
		else
			puts(line);
		n++;
	}
	return n;
}

/* A device holding several dumps (a crash came before the dump of the one
 * before was saved): how many, how many wait, and whether the next crash
 * still finds room after them. d is the one save takes next. */
static void dumps_state(const struct target *t, const char *dev, const char *from,
			const char *path, const struct dumpfile *d, struct status *st)
{
	struct chain c;
	struct chain_place p;
	unsigned unsaved = 0;

	if (chain_walk(t->fd, t->base, t->limit, &c) < 0) {
		err("out of memory reading the dumps on %s", path);
		st->error = 1;
		return;
	}
	for (unsigned i = 0; i < c.n; i++)
		unsaved += !chain_saved(&c, i, t->sb.saved_dump_id);
	show(st, "device", "%s (%s): %s, claimed, holds %u dumps, %u not saved yet%s", dev, from, path,
	     c.n, unsaved, unsaved ? " (kdumpinit-save.service)" : "");
	if (unsaved)
		show(st, "next dump", "dump %u is %s; the next save takes it first", d->position,
		     dumpfile_complete(d) ? "complete" : "incomplete");
	st->unsaved = unsaved != 0;
	/* A file a capture made grows as the next dump needs. */
	chain_place(&c, t->base, t->grows ? TARGET_NO_END : t->limit, t->sb.saved_dump_id,
		    CHAIN_FULL_KEEP, &p);
	if (p.refused)
		show(st, "room", "none after the unsaved dumps: a crash now is not captured under "
		     "kdumpinit.full=keep (the default; overwrite writes over them): save them");
}

/* The device dev names, into path: a path is taken as it is, as `info`
 * and `save` take SOURCE (host/source.c: a claimed file works as a
 * device), a selector list by its first match under root. 0, -EINVAL (a
 * bad selector, named in bad) or -ENODEV (nothing matches). */
static int device_path(const char *root, const char *dev, char *path, size_t sz, char *bad,
		       size_t bsz)
{
	struct selector sel[SEL_MAX];
	char sys[512], devdir[512];
	const struct sysroot sr = { root_path(root, "/sys", sys, sizeof sys),
				    root_path(root, "/dev", devdir, sizeof devdir) };
	struct stat sb;

	if (dev[0] == '/' && !strchr(dev, ',')) {
		snprintf(path, sz, "%s", dev);
		return stat(path, &sb) == 0 ? 0 : -ENODEV;
	}
	int n = selectors_parse(dev, sel, SEL_MAX, bad, bsz);
	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (selector_find(&sr, &sel[i], path, sz) == 0)
			return 0;
	return -ENODEV;
}

/* The export's size against this machine's memory (ROOT/proc/meminfo):
 * room for a dump at any level (the whole of memory, incompressible, with
 * its chunk heads and the log), or only for what the level leaves out;
 * kdumpinit estimate says how much that is here. Nothing when the memory
 * cannot be read. */
static void export_room(const char *root, uint64_t size, struct status *st)
{
	char path[512];
	uint64_t mem = proc_kb(root_path(root, "/proc/meminfo", path, sizeof path), "MemTotal:");

	if (!mem)
		return;
	if (size >= mem + mem / 32 + (8u << 20))
		show(st, "room", "the export (%.0f MiB) holds a dump of this machine's %.0f MiB of memory "
		     "at any level", size / 1048576.0, mem / 1048576.0);
	else
		show(st, "room", "the export (%.0f MiB) is smaller than this machine's %.0f MiB of memory: "
		     "a dump fits only as far as the level leaves pages out (kdumpinit estimate gives "
		     "this machine's size per level)", size / 1048576.0, mem / 1048576.0);
}

/* A network dump device, asked now: the server answers, the export's
 * size, its claim. What it holds is for save on the server to read. */
static void net_device_state(const char *root, const char *dev, const char *from, struct status *st)
{
	static uint8_t area[KDI_SB_AREA];
	struct nbd_export ex;
	struct kdi_super sb;
	char why[300];

	st->dev_bad = 1;
	if (netdump_probe(dev, &ex, area, why, sizeof why) < 0) {
		show(st, "device", "%s (%s): network: %s", dev, from, why);
		return;
	}
	int r = super_read(area, sizeof area, ex.size, &sb);
	if (r < 0) {
		show(st, "device", "%s (%s): the server answers, export %.1f MiB, %s", dev, from,
		     ex.size / 1048576.0, r == -ENOENT ? "unclaimed: run kdumpinit format on its file "
		     "or partition, on the server" : "its claim is damaged or too new");
		return;
	}
	st->dev_bad = 0;
	show(st, "device", "%s (%s): the server answers, export %.1f MiB, claimed%s%s%s; its dumps "
	     "are read on the server (kdumpinit status --dev FILE, save)", dev, from,
	     ex.size / 1048576.0, sb.label[0] ? " (label " : "", sb.label, sb.label[0] ? ")" : "");
	export_room(root, ex.size, st);
}

/* armed_dm: the armed command line's kdumpinit.dm= ("" none), or NULL
 * when nothing is armed. */
static void device_state(const char *root, const char *dev, const char *from,
			 const char *armed_dm, struct status *st)
{
	char bad[80], path[600], m[800];

	st->dev_bad = 1;
	if (!dev[0]) {
		show(st, "device", "none configured: set KDUMPINIT_DEVICE in %s (or --dev, or the "
		     "firmware credential kdumpinit.dev)", DEFAULTS);
		return;
	}
	if (netdump_is(dev)) {
		net_device_state(root, dev, from, st);
		return;
	}
	int found = device_path(root, dev, path, sizeof path, bad, sizeof bad);
	if (found == -EINVAL) {
		show(st, "device", "%s (%s): bad selector '%s'", dev, from, bad);
		return;
	}
	if (found < 0) {
		show(st, "device", "%s (%s): missing, no device matches", dev, from);
		return;
	}
	struct target t;
	enum target_refusal why;
	int r = source_open(&t, path, &why, m, sizeof m);
	if (r < 0) {
		if (r == -ENOENT && why != TGT_OK)
			show(st, "device", "%s (%s): %s: unclaimed: %s", dev, from, path, m);
		else {
			show(st, "device", "%s (%s): %s: cannot open: %s", dev, from, path, errstr(r));
			st->error = r != -ENOENT;
		}
		return;
	}
	/* A stacked device (LVM, md): one the crash kernel cannot rebuild
	 * would never see the dump, whatever it holds now; one it can needs
	 * the table of the device as it is now on the armed command line. */
	struct stat sb;
	char sys[512], devdir[512], what[600], word[DMT_WORD_MAX + 1], twhy[200];
	static struct dm_table dt;
	const struct sysroot sr = { root_path(root, "/sys", sys, sizeof sys),
				    root_path(root, "/dev", devdir, sizeof devdir) };
	int stacked = STACK_PLAIN;
	if (t.is_blockdev && fstat(t.fd, &sb) == 0) {
		const char *nm = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		unsigned ma = major(sb.st_rdev), mi = minor(sb.st_rdev);
		stack_top(&sr, nm, &ma, &mi);
		stacked = stack_record(&sr, NULL, ma, mi, &dt, what, sizeof what);
	}
	target_close(&t);
	if (stacked < 0) {
		show(st, "device", "%s (%s): %s is %s", dev, from, path, what);
		return;
	}
	if (stacked == STACK_TABLE && dmtable_format(&dt, word, sizeof word, twhy, sizeof twhy) < 0) {
		show(st, "device", "%s (%s): %s is %s, whose table cannot be recorded: %s", dev, from,
		     path, what, twhy);
		return;
	}
	if (stacked == STACK_TABLE && armed_dm && strcmp(armed_dm, word)) {
		show(st, "armed device", "stale: %s is %s, and the crash kernel's command line %s: arm "
		     "again", path, what, armed_dm[0] ? "holds another kdumpinit.dm= (the volume "
		     "changed since: lvextend, pvmove?)" : "has no kdumpinit.dm= to rebuild it");
		st->stale = 1;
	}
	st->dev_bad = 0;

	struct dumpfile d;
	int code = EXIT_OK;
	r = open_dump(path, NULL, 0, &t, &d, &code);
	if (r == -ENOENT && code == EXIT_OK) {
		show(st, "device", "%s (%s): %s, claimed, no dump", dev, from, path);
	} else if (r >= 0 && d.ndumps > 1) {
		dumps_state(&t, dev, from, path, &d, st);
	} else if (r >= 0) {
		int saved = dump_saved(&t, &d);
		show(st, "device", "%s (%s): %s, claimed, holds %s%s dump, %s", dev, from, path,
		     dumpfile_complete(&d) ? "a complete" : d.damaged ? "a damaged" :
		     "an incomplete", d.sealed ? " sealed" : "",
		     saved ? "saved" : "not saved yet (kdumpinit-save.service)");
		st->unsaved = !saved;
	} else if (code == EXIT_INCOMPLETE) {
		show(st, "device", "%s (%s): %s, claimed, holds a dump whose header is unreadable (%s)",
		     dev, from, path, d.why[0] ? d.why : errstr(r));
		st->unsaved = 1;
	} else {
		st->error = 1;	/* open_dump said why */
	}
	if (st->sealing && t.fd >= 0)
		clear_dumps(st, &t, path, "in the clear");
	if (r == 0 || r == -EBADMSG)
		dumpfile_free(&d);
	target_close(&t);
}

/* status --clear-dumps, for kdumpinit-arm: only the dumps in the clear on
 * the configured device (or --dev's), when sealing is configured. 0, or 8
 * when one waits; nothing said of a device that cannot be read (status
 * says that). */
static int clear_dumps_only(const char *root, const char *dev, const char *text)
{
	char path[600], bad[80], m[800];
	struct target t;
	enum target_refusal why;

	if (!dev[0] || !sealing_on(root, text, NULL) ||
	    device_path(root, dev, path, sizeof path, bad, sizeof bad) < 0 ||
	    source_open(&t, path, &why, m, sizeof m) < 0)
		return EXIT_OK;
	unsigned n = clear_dumps(NULL, &t, path, NULL);
	target_close(&t);
	return n ? EXIT_UNSAVED : EXIT_OK;
}

/* A path typed relative to here, made absolute; a selector (PREFIX=...,
 * or a list of them) and an absolute path as they are. */
/* What kdumpinit test left: a crash not reported yet, and the last
 * result. Neither changes the exit code: a failed test is history, and
 * the lines above say what is wrong now. */
static void test_state(const char *root, struct status *st)
{
	char dir[512], line[900], boot[40], when[40];
	struct test_mark m;
	struct test_result r;

	root_path(root, TEST_STATE_DIR, dir, sizeof dir);
	if (testmark_read(dir, &m) == 0) {
		boot_id_read(root, boot);
		test_time_say(m.time, when, sizeof when);
		if (strcmp(boot, m.boot_id))
			show(st, "test", "crashed %s; not reported yet: kdumpinit-save.service has not run "
			     "since (kdumpinit save --dir reports it)", when);
		else
			show(st, "test", "asked %s in this boot, and no crash followed", when);
	}
	if (testresult_read(dir, &r) == 0) {
		testresult_say(&r, line, sizeof line);
		show(st, "last test", "%s", line);
	}
}

static const char *absolute(const char *arg, char *buf, size_t sz)
{
	char cwd[400];

	if (!arg || arg[0] == '/' || strchr(arg, '=') || strstr(arg, "://") || !getcwd(cwd, sizeof cwd))
		return arg;
	snprintf(buf, sz, "%s/%s", strcmp(cwd, "/") ? cwd : "", arg);
	return buf;
}

static int status_run(const char *root, const char *dev_arg, const char *image_arg, int js,
		      int only_configured, int only_clear);

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", 1, 0, 'd' }, { "image", 1, 0, 'i' }, { "root", 1, 0, 'R' },
		{ "configured", 0, 0, 'C' }, { "clear-dumps", 0, 0, 'c' }, { "json", 0, 0, 'J' },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *dev_arg = NULL, *image_arg = NULL, *root = "";
	int c, only_configured = 0, only_clear = 0, js = 0;

	char dev_abs[512], image_abs[512];

	while ((c = cli_next("status", argc, argv, "d:i:R:h", opts)) != -1) {
		switch (c) {
		case 'd': dev_arg = absolute(optarg, dev_abs, sizeof dev_abs); break;
		case 'i': image_arg = absolute(optarg, image_abs, sizeof image_abs); break;
		case 'R': root = optarg; break;
		case 'C': only_configured = 1; break;
		case 'c': only_clear = 1; break;
		case 'J': js = 1; break;
		case 'h': fputs(status_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (cli_operands("status", argc, argv, 0, ""))
		return EXIT_USAGE;
	if (js && (only_configured || only_clear))
		return cli_fail("status", "--json is for the report, not --configured or --clear-dumps");
	if (only_configured && (dev_arg || image_arg || only_clear))
		return cli_fail("status", "--configured takes no other option");
	if (only_clear && image_arg)
		return cli_fail("status", "--clear-dumps and --image do not go together");
	return status_run(root, dev_arg, image_arg, js, only_configured, only_clear);
}

int status_report(const char *root, const char *dev_arg, int js)
{
	return status_run(root, dev_arg, NULL, js, 0, 0);
}

static int status_run(const char *root, const char *dev_arg, const char *image_arg, int js,
		      int only_configured, int only_clear)
{

	struct utsname u;
	if (uname(&u) < 0) {
		err("uname: %s", strerror(errno));
		return EXIT_SYSTEM;
	}
	char path[512], text[8192] = "", dev[512] = "", tmpl[512] = "", want[600] = "";
	char cfg[512], armed[512];
	const char *dev_from = "", *want_from = "";
	ssize_t n = read_text_file(root_path(root, DEFAULTS, path, sizeof path), text, sizeof text);
	if (n < 0 && n != -ENOENT)
		warn("%s: %s", path, errstr((int)n));
	const char *cfg_from = configured_device(root, text, cfg, sizeof cfg);
	if (only_configured) {
		if (!cfg_from) {
			err("no dump device configured: KDUMPINIT_DEVICE in %s is empty and the firmware "
			    "names none (credential kdumpinit.dev)", DEFAULTS);
			return EXIT_TARGET;
		}
		printf("dev=%s (%s)\n", cfg, cfg_from);
		return EXIT_OK;
	}
	if (only_clear)
		return clear_dumps_only(root, dev_arg ? dev_arg : cfg_from ? cfg : "", text);
	if (image_arg) {
		snprintf(tmpl, sizeof tmpl, "%s", image_arg);
		want_from = "--image";
	} else if (defaults_get(text, "KDUMPINIT_IMAGE", tmpl, sizeof tmpl) && tmpl[0]) {
		want_from = DEFAULTS;
	}
	if (tmpl[0])
		expand_image(tmpl, u.release, want, sizeof want);

	struct status st = { 0 };
	struct json j;
	char kpath[600];
	if (js) {
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_str(&j, "schema", "kdumpinit-status/1");
		json_arr(&j, "lines");
		st.j = &j;
	}
	show(&st, "kernel", "%s, image %s", u.release, find_kernel(root, u.release, kpath, sizeof kpath) ? kpath :
	     "not found (neither /boot/vmlinuz-RELEASE nor /usr/lib/modules/RELEASE/vmlinuz)");
	kernel_state(root, &st);
	/* The record of a crash kernel no longer loaded says nothing of what
	 * a crash would use. */
	armed[0] = 0;
	struct armed_state as;
	int have_as = !st.not_armed && armed_read(root, &as) == 0;
	static char armed_dm[DMT_WORD_MAX + 1];
	if (!st.not_armed)
		armed_device(root, armed, sizeof armed, armed_dm, sizeof armed_dm);
	st.sealing = sealing_on(root, text, have_as ? as.cmdline : NULL);
	if (dev_arg) {
		snprintf(dev, sizeof dev, "%s", dev_arg);
		dev_from = "--dev";
	} else if (armed[0]) {
		/* The chain the crash kernel will use: what its command line
		 * says, not what the settings meant it to say. */
		snprintf(dev, sizeof dev, "%s", armed);
		dev_from = "armed command line";
	} else if (cfg_from) {
		snprintf(dev, sizeof dev, "%s", cfg);
		dev_from = cfg_from;
	}
	image_state(root, want, want_from, u.release, cfg_from == NULL || strcmp(cfg_from, DEFAULTS) ? "" : cfg,
		    &st);
	if (have_as)
		key_state(root, text, &as, &st);
	/* From firmware, a command line without kdumpinit.dev= is right: the
	 * crash kernel reads the same firmware. */
	int fw = cfg_from && strcmp(cfg_from, DEFAULTS);
	if (!st.not_armed && !dev_arg && cfg_from && strcmp(armed, cfg) && !(fw && !armed[0])) {
		/* Armed for another device than the settings name (or for
		 * none: the crash kernel then reads only firmware). */
		show(&st, "armed device", "stale: the crash kernel's command line says %s%s, %s names %s",
		     armed[0] ? "kdumpinit.dev=" : "no kdumpinit.dev=", armed, cfg_from, cfg);
		st.stale = 1;
	}
	/* Only the file's selector travels on the command line; a firmware
	 * credential reaches the crash kernel as it is. */
	if (cfg_from && !fw && !selector_text_ok(cfg, strlen(cfg))) {
		show(&st, "device", "%s (%s): holds a space, quote, backslash or non-ASCII byte: it cannot "
		     "reach the crash kernel whole (kdumpinit.dev= is one word); choose another "
		     "selector", cfg, cfg_from);
		st.dev_bad = 1;
	} else {
		device_state(root, dev, dev_from, st.not_armed ? NULL : armed_dm, &st);
	}
	if (st.not_armed)
		show(&st, "not armed", "%s", st.no_reservation ? "no crashkernel= reservation: boot with one" :
		     !cfg_from && !dev_arg ?
		     "no dump device configured: kdumpinit-arm.service arms nothing until "
		     "KDUMPINIT_DEVICE is set in " DEFAULTS " or the firmware names kdumpinit.dev" :
		     "a reservation and a device, but no crash kernel loaded: see "
		     "`systemctl status kdumpinit-arm.service`");
	test_state(root, &st);
	show(&st, "settings", "dev=%s (%s), image=%s (%s)", dev[0] ? dev : "-", dev[0] ? dev_from : "none",
	     want[0] ? want : "as armed", want[0] ? want_from : "not set");
	int code = st.error ? EXIT_SYSTEM : st.not_armed ? EXIT_NOT_ARMED : st.dev_bad ? EXIT_TARGET :
		   st.stale ? EXIT_STALE : st.unsaved ? EXIT_UNSAVED : EXIT_OK;
	if (js) {
		json_end(&j, ']');
		json_u64(&j, "exit", code);
		json_bool(&j, "armed", !st.not_armed);
		json_bool(&j, "reservation", !st.no_reservation);
		json_bool(&j, "device_ok", !st.dev_bad);
		json_bool(&j, "stale", st.stale);
		json_bool(&j, "unsaved", st.unsaved);
		json_bool(&j, "error", st.error);
		json_str(&j, "sealing", st.sealing);
		json_end(&j, '}');
	}
	fflush(stdout);
	return code;
}
