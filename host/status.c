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
#include <sys/utsname.h>
#include <unistd.h>

#include "source.h"
#include "../arm/armed.h"
#include "../config/config.h"
#include "../config/firmware.h"
#include "../config/target.h"
#include "../dump/dumpfile.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

#define DEFAULTS "/etc/default/kdumpinit"
/* The image kdumpinit-arm builds when KDUMPINIT_IMAGE is not set; %v is
 * the kernel release (systemd's specifier for it). */
#define DEFAULT_IMAGE "/var/lib/kdumpinit/initrd-%v.img"

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
	"usage: kdumpinit status [--dev SEL] [--image FILE] [--root DIR]\n"
	"\n"
	"Says whether this machine is ready to capture a crash: the crash kernel loaded\n"
	"(/sys/kernel/kexec_crash_loaded) and the reservation (kexec_crash_size); the image\n"
	"armed (recorded by kdumpinit arm in " ARMED_STATE ") and whether it is stale:\n"
	"armed under another kernel release, changed since, older than the kernel or\n"
	"than " DEFAULTS ", or not the image --image (KDUMPINIT_IMAGE) names;\n"
	"the dump device, present and claimed; a dump on it not saved yet.\n"
	"  --dev SEL     the dump device (default: KDUMPINIT_DEVICE in " DEFAULTS ",\n"
	"                else the firmware credential kdumpinit.dev)\n"
	"  --image FILE  the image that should be armed (default: KDUMPINIT_IMAGE, %v\n"
	"                the kernel release)\n"
	"  --root DIR    read DIR/sys, DIR/run, DIR/etc instead (tests)\n"
	"Exit: 0 ready, 1 error, 2 usage, 4 device missing or unclaimed, 6 not armed\n"
	"(no reservation or nothing loaded), 7 armed image stale, 8 a dump waits to be\n"
	"saved; when several hold, the first of 1 6 4 7 8.\n";

struct status {
	int not_armed, stale, dev_bad, unsaved, error;
};

static void show(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void show(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("%-13s ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void kernel_state(const char *root, struct status *st)
{
	char path[512], v[64];
	uint64_t size = 0;

	if (read_text_file(root_path(root, "/sys/kernel/kexec_crash_size", path, sizeof path), v,
			   sizeof v) < 0 || parse_u64(v, 10, &size) < 0)
		size = 0;
	if (size)
		show("reservation", "%.1f MiB (crashkernel=)", size / 1048576.0);
	else
		show("reservation", "none: boot with crashkernel=256M");
	int loaded = read_text_file(root_path(root, "/sys/kernel/kexec_crash_loaded", path, sizeof path),
				    v, sizeof v) >= 0 && !strcmp(v, "1");
	show("crash kernel", loaded ? "loaded" : "not loaded");
	st->not_armed = !size || !loaded;
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

static void image_state(const char *root, const char *want, const char *want_from,
			const char *release, struct status *st)
{
	struct armed_state a;
	char path[512];
	int r = armed_read(root, &a);

	if (r == -ENOENT) {
		show("armed image", st->not_armed ? "none" :
		     "unknown: not armed by kdumpinit arm since boot (no " ARMED_STATE ")");
		return;
	}
	if (r < 0) {
		show("armed image", "unknown: %s: %s", root_path(root, ARMED_STATE, path, sizeof path),
		     r == -EINVAL ? "not a record kdumpinit arm wrote" : errstr(r));
		return;
	}
	show("armed image", "%s with %s, under %s, nr_cpus=%u%s", a.initramfs, a.kernel, a.release,
	     a.cpus, st->not_armed ? " (no longer loaded)" : "");
	char why[1200] = "";
	struct stat k, i, d;
	const char *w;
	if (strcmp(a.release, release))
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
	if (st->not_armed)
		return;
	st->stale = why[0] != 0;
	show("image", "%s%s", why[0] ? "stale: " : "current", why[0] ? why : "");
}

static void device_state(const char *root, const char *dev, const char *from, struct status *st)
{
	struct selector sel[SEL_MAX];
	char bad[80], path[600], m[800];
	char sys[512], devdir[512];
	const struct sysroot sr = { root_path(root, "/sys", sys, sizeof sys),
				    root_path(root, "/dev", devdir, sizeof devdir) };

	st->dev_bad = 1;
	if (!dev[0]) {
		show("device", "none configured: set KDUMPINIT_DEVICE in %s (or --dev, or the "
		     "firmware credential kdumpinit.dev)", DEFAULTS);
		return;
	}
	/* A path is taken as it is, as `info` and `save` take SOURCE
	 * (host/source.c): a claimed file works as a device. */
	int n = 1, found = -1;
	if (dev[0] == '/' && !strchr(dev, ',')) {
		struct stat sb;
		snprintf(path, sizeof path, "%s", dev);
		found = stat(path, &sb) == 0 ? 0 : -1;
	} else if ((n = selectors_parse(dev, sel, SEL_MAX, bad, sizeof bad)) < 0) {
		show("device", "%s (%s): bad selector '%s'", dev, from, bad);
		return;
	}
	for (int i = 0; found < 0 && dev[0] != '/' && i < n; i++)
		if (selector_find(&sr, &sel[i], path, sizeof path) == 0)
			found = i;
	if (found < 0) {
		show("device", "%s (%s): missing, no device matches", dev, from);
		return;
	}
	struct target t;
	enum target_refusal why;
	int r = source_open(&t, path, &why, m, sizeof m);
	if (r < 0) {
		if (r == -ENOENT && why != TGT_OK)
			show("device", "%s (%s): %s: unclaimed: %s", dev, from, path, m);
		else {
			show("device", "%s (%s): %s: cannot open: %s", dev, from, path, errstr(r));
			st->error = r != -ENOENT;
		}
		return;
	}
	target_close(&t);
	st->dev_bad = 0;

	struct dumpfile d;
	int code = EXIT_OK;
	r = open_dump(path, &t, &d, &code);
	if (r == -ENOENT && code == EXIT_OK) {
		show("device", "%s (%s): %s, claimed, no dump", dev, from, path);
	} else if (r >= 0) {
		int saved = dump_saved(&t, &d);
		show("device", "%s (%s): %s, claimed, holds a %s dump, %s", dev, from, path,
		     dumpfile_complete(&d) ? "complete" : "incomplete",
		     saved ? "saved" : "not saved yet (kdumpinit-save.service)");
		st->unsaved = !saved;
	} else if (code == EXIT_INCOMPLETE) {
		show("device", "%s (%s): %s, claimed, holds a dump whose header is unreadable (%s)",
		     dev, from, path, d.why[0] ? d.why : errstr(r));
		st->unsaved = 1;
	} else {
		st->error = 1;	/* open_dump said why */
	}
	if (r == 0 || r == -EBADMSG)
		dumpfile_free(&d);
	target_close(&t);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", 1, 0, 'd' }, { "image", 1, 0, 'i' }, { "root", 1, 0, 'R' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *dev_arg = NULL, *image_arg = NULL, *root = "";
	int c;

	while ((c = getopt_long(argc, argv, "d:i:R:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_arg = optarg; break;
		case 'i': image_arg = optarg; break;
		case 'R': root = optarg; break;
		case 'h': fputs(status_help, stdout); return EXIT_OK;
		default: fputs(status_help, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fputs(status_help, stderr);
		return EXIT_USAGE;
	}

	struct utsname u;
	if (uname(&u) < 0) {
		err("uname: %s", strerror(errno));
		return EXIT_SYSTEM;
	}
	char path[512], text[8192] = "", dev[512] = "", tmpl[512] = "", want[600] = "";
	const char *dev_from = "", *want_from = "";
	ssize_t n = read_text_file(root_path(root, DEFAULTS, path, sizeof path), text, sizeof text);
	if (n < 0 && n != -ENOENT)
		warn("%s: %s", path, errstr((int)n));
	if (dev_arg) {
		snprintf(dev, sizeof dev, "%s", dev_arg);
		dev_from = "--dev";
	} else if (defaults_get(text, "KDUMPINIT_DEVICE", dev, sizeof dev) && dev[0]) {
		dev_from = DEFAULTS;
	} else {
		/* What the crash kernel would read itself when the file names
		 * no device. */
		const char *from = firmware_device(root[0] ? root : "/", dev, sizeof dev);
		if (from)
			dev_from = from;
	}
	if (image_arg) {
		snprintf(tmpl, sizeof tmpl, "%s", image_arg);
		want_from = "--image";
	} else if (defaults_get(text, "KDUMPINIT_IMAGE", tmpl, sizeof tmpl) && tmpl[0]) {
		want_from = DEFAULTS;
	}
	if (tmpl[0])
		expand_image(tmpl, u.release, want, sizeof want);

	struct status st = { 0 };
	show("kernel", "%s", u.release);
	kernel_state(root, &st);
	image_state(root, want, want_from, u.release, &st);
	device_state(root, dev, dev_from, &st);
	show("settings", "dev=%s (%s), image=%s (%s)", dev[0] ? dev : "-", dev[0] ? dev_from : "none",
	     want[0] ? want : "as armed", want[0] ? want_from : "not set");
	fflush(stdout);
	if (st.error)
		return EXIT_SYSTEM;
	if (st.not_armed)
		return EXIT_NOT_ARMED;
	if (st.dev_bad)
		return EXIT_TARGET;
	if (st.stale)
		return EXIT_STALE;
	if (st.unsaved)
		return EXIT_UNSAVED;
	return EXIT_OK;
}
