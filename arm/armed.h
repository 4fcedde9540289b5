/* The record `arm` leaves for `status`: what was loaded, so a later
 * status can say whether the armed image is still the one the running
 * system would build. */
#ifndef KDI_ARMED_H
#define KDI_ARMED_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

/* Under the root given with --root (default "/"): /run is a tmpfs, so
 * the record goes with the loaded kernel at every reboot. */
#define ARMED_STATE "/run/kdumpinit/armed"

struct armed_state {
	char release[128];		/* uname -r when armed */
	char kernel[256], initramfs[256];	/* initramfs "": none (the dedicated kernel's own) */
	char crash_release[65];		/* the armed kernel's release ("" unknown) */
	int dedicated;			/* kdumpinit's dedicated crash kernel (kimage.h) */
	char note[512];			/* arm --note: why this kernel (the service's fall-back) */
	int64_t kernel_mtime, initramfs_mtime;
	int64_t kernel_size, initramfs_size;
	unsigned cpus;			/* nr_cpus= given; 0 with --cmdline */
	char cmdline[4096];
	/* The crash header as armed ("" / 0 in a record from before these
	 * lines): who built it, whether the kernel keeps it current, and
	 * what it was built from. A header lists the CPUs and RAM of the
	 * moment it was built: after hotplug it leaves out new memory and
	 * CPUs (and names memory that is gone) unless the kernel rewrites
	 * it (CONFIG_CRASH_HOTPLUG, kernel 6.6) or arm runs again. */
	char header[16];		/* "kernel" (kexec_file_load), "own" (the arm64 loader), "kexec-tools" */
	int hotplug_cpu, hotplug_mem;	/* /sys/devices/system/{cpu,memory}/crash_hotplug after arming:
					 * 1 the kernel updates this header on CPU / memory hotplug,
					 * 0 it does not, -1 no such file (no CONFIG_CRASH_HOTPLUG) */
	int have_print;			/* print was taken */
	struct machine_print print;	/* CPUs with crash notes, RAM ranges: counts and hashes */
};

/* What armed_header_current found. */
struct armed_header {
	struct machine_print then, now;
	int cpus_changed, ram_changed;	/* changed, and the kernel does not update the header */
	int kernel_updated;		/* changed, and the kernel keeps the header current */
};

/* Writes s to ROOT/run/kdumpinit/armed (temporary name, rename).
 * 0 or -errno. */
int armed_write(const char *root, const struct armed_state *s);
/* Reads it back: 0, -ENOENT (never armed by kdumpinit since boot),
 * -EINVAL (not a record we wrote), other -errno. */
int armed_read(const char *root, struct armed_state *s);
/* Whether the crash header armed as S still describes the machine under
 * ROOT: its CPUs with crash notes and its System RAM ranges against the
 * record's (what kdumpinit status reports). 1 current (or the kernel
 * keeps it so: h->kernel_updated), 0 stale (h says what changed),
 * -ENODATA (a record without the fingerprint: armed by an older
 * kdumpinit), -EACCES (/proc/iomem hides its addresses: not root), or the
 * -errno of reading /proc/iomem or /sys. Reads only names and
 * /proc/iomem, so it costs what listing them costs. */
int armed_header_current(const char *root, const struct armed_state *s, struct armed_header *h);
/* The line status prints for armed_header_current's result RC (into
 * buf, NUL-terminated): "crash header: current (...)", "crash header:
 * stale: ... arm again ...", or why it cannot tell. */
const char *armed_header_say(const struct armed_state *s, const struct armed_header *h, int rc,
			     char *buf, size_t sz);
/* The machine's fingerprint now, into S (have_print), and the kernel's
 * crash_hotplug answers (arm fills a record with these). 0 or -errno. */
int armed_take_print(const char *root, struct armed_state *s);

/* Removes it (arm --unload). 0 or -errno; -ENOENT is not an error. */
int armed_remove(const char *root);

#endif
