/* kdumpinit arm: load the crash kernel with kexec_file_load, so a host
 * needs no kexec-tools (Debian's links Xen libraries). */
#include "arm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../config/modalias.h"
#include "../config/stack.h"
#include "../config/config.h"
#include "../config/firmware.h"
#include "../lib/initrd.h"
#include "../net/nbd.h"
#include "../net/netdump.h"
#include "../net/route.h"
#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "kexec_arm64.h"
#include "kexec_tools.h"
#include "kimage.h"
#include "reach.h"
#include "reserve.h"
#include "unload.h"
#include "armed.h"
#include "cmdline.h"
#include "root.h"

/* The number is the C library's, per architecture (musl's arch/ headers):
 * nothing machine-specific here. */
#ifndef SYS_kexec_file_load
#error "this architecture has no kexec_file_load"
#endif
#define KEXEC_FILE_ON_CRASH	0x2
#define KEXEC_FILE_NO_INITRAMFS	0x4

/* One CPU in the crash kernel unless --cpus says more; an nr_cpus= in
 * --append is refused, not appended (cmdline.h: it must appear once). */
#define CPUS_MAX RESERVE_CPUS_MAX

static const char arm_help[] =
	"usage: kdumpinit arm --kernel FILE [--initramfs FILE] [--append ARGS] [--cpus N|auto]\n"
	"                     [--cmdline ARGS] [--dev SELECTOR] [--dry-run] [--root DIR]\n"
	"                     [--note TEXT] [--allow-clear]\n"
	"       kdumpinit arm --unload [--root DIR]\n"
	"\n"
	"Loads the crash kernel (kexec_file_load, KEXEC_FILE_ON_CRASH). Its command line\n"
	"is the running kernel's console=, earlycon, IOMMU, pci= and acpi= arguments, then\n"
	"  " CAPTURE_ARGS "\n"
	"then the boot CPU's disable_cpu_apicid= (x86_64), then --append ARGS (e.g.\n"
	"kdumpinit.dev=LABEL=dump). --cmdline replaces it all.\n"
	"--initramfs may be left out for kdumpinit's dedicated crash kernel (make\n"
	"crash-kernel: release *" KIMAGE_DEDICATED_SUFFIX "), which carries kdumpinit inside.\n"
	"--cpus N puts nr_cpus=N there instead; auto: what the reservation affords, both\n"
	"its fixed part and crashkernel=,cma, by rules measured on Debian's 6.1 (88M: 1,\n"
	"96M: 2, 128M: 9, from 164M: 16) and on the dedicated kernel (42M: 2, 64M: 6, from\n"
	"114M: 16); at most the online CPUs. --dry-run prints the command line only.\n"
	"Under lockdown (/sys/kernel/security/lockdown) an unsigned kernel is refused\n"
	"before loading (exit 9): arm the distribution's signed kernel instead.\n"
	"--dev SELECTOR: the dedicated kernel must have built in the drivers from that\n"
	"device to the root bus and its IOMMU's, by the lists beside it (exit 10). A\n"
	"stacked device (an LVM volume, linear or striped; an md RAID1 array) has its\n"
	"table added as kdumpinit.dm=; one the crash kernel cannot rebuild (dm-crypt,\n"
	"thin, snapshot, RAID5, ...) is refused (exit 4).\n"
	"A network dump device (kdumpinit.dev=nbd://...) with no key to seal to (the\n"
	"image's /etc/kdumpinit.conf, firmware, the command line) is refused (exit 2):\n"
	"the crashed memory would cross the network in the clear; --allow-clear does it.\n"
	"--root DIR reads DIR/proc, DIR/sys and records in DIR/run (tests).\n"
	"What was loaded is recorded in " ARMED_STATE " for kdumpinit status, with\n"
	"--note TEXT (why this kernel: the service's fall-back from the dedicated one).\n"
	"--unload unloads it: kexec_file_load, else kexec_load, else kexec -p -u.\n"
	"Needs a crashkernel= reservation. Exit: 0 armed, 1 the kernel refused, 2 usage,\n"
	"4 --dev is stacked in a way the crash kernel cannot rebuild, 9 refused by\n"
	"lockdown, 10 the dedicated kernel lacks a driver for --dev.\n";

/* 1 if ARGS has an nr_cpus= word. */
static int has_nr_cpus(const char *args)
{
	for (const char *p = args; (p = strstr(p, "nr_cpus=")); p++)
		if (p == args || p[-1] == ' ' || p[-1] == '\t')
			return 1;
	return 0;
}

/* The running kernel says it reserved nothing (kexec_crash_size 0, no
 * crash CMA): said before any loader runs, in our words, where
 * kexec-tools would say "Memory for crashkernel is not reserved". A
 * kernel that does not say is left to the loader. */
static int no_reservation(const char *root)
{
	char v[64] = "", path[512];
	struct crash_reserve rs;

	if (read_text_file(root_path(root, "/sys/kernel/kexec_crash_size", path, sizeof path), v,
			   sizeof v) < 0 || strcmp(v, "0"))
		return 0;
	crash_reserve_read(root, &rs);
	return !rs.cma;
}

/* " KEY=VALUE" appended to the command line cl (sz bytes): 0, or -E2BIG
 * with cl as it was. */
static int cl_append(char *cl, size_t sz, const char *key, const char *value)
{
	size_t len = strlen(cl);

	if (len + 2 + strlen(key) + strlen(value) >= sz)
		return -E2BIG;
	snprintf(cl + len, sz - len, " %s=%s", key, value);
	return 0;
}

/* The crash kernel's address for a network dump device, when nothing
 * gives it one: the way to the server here (net/route.h), appended to cl
 * as kdumpinit.ip= (not to a --cmdline: that line is the user's). 0, or
 * EXIT_USAGE said. */
static int record_ip(const char *root, const char *dev, char *cl, size_t sz, int may_add)
{
	char why[300], ifname[32], ip[80];
	struct ip_conf ic;
	uint32_t srv;

	if (netdump_server(dev, &srv, why, sizeof why) < 0) {
		err("kdumpinit.dev=%s: %s; nothing is armed", dev, why);
		return EXIT_USAGE;
	}
	if (!may_add || route_way(root, srv, ifname, sizeof ifname, &ic, why, sizeof why) < 0) {
		err("kdumpinit.dev=%s: the crash kernel needs its address, and %s: give "
		    "kdumpinit.ip=ADDR/PREFIX[,GATEWAY[,MAC]] or kdumpinit.ip=dhcp; nothing is armed",
		    dev, may_add ? why : "--cmdline is given whole (arm adds nothing to it)");
		return EXIT_USAGE;
	}
	ip_conf_format(&ic, ip, sizeof ip);
	if (cl_append(cl, sz, "kdumpinit.ip", ip) < 0) {
		err("command line too long");
		return EXIT_USAGE;
	}
	msg("network dump device %s: kdumpinit.ip=%s, the way to the server here (%s); arm again "
	    "when it changes", dev, ip, ifname);
	return 0;
}

/* A network dump device with no key to seal to sends the crashed
 * machine's memory across the network in the clear: said, and refused
 * unless --allow-clear. The settings as the crash kernel's PID 1 will
 * read them: the image's /etc/kdumpinit.conf, firmware, then the command
 * line. Then its address, recorded when none is given. 0, or EXIT_USAGE
 * said. */
static int network_check(const char *root, char *cl, size_t clsz, const char *initrd, int allow,
			 int may_add)
{
	static struct config c;
	static char conf[CONFIG_FILE_MAX];
	size_t len = 0;
	const char *why;

	config_defaults(&c);
	if (initrd && initrd_file(initrd, "etc/kdumpinit.conf", conf, sizeof conf, &len, &why) == 0 &&
	    len <= sizeof conf)
		config_load_text(&c, conf, len, "the image's /etc/kdumpinit.conf", CFG_SRC_FILE, NULL);
	config_load_firmware(&c, root[0] ? root : "/", FW_SRC_ALL);
	config_load_cmdline(&c, cl);
	if (!netdump_is(c.dev))
		return 0;
	/* Whether the server answers now: said, not required (it may be
	 * down for now and up when the crash comes). */
	static uint8_t area[4096];
	struct nbd_export ex;
	char said[300];
	if (netdump_probe(c.dev, &ex, area, said, sizeof said) == 0)
		msg("network dump device %s: the server answers, export %.1f MiB", c.dev,
		    ex.size / 1048576.0);
	else
		warn("network dump device %s: %s (now; the crash kernel waits kdumpinit.wait for it)",
		     c.dev, said);
	if (!c.have_pubkey && !c.seal_asked && !allow) {
		err("kdumpinit.dev=%s is a network dump device and no key is configured: the crashed "
		    "machine's memory (its keys, passwords, files) would cross the network in the "
		    "clear. Seal it (kdumpinit keygen, then kdumpinit.pubkey= or "
		    "kdumpinit-mkinitramfs -p), or give --allow-clear; nothing is armed", c.dev);
		return EXIT_USAGE;
	}
	if (!c.have_pubkey && !c.seal_asked)
		warn("kdumpinit.dev=%s: no key to seal to, --allow-clear: a dump will cross the network "
		     "in the clear", c.dev);
	return c.ip[0] ? 0 : record_ip(root, c.dev, cl, clsz, may_add);
}

/* The one wording for "nothing reserved": arm says it before any loader
 * runs, and explain() again if a loader still fails for it. */
static void say_no_reservation(void)
{
	err("no memory is reserved for a crash kernel: add crashkernel=256M (or the size "
	    "'kdumpinit estimate' gives) to the kernel's command line, in GRUB_CMDLINE_LINUX "
	    "of /etc/default/grub then update-grub, and reboot; nothing is armed");
}

static void explain(const char *root, int e, const struct kimage_info *ki)
{
	char v[64] = "", path[512];
	int lock;

	read_text_file(root_path(root, "/sys/kernel/kexec_crash_size", path, sizeof path), v, sizeof v);
	switch (e) {
	case EADDRNOTAVAIL:
	case ENOMEM:
		if (no_reservation(root))
			say_no_reservation();
		else
			err("the crash kernel and initramfs do not fit the %s-byte crashkernel= "
			    "reservation: reserve more, or use a smaller initramfs", v);
		break;
	case EPERM:
		lock = kimage_lockdown(root);
		if (ki->sig == KIMAGE_SIGNED && lock > LOCKDOWN_NONE)
			err("not permitted: this kernel is locked down (%s) and did not accept the "
			    "image's signature: is its signing key in the kernel's or the firmware's "
			    "keyring (db, MOK)?", kimage_lockdown_name(lock));
		else if (ki->sig != KIMAGE_SIGNED && geteuid() == 0)
			err("not permitted: the kernel refused this unsigned image: lockdown (Secure "
			    "Boot; %s), enforced kexec signatures, or kexec_load_disabled. Arm the "
			    "distribution's signed kernel with its initramfs",
			    lock == LOCKDOWN_UNKNOWN ?
			    "/sys/kernel/security/lockdown cannot be read to tell" :
			    "lockdown is off here");
		else
			err("not permitted: arming needs root (CAP_SYS_BOOT), and kexec_load_disabled "
			    "may forbid it");
		break;
	case ENOEXEC:
	case EKEYREJECTED:
	case EBADMSG:
		err("the kernel rejected the image (%s): wrong format, or unsigned under "
		    "secure boot", strerror(e));
		break;
	case ENOSYS:
		err("this kernel has no kexec_file_load (CONFIG_KEXEC_FILE)");
		break;
	default:
		err("kexec_file_load failed: %s", strerror(e));
	}
}

/* What was loaded, for kdumpinit status. Not fatal: the crash kernel is
 * armed either way, status then says it cannot tell which image. */
static void record(const char *root, int kfd, int ifd, const char *kernel, const char *initrd,
		   const struct kimage_info *ki, const char *note, unsigned cpus, const char *cl,
		   const char *header)
{
	struct armed_state s;
	struct stat ks, is;
	struct utsname u;

	memset(&s, 0, sizeof s);
	if (uname(&u) == 0)
		snprintf(s.release, sizeof s.release, "%s", u.release);
	snprintf(s.kernel, sizeof s.kernel, "%s", kernel);
	snprintf(s.initramfs, sizeof s.initramfs, "%s", initrd ? initrd : "");
	snprintf(s.crash_release, sizeof s.crash_release, "%s", ki->release);
	s.dedicated = ki->dedicated;
	/* One line in the record: a newline would start a key of its own. */
	snprintf(s.note, sizeof s.note, "%s", note);
	for (char *p = s.note; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (fstat(kfd, &ks) == 0) {
		s.kernel_mtime = ks.st_mtime;
		s.kernel_size = ks.st_size;
	}
	if (ifd >= 0 && fstat(ifd, &is) == 0) {
		s.initramfs_mtime = is.st_mtime;
		s.initramfs_size = is.st_size;
	}
	s.cpus = cpus;
	snprintf(s.cmdline, sizeof s.cmdline, "%s", cl);
	/* What the header was built from, so that status can tell when
	 * hotplug has made it stale; without it status cannot tell. */
	snprintf(s.header, sizeof s.header, "%s", header);
	int r = armed_take_print(root, &s);
	if (r < 0)
		warn("cannot take the CPUs and RAM the crash header describes: %s (kdumpinit status "
		     "will not know when hotplug makes it stale)", errstr(r));
	if (s.have_print)
		msg("crash header: %u CPUs, %u RAM ranges; the kernel updates it on CPU hotplug: %s, "
		    "on memory hotplug: %s", s.print.cpus, s.print.ram_ranges,
		    s.hotplug_cpu > 0 ? "yes" : "no", s.hotplug_mem > 0 ? "yes" : "no");
	r = armed_write(root, &s);
	if (r < 0)
		warn("cannot record what was armed in %s: %s (kdumpinit status will not know "
		     "the image)", ARMED_STATE, errstr(r));
}

/* The command line the crash kernel gets. 0, or EXIT_USAGE (said). */
static int build_cmdline(const char *root, const char *cmdline, const char *append,
			 const char *cpus_arg, int dedicated, char *cl, size_t sz, unsigned *cpus)
{
	*cpus = 0;
	if (cmdline) {
		if (cpus_arg) {
			err("--cpus and --cmdline: the whole command line is yours, put nr_cpus= in it");
			return EXIT_USAGE;
		}
		snprintf(cl, sz, "%s", cmdline);
		return 0;
	}
	if (has_nr_cpus(append)) {
		err("nr_cpus= in --append: use --cpus N (it must appear once: a later nr_cpus= "
		    "cannot raise an earlier one)");
		return EXIT_USAGE;
	}
	*cpus = 1;
	if (cpus_arg && !strcmp(cpus_arg, "auto")) {
		struct crash_reserve rs;
		crash_reserve_read(root, &rs);
		*cpus = reserve_auto_cpus(rs.fixed + rs.cma, reserve_cpus_online(root), dedicated);
	} else if (cpus_arg) {
		uint64_t n;
		if (parse_u64(cpus_arg, 10, &n) < 0 || n < 1 || n > 4096) {
			err("--cpus %s: a number from 1 to 4096, or auto", cpus_arg);
			return EXIT_USAGE;
		}
		*cpus = (unsigned)n;
	}
	/* The running kernel's machine is the crash kernel's: the same
	 * hardware boots it. */
	struct utsname u;
	if (cmdline_build(root, uname(&u) == 0 ? u.machine : "", *cpus, append, cl, sz) < 0) {
		err("command line too long");
		return EXIT_USAGE;
	}
	return 0;
}

/* arm --unload: kexec_file_load's unload, else kexec_load's (kernels
 * without CONFIG_KEXEC_FILE, Debian's arm64), else kexec-tools'. */
static int unload_cmd(const char *root)
{
	const struct unload_ops ops = { unload_by_file, unload_by_load, kexec_tools_unload, NULL };
	char loaded[8] = "?", path[512];

	int how = unload_crash_kernel(&ops);
	if (how < 0)
		return EXIT_SYSTEM;
	/* believe the kernel, not the tool: the record stays while a crash
	 * kernel is still loaded */
	read_text_file(root_path(root, "/sys/kernel/kexec_crash_loaded", path, sizeof path),
		       loaded, sizeof loaded);
	if (!strcmp(loaded, "1")) {
		err("%s reported success, but kexec_crash_loaded is still 1", unload_how_name(how));
		return EXIT_SYSTEM;
	}
	int r = armed_remove(root);
	if (r < 0)
		warn("cannot remove %s: %s", ARMED_STATE, errstr(r));
	msg("crash kernel unloaded (%s; kexec_crash_loaded=%s)", unload_how_name(how), loaded);
	return EXIT_OK;
}

/* The kernel image: open, inspected, and checked against lockdown. The
 * lockdown check comes before any load: an unsigned image under
 * integrity or confidentiality is refused by kexec_file_load anyway
 * (EPERM or EKEYREJECTED, which name no cause), and the service needs a
 * clear answer to fall back on. A PE image with a signature is tried:
 * the kernel decides whether it trusts the key. -1 (said), or the fd. */
static int open_kernel(const char *root, const char *kernel, struct kimage_info *ki, int *rc)
{
	int kfd = open(kernel, O_RDONLY | O_CLOEXEC);
	if (kfd < 0) {
		err("cannot open kernel %s: %s", kernel, strerror(errno));
		*rc = EXIT_USAGE;
		return -1;
	}
	int r = kimage_inspect(kfd, ki);
	if (r < 0) {
		err("cannot read kernel %s: %s", kernel, errstr(r));
		close(kfd);
		*rc = EXIT_USAGE;
		return -1;
	}
	int lock = kimage_lockdown(root);
	if (lock > LOCKDOWN_NONE && ki->sig != KIMAGE_SIGNED) {
		err("%s is not signed%s, and this kernel is locked down (%s): kexec_file_load "
		    "takes only images it can verify. Arm the distribution's signed kernel with "
		    "its initramfs (kdumpinit-mkinitramfs; it needs crashkernel=88M or more, or "
		    "less fixed with crashkernel=,cma), or sign this one with a key the kernel "
		    "trusts", kernel, ki->dedicated ? " (kdumpinit's dedicated crash kernel)" : "",
		    kimage_lockdown_name(lock));
		close(kfd);
		*rc = EXIT_LOCKDOWN;
		return -1;
	}
	return kfd;
}

/* The dedicated kernel has no modules: what reaches the dump device here
 * must be built into it. Checked before loading, like lockdown, so that
 * the service can fall back on the stock kernel with its image. A device
 * that is not here now cannot be checked (said; it goes on: the crash
 * kernel waits for it); lists that are not beside the kernel fail closed.
 * 0, or EXIT_USAGE or EXIT_NO_DRIVER (said, in one line the service
 * records as why). */
/* A stacked device's chain ends at a virtual node: the disks below it
 * (slaves/) need their drivers as well. 0 or EXIT_NO_DRIVER (said). */
static int check_members(const struct sysroot *sr, const struct reach_kernel *k, const char *name,
			 const char *dev)
{
	static struct reach_chain ch;
	char path[600], miss[400];
	struct dirent *e;
	int rc = 0;

	snprintf(path, sizeof path, "%s/class/block/%s/slaves", sr->sys, name);
	DIR *d = opendir(path);
	while (d && !rc && (e = readdir(d))) {
		if (e->d_name[0] == '.' || reach_chain_read(sr, e->d_name, &ch) < 0)
			continue;
		if (reach_missing(k, &ch, miss, sizeof miss)) {
			err("the dedicated crash kernel lacks %s for %s (on %s)", miss, dev, e->d_name);
			rc = EXIT_NO_DRIVER;
		}
	}
	if (d)
		closedir(d);
	return rc;
}

/* A network dump device: the NBD client, and the drivers of the NIC the
 * route to the server goes through (the one arm records the address of),
 * in the dedicated kernel. 0, or EXIT_NO_DRIVER said. */
static int check_reach_net(const struct sysroot *sr, const char *root, const struct reach_kernel *k,
			   const char *dev)
{
	static struct reach_chain ch;
	char why[300], ifname[32], miss[400];
	int r;

	if (route_nic(root, dev, ifname, sizeof ifname, why, sizeof why) < 0) {
		err("%s: %s: cannot tell that the dedicated crash kernel reaches the server", dev, why);
		return EXIT_NO_DRIVER;
	}
	if ((r = reach_chain_read_net(sr, ifname, &ch)) < 0) {
		err("the chain of %s (the route to %s) in sysfs cannot be read (%s): cannot tell that "
		    "the dedicated crash kernel reaches it", ifname, dev, errstr(r));
		return EXIT_NO_DRIVER;
	}
	if (reach_missing(k, &ch, miss, sizeof miss)) {
		err("the dedicated crash kernel lacks %s for %s (through %s)", miss, dev, ifname);
		return EXIT_NO_DRIVER;
	}
	return 0;
}

static int check_reach(const char *root, const char *kernel, const char *dev)
{
	static struct reach_chain ch;
	char sys[512], devdir[512], bad[80], miss[400], name[128];
	struct selector sel[SEL_MAX];
	struct reach_kernel k;
	int n = netdump_is(dev) ? 0 : selectors_parse(dev, sel, SEL_MAX, bad, sizeof bad), r, rc = 0;

	if (n < 0) {
		err("--dev: not a device selector: '%s'", bad);
		return EXIT_USAGE;
	}
	if ((r = reach_kernel_load(&k, kernel)) < 0) {
		err("the dedicated crash kernel has no built-in list beside it (%s.modules.builtin, "
		    ".modules.builtin.modinfo, .config: %s; make install-crash-kernel installs them): "
		    "cannot tell that it reaches %s", kernel, errstr(r), dev);
		return EXIT_NO_DRIVER;
	}
	const struct sysroot sr = { root_path(root, "/sys", sys, sizeof sys),
				    root_path(root, "/dev", devdir, sizeof devdir) };
	if (netdump_is(dev))
		rc = check_reach_net(&sr, root, &k, dev);
	for (int i = 0; i < n && !rc; i++) {
		if (modules_block_name(&sr, &sel[i], name, sizeof name) == 0)
			stack_top_name(&sr, name, sizeof name);	/* a mirror: its array */
		else
			name[0] = 0;
		if (!name[0] || (r = reach_chain_read(&sr, name, &ch)) == -ENOENT) {
			warn("%s%s is not here: the dedicated crash kernel's drivers are not checked "
			     "against it", selector_name(sel[i].type), sel[i].value);
		} else if (r < 0) {
			err("the chain of %s (%s) in sysfs cannot be read (%s): cannot tell that the "
			    "dedicated crash kernel reaches it", dev, name, errstr(r));
			rc = EXIT_NO_DRIVER;
		} else if (reach_missing(&k, &ch, miss, sizeof miss)) {
			err("the dedicated crash kernel lacks %s for %s", miss, dev);
			rc = EXIT_NO_DRIVER;
		} else {
			rc = check_members(&sr, &k, name, dev);
		}
	}
	reach_kernel_free(&k);
	return rc;
}

/* The dump device --dev names, when it is stacked: the table the crash
 * kernel rebuilds it from goes on the command line as kdumpinit.dm=
 * (config/stack.h); one it cannot rebuild is refused here, at arming,
 * rather than found missing after a crash. A device that is not here now
 * is said and goes on, as for check_reach. 0, or EXIT_TARGET, EXIT_SYSTEM
 * or EXIT_USAGE (said). */
static int record_stack(const char *root, const char *dev, const char *append, char *cl, size_t sz)
{
	char sys[512], devdir[512], bad[80], path[300], what[600], why[200];
	char word[DMT_WORD_MAX + 1];
	struct selector sel[SEL_MAX];
	static struct dm_table t;
	unsigned maj, min;

	if (strstr(append, "kdumpinit.dm=")) {
		err("kdumpinit.dm= in --append: arm records it from --dev, from the device as it is now");
		return EXIT_USAGE;
	}
	if (netdump_is(dev))
		return 0;	/* no stack: a network dump device is the server's */
	int n = selectors_parse(dev, sel, SEL_MAX, bad, sizeof bad);
	if (n < 0) {
		err("--dev: not a device selector: '%s'", bad);
		return EXIT_USAGE;
	}
	const struct sysroot sr = { root_path(root, "/sys", sys, sizeof sys),
				    root_path(root, "/dev", devdir, sizeof devdir) };
	int found = -ENOENT;
	for (int i = 0; i < n && found < 0; i++)
		found = selector_find(&sr, &sel[i], path, sizeof path);
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct stat st;
	if (found < 0) {
		warn("%s is not here: whether it is stacked (LVM, md) is not checked", dev);
		return 0;
	}
	/* a name sysfs does not know (/dev/mapper/NAME): by its number */
	if (stack_top(&sr, name, &maj, &min) < 0) {
		if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode))
			return 0;	/* a claimed file: nothing stacked */
		maj = major(st.st_rdev);
		min = minor(st.st_rdev);
	}
	int r = stack_record(&sr, NULL, maj, min, &t, what, sizeof what);
	if (r == -EOPNOTSUPP) {
		err("%s is %s", dev, what);
		return EXIT_TARGET;
	}
	if (r < 0) {
		err("%s is stacked, and %s: not armed", dev, what);
		return EXIT_SYSTEM;
	}
	if (r == STACK_PLAIN)
		return 0;
	/* PID 1 looks for the claim on the mapping it made: only a selector
	 * of the claim (LABEL=, UUID=) can find it there. */
	int claim = 0;
	for (int i = 0; i < n; i++)
		claim |= sel[i].type == SEL_LABEL || sel[i].type == SEL_UUID;
	if (!claim) {
		err("%s is %s: name it by its claim (LABEL= or UUID=), which the crash kernel finds "
		    "on the device it rebuilds", dev, what);
		return EXIT_USAGE;
	}
	if ((r = dmtable_format(&t, word, sizeof word, why, sizeof why)) < 0 ||
	    cl_append(cl, sz, "kdumpinit.dm", word) < 0) {
		err("%s is %s, and its table does not fit the command line (%s): not armed", dev,
		    what, r < 0 ? why : "too long");
		return EXIT_TARGET;
	}
	msg("%s is %s: the crash kernel rebuilds it from kdumpinit.dm=", dev, what);
	return 0;
}

int cmd_arm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", 1, 0, 'k' }, { "initramfs", 1, 0, 'i' }, { "append", 1, 0, 'a' },
		{ "cmdline", 1, 0, 'c' }, { "unload", 0, 0, 'u' }, { "help", 0, 0, 'h' },
		{ "cpus", 1, 0, 'C' }, { "dry-run", 0, 0, 'n' }, { "root", 1, 0, 'R' },
		{ "note", 1, 0, 'N' }, { "dev", 1, 0, 'd' }, { "allow-clear", 0, 0, 'A' },
		{ 0, 0, 0, 0 },
	};
	const char *kernel = NULL, *initrd = NULL, *append = "", *cmdline = NULL;
	const char *cpus_arg = NULL, *root = "", *note = "", *dev = NULL;
	int unload = 0, dry = 0, allow_clear = 0, c;

	while ((c = cli_next("arm", argc, argv, "k:i:a:c:uhC:nR:N:d:", opts)) != -1) {
		switch (c) {
		case 'k': kernel = optarg; break;
		case 'i': initrd = optarg; break;
		case 'a': append = optarg; break;
		case 'c': cmdline = optarg; break;
		case 'u': unload = 1; break;
		case 'C': cpus_arg = optarg; break;
		case 'n': dry = 1; break;
		case 'A': allow_clear = 1; break;
		case 'R': root = optarg; break;
		case 'N': note = optarg; break;
		case 'd': dev = optarg; break;
		case 'h': fputs(arm_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (cli_operands("arm", argc, argv, 0, ""))
		return EXIT_USAGE;
	if (unload && (dry || kernel || initrd))
		return cli_fail("arm", "--unload takes no kernel, initramfs or --dry-run");
	if (!unload && !dry && !kernel)
		return cli_fail("arm", "give --kernel FILE (and --initramfs FILE for a stock kernel)");
	if (unload)
		return unload_cmd(root);

	char cl[4096];
	unsigned cpus;
	struct kimage_info ki;
	int rc = 0, kfd = -1, ifd = -1;
	memset(&ki, 0, sizeof ki);
	if (kernel && (kfd = open_kernel(root, kernel, &ki, &rc)) < 0)
		return rc;
	if (kernel && !initrd && !ki.dedicated) {
		err("%s is not kdumpinit's dedicated crash kernel (its release is %s, not *"
		    KIMAGE_DEDICATED_SUFFIX "): it has no kdumpinit inside, give --initramfs",
		    kernel, ki.release[0] ? ki.release : "unknown");
		close(kfd);
		return EXIT_USAGE;
	}
	/* The initramfs opens before anything else is decided: a dry run
	 * with one that does not open is no success. */
	if (initrd && (ifd = open(initrd, O_RDONLY | O_CLOEXEC)) < 0) {
		err("cannot open initramfs %s: %s", initrd, strerror(errno));
		if (kfd >= 0)
			close(kfd);
		return EXIT_USAGE;
	}
	rc = build_cmdline(root, cmdline, append, cpus_arg, ki.dedicated, cl, sizeof cl, &cpus);
	if (!rc && dev && !cmdline)
		rc = record_stack(root, dev, append, cl, sizeof cl);
	if (!rc)
		rc = network_check(root, cl, sizeof cl, initrd, allow_clear, !cmdline);
	if (!rc && ki.dedicated && dev)
		rc = check_reach(root, kernel, dev);
	if (!rc && !dry && no_reservation(root)) {
		say_no_reservation();
		rc = EXIT_SYSTEM;
	}
	if (rc || dry) {
		if (!rc)
			puts(cl);
		if (kfd >= 0)
			close(kfd);
		if (ifd >= 0)
			close(ifd);
		return rc;
	}
	/* The length counts the terminating NUL: the kernel checks it. The
	 * dedicated kernel without --initramfs boots its own (built in). */
	long r = getenv("KDUMPINIT_KEXEC") ? (errno = ENOSYS, -1) :
		syscall(SYS_kexec_file_load, kfd, ifd, strlen(cl) + 1, cl,
			KEXEC_FILE_ON_CRASH | (ifd < 0 ? KEXEC_FILE_NO_INITRAMFS : 0));
	int e = errno;
	/* No kexec_file_load (Debian's arm64 kernels): our own kexec_load
	 * loader (arm/kexec_arm64.c); kexec-tools, with its crash-header
	 * fix, when that cannot (not arm64, or it failed and said why) or
	 * KDUMPINIT_KEXEC names a kexec. */
	const char *header = "kernel";
	if (r < 0 && e == ENOSYS && !getenv("KDUMPINIT_KEXEC")) {
		header = "own";
		r = arm64_kexec_load(root, kernel, initrd, cl);
		if (r == -E2BIG) {
			/* a limit the machine reached (it said which): kexec-tools
			 * would meet it too, or cut the header where we refuse to */
			close(kfd);
			if (ifd >= 0)
				close(ifd);
			return EXIT_SYSTEM;
		}
		if (r < 0 && r != -ENOTSUP)
			warn("the own arm64 loader failed: trying kexec-tools");
		e = r < 0 ? ENOSYS : 0;
	}
	if (r < 0 && e == ENOSYS) {
		header = "kexec-tools";
		r = kexec_tools_load(root, kernel, initrd, cl);
		if (r < 0) {
			close(kfd);
			close(ifd);
			return EXIT_SYSTEM;
		}
	}
	if (r == 0)
		record(root, kfd, ifd, kernel, initrd, &ki, note, cpus, cl, header);
	close(kfd);
	if (ifd >= 0)
		close(ifd);
	if (r < 0) {
		explain(root, e, &ki);
		/* An unsigned image the kernel would not take: lockdown that
		 * securityfs did not show, or enforced kexec signatures. The
		 * service falls back on 9 as on the check before loading. */
		if ((e == EPERM || e == EKEYREJECTED) && ki.sig != KIMAGE_SIGNED)
			return EXIT_LOCKDOWN;
		return EXIT_SYSTEM;
	}
	char loaded[8] = "?", path[512];
	read_text_file(root_path(root, "/sys/kernel/kexec_crash_loaded", path, sizeof path),
		       loaded, sizeof loaded);
	msg("crash kernel armed (kexec_crash_loaded=%s): %s", loaded, cl);
	/* crashkernel=,cma the kernel did not give: a word, not a failure
	 * (the fixed part is armed and works). */
	struct crash_reserve rs;
	char line[400];
	crash_reserve_read(root, &rs);
	if (crash_reserve_problem(&rs, line, sizeof line))
		warn("%s", line);
	return EXIT_OK;
}
