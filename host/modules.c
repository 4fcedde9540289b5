/* kdumpinit modules SELECTOR...: what mkinitramfs --device packs. Runs
 * with no shell tools (a busybox first stage will do): sysfs and the
 * target kernel's modules.* files are all it reads. */
#include "modules.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "../config/modalias.h"
#include "../config/stack.h"
#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../net/netdump.h"
#include "../net/route.h"

static const char modules_help[] =
	"usage: kdumpinit modules [--root DIR] [--kver KVER] [--moddir DIR] [--no-extras]\n"
	"                         [--all-disks [--budget SIZE]] SELECTOR...\n"
	"\n"
	"Prints, in load order, the kernel modules the dump device needs on this\n"
	"machine: the drivers of its chain in sysfs (partition, disk, controller,\n"
	"buses; device-mapper, md (rebuilt with device-mapper) and NVMe layers),\n"
	"resolved in the target kernel's modules.dep/.alias/.softdep with their\n"
	"dependencies first; then the\n"
	"running watchdog's driver and qemu_fw_cfg (unless --no-extras).\n"
	"One module a line, \"NAME  # reason\"; lines starting with # are notes\n"
	"(built in, or a driver with no module).\n"
	"\n"
	"  SELECTOR       as kdumpinit.dev=: /dev/NAME, SERIAL=, LABEL=, UUID=,\n"
	"                 PARTUUID=, PARTLABEL=, WWN= (a comma list counts as several);\n"
	"                 nbd://HOST[:PORT]/EXPORT: nbd and the drivers of the NIC the\n"
	"                 route to HOST goes through\n"
	"  --root DIR     read DIR/sys and DIR/dev (default /)\n"
	"  --kver KVER    target kernel release (default: the running one)\n"
	"  --moddir DIR   its module directory (default ROOT/lib/modules/KVER)\n"
	"  --no-extras    only the device's modules\n"
	"  --all-disks    also the drivers of every disk behind a storage controller\n"
	"                 (for an image whose dump device is named by firmware, or\n"
	"                 not here yet); SELECTOR is then optional. A disk joins\n"
	"                 with all its modules, or not at all when their files would\n"
	"                 take the sum past --budget (default 8MiB): a note names it\n"
	"\n"
	"Exit codes: 0 ok, 1 module tree unreadable, 2 usage, 4 device not found.\n";

static int print_list(const struct modlist *l)
{
	for (int i = 0; i < l->n; i++) {
		const struct modentry *e = &l->e[i];
		switch (e->kind) {
		case MOD_LOAD: printf("%s  # %s\n", e->name, e->reason); break;
		case MOD_BUILTIN: printf("# %s: built in (%s)\n", e->name, e->reason); break;
		case MOD_NOTE: printf("# %s\n", e->reason); break;
		}
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_SYSTEM;
}

/* A network dump device: the nbd driver, and the drivers of the NIC the
 * route to the server goes through here (the one whose address arm
 * records for the crash kernel, net/route.h). */
static int net_modules(const char *root, const struct sysroot *sr, const struct modtree *t,
		       const char *dev, struct modlist *list)
{
	char why[300], ifname[32];
	int r;

	if (route_nic(root, dev, ifname, sizeof ifname, why, sizeof why) < 0) {
		err("modules: %s: %s", dev, why);
		return EXIT_TARGET;
	}
	if ((r = modules_add(t, "nbd", "network dump device", list)) < 0 ||
	    (r = modules_for_net(sr, t, ifname, list)) < 0) {
		if (r == -ENOENT)
			err("modules: %s: %s, the interface the route to the server goes through, has no "
			    "device (a virtual one): no driver to pack for it", dev, ifname);
		else
			err("modules: %s: %s", dev, r == -ENOSPC ? "too many modules" : errstr(r));
		return r == -ENOENT ? EXIT_TARGET : EXIT_SYSTEM;
	}
	return EXIT_OK;
}

int cmd_modules(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' }, { "kver", required_argument, NULL, 'k' },
		{ "moddir", required_argument, NULL, 'm' }, { "no-extras", no_argument, NULL, 'n' },
		{ "all-disks", no_argument, NULL, 'a' }, { "budget", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	static struct modlist list;
	const char *root = "", *kver = NULL, *moddir = NULL;
	char sys[PATH_MAX], dev[PATH_MAX], mdir[PATH_MAX], bad[80];
	struct utsname u;
	struct modtree t;
	int c, extras = 1, all = 0, r;
	uint64_t budget = 8u << 20;
	char left[512];

	while ((c = cli_next("modules", argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'r': root = optarg; break;
		case 'k': kver = optarg; break;
		case 'm': moddir = optarg; break;
		case 'n': extras = 0; break;
		case 'a': all = 1; break;
		case 'b':
			if (parse_size(optarg, &budget) < 0 || !budget || budget > (1ull << 40))
				return cli_bad_value("modules", "--budget", optarg,
						     "a size (8M, 1GiB)");
			break;
		case 'h': fputs(modules_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind >= argc && !all)
		return cli_fail("modules", "give a device selector, or --all-disks");
	if (!strcmp(root, "/"))
		root = "";
	snprintf(sys, sizeof sys, "%s/sys", root);
	snprintf(dev, sizeof dev, "%s/dev", root);
	const struct sysroot sr = { sys, dev };
	if (!kver) {
		uname(&u);
		kver = u.release;
	}
	if (!moddir) {
		snprintf(mdir, sizeof mdir, "%s/lib/modules/%s", root, kver);
		moddir = mdir;
	}
	/* Every selector is checked before the tree is read: a typo is a usage error. */
	for (int i = optind; i < argc; i++) {
		struct selector sel[SEL_MAX];
		uint32_t srv;
		char why[300];
		if (netdump_is(argv[i])) {
			if (netdump_server(argv[i], &srv, why, sizeof why) < 0) {
				err("modules: %s: %s", argv[i], why);
				return EXIT_USAGE;
			}
			continue;
		}
		if (selectors_parse(argv[i], sel, SEL_MAX, bad, sizeof bad) < 0) {
			err("modules: not a device selector: '%s'", bad);
			return EXIT_USAGE;
		}
	}
	if ((r = modtree_load(&t, moddir)) < 0) {
		err("modules: cannot read %s/modules.dep: %s", moddir, errstr(r));
		return EXIT_SYSTEM;
	}
	int code = EXIT_OK;
	for (int i = optind; i < argc && code == EXIT_OK; i++) {
		struct selector sel[SEL_MAX];
		if (netdump_is(argv[i])) {
			code = net_modules(root, &sr, &t, argv[i], &list);
			continue;
		}
		int n = selectors_parse(argv[i], sel, SEL_MAX, bad, sizeof bad);
		for (int k = 0; k < n && code == EXIT_OK; k++) {
			char name[128];
			if (modules_block_name(&sr, &sel[k], name, sizeof name) < 0) {
				err("modules: no block device for %s%s", selector_name(sel[k].type), sel[k].value);
				code = EXIT_TARGET;
				continue;
			}
			/* a mirror of an md array (LABEL= finds one when
			 * metadata 1.0 leaves the claim at its start) needs
			 * what its array needs: the crash kernel rebuilds the
			 * array, never writes to the mirror */
			stack_top_name(&sr, name, sizeof name);
			if ((r = modules_for_block(&sr, &t, name, &list)) < 0) {
				err("modules: %s: %s", name, r == -ENOSPC ? "too many modules" : errstr(r));
				code = r == -ENOENT ? EXIT_TARGET : EXIT_SYSTEM;
			}
		}
	}
	if (code == EXIT_OK && all) {
		if ((r = modules_for_disks(&sr, &t, moddir, (long long)budget, &list, left, sizeof left)) < 0) {
			err("modules: the disks: %s", r == -ENOSPC ? "too many modules" : errstr(r));
			code = EXIT_SYSTEM;
		} else {
			printf("# every disk: the drivers of %d disk%s\n", r, r == 1 ? "" : "s");
			if (left[0])
				printf("# every disk: over the %llu KiB budget, left out: %s\n",
				       (unsigned long long)(budget >> 10), left);
		}
	}
	if (code == EXIT_OK && extras &&
	    ((r = modules_for_watchdogs(&sr, &t, &list)) < 0 ||
	     (r = modules_add(&t, "qemu_fw_cfg", "firmware settings (fw_cfg)", &list)) < 0)) {
		err("modules: %s", r == -ENOSPC ? "too many modules" : errstr(r));
		code = EXIT_SYSTEM;
	}
	modtree_free(&t);
	return code == EXIT_OK ? print_list(&list) : code;
}
